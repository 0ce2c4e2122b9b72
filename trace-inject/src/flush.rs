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

/// The flush thread's state. A thread flushes while `generation` is the one it started with;
/// `pause` moves the generation on (the thread ends) and `start` begins a new one.
struct State {
    /// A thread of the current generation exists.
    running: bool,
    /// `stop` was called: no thread starts again (after a hand-over or at exit).
    stopped: bool,
    generation: u64,
}

static STATE: Mutex<State> = Mutex::new(State {
    running: false,
    stopped: false,
    generation: 0,
});
static WAKE: Condvar = Condvar::new();
/// The process that started the thread: a child forked without exec has no such thread, and
/// the state it inherited may be locked by a flush that was under way at the fork.
static OWNER: AtomicU32 = AtomicU32::new(0);

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the thread (unless one is running or `stop` was called). Its flushes run with the
/// state locked, so `pause` and `stop` return only when none is under way.
pub fn start() -> Result<(), String> {
    let mut s = lock();
    if s.running || s.stopped {
        return Ok(());
    }
    s.running = true;
    let generation = s.generation;
    OWNER.store(std::process::id(), Ordering::SeqCst);
    drop(s);
    let spawned = std::thread::Builder::new()
        .name("opbench-trace-flush".into())
        .spawn(move || {
            let mut s = lock();
            loop {
                s = WAKE
                    .wait_timeout(s, PERIOD)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                if s.stopped || s.generation != generation {
                    break;
                }
                // SAFETY: a plain CUPTI call; 0 = the default (unforced) flush.
                let _ = std::panic::catch_unwind(|| unsafe { sys::cuptiActivityFlushAll(0) });
                crate::api_callbacks::flush();
            }
            if s.generation == generation {
                s.running = false;
            }
        });
    if let Err(e) = spawned {
        lock().running = false;
        return Err(format!(
            "cannot start the flush thread ({e}): buffers are written when full and at exit, \
             so a killed process may lose everything"
        ));
    }
    Ok(())
}

/// Ends the running thread until the next `start` (recording paused), after any flush under
/// way.
pub fn pause() {
    if OWNER.load(Ordering::SeqCst) != std::process::id() {
        return;
    }
    let mut s = lock();
    s.generation += 1;
    s.running = false;
    WAKE.notify_all();
}

/// Stops the thread for good and waits for a flush under way to end. Safe to call more than
/// once, when the thread never started, and in a forked child (which has no thread to stop).
pub fn stop() {
    if OWNER.load(Ordering::SeqCst) != std::process::id() {
        return;
    }
    let mut s = lock();
    s.stopped = true;
    WAKE.notify_all();
}
