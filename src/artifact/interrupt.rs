//! Runs in progress and what a stopped one says: how many finished points it kept and where,
//! printed when the run fails part-way and when Ctrl-C or SIGTERM ends the process.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// One artifact being written.
#[derive(Debug, Clone)]
struct Entry {
    id: u64,
    /// Where the finished points are saved while the run goes on.
    partial: PathBuf,
    /// The artifact the run will replace when it ends.
    path: PathBuf,
    /// Finished points saved in `partial` so far.
    points: usize,
}

static ACTIVE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn active() -> MutexGuard<'static, Vec<Entry>> {
    // A panic elsewhere while the lock was held leaves the list itself intact.
    ACTIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Adds a run in progress; returns its handle for [`saving`] and [`unregister`].
pub(super) fn register(partial: &Path, path: &Path) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    active().push(Entry {
        id,
        partial: partial.to_path_buf(),
        path: path.to_path_buf(),
        points: 0,
    });
    id
}

/// Removes a run that finished or stopped.
pub(super) fn unregister(id: u64) {
    active().retain(|e| e.id != id);
}

/// Runs `write` (which saves `points` finished points) with the list locked, so a signal that
/// arrives meanwhile waits for the file to be complete before the process exits.
pub(super) fn saving<T>(id: u64, points: usize, write: impl FnOnce() -> T) -> T {
    let mut list = active();
    let out = write();
    if let Some(e) = list.iter_mut().find(|e| e.id == id) {
        e.points = points;
    }
    out
}

/// Runs `finish` (which moves the run's partial file onto its final path) with the list
/// locked, and removes the run when it succeeds: a signal never reports a file just moved.
pub(super) fn finishing<T, E>(id: u64, finish: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let mut list = active();
    let out = finish();
    if out.is_ok() {
        list.retain(|e| e.id != id);
    }
    out
}

/// What a run that stopped before its end kept: one line for stderr.
pub fn kept_line(points: usize, partial: &Path, path: &Path) -> String {
    if points == 0 {
        format!(
            "no point had finished: nothing was written ({} was left as it was)",
            path.display()
        )
    } else {
        format!(
            "{points} finished point(s) kept in {} ({} was left as it was)",
            partial.display(),
            path.display()
        )
    }
}

/// The lines an interrupted process prints: one per run in progress.
pub fn interrupted_lines() -> Vec<String> {
    active()
        .iter()
        .map(|e| format!("interrupted: {}", kept_line(e.points, &e.partial, &e.path)))
        .collect()
}

/// Handles Ctrl-C (SIGINT) and SIGTERM on a thread of their own: print
/// [`interrupted_lines`], then exit with 128 + the signal number. The signals are blocked in
/// the calling thread and so in every thread it starts afterwards: call this first in `main`.
/// Child processes start with no signal blocked (the standard library resets the mask).
#[cfg(unix)]
pub fn install() {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    if set.thread_block().is_err() {
        return;
    }
    let waiter = std::thread::Builder::new()
        .name("opbench-signals".into())
        .spawn(move || {
            let Ok(sig) = set.wait() else { return };
            for line in interrupted_lines() {
                eprintln!("\n{line}");
            }
            std::process::exit(128 + sig as i32);
        });
    if waiter.is_err() {
        // No thread to answer them: let the signals end the process as they normally do.
        let _ = set.thread_unblock();
    }
}

/// Without Unix signals, Ctrl-C ends the process as it normally does.
#[cfg(not(unix))]
pub fn install() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_the_count_and_both_files() {
        let id = register(Path::new("/x/a.json.partial"), Path::new("/x/a.json"));
        saving(id, 3, || ());
        let lines = interrupted_lines();
        let mine = lines
            .iter()
            .find(|l| l.contains("/x/a.json.partial"))
            .expect("registered run listed");
        assert!(
            mine.starts_with("interrupted: 3 finished point(s)"),
            "{mine}"
        );
        unregister(id);
        assert!(!interrupted_lines()
            .iter()
            .any(|l| l.contains("/x/a.json.partial")));
        // A run whose final rename fails is still listed; one whose rename worked is not.
        let id = register(Path::new("/x/c.json.partial"), Path::new("/x/c.json"));
        saving(id, 1, || ());
        let listed = || {
            interrupted_lines()
                .iter()
                .any(|l| l.contains("/x/c.json.partial"))
        };
        assert!(finishing(id, || Err::<(), _>("disk full")).is_err());
        assert!(listed());
        finishing(id, || Ok::<_, ()>(())).unwrap();
        assert!(!listed());
        let none = kept_line(0, Path::new("p"), Path::new("/x/b.json"));
        assert!(none.contains("nothing was written"), "{none}");
    }
}
