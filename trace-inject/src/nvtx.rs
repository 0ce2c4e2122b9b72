//! NVTX ranges through NVTX's own injection interface (`NVTX_INJECTION64_PATH`,
//! `InitializeInjectionNvtx2`): the push/pop and start/end handlers of the core and domain
//! modules are ours, so CUPTI's NVTX path (which crashes in CUDA 13.0's libcupti) is never
//! used. Times come from `cuptiGetTimestamp` (the activity records' clock), thread ids from
//! gettid (CUPTI is set to report system thread ids). Ranges still open at exit are dropped.
//!
//! ABI (nvtx3 `nvtxDetail/nvtxTypes.h`): `getExportTable(NVTX_ETID_CALLBACKS = 1)` gives
//! `{ size_t struct_size; int (*GetModuleFunctionTable)(module, NvtxFunctionTable*, unsigned*) }`;
//! a module's table is an array of pointers to the function-pointer slots, indexed by the
//! module's callback ids.

use crate::out;
use crate::rawfmt::{self, RawRange};
use cudarc::cupti::sys;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

type Slot = *mut Option<unsafe extern "C" fn()>;
type GetModuleFunctionTable = unsafe extern "C" fn(u32, *mut *mut Slot, *mut u32) -> c_int;

#[repr(C)]
struct ExportTableCallbacks {
    struct_size: usize,
    get_module_function_table: Option<GetModuleFunctionTable>,
}

const ETID_CALLBACKS: u32 = 1;
const MODULE_CORE: u32 = 1;
const MODULE_CORE2: u32 = 5;
// NVTX_CBID_CORE_*.
const CORE_RANGE_START_EX: usize = 4;
const CORE_RANGE_START_A: usize = 5;
const CORE_RANGE_END: usize = 7;
const CORE_RANGE_PUSH_EX: usize = 8;
const CORE_RANGE_PUSH_A: usize = 9;
const CORE_RANGE_POP: usize = 11;
// NVTX_CBID_CORE2_*.
const CORE2_RANGE_START_EX: usize = 2;
const CORE2_RANGE_END: usize = 3;
const CORE2_RANGE_PUSH_EX: usize = 4;
const CORE2_RANGE_POP: usize = 5;
const CORE2_REGISTER_STRING_A: usize = 10;
const CORE2_DOMAIN_CREATE_A: usize = 12;

/// `nvtxEventAttributes_t` (version 2), the fields read.
#[repr(C)]
struct EventAttributes {
    version: u16,
    size: u16,
    category: u32,
    color_type: i32,
    color: u32,
    payload_type: i32,
    reserved0: i32,
    payload: u64,
    message_type: i32,
    message: *const c_void,
}

const MESSAGE_ASCII: i32 = 1;
const MESSAGE_REGISTERED: i32 = 3;

thread_local! {
    /// This thread's open push/pop ranges: (start ns, name).
    static STACK: RefCell<Vec<(u64, String)>> = const { RefCell::new(Vec::new()) };
}

/// Open start/end ranges by id: (start ns, thread, name).
type Started = HashMap<u64, (u64, u32, String)>;
static STARTED: Mutex<Option<Started>> = Mutex::new(None);
static NEXT_ID: Mutex<u64> = Mutex::new(1);
/// Registered strings; a handle is the index + 1.
static REGISTERED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn now() -> u64 {
    let mut t = 0u64;
    // SAFETY: t is a valid out-pointer.
    unsafe {
        let _ = sys::cuptiGetTimestamp(&mut t);
    }
    t
}

pub(crate) fn tid() -> u32 {
    extern "C" {
        fn gettid() -> i32;
    }
    // SAFETY: gettid has no preconditions.
    unsafe { gettid() as u32 }
}

/// # Safety
/// `p` must be null or a NUL-terminated string.
unsafe fn ascii(p: *const c_char) -> String {
    if p.is_null() {
        return "<unnamed range>".into();
    }
    // SAFETY: per the contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// # Safety
/// `a` must be null or point at an `nvtxEventAttributes_t`.
unsafe fn attr_name(a: *const EventAttributes) -> String {
    if a.is_null() {
        return "<unnamed range>".into();
    }
    // SAFETY: per the contract.
    let (kind, msg) = unsafe { ((*a).message_type, (*a).message) };
    match kind {
        // SAFETY: an ASCII message is a C string.
        MESSAGE_ASCII => unsafe { ascii(msg as *const c_char) },
        MESSAGE_REGISTERED => {
            let i = (msg as usize).wrapping_sub(1);
            let r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
            r.get(i)
                .cloned()
                .unwrap_or_else(|| "<unregistered string>".into())
        }
        _ => "<range with a non-ASCII name>".into(),
    }
}

fn emit(start_ns: u64, end_ns: u64, tid: u32, end_tid: u32, push_pop: bool, name: &str) {
    out::with(|o| {
        let name_id = o.name_id(name);
        let mut buf = String::new();
        rawfmt::range(
            &mut buf,
            &RawRange {
                start_ns,
                end_ns,
                tid,
                end_tid,
                push_pop,
                name_id,
            },
        );
        o.write_records(&buf);
    });
}

fn push(name: String) -> c_int {
    let t = now();
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.push((t, name));
        s.len() as c_int - 1
    })
}

fn pop() -> c_int {
    let end = now();
    let popped = STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.pop().map(|r| (r, s.len()))
    });
    match popped {
        Some(((start, name), depth)) => {
            let t = tid();
            emit(start, end, t, t, true, &name);
            depth as c_int
        }
        None => -1,
    }
}

fn start(name: String) -> u64 {
    let t = now();
    let id = {
        let mut n = NEXT_ID.lock().unwrap_or_else(|p| p.into_inner());
        *n += 1;
        *n
    };
    STARTED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(id, (t, tid(), name));
    id
}

fn end(id: u64) {
    let e = now();
    let r = STARTED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .and_then(|m| m.remove(&id));
    if let Some((s, t, name)) = r {
        emit(s, e, t, tid(), false, &name);
    }
}

// The handlers: no panic may cross into C.
fn guard<T>(or: T, f: impl FnOnce() -> T + std::panic::UnwindSafe) -> T {
    std::panic::catch_unwind(f).unwrap_or(or)
}

unsafe extern "C" fn range_push_a(m: *const c_char) -> c_int {
    // SAFETY: NVTX passes a C string.
    guard(-1, || push(unsafe { ascii(m) }))
}
unsafe extern "C" fn range_push_ex(a: *const EventAttributes) -> c_int {
    // SAFETY: NVTX passes event attributes.
    guard(-1, || push(unsafe { attr_name(a) }))
}
unsafe extern "C" fn range_pop() -> c_int {
    guard(-1, pop)
}
unsafe extern "C" fn range_start_a(m: *const c_char) -> u64 {
    // SAFETY: NVTX passes a C string.
    guard(0, || start(unsafe { ascii(m) }))
}
unsafe extern "C" fn range_start_ex(a: *const EventAttributes) -> u64 {
    // SAFETY: NVTX passes event attributes.
    guard(0, || start(unsafe { attr_name(a) }))
}
unsafe extern "C" fn range_end(id: u64) {
    guard((), || end(id))
}
unsafe extern "C" fn domain_range_push_ex(_d: *const c_void, a: *const EventAttributes) -> c_int {
    // SAFETY: NVTX passes event attributes.
    unsafe { range_push_ex(a) }
}
unsafe extern "C" fn domain_range_pop(_d: *const c_void) -> c_int {
    guard(-1, pop)
}
unsafe extern "C" fn domain_range_start_ex(_d: *const c_void, a: *const EventAttributes) -> u64 {
    // SAFETY: NVTX passes event attributes.
    unsafe { range_start_ex(a) }
}
unsafe extern "C" fn domain_range_end(_d: *const c_void, id: u64) {
    guard((), || end(id))
}
unsafe extern "C" fn domain_register_string_a(
    _d: *const c_void,
    s: *const c_char,
) -> *const c_void {
    guard(std::ptr::null(), || {
        // SAFETY: NVTX passes a C string.
        let text = unsafe { ascii(s) };
        let mut r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        r.push(text);
        r.len() as *const c_void
    })
}
/// Domains are not told apart; every domain gets the same non-null handle.
unsafe extern "C" fn domain_create_a(_name: *const c_char) -> *const c_void {
    std::ptr::dangling::<c_void>()
}

/// Points `slot` `index` of `module`'s table at `f`, when the table has it.
///
/// # Safety
/// `get` must be NVTX's `GetModuleFunctionTable`; `f` must have the slot's C signature.
unsafe fn set(get: GetModuleFunctionTable, module: u32, slots: &[(usize, *const ())]) -> bool {
    let mut table: *mut Slot = std::ptr::null_mut();
    let mut size = 0u32;
    // SAFETY: out-pointers are valid.
    if unsafe { get(module, &mut table, &mut size) } == 0 || table.is_null() {
        return false;
    }
    for &(i, f) in slots {
        if i <= size as usize {
            // SAFETY: i is inside the table NVTX gave; each entry points at a writable slot.
            unsafe {
                let slot = *table.add(i);
                if !slot.is_null() {
                    *slot = Some(std::mem::transmute::<*const (), unsafe extern "C" fn()>(f));
                }
            }
        }
    }
    true
}

/// Called by NVTX in a process whose `NVTX_INJECTION64_PATH` names this library. Returns 1
/// when the handlers are installed, 0 (NVTX then stays a no-op) otherwise.
///
/// # Safety
/// `get_export_table` must be NVTX's export-table getter (or behave as one): its callbacks
/// table's `GetModuleFunctionTable` must give tables of writable function-pointer slots.
#[no_mangle]
pub unsafe extern "C" fn InitializeInjectionNvtx2(
    get_export_table: Option<unsafe extern "C" fn(u32) -> *const c_void>,
) -> c_int {
    let r = std::panic::catch_unwind(|| {
        let Some(get_export_table) = get_export_table else {
            return 0;
        };
        if let Err(e) = crate::cupti_lib::preload() {
            eprintln!("opbench trace: NVTX ranges not recorded: {e}");
            return 0;
        }
        let mut version = 0u32;
        // SAFETY: version is a valid out-pointer.
        unsafe {
            let _ = sys::cuptiGetVersion(&mut version);
        }
        if let Err(e) = out::start(version) {
            eprintln!("opbench trace: NVTX ranges not recorded: {e}");
            return 0;
        }
        crate::cupti_lib::write_note();
        // A process that uses NVTX but never CUDA still closes its file at exit.
        crate::register_exit();
        // SAFETY: NVTX's export-table getter.
        let t = unsafe { get_export_table(ETID_CALLBACKS) } as *const ExportTableCallbacks;
        // SAFETY: NVTX returns its callbacks table (or null).
        let Some(get) = (unsafe { t.as_ref() }).and_then(|t| t.get_module_function_table) else {
            out::warn("NVTX gave no callback table: NVTX ranges not recorded");
            return 0;
        };
        let core: [(usize, *const ()); 6] = [
            (CORE_RANGE_PUSH_A, range_push_a as *const ()),
            (CORE_RANGE_PUSH_EX, range_push_ex as *const ()),
            (CORE_RANGE_POP, range_pop as *const ()),
            (CORE_RANGE_START_A, range_start_a as *const ()),
            (CORE_RANGE_START_EX, range_start_ex as *const ()),
            (CORE_RANGE_END, range_end as *const ()),
        ];
        let core2: [(usize, *const ()); 6] = [
            (CORE2_RANGE_PUSH_EX, domain_range_push_ex as *const ()),
            (CORE2_RANGE_POP, domain_range_pop as *const ()),
            (CORE2_RANGE_START_EX, domain_range_start_ex as *const ()),
            (CORE2_RANGE_END, domain_range_end as *const ()),
            (
                CORE2_REGISTER_STRING_A,
                domain_register_string_a as *const (),
            ),
            (CORE2_DOMAIN_CREATE_A, domain_create_a as *const ()),
        ];
        // SAFETY: each function has the C signature of its slot.
        let ok = unsafe { set(get, MODULE_CORE, &core) };
        // SAFETY: as above.
        unsafe { set(get, MODULE_CORE2, &core2) };
        ok as c_int
    });
    r.unwrap_or(0)
}
