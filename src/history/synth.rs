//! `history synth`: writes synthetic runs, only into a folder that holds no measured data.

use super::load::HISTORY_DIR;
use super::store::{is_history_file, read_history_file, record_artifact, RecordOptions};
use super::synthetic::{commit, run, started, RunSpec};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The kinds each synthetic commit gets a run of.
pub const SYNTH_KINDS: [&str; 3] = ["layernorm", "gemm", "llm"];

/// Refuses `out` unless it is new, empty, or holds nothing but synthetic runs written by an
/// earlier `history synth` (so it can be extended). Any other file there (an artifact, a
/// measured run, a file that cannot be read) is named in the error: synthetic numbers must never
/// sit beside measured ones, where `compare`, `summarize` and the dashboard would mix them.
pub fn check_target(out: &Path) -> Result<()> {
    if out.components().any(|c| c.as_os_str() == "artifacts") {
        bail!(
            "--out {} lies in an `artifacts` folder: synthetic runs must not mix with measured \
             ones; pass a new folder, e.g. --out /tmp/opbench-synth",
            out.display()
        );
    }
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        bail!(
            "--out {} is a file: pass a new or empty folder for the synthetic history",
            out.display()
        );
    }
    let history = out.join(HISTORY_DIR);
    for e in walkdir::WalkDir::new(out).min_depth(1).follow_links(false) {
        let e = e.with_context(|| format!("walking {}", out.display()))?;
        if e.file_type().is_dir() {
            continue;
        }
        let p = e.path();
        let refuse = |why: String| -> Result<()> {
            bail!(
                "--out {}: {} {why}; `history synth` writes only into a new or empty folder, or \
                 one that holds nothing but synthetic runs. Pass another folder",
                out.display(),
                p.display()
            )
        };
        if e.path_is_symlink() {
            refuse("is a symbolic link".into())?;
        }
        let in_history = p
            .strip_prefix(&history)
            .is_ok_and(|r| r.components().count() == 2);
        if !in_history || !is_history_file(p) {
            refuse("is not a history file written by `history synth`".into())?;
        }
        match read_history_file(p) {
            Ok(r) if r.run.synthetic => {}
            Ok(_) => refuse("is a measured run (its `run.synthetic` is not true)".into())?,
            Err(err) => refuse(format!("cannot be read as a history file ({err:#})"))?,
        }
    }
    Ok(())
}

/// What to draw.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Folder whose history/ receives the runs.
    pub out: PathBuf,
    pub commits: usize,
    pub gpus: Vec<String>,
    /// Seed of the first run; each further run takes the next.
    pub seed: u64,
}

/// Checks the target with [`check_target`], then records one synthetic run of every kind on
/// every GPU for each commit; `on_run` is called after each. Returns the runs written, those
/// already there (byte-identical, from an earlier call with the same settings), and the
/// history folder.
pub fn write(opts: &SynthOptions, mut on_run: impl FnMut()) -> Result<(usize, usize, PathBuf)> {
    check_target(&opts.out)?;
    let dir = opts.out.join(HISTORY_DIR);
    let (mut written, mut present) = (0, 0);
    let mut seed = opts.seed;
    for i in 0..opts.commits {
        for gpu in &opts.gpus {
            for kind in SYNTH_KINDS {
                let a = run(&RunSpec::new(kind, &commit(i), gpu, &started(i), seed));
                if record_artifact(&a, &dir, RecordOptions::default())?.already_present {
                    present += 1;
                } else {
                    written += 1;
                }
                seed += 1;
                on_run();
            }
        }
    }
    Ok((written, present, dir))
}
