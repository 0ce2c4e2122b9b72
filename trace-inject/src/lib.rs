//! opbench's CUPTI injection library: loaded by the CUDA driver into every process that
//! initialises CUDA when `CUDA_INJECTION64_PATH` names it (and by NVTX when
//! `NVTX_INJECTION64_PATH` does), it records kernels, copies, memsets, runtime and driver API
//! calls (queries left out unless `OPBENCH_TRACE_API=all`: `api_filter.rs`; through CUPTI's
//! callback API instead of activity kinds with `OPBENCH_TRACE_API_RECORDS=callback`:
//! `api_callbacks.rs`),
//! synchronizations and NVTX ranges into `$OPBENCH_TRACE_DIR/trace-<pid>.raw`
//! (`src/trace/rawfmt.rs` of the opbench crate), appending each buffer soon after CUPTI
//! completes it (decoded by the `writer` thread, not in CUPTI's callback) and asking CUPTI for
//! its buffers every second (`flush`), so a killed process loses at most about a second. The
//! program may pause and resume the recording (`pause`). Preloaded by `trace` as well
//! (`LD_PRELOAD`), it steps aside when the program starts its own CUPTI subscriber
//! (`handover`).
//!
//! Nothing here may unwind into C or abort the traced program: every entry point catches
//! panics, and a failure is written to the raw file as a warning (`W`) line.

#[path = "../../src/trace/rawfmt.rs"]
#[allow(dead_code)]
mod rawfmt;

mod api_callbacks;
mod api_filter;
mod cupti_lib;
mod flush;
mod handover;
mod nvtx;
mod out;
mod pause;
mod records;
mod writer;

pub use handover::{cuptiActivityRegisterCallbacks, cuptiSubscribe};
pub use nvtx::InitializeInjectionNvtx2;
pub use pause::{opbench_trace_pause, opbench_trace_resume};

use cudarc::cupti::sys::{self, CUpti_ActivityKind as Kind};
use std::panic::catch_unwind;

/// CUPTI API versions whose activity-record layouts this build reads: CUDA 13.x (the records
/// of 13.1 and later extend those of 13.0 at their end).
const CUPTI_MIN: u32 = 130000;
const CUPTI_BELOW: u32 = 140000;

/// Activity kinds recorded, and their names for warnings. With graph-level tracing
/// (`OPBENCH_TRACE_GRAPHS=graph`) GRAPH_TRACE is enabled first (CUPTI may then refuse
/// CONCURRENT_KERNEL, which is reported).
const KINDS: [(Kind, &str); 7] = [
    (Kind::CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"),
    (
        Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        "CONCURRENT_KERNEL",
    ),
    (Kind::CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"),
    (Kind::CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"),
    (Kind::CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"),
    (Kind::CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"),
    (Kind::CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"),
];

/// The activity kinds `OPBENCH_TRACE_KINDS` (comma-separated names of `KINDS`) restricts the
/// recording to, for measuring what each costs; None: all of them.
fn only_kinds() -> Option<Vec<String>> {
    let v = std::env::var(rawfmt::KINDS_ENV).ok()?;
    Some(
        v.split(',')
            .map(|s| s.trim().to_ascii_uppercase())
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

/// How often CUPTI looks for full buffers of complete records, in ms (buffers that are not
/// full are asked for by the `flush` thread).
const FLUSH_PERIOD_MS: u32 = 1000;

/// Which periodic flushes run: (CUPTI's flush period, the flush thread). Both by default;
/// `OPBENCH_TRACE_FLUSH` = "off" (neither), "period" or "thread" (that one alone), to
/// measure what each costs a workload.
fn periodic_flushes() -> (bool, bool) {
    match std::env::var(rawfmt::FLUSH_ENV).as_deref() {
        Ok("off") => (false, false),
        Ok("period") => (true, false),
        Ok("thread") => (false, true),
        _ => (true, true),
    }
}

/// Whether graph-level tracing was asked for (`OPBENCH_TRACE_GRAPHS=graph`).
fn graph_level() -> bool {
    std::env::var(rawfmt::GRAPHS_ENV).is_ok_and(|v| v == "graph")
}

/// The activity kinds `init` enables (and a hand-over disables).
pub(crate) fn enabled_kinds() -> Vec<Kind> {
    let graph = graph_level().then_some(Kind::CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    graph.into_iter().chain(KINDS.map(|(k, _)| k)).collect()
}

extern "C" {
    fn atexit(cb: extern "C" fn()) -> i32;
}

fn init() -> Result<(), String> {
    if let Err(e) = cupti_lib::preload() {
        // The file still opens (version unknown) so `trace` can show why nothing came.
        out::start(0)?;
        return Err(e);
    }
    let mut version = 0u32;
    // SAFETY: version is a valid out-pointer.
    let r = unsafe { sys::cuptiGetVersion(&mut version) };
    if r != sys::CUptiResult::CUPTI_SUCCESS {
        return Err(format!("cuptiGetVersion failed: {r:?}; nothing recorded"));
    }
    out::start(version)?;
    cupti_lib::write_note();
    if handover::handed_over() {
        handover::write_lost(0, handover::why());
        return Err(
            "the program started its own CUPTI profiler before CUDA started: nothing recorded"
                .into(),
        );
    }
    if !(CUPTI_MIN..CUPTI_BELOW).contains(&version) {
        return Err(format!(
            "CUPTI API version {version} is outside {CUPTI_MIN}..{CUPTI_BELOW} (CUDA 13.x), \
             whose record layouts this library reads: nothing recorded; rebuild the injection \
             library against this CUDA"
        ));
    }
    if pause::start_paused() {
        pause::started_paused();
    } else {
        attach()?;
        pause::started();
    }
    register_exit();
    Ok(())
}

/// Whether CUPTI keeps activity buffers per host thread (default) rather than global ones;
/// `OPBENCH_TRACE_PER_THREAD_BUFFERS=0` turns it off.
fn per_thread_buffers() -> bool {
    std::env::var(rawfmt::PER_THREAD_ENV).map_or(true, |v| v != "0")
}

/// Sets CUPTI's per-thread activity buffer attribute (before the buffer callbacks are
/// registered and any kind is enabled, as CUPTI requires; cleared again when recording stops,
/// so a profiler of the program's that attaches later starts from CUPTI's default).
pub(crate) fn set_per_thread_buffers(on: bool) -> sys::CUptiResult {
    let mut value = on as u8;
    let mut size = std::mem::size_of::<u8>();
    // SAFETY: a one-byte value and its size, as CUPTI documents for this attribute.
    unsafe {
        sys::cuptiActivitySetAttribute(
            sys::CUpti_ActivityAttribute::CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER,
            &mut size,
            &mut value as *mut u8 as *mut std::ffi::c_void,
        )
    }
}

/// How many times `attach` ran: its warnings are written the first time only (a resume
/// repeats the same settings).
static ATTACHES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Attaches CUPTI and starts recording: the API subscriber or the API kinds, the activity
/// callbacks and kinds, the query filter, the flush period and the flush thread. Called at
/// start and by each resume (`pause.rs`).
pub(crate) fn attach() -> Result<(), String> {
    let first = ATTACHES.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
    let warn = |text: &str| {
        if first {
            out::warn(text)
        }
    };
    // SAFETY: plain CUPTI calls with valid arguments; the callbacks live for the process.
    unsafe {
        if std::env::var(rawfmt::THREAD_IDS_ENV).as_deref() == Ok("cupti") {
            warn(&format!(
                "{}=cupti: API calls carry CUPTI's default thread ids, not the system ids of \
                 NVTX ranges",
                rawfmt::THREAD_IDS_ENV
            ));
        } else {
            let _ = sys::cuptiSetThreadIdType(
                sys::CUpti_ActivityThreadIdType::CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM,
            );
        }
        let only = only_kinds();
        let wants = |name: &str| only.as_ref().is_none_or(|o| o.iter().any(|n| n == name));
        let no_calls = api_filter::record_none();
        if no_calls {
            warn(&format!(
                "{}=none (trace --api none): no runtime or driver API call recorded, so no \
                 launch delay or host wait is known",
                rawfmt::API_ENV
            ));
        }
        let is_api = |k: Kind| {
            k == Kind::CUPTI_ACTIVITY_KIND_RUNTIME || k == Kind::CUPTI_ACTIVITY_KIND_DRIVER
        };
        // The subscriber comes before the activity callbacks, the order Kineto uses.
        let api_by_callback =
            if !no_calls && api_callbacks::wanted() && (wants("RUNTIME") || wants("DRIVER")) {
                match api_callbacks::start(wants("RUNTIME"), wants("DRIVER")) {
                    Ok(warnings) => {
                        for w in warnings {
                            warn(&w);
                        }
                        true
                    }
                    Err(e) => {
                        warn(&format!(
                        "{e}: API calls recorded through the RUNTIME and DRIVER activity kinds \
                         instead"
                    ));
                        false
                    }
                }
            } else {
                false
            };
        if per_thread_buffers() {
            let r = set_per_thread_buffers(true);
            if r != sys::CUptiResult::CUPTI_SUCCESS {
                warn(&format!(
                    "per-thread activity buffers not set ({r:?}): CUPTI's global buffers used"
                ));
            }
        } else {
            warn(&format!(
                "{}=0: CUPTI's global activity buffers, not per-thread ones",
                rawfmt::PER_THREAD_ENV
            ));
        }
        // cudarc's binding: libcupti's own function, not this library's interposed one.
        let r = sys::cuptiActivityRegisterCallbacks(
            Some(records::buffer_requested),
            Some(records::buffer_completed),
        );
        if r != sys::CUptiResult::CUPTI_SUCCESS {
            api_callbacks::stop();
            return Err(format!(
                "cuptiActivityRegisterCallbacks: {r:?} (another profiler attached?); nothing \
                 recorded"
            ));
        }
        let graph_level = graph_level();
        if graph_level {
            let r = sys::cuptiActivityEnable(Kind::CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
            if r != sys::CUptiResult::CUPTI_SUCCESS {
                warn(&format!(
                    "cuptiActivityEnable(GRAPH_TRACE): {r:?}: graphs recorded node by node"
                ));
            }
        }
        for (k, name) in KINDS {
            if no_calls && is_api(k) {
                continue;
            }
            if !wants(name) {
                warn(&format!(
                    "{name} not recorded: {} names only {}",
                    rawfmt::KINDS_ENV,
                    only.as_ref().map(|o| o.join(",")).unwrap_or_default()
                ));
                continue;
            }
            if is_api(k) && api_by_callback {
                continue;
            }
            let r = sys::cuptiActivityEnable(k);
            if r != sys::CUptiResult::CUPTI_SUCCESS {
                let why = if graph_level && k == Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL {
                    " (graph-level tracing is on: kernels outside graphs are not recorded)"
                } else {
                    ""
                };
                warn(&format!(
                    "cuptiActivityEnable({name}): {r:?}: not recorded{why}"
                ));
            }
        }
        if !api_by_callback && !no_calls && !api_filter::record_all() {
            for w in api_filter::leave_out_queries() {
                warn(&w);
            }
        }
        if periodic_flushes().0 {
            let r = sys::cuptiActivityFlushPeriod(FLUSH_PERIOD_MS);
            if r != sys::CUptiResult::CUPTI_SUCCESS {
                warn(&format!(
                    "cuptiActivityFlushPeriod: {r:?}: full buffers wait for the next flush"
                ));
            }
        }
    }
    handover::recording_started();
    let (period, thread) = periodic_flushes();
    if !thread {
        let what = if period { "period" } else { "off" };
        warn(&format!(
            "{}={what}: no flush thread; buffers are written when full and at exit, so a \
             killed process may lose what it recorded",
            rawfmt::FLUSH_ENV
        ));
    } else if let Err(e) = flush::start() {
        warn(&e);
    }
    if !period {
        warn(&format!(
            "{}: CUPTI's flush period not set; full buffers wait for the next flush",
            rawfmt::FLUSH_ENV
        ));
    }
    Ok(())
}

/// Registers the exit handler once per process (from either entry point).
pub(crate) fn register_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: at_exit is a plain extern "C" function that lives for the process.
        unsafe {
            atexit(at_exit);
        }
    });
}

extern "C" fn at_exit() {
    let _ = catch_unwind(|| {
        flush::stop();
        api_callbacks::stop();
        // After a hand-over CUPTI's buffers are the program's, and while paused CUPTI is
        // detached: not flushed from here.
        if !handover::handed_over() && pause::paused().is_none() {
            // SAFETY: a plain CUPTI call; 1 = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED.
            unsafe {
                let _ = sys::cuptiActivityFlushAll(1);
            }
        }
        writer::drain();
        out::finish("exit");
    });
}

/// Called by the CUDA driver when it initialises (cuInit) in a process whose
/// `CUDA_INJECTION64_PATH` names this library. Returns 1 (success) in every case: a failure
/// is written to the raw file, and the program runs on untraced.
#[no_mangle]
pub extern "C" fn InitializeInjection() -> i32 {
    let refused = match catch_unwind(init) {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some("the injection library panicked while starting; nothing recorded".into()),
    };
    if let Some(e) = refused {
        // Nothing more will come: the file ends here, complete (with the reason).
        out::warn(&e);
        out::finish("refused");
    }
    1
}
