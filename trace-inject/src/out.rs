//! The process's raw file: opened once (`$OPBENCH_TRACE_DIR/trace-<pid>.raw`), each write one
//! `write(2)` of whole lines in append mode, so a killed process leaves only whole lines (or
//! one torn last line, which readers drop). Kernel, API and range names are interned as `N`
//! lines the first time they appear.

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
    /// The id of `name`, appending its `N` line to `buf` the first time.
    pub fn name_id(&mut self, name: &str, buf: &mut String) -> u32 {
        let names = self.names.get_or_insert_with(HashMap::new);
        if let Some(&id) = names.get(name) {
            return id;
        }
        let id = names.len() as u32;
        rawfmt::string(buf, id, name);
        names.insert(name.to_string(), id);
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

/// Appends lines built by `f` (which may intern names) in one write.
pub fn with(f: impl FnOnce(&mut Out, &mut String)) {
    let mut o = lock();
    if o.file.is_none() || o.finished {
        return;
    }
    let mut buf = String::with_capacity(1 << 16);
    f(&mut o, &mut buf);
    o.write(&buf);
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
