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
    /// Record lines written, the most that may be (0: no limit), and those not written.
    kept: u64,
    max_records: u64,
    not_kept: u64,
    finished: bool,
}

pub static OUT: Mutex<Out> = Mutex::new(Out {
    file: None,
    pid: 0,
    names: None,
    api_names: None,
    dropped: 0,
    kept: 0,
    max_records: 0,
    not_kept: 0,
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

    /// Writes record lines up to the `--max-records` limit; the rest are counted in an `X`
    /// line.
    pub fn write_records(&mut self, lines: &str) {
        let n = lines.bytes().filter(|&b| b == b'\n').count() as u64;
        if self.max_records == 0 || self.kept + n <= self.max_records {
            self.kept += n;
            self.write(lines);
            return;
        }
        let room = self.max_records.saturating_sub(self.kept);
        let cut = match room {
            0 => 0,
            r => lines
                .match_indices('\n')
                .nth(r as usize - 1)
                .map_or(0, |(i, _)| i + 1),
        };
        let mut buf = lines[..cut].to_string();
        self.kept += room;
        self.not_kept += n - room;
        rawfmt::not_kept(&mut buf, self.not_kept);
        self.write(&buf);
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
    o.max_records = std::env::var(rawfmt::MAX_RECORDS_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
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

/// Appends record lines in one write, up to the `--max-records` limit.
pub fn append_records(lines: &str) {
    with(|o| o.write_records(lines));
}

/// The last lines: dropped-record total and the clean end.
pub fn finish(why: &str) {
    let mut o = lock();
    if o.file.is_none() || o.finished {
        return;
    }
    let mut buf = String::new();
    rawfmt::dropped(&mut buf, o.dropped);
    if o.not_kept > 0 {
        rawfmt::not_kept(&mut buf, o.not_kept);
    }
    rawfmt::end(&mut buf, why);
    o.write(&buf);
    o.finished = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out_to(path: &std::path::Path, max_records: u64) -> Out {
        Out {
            file: Some(File::create(path).unwrap()),
            pid: std::process::id(),
            names: None,
            api_names: None,
            dropped: 0,
            kept: 0,
            max_records,
            not_kept: 0,
            finished: false,
        }
    }

    #[test]
    fn records_past_the_limit_are_counted_in_x_lines_not_written() {
        let path =
            std::env::temp_dir().join(format!("opbench-out-test-{}.raw", std::process::id()));
        let mut o = out_to(&path, 3);
        o.write_records("K\t1\nK\t2\n");
        o.write_records("K\t3\nK\t4\nK\t5\n");
        o.write_records("K\t6\n");
        drop(o);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(text, "K\t1\nK\t2\nK\t3\nX\t2\nX\t3\n");
    }

    #[test]
    fn no_limit_writes_everything() {
        let path =
            std::env::temp_dir().join(format!("opbench-out-test0-{}.raw", std::process::id()));
        let mut o = out_to(&path, 0);
        o.write_records("K\t1\nK\t2\n");
        drop(o);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(text, "K\t1\nK\t2\n");
    }
}
