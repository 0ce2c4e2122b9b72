//! The writer thread. CUPTI hands each completed buffer to `records::buffer_completed`, which
//! only queues it here and returns; this thread decodes it into raw-file lines and writes them.
//! A buffer holds some 40,000 records and takes milliseconds to decode, and CUPTI may keep the
//! program's own threads waiting while its completion callback runs (torch.profiler's Kineto,
//! likewise, only keeps the buffer in its callback). `drain` waits until the thread has written
//! every buffer queued: a pause, a hand-over and the exit handler call it after their forced
//! flush, so their `S` and `E` lines follow every record.
//! `OPBENCH_TRACE_DECODE=inline` decodes in CUPTI's callback instead, to measure the difference.

use crate::rawfmt;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

/// A completed buffer: CUPTI's records and the dropped-record count it reported with them.
pub struct Job {
    pub buffer: *mut u8,
    pub valid: usize,
    pub dropped: usize,
}

// SAFETY: a completed buffer belongs to this library alone (CUPTI no longer touches it), and
// one thread at a time decodes and frees it.
unsafe impl Send for Job {}

struct Queue {
    jobs: VecDeque<Job>,
    /// The thread is decoding a buffer it took off the queue.
    busy: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    jobs: VecDeque::new(),
    busy: false,
});
static CHANGED: Condvar = Condvar::new();
/// The process whose writer thread exists (0: none yet). A child forked without exec has no
/// such thread, and the queue it inherited may be locked by the parent's thread: it decodes
/// inline and never touches the queue.
static OWNER: AtomicU32 = AtomicU32::new(0);
/// The thread could not be started: decode inline.
static NO_THREAD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn lock() -> std::sync::MutexGuard<'static, Queue> {
    QUEUE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether buffers are decoded in CUPTI's callback (`OPBENCH_TRACE_DECODE=inline`).
pub fn inline() -> bool {
    std::env::var(rawfmt::DECODE_ENV).is_ok_and(|v| v == "inline")
}

/// Whether this process's writer thread runs, starting it the first time. False in a forked
/// child, when decoding inline was asked for, or when the thread could not start.
fn thread_running() -> bool {
    static START: std::sync::Once = std::sync::Once::new();
    let pid = std::process::id();
    let owner = OWNER.load(Ordering::SeqCst);
    if owner != 0 {
        return owner == pid;
    }
    if NO_THREAD.load(Ordering::SeqCst) || inline() {
        return false;
    }
    START.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("opbench-trace-writer".into())
            .spawn(run);
        match spawned {
            Ok(_) => OWNER.store(pid, Ordering::SeqCst),
            Err(e) => {
                NO_THREAD.store(true, Ordering::SeqCst);
                crate::out::warn(&format!(
                    "cannot start the writer thread ({e}): buffers are decoded in CUPTI's \
                     callback"
                ));
            }
        }
    });
    OWNER.load(Ordering::SeqCst) == pid
}

fn run() {
    loop {
        let job = {
            let mut q = lock();
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    q.busy = true;
                    break j;
                }
                q = CHANGED.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        crate::records::process(job);
        lock().busy = false;
        CHANGED.notify_all();
    }
}

/// Queues a completed buffer for the writer thread (decodes it here when there is none).
pub fn submit(job: Job) {
    if !thread_running() {
        crate::records::process(job);
        return;
    }
    lock().jobs.push_back(job);
    CHANGED.notify_all();
}

/// Returns once every buffer submitted so far is decoded and written by the thread.
pub fn drain() {
    if OWNER.load(Ordering::SeqCst) != std::process::id() {
        return;
    }
    let mut q = lock();
    while q.busy || !q.jobs.is_empty() {
        q = CHANGED.wait(q).unwrap_or_else(|p| p.into_inner());
    }
}
