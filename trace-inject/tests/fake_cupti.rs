//! The injection library against a stand-in libcupti (`fake_cupti.c`, compiled with `cc`):
//! records laid out with cudarc's CUDA 13.0 structs go through the buffer callbacks into the
//! raw file, NVTX ranges through the NVTX injection entry, and the exit handler closes the file.
//! The traced part runs in a child process (the library's state is per process, and libcupti
//! is found through LD_LIBRARY_PATH, which must be set before the process starts).

use cudarc::cupti::sys::{
    CUpti_ActivityAPI as ApiRec, CUpti_ActivityDevice5 as DeviceRec,
    CUpti_ActivityKernel10 as KernelRec, CUpti_ActivityKind as Kind,
    CUpti_ActivityMemcpy6 as MemcpyRec, CUpti_ActivityMemset4 as MemsetRec,
};
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::process::Command;
use std::ptr::addr_of_mut;

const CHILD_ENV: &str = "OPBENCH_FAKE_CUPTI_CHILD";

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

/// A zeroed record of type `T` as bytes, filled by `f` through a raw pointer (no reference to
/// a possibly invalid value is made).
fn record<T>(f: impl FnOnce(*mut T)) -> Vec<u8> {
    let mut v = vec![0u8; std::mem::size_of::<T>()];
    f(v.as_mut_ptr() as *mut T);
    v
}

type Slot = Option<unsafe extern "C" fn()>;
const SLOTS: usize = 16;

struct Tables {
    core: Vec<Slot>,
    core2: Vec<Slot>,
    core_ptrs: Vec<*mut Slot>,
    core2_ptrs: Vec<*mut Slot>,
}

static mut TABLES: Option<&'static mut Tables> = None;

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

/// The traced process: records handed to the fake, both entry points called, NVTX handlers
/// used, then a normal exit (the library's exit handler flushes and closes the file).
fn child() {
    let lib = CString::new("libcupti.so").unwrap();
    // SAFETY: dlopen/dlsym with valid C strings; the fake exports fake_set_records.
    let set: unsafe extern "C" fn(*const u8, *const usize, usize) = unsafe {
        let h = dlopen(lib.as_ptr(), 2 /* RTLD_NOW */);
        assert!(
            !h.is_null(),
            "the fake libcupti.so was not found on LD_LIBRARY_PATH"
        );
        let sym = CString::new("fake_set_records").unwrap();
        let p = dlsym(h, sym.as_ptr());
        assert!(!p.is_null());
        std::mem::transmute(p)
    };
    let kname: &'static CString = Box::leak(Box::new(CString::new("_Z6kernelPf").unwrap()));
    let gname: &'static CString = Box::leak(Box::new(CString::new("Fake H100").unwrap()));
    // SAFETY (every closure below): the pointer is to a zeroed buffer of the record's size;
    // fields are written unaligned.
    let recs: Vec<Vec<u8>> = vec![
        record::<DeviceRec>(|d| unsafe {
            addr_of_mut!((*d).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_DEVICE);
            addr_of_mut!((*d).id).write_unaligned(0);
            addr_of_mut!((*d).name).write_unaligned(gname.as_ptr());
            addr_of_mut!((*d).computeCapabilityMajor).write_unaligned(9);
            addr_of_mut!((*d).computeCapabilityMinor).write_unaligned(0);
            addr_of_mut!((*d).numMultiprocessors).write_unaligned(132);
            addr_of_mut!((*d).globalMemorySize).write_unaligned(80 << 30);
        }),
        record::<ApiRec>(|a| unsafe {
            addr_of_mut!((*a).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_RUNTIME);
            addr_of_mut!((*a).cbid).write_unaligned(211);
            addr_of_mut!((*a).start).write_unaligned(100);
            addr_of_mut!((*a).end).write_unaligned(110);
            addr_of_mut!((*a).threadId).write_unaligned(77);
            addr_of_mut!((*a).correlationId).write_unaligned(5);
        }),
        record::<KernelRec>(|k| unsafe {
            addr_of_mut!((*k).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
            addr_of_mut!((*k).registersPerThread).write_unaligned(40);
            addr_of_mut!((*k).start).write_unaligned(200);
            addr_of_mut!((*k).end).write_unaligned(260);
            addr_of_mut!((*k).deviceId).write_unaligned(0);
            addr_of_mut!((*k).streamId).write_unaligned(13);
            addr_of_mut!((*k).gridX).write_unaligned(8);
            addr_of_mut!((*k).gridY).write_unaligned(4);
            addr_of_mut!((*k).gridZ).write_unaligned(2);
            addr_of_mut!((*k).blockX).write_unaligned(128);
            addr_of_mut!((*k).blockY).write_unaligned(1);
            addr_of_mut!((*k).blockZ).write_unaligned(1);
            addr_of_mut!((*k).staticSharedMemory).write_unaligned(1024);
            addr_of_mut!((*k).dynamicSharedMemory).write_unaligned(4096);
            addr_of_mut!((*k).correlationId).write_unaligned(5);
            addr_of_mut!((*k).graphId).write_unaligned(9);
            addr_of_mut!((*k).name).write_unaligned(kname.as_ptr());
        }),
        record::<MemcpyRec>(|m| unsafe {
            addr_of_mut!((*m).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_MEMCPY);
            addr_of_mut!((*m).copyKind).write_unaligned(1);
            addr_of_mut!((*m).bytes).write_unaligned(65536);
            addr_of_mut!((*m).start).write_unaligned(300);
            addr_of_mut!((*m).end).write_unaligned(320);
            addr_of_mut!((*m).streamId).write_unaligned(13);
            addr_of_mut!((*m).correlationId).write_unaligned(6);
        }),
        record::<MemsetRec>(|m| unsafe {
            addr_of_mut!((*m).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_MEMSET);
            addr_of_mut!((*m).value).write_unaligned(255);
            addr_of_mut!((*m).bytes).write_unaligned(512);
            addr_of_mut!((*m).start).write_unaligned(330);
            addr_of_mut!((*m).end).write_unaligned(331);
            addr_of_mut!((*m).streamId).write_unaligned(13);
        }),
    ];
    let sizes: Vec<usize> = recs.iter().map(|r| r.len()).collect();
    let data: &'static [u8] = Box::leak(recs.concat().into_boxed_slice());
    let sizes: &'static [usize] = Box::leak(sizes.into_boxed_slice());
    // SAFETY: the fake keeps the pointers; both are leaked.
    unsafe { set(data.as_ptr(), sizes.as_ptr(), sizes.len()) };

    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);

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
        type DPop = unsafe extern "C" fn(*const c_void) -> c_int;
        let dpop: DPop = std::mem::transmute(t.core2[5].expect("DomainRangePop"));
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
    // Returning ends the child test: its exit runs the library's exit handler.
}

fn build_fake(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_cupti.c");
    let out = dir.join("libcupti.so");
    let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) builds the fake libcupti");
    assert!(st.success(), "compiling {}", src.display());
}

#[test]
fn records_and_nvtx_ranges_reach_the_raw_file_and_the_exit_handler_closes_it() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    build_fake(&dir);
    let out = dir.join("raw");
    std::fs::create_dir(&out).unwrap();
    let o = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "records_and_nvtx_ranges_reach_the_raw_file_and_the_exit_handler_closes_it",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env("LD_LIBRARY_PATH", &dir)
        .env("OPBENCH_TRACE_DIR", &out)
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{log}");
    let files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    let find = |tag: &str| -> Vec<&Vec<&str>> { lines.iter().filter(|l| l[0] == tag).collect() };
    let name = |id: &str| -> String {
        find("N")
            .iter()
            .find(|l| l[1] == id)
            .map(|l| l[2].to_string())
            .unwrap()
    };
    // Header: format 1, the child's pid, the fake's CUPTI version.
    assert_eq!(lines[0][0], "H");
    assert_eq!((lines[0][1], lines[0][3]), ("1", "130001"));
    let w = find("W");
    assert!(w.iter().any(|l| l[1].contains("SYNCHRONIZATION")), "{text}");
    assert_eq!(
        find("G")[0][1..],
        ["0", "Fake H100", "9", "0", "132", "85899345920"]
    );
    let k = find("K");
    assert_eq!(k.len(), 1, "{text}");
    // start end device stream corr grid(3) block(3) regs static dynamic graph name reserved
    assert_eq!(
        k[0][1..16],
        ["200", "260", "0", "13", "5", "8", "4", "2", "128", "1", "1", "40", "1024", "4096", "9"]
    );
    assert_eq!(name(k[0][16]), "_Z6kernelPf");
    let c = find("C");
    assert_eq!(
        c[0][1..10],
        ["300", "320", "0", "13", "6", "65536", "1", "0", "0"]
    );
    let m = find("M");
    assert_eq!((m[0][6], m[0][8]), ("512", "255"));
    let r = find("R");
    assert_eq!(r[0][1..7], ["100", "110", "77", "5", "211", "0"]);
    assert_eq!(name(r[0][7]), "cudaLaunchKernel_v7000");
    // Ranges: the inner (registered string) one closes first; the start/end one ended on
    // another thread.
    let p = find("P");
    assert_eq!(p.len(), 3, "{text}");
    assert_eq!(name(p[0][6]), "model.layers.0.self_attn");
    assert_eq!(name(p[1][6]), "model");
    assert_eq!((p[1][5], p[2][5]), ("1", "0"));
    assert_eq!(name(p[2][6]), "step");
    assert_ne!(p[2][3], p[2][4], "start/end range ended on another thread");
    let (s0, e0): (u64, u64) = (p[0][1].parse().unwrap(), p[0][2].parse().unwrap());
    let (s1, e1): (u64, u64) = (p[1][1].parse().unwrap(), p[1][2].parse().unwrap());
    assert!(s1 < s0 && e0 < e1, "nested ranges nest in time");
    assert_eq!(find("D").last().unwrap()[1], "2");
    assert_eq!(lines.last().unwrap()[..2], ["E", "exit"]);
}
