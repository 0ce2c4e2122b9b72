//! What `trace --diff` compares: the kernel summary of a trace given as its raw files (an
//! output folder of `trace`, or its raw/ folder) or, when there are none, as its trace.sqlite
//! (the output folder of a `--from-raw` run, a committed trace under artifacts/traces/).

use super::kernsum::{kernel_summary, KernelStat};
use super::raw::read_raw_dir;
use super::record::Activity;
use super::tool::{RAW_DIR, SQLITE};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// The kernel summary of the trace in `dir` (named in errors as `--diff DIR`).
pub fn kernels_of(dir: &Path) -> Result<Vec<KernelStat>> {
    let raw = dir.join(RAW_DIR);
    let raw = if raw.is_dir() { raw } else { dir.to_path_buf() };
    if !dir.is_dir() {
        bail!(
            "--diff {}: not a folder; give an output folder of `trace` (or its raw/ folder)",
            dir.display()
        );
    }
    let w = read_raw_dir(&raw).with_context(|| format!("--diff {}", dir.display()))?;
    if !w.processes.is_empty() {
        return Ok(kernel_summary(w.kernels()));
    }
    let db = dir.join(SQLITE);
    if db.is_file() {
        return sqlite_kernels(&db).map(|k| kernel_summary(&k));
    }
    let xz = dir.join(format!("{SQLITE}.xz"));
    if xz.is_file() {
        bail!(
            "--diff {}: the trace is compressed ({}): decompress it first (`xz -dk {}`)",
            dir.display(),
            xz.display(),
            xz.display()
        );
    }
    bail!(
        "--diff {}: no raw trace files (trace-PID.raw) in {} and no {SQLITE}; give an output \
         folder of `trace` or its raw/ folder",
        dir.display(),
        raw.display()
    )
}

/// The kernel records of a trace.sqlite that `trace` wrote (nsys' table and column names).
fn sqlite_kernels(db: &Path) -> Result<Vec<Activity>> {
    let open = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let c = rusqlite::Connection::open_with_flags(db, open)
        .with_context(|| format!("--diff: opening {}", db.display()))?;
    let sql = "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
               JOIN StringIds s ON s.id = COALESCE(k.mangledName, k.demangledName)";
    let read = || -> rusqlite::Result<Vec<Activity>> {
        let mut st = c.prepare(sql)?;
        let rows = st.query_map([], |r| {
            let (start, end): (i64, i64) = (r.get(0)?, r.get(1)?);
            let name: String = r.get(2)?;
            let (start_ns, end_ns) = (start.max(0) as u64, end.max(start).max(0) as u64);
            // The diff reads names and times alone: no launch shape is stored for it.
            Ok(Activity {
                grid: [0; 3],
                block: [0; 3],
                ..Activity::kernel(&name, start_ns, end_ns)
            })
        })?;
        rows.collect()
    };
    read().with_context(|| {
        format!(
            "--diff: {} is not a trace.sqlite of `trace` (its kernel table cannot be read)",
            db.display()
        )
    })
}
