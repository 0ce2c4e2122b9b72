//! Shared by the injection library's tests: a stand-in for NVTX's export table (so the
//! library's `InitializeInjectionNvtx2` installs its handlers into slots the test can call),
//! the child process that does the traced part, and reading the raw file back.

#![allow(dead_code)]

use cudarc::cupti::sys::{CUpti_ActivityKernel10 as KernelRec, CUpti_ActivityKind as Kind};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::process::Command;
use std::ptr::addr_of_mut;

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

/// Builds the fake libcupti (`fake_cupti.c`) as `dir/libcupti.so`.
pub fn build_fake(dir: &Path) {
    build_fake_as(dir, "libcupti.so");
}

/// Builds the fake libcupti as `dir/file`, `file` also its soname (as the real one has one:
/// loaded by path, it is then found by that name).
pub fn build_fake_as(dir: &Path, file: &str) {
    build_fake_with(dir, file, &[]);
}

/// `build_fake_as` with more compiler flags (e.g. `-DFAKE_DEFAULT_VERSION=130002`).
pub fn build_fake_with(dir: &Path, file: &str, flags: &[&str]) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_cupti.c");
    let out = dir.join(file);
    let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O1", &format!("-Wl,-soname,{file}")])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) builds the fake libcupti");
    assert!(st.success(), "compiling {}", src.display());
}

/// Function `name` of the fake libcupti `lib` (a soname on LD_LIBRARY_PATH, or a path).
///
/// # Safety
/// `F` must be the function's C signature.
pub unsafe fn fake_fn<F: Copy>(lib: &str, name: &str) -> F {
    let l = CString::new(lib).unwrap();
    let n = CString::new(name).unwrap();
    // SAFETY: dlopen/dlsym with valid C strings; per the contract for F.
    unsafe {
        let h = dlopen(l.as_ptr(), 2 /* RTLD_NOW */);
        assert!(!h.is_null(), "the fake {lib} was not found");
        let p = dlsym(h, n.as_ptr());
        assert!(!p.is_null(), "{name} not in {lib}");
        std::mem::transmute_copy(&p)
    }
}

/// Hands `recs` to the fake libcupti `lib`, to be delivered at its next flush (leaked: the
/// fake keeps the pointers).
pub fn set_records(lib: &str, recs: Vec<Vec<u8>>) {
    let sizes: Vec<usize> = recs.iter().map(|r| r.len()).collect();
    let data: &'static [u8] = Box::leak(recs.concat().into_boxed_slice());
    let sizes: &'static [usize] = Box::leak(sizes.into_boxed_slice());
    // SAFETY: fake_set_records' C signature; both buffers are leaked.
    unsafe {
        let set: unsafe extern "C" fn(*const u8, *const usize, usize) =
            fake_fn(lib, "fake_set_records");
        set(data.as_ptr(), sizes.as_ptr(), sizes.len());
    }
}

/// A zeroed record of type `T` as bytes, filled by `f` through a raw pointer (no reference to
/// a possibly invalid value is made).
pub fn record<T>(f: impl FnOnce(*mut T)) -> Vec<u8> {
    let mut v = vec![0u8; std::mem::size_of::<T>()];
    f(v.as_mut_ptr() as *mut T);
    v
}

/// A kernel record named `name` (its string leaked: CUPTI's names live as long as CUPTI).
pub fn kernel_record(name: &str, start_ns: u64, end_ns: u64) -> Vec<u8> {
    let name: &'static CString = Box::leak(Box::new(CString::new(name).unwrap()));
    // SAFETY: a zeroed buffer of the record's size; fields written unaligned.
    record::<KernelRec>(|k| unsafe {
        addr_of_mut!((*k).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        addr_of_mut!((*k).start).write_unaligned(start_ns);
        addr_of_mut!((*k).end).write_unaligned(end_ns);
        addr_of_mut!((*k).streamId).write_unaligned(7);
        addr_of_mut!((*k).correlationId).write_unaligned(1);
        addr_of_mut!((*k).name).write_unaligned(name.as_ptr());
    })
}

/// Set in the child process; names the test that runs there.
pub const CHILD_ENV: &str = "OPBENCH_INJECT_TEST_CHILD";

type Slot = Option<unsafe extern "C" fn()>;
const SLOTS: usize = 16;

struct Tables {
    core: Vec<Slot>,
    core2: Vec<Slot>,
    core_ptrs: Vec<*mut Slot>,
    core2_ptrs: Vec<*mut Slot>,
}

static mut TABLES: Option<&'static mut Tables> = None;

/// NVTX's `GetModuleFunctionTable`: the core (1) and core2 (5) modules, 16 slots each (the
/// size reported is the last valid index, as NVTX does).
unsafe extern "C" fn get_module_function_table(
    module: u32,
    out: *mut *mut *mut Slot,
    size: *mut u32,
) -> c_int {
    // SAFETY: set before NVTX init in the child, single-threaded.
    let t = unsafe { (*addr_of_mut!(TABLES)).as_mut().unwrap() };
    let table = match module {
        1 => t.core_ptrs.as_mut_ptr(),
        5 => t.core2_ptrs.as_mut_ptr(),
        _ => return 0,
    };
    // SAFETY: out-pointers from the library.
    unsafe {
        *out = table;
        *size = (SLOTS - 1) as u32;
    }
    1
}

#[repr(C)]
struct ExportTable {
    struct_size: usize,
    get: unsafe extern "C" fn(u32, *mut *mut *mut Slot, *mut u32) -> c_int,
}

static EXPORT: ExportTable = ExportTable {
    struct_size: std::mem::size_of::<ExportTable>(),
    get: get_module_function_table,
};

unsafe extern "C" fn get_export_table(id: u32) -> *const c_void {
    if id == 1 {
        &EXPORT as *const ExportTable as *const c_void
    } else {
        std::ptr::null()
    }
}

/// Calls the library's NVTX entry with the stand-in table, then uses the installed handlers:
/// "model" pushed, inside it a domain range named by a registered string
/// ("model.layers.0.self_attn"), both popped (and one pop too many), then a start/end range
/// "step" ended on another thread.
pub fn exercise_nvtx() {
    let mut core: Vec<Slot> = vec![None; SLOTS];
    let mut core2: Vec<Slot> = vec![None; SLOTS];
    let core_ptrs = (0..SLOTS).map(|i| &mut core[i] as *mut Slot).collect();
    let core2_ptrs = (0..SLOTS).map(|i| &mut core2[i] as *mut Slot).collect();
    let t: &'static mut Tables = Box::leak(Box::new(Tables {
        core,
        core2,
        core_ptrs,
        core2_ptrs,
    }));
    // SAFETY: single-threaded setup before the library reads the tables.
    unsafe { *addr_of_mut!(TABLES) = Some(t) };
    // SAFETY: our export-table getter.
    let ok = unsafe { opbench_trace_inject::InitializeInjectionNvtx2(Some(get_export_table)) };
    assert_eq!(ok, 1);
    // SAFETY: read back after init.
    let t = unsafe { (*addr_of_mut!(TABLES)).as_ref().unwrap() };
    type PushA = unsafe extern "C" fn(*const c_char) -> c_int;
    type Pop = unsafe extern "C" fn() -> c_int;
    type RegisterA = unsafe extern "C" fn(*const c_void, *const c_char) -> *const c_void;
    type DomainPushEx = unsafe extern "C" fn(*const c_void, *const c_void) -> c_int;
    type DomainPop = unsafe extern "C" fn(*const c_void) -> c_int;
    type StartA = unsafe extern "C" fn(*const c_char) -> u64;
    type End = unsafe extern "C" fn(u64);
    // SAFETY: the slots hold the library's handlers with these C signatures (nvtxTypes.h ids:
    // core RangePushA 9, RangePop 11, RangeStartA 5, RangeEnd 7; core2 DomainRangePushEx 4,
    // DomainRangePop 5, DomainRegisterStringA 10).
    unsafe {
        let push: PushA = std::mem::transmute(t.core[9].expect("RangePushA installed"));
        let pop: Pop = std::mem::transmute(t.core[11].expect("RangePop installed"));
        let start: StartA = std::mem::transmute(t.core[5].expect("RangeStartA installed"));
        let end: End = std::mem::transmute(t.core[7].expect("RangeEnd installed"));
        let reg: RegisterA = std::mem::transmute(t.core2[10].expect("RegisterStringA"));
        let dpush: DomainPushEx = std::mem::transmute(t.core2[4].expect("DomainRangePushEx"));
        let dpop: DomainPop = std::mem::transmute(t.core2[5].expect("DomainRangePop"));
        let model = CString::new("model").unwrap();
        let attn = CString::new("model.layers.0.self_attn").unwrap();
        assert_eq!(push(model.as_ptr()), 0);
        let h = reg(std::ptr::null(), attn.as_ptr());
        // nvtxEventAttributes_v2: version, size, category, colorType, color, payloadType,
        // reserved0, payload (8), messageType (at 32), message (at 40).
        let mut attr = [0u8; 48];
        attr[0..2].copy_from_slice(&2u16.to_ne_bytes());
        attr[2..4].copy_from_slice(&48u16.to_ne_bytes());
        attr[32..36].copy_from_slice(&3i32.to_ne_bytes());
        attr[40..48].copy_from_slice(&(h as usize).to_ne_bytes());
        assert_eq!(dpush(std::ptr::null(), attr.as_ptr() as *const c_void), 1);
        assert_eq!(dpop(std::ptr::null()), 1);
        assert_eq!(pop(), 0);
        assert_eq!(pop(), -1, "popping an empty stack");
        let step = CString::new("step").unwrap();
        let id = start(step.as_ptr());
        std::thread::spawn(move || end(id)).join().unwrap();
    }
}

/// Runs test `name` of this test binary again in a child process with `CHILD_ENV` set,
/// libcupti looked up in `cupti_dir` and the raw file written into a fresh folder; returns the
/// text of the one raw file it wrote.
pub fn run_child(name: &str, cupti_dir: &Path) -> String {
    run_child_with(name, cupti_dir, &[])
}

/// `run_child` with more environment variables for the child.
pub fn run_child_with(name: &str, cupti_dir: &Path, env: &[(&str, &str)]) -> String {
    let (status, text, log) = run_child_status(name, cupti_dir, env);
    assert!(status.success(), "{log}");
    text
}

/// Like `run_child_with`, for a child that may not end well: its exit status, the raw file's
/// text and the child's output.
pub fn run_child_status(
    name: &str,
    cupti_dir: &Path,
    env: &[(&str, &str)],
) -> (std::process::ExitStatus, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("raw");
    std::fs::create_dir(&out).unwrap();
    let o = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env("LD_LIBRARY_PATH", cupti_dir)
        .env("OPBENCH_TRACE_DIR", &out)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}\n{log}");
    (o.status, std::fs::read_to_string(&files[0]).unwrap(), log)
}

/// A raw file split into lines of fields.
pub struct Raw<'a> {
    pub lines: Vec<Vec<&'a str>>,
}

impl<'a> Raw<'a> {
    pub fn new(text: &'a str) -> Self {
        Raw {
            lines: text.lines().map(|l| l.split('\t').collect()).collect(),
        }
    }

    pub fn tagged(&self, tag: &str) -> Vec<&Vec<&'a str>> {
        self.lines.iter().filter(|l| l[0] == tag).collect()
    }

    /// The string an `N` line gave id `id`.
    pub fn name(&self, id: &str) -> String {
        self.tagged("N")
            .iter()
            .find(|l| l[1] == id)
            .map(|l| l[2].to_string())
            .unwrap_or_else(|| panic!("no string {id}"))
    }

    /// The ranges `exercise_nvtx` makes: the inner (registered string) one closes first inside
    /// "model", then "step" ended on another thread; and the file's clean end.
    pub fn check_nvtx_and_end(&self) {
        let p = self.tagged("P");
        assert_eq!(p.len(), 3, "{:?}", self.lines);
        assert_eq!(self.name(p[0][6]), "model.layers.0.self_attn");
        assert_eq!(self.name(p[1][6]), "model");
        assert_eq!((p[1][5], p[2][5]), ("1", "0"), "push/pop, then start/end");
        assert_eq!(self.name(p[2][6]), "step");
        assert_ne!(p[2][3], p[2][4], "start/end range ended on another thread");
        let ns = |l: &Vec<&str>, i: usize| l[i].parse::<u64>().unwrap();
        assert!(
            ns(p[1], 1) < ns(p[0], 1) && ns(p[0], 2) < ns(p[1], 2),
            "nested in time"
        );
        assert!(
            p.iter().all(|l| ns(l, 1) < ns(l, 2)),
            "every range ends after it starts"
        );
        assert_eq!(self.lines.last().unwrap()[..2], ["E", "exit"]);
    }
}
