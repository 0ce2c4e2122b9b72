//! Stepping aside for the traced program's own CUPTI subscriber (torch.profiler's Kineto, a
//! tool of the program's). CUPTI up to CUDA 13.2 serves one set of activity callbacks per
//! process; with this library's in place, torch.profiler inside a traced process recorded no
//! kernel at all. `trace` also preloads this library (`LD_PRELOAD`), so the program's call of
//! `cuptiActivityRegisterCallbacks` comes here first. The library then writes an `L` line
//! (records lost from this time on, and why), hands over what it holds (forced flush), disables
//! its activity kinds and passes the call on to the libcupti the program meant: the program's
//! profiler gets its records as it would untraced, and `trace` reports this process's output
//! as incomplete from that time. NVTX ranges are still recorded (they do not go through CUPTI).
//! Kineto subscribes to CUPTI's callback API (`cuptiSubscribe`) before it registers activity
//! callbacks, and CUPTI refuses that subscription (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
//! while this library's session is attached: `cuptiSubscribe` is interposed too, and there the
//! library always detaches (`cuptiFinalize`) before passing the call on.

use crate::{flush, out, rawfmt};
use cudarc::cupti::sys::{self, CUptiResult};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once the program registered its own callbacks: this library records no more activity.
static HANDED_OVER: AtomicBool = AtomicBool::new(false);
/// Why the library stepped aside (`WHY` or `WHY_SUBSCRIBE`), once it has.
static WHY_SET: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
/// Set by `InitializeInjection` once this library's callbacks and kinds are in place.
static RECORDING: AtomicBool = AtomicBool::new(false);

type RegisterFn = unsafe extern "C" fn(
    sys::CUpti_BuffersCallbackRequestFunc,
    sys::CUpti_BuffersCallbackCompleteFunc,
) -> CUptiResult;

type SubscribeFn = unsafe extern "C" fn(
    *mut sys::CUpti_SubscriberHandle,
    sys::CUpti_CallbackFunc,
    *mut c_void,
) -> CUptiResult;

const NAME: &CStr = c"cuptiActivityRegisterCallbacks";
const SUBSCRIBE: &CStr = c"cuptiSubscribe";

/// What the `L` line and `trace` say when the program subscribes to CUPTI's callback API.
pub const WHY_SUBSCRIBE: &str = "the program subscribed to CUPTI (cuptiSubscribe: torch.profiler \
    or another CUDA profiler inside it); the tracer stepped aside so that the program's profiler \
    records as it would untraced";

/// What the `L` line and `trace` say.
pub const WHY: &str = "the program registered its own CUPTI activity callbacks \
    (cuptiActivityRegisterCallbacks: torch.profiler or another CUDA profiler inside it); the \
    tracer stepped aside so that the program's profiler records as it would untraced";

extern "C" {
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dl_iterate_phdr(
        cb: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
        data: *mut c_void,
    ) -> c_int;
}

/// The leading fields of glibc's `struct dl_phdr_info` (only the name is read).
#[repr(C)]
struct DlPhdrInfo {
    addr: usize,
    name: *const c_char,
}

/// glibc's RTLD_NEXT: the next definition after this object in the global lookup order.
const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;
const RTLD_NOW: c_int = 2;
const RTLD_NOLOAD: c_int = 4;

/// Whether the program took CUPTI's activity callbacks over (recording stopped).
pub fn handed_over() -> bool {
    HANDED_OVER.load(Ordering::SeqCst)
}

/// Why the library stepped aside (for the `L` line written once the file is open).
pub fn why() -> &'static str {
    WHY_SET.get().copied().unwrap_or(WHY)
}

/// Writes the `L` line: nothing recorded from CUPTI time `ns` on (0: from the start), and why.
pub fn write_lost(ns: u64, why: &str) {
    let mut line = String::new();
    rawfmt::lost(&mut line, ns, why);
    out::append(&line);
}

/// Called by `InitializeInjection` once recording is on.
pub fn recording_started() {
    RECORDING.store(true, Ordering::SeqCst);
}

unsafe extern "C" fn collect_cupti(
    info: *mut DlPhdrInfo,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: glibc passes a valid info whose name is a C string (empty for the executable);
    // data is the Vec given below.
    unsafe {
        let name = (*info).name;
        if !name.is_null() {
            let path = CStr::from_ptr(name);
            let file = path.to_bytes().rsplit(|&b| b == b'/').next().unwrap_or(b"");
            if file.starts_with(b"libcupti.so") {
                (*(data as *mut Vec<std::ffi::CString>)).push(path.to_owned());
            }
        }
    }
    0
}

/// The function `name` of every loaded libcupti: the next definition in the global lookup
/// order first, then each libcupti in load order (one the program loaded privately,
/// RTLD_LOCAL, is not in the global order).
fn candidates(name: &CStr) -> Vec<*mut c_void> {
    let mut v = Vec::new();
    // SAFETY: dlsym/dlopen with valid C strings; RTLD_NOLOAD only finds loaded objects.
    unsafe {
        let p = dlsym(RTLD_NEXT, name.as_ptr());
        if !p.is_null() {
            v.push(p);
        }
        let mut paths: Vec<std::ffi::CString> = Vec::new();
        dl_iterate_phdr(collect_cupti, &mut paths as *mut _ as *mut c_void);
        for path in paths {
            let h = dlopen(path.as_ptr(), RTLD_NOW | RTLD_NOLOAD);
            if h.is_null() {
                continue;
            }
            let p = dlsym(h, name.as_ptr());
            if !p.is_null() {
                v.push(p);
            }
        }
    }
    v
}

/// The function `name` of the libcupti this library records with (None if it never loaded
/// one).
fn ours(name: &CStr) -> Option<*mut c_void> {
    if !RECORDING.load(Ordering::SeqCst) {
        return None;
    }
    // SAFETY: the library is loaded (recording started); only the address is read.
    unsafe {
        let lib = sys::culib();
        lib.get::<*mut c_void>(name.to_bytes_with_nul())
            .ok()
            .map(|s| *s)
    }
}

/// Where the program's call of `name` goes: a libcupti other than this library's if one is
/// loaded (the program brought its own, e.g. torch's bundled CUPTI), else this library's; and
/// whether it is another.
fn target(name: &CStr) -> (Option<*mut c_void>, bool) {
    let ours = ours(name);
    let other = candidates(name)
        .into_iter()
        .find(|f| ours.is_none_or(|o| *f != o));
    match (other, ours) {
        (Some(f), _) => (Some(f), true),
        (None, o) => (o, false),
    }
}

/// Stops recording for good: the `L` line, a forced flush of what this library holds, its
/// kinds disabled. `other_cupti`: the program's libcupti is another library, so this one is
/// detached from the process (`cuptiFinalize`) for that one to attach.
fn step_aside(other_cupti: bool, why: &'static str) {
    if HANDED_OVER.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = WHY_SET.set(why);
    flush::stop();
    // A subscriber of this library's would make CUPTI refuse the program's, even one left from
    // a start that failed later.
    crate::api_callbacks::stop();
    // While the program has recording paused CUPTI is detached: nothing to hand over, and
    // nothing was recorded since the pause.
    let paused_at = crate::pause::paused();
    let recording = RECORDING.load(Ordering::SeqCst) && paused_at.is_none();
    let mut now = paused_at.unwrap_or(0);
    if recording {
        // SAFETY: a plain CUPTI call with a valid out-pointer.
        let _ = unsafe { sys::cuptiGetTimestamp(&mut now) };
    }
    // Without recording the file may not be open yet: `InitializeInjection` writes the line.
    write_lost(now, why);
    if !recording {
        return;
    }
    // SAFETY: plain CUPTI calls; 1 = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED.
    unsafe {
        let _ = sys::cuptiActivityFlushAll(1);
        crate::writer::drain();
        let _ = crate::set_per_thread_buffers(false);
        for kind in crate::enabled_kinds() {
            let _ = sys::cuptiActivityDisable(kind);
        }
        let _ = sys::cuptiActivityFlushPeriod(0);
        if other_cupti {
            let r = sys::cuptiFinalize();
            if r != CUptiResult::CUPTI_SUCCESS {
                eprintln!("opbench-trace: stepping aside, cuptiFinalize returned {r:?}");
            }
        }
    }
}

/// The program's `cuptiActivityRegisterCallbacks` (this library preloaded): this library
/// steps aside, then the call goes on to the libcupti the program meant, whose result it
/// returns.
///
/// # Safety
/// As CUPTI's function: the callbacks must be valid for the process's life.
#[no_mangle]
pub unsafe extern "C" fn cuptiActivityRegisterCallbacks(
    requested: sys::CUpti_BuffersCallbackRequestFunc,
    completed: sys::CUpti_BuffersCallbackCompleteFunc,
) -> CUptiResult {
    let target = std::panic::catch_unwind(|| {
        let (f, other) = target(NAME);
        step_aside(other, WHY);
        f
    });
    match target {
        // SAFETY: a libcupti's own cuptiActivityRegisterCallbacks, called with the program's
        // arguments.
        Ok(Some(f)) => unsafe {
            std::mem::transmute::<*mut c_void, RegisterFn>(f)(requested, completed)
        },
        // No libcupti loaded at all: what CUPTI says when it cannot start.
        _ => CUptiResult::CUPTI_ERROR_NOT_INITIALIZED,
    }
}

/// The program's `cuptiSubscribe` (this library preloaded): CUPTI refuses a subscriber while
/// this library's activity session is attached, so the library steps aside and always detaches
/// (`cuptiFinalize`), then the call goes on to the libcupti the program meant.
///
/// # Safety
/// As CUPTI's function: valid out-pointer and callback.
#[no_mangle]
pub unsafe extern "C" fn cuptiSubscribe(
    subscriber: *mut sys::CUpti_SubscriberHandle,
    callback: sys::CUpti_CallbackFunc,
    userdata: *mut c_void,
) -> CUptiResult {
    let target = std::panic::catch_unwind(|| {
        let (f, other) = target(SUBSCRIBE);
        step_aside(true, WHY_SUBSCRIBE);
        (f, other)
    });
    match target {
        Ok((Some(f), other)) => {
            // SAFETY: a libcupti's own cuptiSubscribe, called with the program's arguments.
            let r = unsafe {
                std::mem::transmute::<*mut c_void, SubscribeFn>(f)(subscriber, callback, userdata)
            };
            if r != CUptiResult::CUPTI_SUCCESS {
                // The program's profiler will say it failed; this says where the call went.
                eprintln!(
                    "opbench-trace: the program's cuptiSubscribe, passed on to {} libcupti, returned {r:?}",
                    if other { "its own" } else { "the tracer's" }
                );
            }
            r
        }
        _ => CUptiResult::CUPTI_ERROR_NOT_INITIALIZED,
    }
}
