//! The flush thread. CUPTI's periodic flush (`cuptiActivityFlushPeriod`) hands over only
//! buffers that are full and whose records are all complete, so a process that fills less than
//! one buffer (8 MiB, some 40,000 kernels) and is then SIGKILLed loses everything it recorded.
//! Every second this thread asks CUPTI for every buffer whose records are complete, full or not
//! (`cuptiActivityFlushAll(0)`: CUPTI documents this default flush as the one to call at a
//! regular interval from a separate thread). A forced flush is not used here: it would hand
//! over kernels still running, without their end time, and CUPTI delivers a record only once.
//! The API lines the callbacks collected (`api_callbacks`) are written on the same beat.

use cudarc::cupti::sys;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How often buffers are asked for.
pub const PERIOD: Duration = Duration::from_secs(1);

/// (running, stopped): `running` while the thread exists; `stopped` once `stop` was called,
/// for good (after a hand-over or at exit).
static STATE: Mutex<(bool, bool)> = Mutex::new((false, false));
static WAKE: Condvar = Condvar::new();
/// The process that started the thread: a child forked without exec has no such thread, and
/// the state it inherited may be locked by a flush that was under way at the fork.
static OWNER: AtomicU32 = AtomicU32::new(0);

fn lock() -> std::sync::MutexGuard<'static, (bool, bool)> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the thread (once per process). Its flushes run with the state locked, so `stop`
/// returns only when none is under way.
pub fn start() -> Result<(), String> {
    let mut s = lock();
    if s.0 || s.1 {
        return Ok(());
    }
    s.0 = true;
    OWNER.store(std::process::id(), Ordering::SeqCst);
    drop(s);
    let spawned = std::thread::Builder::new()
        .name("opbench-trace-flush".into())
        .spawn(|| {
            let mut s = lock();
            loop {
                s = WAKE
                    .wait_timeout(s, PERIOD)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                if s.1 {
                    break;
                }
                // SAFETY: a plain CUPTI call; 0 = the default (unforced) flush.
                let _ = std::panic::catch_unwind(|| unsafe { sys::cuptiActivityFlushAll(0) });
                crate::api_callbacks::flush();
            }
            s.0 = false;
        });
    if let Err(e) = spawned {
        lock().0 = false;
        return Err(format!(
            "cannot start the flush thread ({e}): buffers are written when full and at exit, \
             so a killed process may lose everything"
        ));
    }
    Ok(())
}

/// Stops the thread for good and waits for a flush under way to end. Safe to call more than
/// once, when the thread never started, and in a forked child (which has no thread to stop).
pub fn stop() {
    if OWNER.load(Ordering::SeqCst) != std::process::id() {
        return;
    }
    let mut s = lock();
    s.1 = true;
    WAKE.notify_all();
}
