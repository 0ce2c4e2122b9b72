//! Keeping a benchmark's artifact on disk as results come in: `<out>.partial` while the run
//! goes on, moved onto `<out>` when it ends; no run loses the finished points of another.

use super::interrupt::{self, kept_line};
use super::replace::check_replace;
use super::SCHEMA_VERSION;
use super::{parse_artifact, validate, write_json_atomic, Artifact, Ceilings, ResultRow, RunInfo};
use crate::env::Env;
use anyhow::{Context, Result};
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// Keeps a benchmark's artifact on disk as results come in.
///
/// From the first finished point on, every save rewrites `<path>.partial` atomically, so a
/// crash keeps what was finished and never touches the last complete artifact at `<path>`.
/// A run that stops before any point finished writes nothing. A `.partial` left by an earlier
/// run that did not finish is moved to `<path>.<its run id>.partial` (and stderr says so)
/// before this run writes its own. `finish` validates and atomically renames the partial
/// file onto `<path>`. A run that stops early prints what it kept and where.
pub struct ArtifactWriter {
    path: PathBuf,
    partial: PathBuf,
    pub artifact: Artifact,
    /// Whether this run's partial file exists (an earlier run's was moved aside first).
    claimed: Cell<bool>,
    finished: bool,
    /// Handle in the list of runs in progress (what Ctrl-C reports).
    active: u64,
}

impl ArtifactWriter {
    /// Starts a run of `kind` that will end up at `path`. Refuses (see `check_replace`) when
    /// `path` holds another benchmark's artifact or a run from another device, unless
    /// `overwrite` (the benchmarks' `--overwrite` flag).
    pub fn start(kind: &str, path: &Path, env: Env, overwrite: bool) -> Result<Self> {
        check_replace(path, kind, &env, overwrite)?;
        let now = crate::env::now_utc();
        let (git_commit, git_dirty) = crate::env::git_state();
        let artifact = Artifact {
            schema_version: SCHEMA_VERSION,
            kind: kind.to_string(),
            run: RunInfo {
                id: crate::env::new_run_id(),
                started_utc: now.clone(),
                finished_utc: now,
                complete: false,
                git_commit,
                git_dirty,
                tool_version: env!("CARGO_PKG_VERSION").to_string(),
                command_line: std::env::args().collect(),
                synthetic: false,
            },
            env,
            ceilings: Ceilings::default(),
            results: Vec::new(),
            compiler: None,
            notes: Vec::new(),
        };
        let partial = partial_of(path, None);
        Ok(ArtifactWriter {
            active: interrupt::register(&partial, path),
            path: path.to_path_buf(),
            partial,
            artifact,
            claimed: Cell::new(false),
            finished: false,
        })
    }

    /// Takes over the `<path>.partial` that another process of the same run handed over
    /// ([`ArtifactWriter::hand_over`]): same run id, rows kept, later rows appended to it.
    /// Refuses a missing, unreadable or complete file, or one of another kind, naming it.
    pub fn resume(kind: &str, path: &Path) -> Result<Self> {
        let partial = partial_of(path, None);
        let artifact = read_partial(&partial)?;
        if artifact.kind != kind {
            anyhow::bail!(
                "{}: a {:?} run (field `kind`), not a {kind:?} one: it cannot be continued by \
                 this benchmark; run the sweep again from the start",
                partial.display(),
                crate::text::one_line(&artifact.kind)
            );
        }
        if artifact.run.complete {
            anyhow::bail!(
                "{}: the run is complete (field `run.complete`), there is nothing to continue: \
                 run the sweep again from the start",
                partial.display()
            );
        }
        let w = ArtifactWriter {
            active: interrupt::register(&partial, path),
            path: path.to_path_buf(),
            partial,
            artifact,
            claimed: Cell::new(true),
            finished: false,
        };
        interrupt::saving(w.active, w.artifact.results.len(), || ());
        Ok(w)
    }

    /// Saves the in-progress copy and leaves it for another process to continue
    /// ([`ArtifactWriter::resume`]); nothing is moved and no "stopped" line is printed.
    /// Returns the partial file.
    pub fn hand_over(mut self) -> Result<PathBuf> {
        self.flush()?;
        self.finished = true;
        Ok(self.partial.clone())
    }

    /// Where the in-progress copy lives (once a point has finished).
    pub fn partial_path(&self) -> &Path {
        &self.partial
    }

    /// Adds one finished point and saves. A library row gets its library's version as its
    /// `code` (`code_id::tag_library`).
    pub fn push(&mut self, mut row: ResultRow) -> Result<()> {
        crate::code_id::tag_library(&self.artifact.kind, &mut row);
        self.artifact.results.push(row);
        self.flush()
    }

    /// Saves the in-progress copy. Before the first finished point there is nothing worth
    /// keeping, and nothing is written.
    pub fn flush(&self) -> Result<()> {
        if self.artifact.results.is_empty() && !self.artifact.run.complete {
            return Ok(());
        }
        if !self.claimed.get() {
            keep_earlier_partial(&self.partial, &self.path)?;
            self.claimed.set(true);
        }
        interrupt::saving(self.active, self.artifact.results.len(), || {
            write_json_atomic(&self.partial, &self.artifact)
        })
    }

    /// Marks the run complete, validates it and moves it onto the final path.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.artifact.run.finished_utc = crate::env::now_utc();
        self.artifact.run.complete = true;
        validate(&self.artifact).with_context(|| {
            format!(
                "the finished artifact is invalid; the raw results stay in {}",
                self.partial.display()
            )
        })?;
        self.flush()?;
        interrupt::finishing(self.active, || std::fs::rename(&self.partial, &self.path))
            .with_context(|| {
                format!(
                    "moving {} onto {}",
                    self.partial.display(),
                    self.path.display()
                )
            })?;
        self.finished = true;
        Ok(self.path.clone())
    }
}

impl Drop for ArtifactWriter {
    /// A run that ends without `finish` (an error, a panic) after saving points says what it
    /// kept and where.
    fn drop(&mut self) {
        interrupt::unregister(self.active);
        if !self.finished && self.claimed.get() {
            eprintln!(
                "run stopped before its end: {}",
                kept_line(self.artifact.results.len(), &self.partial, &self.path)
            );
        }
    }
}

/// Reads a run's partial file; errors name it and say what to do.
fn read_partial(partial: &Path) -> Result<Artifact> {
    let text = crate::input::read_text(
        partial,
        "partial artifact",
        crate::input::ARTIFACT_MAX_BYTES,
    )
    .with_context(|| {
        format!(
            "the run to continue keeps its rows in {}: it must exist and be readable",
            partial.display()
        )
    })?;
    parse_artifact(&text).with_context(|| {
        format!(
            "{}: not a valid opbench artifact, so the run cannot be continued; run the sweep \
             again from the start",
            partial.display()
        )
    })
}

/// `<path>.partial`, or with a tag, `<path>.<tag>.partial`.
fn partial_of(path: &Path, tag: Option<&str>) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    if let Some(t) = tag {
        p.push(format!(".{t}"));
    }
    p.push(".partial");
    p.into()
}

/// Moves an earlier run's unfinished `partial` out of the way under a name of its own, unless
/// it holds no finished point. Says so on stderr.
fn keep_earlier_partial(partial: &Path, path: &Path) -> Result<()> {
    if !partial.exists() {
        return Ok(());
    }
    let old = crate::input::read_text(
        partial,
        "partial artifact",
        crate::input::ARTIFACT_MAX_BYTES,
    )
    .ok()
    .and_then(|t| parse_artifact(&t).ok());
    if old.as_ref().is_some_and(|a| a.results.is_empty()) {
        return Ok(());
    }
    let base = match &old {
        Some(a) => a.run.id.clone(),
        None => format!("unreadable-{}", crate::env::new_run_id()),
    };
    let mut kept = partial_of(path, Some(&base));
    let mut n = 2;
    while kept.exists() {
        kept = partial_of(path, Some(&format!("{base}-{n}")));
        n += 1;
    }
    std::fs::rename(partial, &kept).with_context(|| {
        format!(
            "moving the earlier run's unfinished {} to {} (nothing was written: move it yourself \
             and run again)",
            partial.display(),
            kept.display()
        )
    })?;
    let what = match &old {
        Some(a) => format!(
            "{} finished point(s) of an earlier run that did not finish (run {}, started {})",
            a.results.len(),
            a.run.id,
            a.run.started_utc
        ),
        None => "an earlier run's file that cannot be read as an artifact".to_string(),
    };
    eprintln!(
        "{} held {what}: kept it as {}",
        partial.display(),
        kept.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Status;

    fn ok_row(i: i64) -> ResultRow {
        let mut r = ResultRow::new("user_kernel", "k").param("i", i);
        r.status = Status::Failed;
        r.notes.push("test row".into());
        r
    }

    #[test]
    fn a_handed_over_run_is_continued_by_another_writer_and_finished_once() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("kernels.json");
        let mut w = ArtifactWriter::start("kernels", &out, Env::cpu(), false).unwrap();
        let id = w.artifact.run.id.clone();
        w.push(ok_row(0)).unwrap();
        let partial = w.hand_over().unwrap();
        assert_eq!(partial, dir.path().join("kernels.json.partial"));
        assert!(partial.exists() && !out.exists());

        let mut w = ArtifactWriter::resume("kernels", &out).unwrap();
        assert_eq!(w.artifact.run.id, id);
        w.push(ok_row(1)).unwrap();
        let done = w.finish().unwrap();
        let a = crate::artifact::read_artifact(&done).unwrap();
        assert_eq!((a.run.id.as_str(), a.results.len()), (id.as_str(), 2));
        assert!(a.run.complete);
        // Nothing was moved aside as an earlier run's leftovers.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn resume_refuses_a_missing_complete_or_foreign_partial() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("kernels.json");
        let e = format!(
            "{:#}",
            ArtifactWriter::resume("kernels", &out).err().unwrap()
        );
        assert!(
            e.contains("kernels.json.partial") && e.contains("must exist"),
            "{e}"
        );

        let mut w = ArtifactWriter::start("gemm", &out, Env::cpu(), false).unwrap();
        w.push(ok_row(0)).unwrap();
        w.hand_over().unwrap();
        let e = format!(
            "{:#}",
            ArtifactWriter::resume("kernels", &out).err().unwrap()
        );
        assert!(
            e.contains("field `kind`") && e.contains("from the start"),
            "{e}"
        );

        std::fs::write(dir.path().join("kernels.json.partial"), "{").unwrap();
        let e = format!(
            "{:#}",
            ArtifactWriter::resume("kernels", &out).err().unwrap()
        );
        assert!(e.contains("not a valid opbench artifact"), "{e}");
    }
}
