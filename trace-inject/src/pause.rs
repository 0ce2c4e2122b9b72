//! Recording paused and resumed by the program (`opbench_trace_pause`, `opbench_trace_resume`;
//! from Python, python/opbench/trace_control.py), the way `cudaProfilerStop`/`Start` bound what Nsight
//! Systems records. A pause hands over every record held (forced flush), stops the flush
//! thread and the API subscriber and detaches CUPTI from the process (`cuptiFinalize`), so the
//! program runs between a pause and the next resume as it would untraced; a resume attaches
//! again (`crate::attach`). With `OPBENCH_TRACE_START=paused` (`trace --start-paused`) the
//! process starts paused and records only from its first resume. Each change writes an `S`
//! line (CUPTI time, on/off).
//!
//! CUPTI may number correlation ids afresh after it is attached again, so ids written after a
//! resume are moved past every id written before it (`correlation`): a kernel never joins an
//! API call of another recording span.

use crate::{api_callbacks, flush, handover, out, rawfmt};
use cudarc::cupti::sys::{self, CUptiResult};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// Whether CUPTI is attached and recording (false before the first resume of a process that
/// started paused, and after each pause).
static ATTACHED: Mutex<bool> = Mutex::new(false);
/// Added to every correlation id written (0 until the first resume after a pause).
static CORRELATION_BASE: AtomicU32 = AtomicU32::new(0);
/// The largest correlation id written so far (base included).
static CORRELATION_MAX: AtomicU32 = AtomicU32::new(0);
/// CUPTI time of the last pause (the `L` line's time if the program's profiler takes over
/// while the library is paused).
static PAUSED_AT_NS: AtomicU64 = AtomicU64::new(0);

fn attached() -> std::sync::MutexGuard<'static, bool> {
    ATTACHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the process is to start paused (`OPBENCH_TRACE_START=paused`).
pub fn start_paused() -> bool {
    std::env::var(rawfmt::START_ENV).is_ok_and(|v| v == "paused")
}

/// Whether recording is paused now; with the time it paused at.
pub fn paused() -> Option<u64> {
    (!*attached()).then(|| PAUSED_AT_NS.load(Ordering::SeqCst))
}

/// A correlation id as written: 0 (none) stays 0; others move past the earlier spans' ids.
pub fn correlation(id: u32) -> u32 {
    if id == 0 {
        return 0;
    }
    let v = id.wrapping_add(CORRELATION_BASE.load(Ordering::Relaxed));
    CORRELATION_MAX.fetch_max(v, Ordering::Relaxed);
    v
}

fn now_ns() -> u64 {
    let mut t = 0u64;
    // SAFETY: a valid out-pointer.
    unsafe {
        let _ = sys::cuptiGetTimestamp(&mut t);
    }
    t
}

fn write_state(ns: u64, on: bool) {
    let mut line = String::new();
    rawfmt::recording(&mut line, ns, on);
    out::append(&line);
}

/// Marks the process attached (`InitializeInjection` recorded from the start).
pub fn started() {
    *attached() = true;
}

/// Marks the process as started paused: the `S` line, at time 0 (before anything ran).
pub fn started_paused() {
    *attached() = false;
    write_state(0, false);
}

/// Pauses. Err when recording was not on or the program's own profiler took over.
fn pause() -> Result<(), String> {
    let mut on = attached();
    if handover::handed_over() {
        return Err("the program's own CUPTI profiler took over: nothing to pause".into());
    }
    if !*on {
        return Err("recording is already paused".into());
    }
    flush::pause();
    api_callbacks::stop();
    let t = now_ns();
    // SAFETY: plain CUPTI calls; 1 = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED (the program waited for
    // its GPU work, so every record is complete).
    let r = unsafe {
        let _ = sys::cuptiActivityFlushAll(1);
        let _ = crate::set_per_thread_buffers(false);
        sys::cuptiFinalize()
    };
    crate::writer::drain();
    if r != CUptiResult::CUPTI_SUCCESS {
        out::warn(&format!(
            "cuptiFinalize: {r:?}: CUPTI may stay attached while recording is paused"
        ));
    }
    PAUSED_AT_NS.store(t, Ordering::SeqCst);
    CORRELATION_BASE.store(CORRELATION_MAX.load(Ordering::SeqCst), Ordering::SeqCst);
    *on = false;
    write_state(t, false);
    Ok(())
}

/// Resumes. Err when recording was on, the program's profiler took over, or CUPTI refused.
fn resume() -> Result<(), String> {
    let mut on = attached();
    if handover::handed_over() {
        return Err("the program's own CUPTI profiler took over: recording cannot resume".into());
    }
    if *on {
        return Err("recording is already on".into());
    }
    if !out::is_open() {
        return Err(
            "the raw file is not open (the library refused to start): nothing to resume".into(),
        );
    }
    crate::attach()?;
    *on = true;
    write_state(now_ns(), true);
    Ok(())
}

/// 0 when done, else 1 and the reason on stderr and in the raw file.
fn answer(what: &str, r: std::thread::Result<Result<(), String>>) -> i32 {
    let e = match r {
        Ok(Ok(())) => return 0,
        Ok(Err(e)) => e,
        Err(_) => "the injection library panicked".into(),
    };
    let text = format!("opbench_trace_{what}: {e}");
    eprintln!("opbench trace: {text}");
    out::warn(&text);
    1
}

/// Stops recording until `opbench_trace_resume`: the program's GPU work so far must be done
/// (synchronize first), since every record held is handed over now. Returns 0, or 1 when
/// recording was not on (the reason goes to stderr and the raw file).
#[no_mangle]
pub extern "C" fn opbench_trace_pause() -> i32 {
    answer("pause", std::panic::catch_unwind(pause))
}

/// Starts recording again after `opbench_trace_pause` (or in a process started paused).
/// Returns 0, or 1 when recording was already on or could not start (the reason goes to
/// stderr and the raw file).
#[no_mangle]
pub extern "C" fn opbench_trace_resume() -> i32 {
    answer("resume", std::panic::catch_unwind(resume))
}
