//! The process's raw file: opened once (`$OPBENCH_TRACE_DIR/trace-<pid>.raw`), each write one
//! `write(2)` of whole lines in append mode, so a killed process leaves only whole lines (or
//! one torn last line, which readers drop). Kernel, API and range names are interned as `N`
//! lines, written the moment a name is first seen: every line that uses the name is written
//! later, whichever thread writes it. CUPTI's buffers are decoded without holding the lock
//! (only each name lookup takes it), so the program's threads recording NVTX ranges meanwhile
//! wait for no more than one lookup or one write.

use crate::rawfmt;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::Mutex;

pub struct Out {
    file: Option<File>,
    /// The process that opened `file`: a child forked without exec shares the handle but must
    /// not write into its parent's file.
    pid: u32,
    names: Option<HashMap<String, u32>>,
    /// API function name ids by (driver, callback id): one CUPTI name lookup per function.
    pub api_names: Option<HashMap<(bool, u32), u32>>,
    pub dropped: u64,
    finished: bool,
}

pub static OUT: Mutex<Out> = Mutex::new(Out {
    file: None,
    pid: 0,
    names: None,
    api_names: None,
    dropped: 0,
    finished: false,
});

impl Out {
    /// The id of `name`; the first time, its `N` line goes to the file at once.
    pub fn name_id(&mut self, name: &str) -> u32 {
        let names = self.names.get_or_insert_with(HashMap::new);
        if let Some(&id) = names.get(name) {
            return id;
        }
        let id = names.len() as u32;
        names.insert(name.to_string(), id);
        let mut line = String::new();
        rawfmt::string(&mut line, id, name);
        self.write(&line);
        id
    }

    pub fn write(&mut self, buf: &str) {
        if self.pid != std::process::id() {
            return;
        }
        if let Some(f) = &mut self.file {
            // A failed write (disk full) cannot be reported anywhere better than stderr.
            if let Err(e) = f.write_all(buf.as_bytes()) {
                eprintln!("opbench trace: writing the raw trace failed: {e}");
                self.file = None;
            }
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Out> {
    OUT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Opens the raw file and writes its header. Without `OPBENCH_TRACE_DIR` (the library loaded
/// by something else than `trace`) nothing is recorded.
pub fn start(cupti_version: u32) -> Result<(), String> {
    let mut o = lock();
    if o.file.is_some() {
        return Ok(());
    }
    let dir = std::env::var_os(rawfmt::OUT_DIR_ENV).ok_or_else(|| {
        format!(
            "{} is not set: run the program under `trace`",
            rawfmt::OUT_DIR_ENV
        )
    })?;
    let pid = std::process::id();
    let path = std::path::Path::new(&dir).join(rawfmt::file_name(pid));
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    o.file = Some(f);
    o.pid = pid;
    let mut buf = String::new();
    rawfmt::header(&mut buf, pid, cupti_version);
    o.write(&buf);
    Ok(())
}

/// Writes a warning line (to stderr when no file could be opened).
pub fn warn(text: &str) {
    let mut o = lock();
    if o.file.is_none() {
        eprintln!("opbench trace: {text}");
        return;
    }
    let mut buf = String::new();
    rawfmt::warning(&mut buf, text);
    o.write(&buf);
}

/// Runs `f` on the open file's state (None when no file is open or it was closed).
pub fn with<R>(f: impl FnOnce(&mut Out) -> R) -> Option<R> {
    let mut o = lock();
    if o.file.is_none() || o.finished {
        return None;
    }
    Some(f(&mut o))
}

/// Whether the raw file is open and not finished.
pub fn is_open() -> bool {
    with(|_| ()).is_some()
}

/// The id of `name` (its `N` line written the first time); None without an open file.
pub fn intern(name: &str) -> Option<u32> {
    with(|o| o.name_id(name))
}

/// Appends whole lines in one write.
pub fn append(lines: &str) {
    with(|o| o.write(lines));
}

/// The last lines: dropped-record total and the clean end.
pub fn finish(why: &str) {
    let mut o = lock();
    if o.file.is_none() || o.finished {
        return;
    }
    let mut buf = String::new();
    rawfmt::dropped(&mut buf, o.dropped);
    rawfmt::end(&mut buf, why);
    o.write(&buf);
    o.finished = true;
}
