//! A sweep that outlives a faulting kernel: after a fault that leaves the CUDA context unusable,
//! the remaining points run in a fresh kernel_bench process that continues the same `.partial`
//! artifact. Which points remain, when to start another process, when to give up and how the
//! rows join up are decided here, without a GPU (tests drive [`continue_sweep`] with a stand-in).

use super::args::Args;
use super::manifest::block_label;
use super::sweep::Plan;
use crate::artifact::{Artifact, ArtifactWriter, Param};
use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The exit code of a continuing process whose kernel faulted after it handed the partial file
/// over: the first process then reads the partial file and starts the next one.
pub const FAULTED_EXIT_CODE: i32 = 3;

/// Fresh processes one run may start. Each makes progress (its fault's row at least), so this
/// only bounds the time a sweep of many faulting kernels spends on process starts and compiles.
pub const MAX_FRESH_PROCESSES: usize = 32;

/// How a GPU run of this process ended, when it did not fail.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// The artifact was finished and moved into place.
    Finished,
    /// A kernel faulted: every row so far (the fault's included) is in `partial`, handed over.
    Faulted { partial: PathBuf },
}

/// The points a fault leaves with nothing to run against: when the faulting point is the one
/// that computes its parameter set's reference output, every other point of that set.
pub fn unreachable_after(plan: &Plan, fault: usize) -> Vec<usize> {
    plan.groups
        .iter()
        .find(|g| g.points.first().is_some_and(|p| p.id == fault))
        .map(|g| g.points[1..].iter().map(|p| p.id).collect())
        .unwrap_or_default()
}

/// How many points of the sweep `a` holds: one row per point in sweep order, so row i must be
/// point i (its kernel, block and parameters). Errors name `file` and the first row that differs.
pub fn done_points(plan: &Plan, a: &Artifact, file: &Path) -> Result<usize> {
    let points = plan
        .groups
        .iter()
        .flat_map(|g| g.points.iter().map(move |p| (g, p)));
    let total = plan.points();
    if a.results.len() > total {
        bail!(
            "{}: {} rows but the sweep has {total} points: it is not this sweep's run; run the \
             sweep again from the start",
            file.display(),
            a.results.len()
        );
    }
    for (i, (row, (g, p))) in a.results.iter().zip(points).enumerate() {
        let kernel = &plan.manifest.kernels[p.kernel].name;
        let same = row.implementation == *kernel
            && row.params.get("block") == Some(&Param::from(block_label(p.block)))
            && g.params
                .iter()
                .all(|(k, v)| row.params.get(k) == Some(&Param::from(*v)));
        if !same {
            bail!(
                "{}: row {} (`{}`) is not point #{i} of this sweep ({}): the manifest or the \
                 flags changed since the run started; run the sweep again from the start",
                file.display(),
                i + 1,
                row.implementation,
                plan.point_label(g, p)
            );
        }
    }
    Ok(a.results.len())
}

/// In a continuing process: takes over the run in `--resume-partial` (which must be the
/// `.partial` of `--out`), checks its rows are this sweep's and notes the new process in the
/// artifact. Returns the writer and the number of points already done.
pub fn open(args: &Args, plan: &Plan, partial: &Path) -> Result<(ArtifactWriter, usize)> {
    let expected = partial_of_out(&args.out);
    if partial != expected {
        bail!(
            "--resume-partial {} is not the partial file of --out {} ({}): the flag is set by \
             kernel_bench itself; run without it",
            partial.display(),
            args.out.display(),
            expected.display()
        );
    }
    let mut w = ArtifactWriter::resume("kernels", &args.out)?;
    let done = done_points(plan, &w.artifact, partial)?;
    w.artifact.notes.push(format!(
        "points #{done} to #{} ran in a fresh process (pid {}): the CUDA context of the one \
         before was unusable after a kernel faulted",
        plan.points().saturating_sub(1),
        std::process::id()
    ));
    Ok((w, done))
}

fn partial_of_out(out: &Path) -> PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".partial");
    p.into()
}

/// How one process of the run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// It finished the artifact.
    Finished,
    /// A kernel faulted; it handed the partial file over.
    Faulted,
    /// It failed otherwise, with this exit code.
    Exited(i32),
    /// A signal ended it (the text says which).
    Signalled(String),
}

impl Ended {
    pub fn from_status(s: ExitStatus) -> Ended {
        match s.code() {
            Some(0) => Ended::Finished,
            Some(FAULTED_EXIT_CODE) => Ended::Faulted,
            Some(c) => Ended::Exited(c),
            None => Ended::Signalled(s.to_string()),
        }
    }
}

/// Starting the next process of the run and reading where the run stands.
pub trait Continue {
    /// Runs a fresh process on the points the partial file does not hold, and waits for it.
    fn run_fresh(&mut self) -> Result<Ended>;
    /// The points the partial file holds now.
    fn done_points(&mut self) -> Result<usize>;
}

/// The points one process ran: `first` up to `end` (exclusive; unknown when it failed).
#[derive(Debug, Clone, PartialEq)]
pub struct Leg {
    pub first: usize,
    pub end: Option<usize>,
    pub ended: Ended,
}

/// Where the run stands once no more processes are started.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A fresh process finished the artifact.
    Finished,
    /// A fresh process failed otherwise: pass its exit status on.
    Exited(i32),
    Signalled(String),
    /// The partial file is to be finished by this process: every point ran (`gave_up` None),
    /// or no more processes are started, for the reason given.
    FinishHere {
        gave_up: Option<String>,
    },
}

/// After this process's kernel faulted with `done` of `total` points in the partial file:
/// fresh processes run the rest, one after another fault, at most `max` of them.
pub fn continue_sweep(
    total: usize,
    mut done: usize,
    max: usize,
    c: &mut impl Continue,
) -> Result<(Vec<Leg>, Outcome)> {
    let mut legs = vec![Leg {
        first: 0,
        end: Some(done),
        ended: Ended::Faulted,
    }];
    loop {
        if done >= total {
            return Ok((legs, Outcome::FinishHere { gave_up: None }));
        }
        if legs.len() > max {
            let why =
                format!("{max} fresh processes were started after faults, the most one run starts");
            return Ok((legs, Outcome::FinishHere { gave_up: Some(why) }));
        }
        let ended = c.run_fresh()?;
        let first = done;
        let end = match ended {
            Ended::Finished => Some(total),
            _ => c.done_points().ok(),
        };
        legs.push(Leg {
            first,
            end,
            ended: ended.clone(),
        });
        match ended {
            Ended::Finished => return Ok((legs, Outcome::Finished)),
            Ended::Exited(code) => return Ok((legs, Outcome::Exited(code))),
            Ended::Signalled(s) => return Ok((legs, Outcome::Signalled(s))),
            Ended::Faulted => match end {
                Some(now) if now > done => done = now,
                _ => {
                    let why = "a fresh process faulted without saving a row".to_string();
                    return Ok((legs, Outcome::FinishHere { gave_up: Some(why) }));
                }
            },
        }
    }
}

/// One line per process: which points it ran and how it ended.
pub fn describe_legs(legs: &[Leg]) -> Vec<String> {
    legs.iter()
        .enumerate()
        .map(|(i, l)| {
            let who = if i == 0 {
                "process 1 (the first)".to_string()
            } else {
                format!("process {}", i + 1)
            };
            let points = match l.end {
                Some(end) if end > l.first => format!("points #{} to #{}", l.first, end - 1),
                Some(_) => "no point".to_string(),
                None => format!("points from #{}", l.first),
            };
            let how = match &l.ended {
                Ended::Finished => "finished the run".to_string(),
                Ended::Faulted => "its last point faulted".to_string(),
                Ended::Exited(c) => format!("failed (exit code {c})"),
                Ended::Signalled(s) => format!("was stopped ({s})"),
            };
            format!("{who}: {points}; {how}")
        })
        .collect()
}

/// The command line of a fresh process: this one's arguments, the seed (so the inputs are the
/// ones the earlier points saw) unless given, and the partial file to continue.
pub fn fresh_args(argv: &[OsString], seed: Option<u64>, partial: &Path) -> Vec<OsString> {
    let mut v = argv.to_vec();
    if let Some(s) = seed {
        v.push("--seed".into());
        v.push(s.to_string().into());
    }
    v.push("--resume-partial".into());
    v.push(partial.as_os_str().to_owned());
    v
}

/// [`Continue`] with real processes: this binary, started again.
pub struct FreshProcess<'a> {
    pub exe: PathBuf,
    pub args: Vec<OsString>,
    pub plan: &'a Plan,
    pub partial: PathBuf,
}

impl Continue for FreshProcess<'_> {
    fn run_fresh(&mut self) -> Result<Ended> {
        let status = Command::new(&self.exe)
            .args(&self.args)
            .status()
            .with_context(|| {
                format!(
                    "starting {} again to run the points after the fault",
                    self.exe.display()
                )
            })?;
        Ok(Ended::from_status(status))
    }

    fn done_points(&mut self) -> Result<usize> {
        let a = crate::artifact::read_artifact(&self.partial)?;
        done_points(self.plan, &a, &self.partial)
    }
}

/// In the first process, after its kernel faulted: runs the rest of the sweep in fresh
/// processes, prints which points ran where, and passes the last one's exit status on (or
/// finishes the artifact here when nothing is left to run or no more processes may start).
pub fn after_first_fault(args: &Args, plan: &Plan, partial: &Path, seed_given: bool) -> Result<()> {
    let a = crate::artifact::read_artifact(partial)?;
    let done = done_points(plan, &a, partial)?;
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    let seed = if seed_given { None } else { args.seed };
    let mut fresh = FreshProcess {
        exe: std::env::current_exe().context("locating our own binary to start it again")?,
        args: fresh_args(&argv, seed, partial),
        plan,
        partial: partial.to_path_buf(),
    };
    if done < plan.points() {
        eprintln!(
            "the CUDA context is unusable after the fault: running points #{done} to #{} in a \
             fresh process",
            plan.points() - 1
        );
    }
    let (legs, outcome) = continue_sweep(plan.points(), done, MAX_FRESH_PROCESSES, &mut fresh)?;
    for line in describe_legs(&legs) {
        eprintln!("{line}");
    }
    match outcome {
        Outcome::Finished => Ok(()),
        Outcome::Exited(code) => std::process::exit(code),
        Outcome::Signalled(s) => bail!(
            "the fresh process running the points after the fault was stopped ({s}): the \
             finished points are in {}",
            partial.display()
        ),
        Outcome::FinishHere { gave_up } => finish_here(args, plan, gave_up),
    }
}

/// Finishes the partial file in this process (no GPU work is left or allowed) and writes the
/// report; fails when points were given up on.
fn finish_here(args: &Args, plan: &Plan, gave_up: Option<String>) -> Result<()> {
    let mut w = ArtifactWriter::resume("kernels", &args.out)?;
    let not_run = plan.points().saturating_sub(w.artifact.results.len());
    if let Some(why) = &gave_up {
        w.artifact.notes.push(format!(
            "run stopped early: {why}; {not_run} later points were not run"
        ));
    }
    let path = w.finish()?;
    let text = super::report::render(&crate::artifact::read_artifact(&path)?);
    let report = args.report_path();
    crate::artifact::write_bytes_atomic(&report, text.as_bytes())?;
    print!("{text}");
    eprintln!("wrote {} and {}", path.display(), report.display());
    if let Some(why) = gave_up {
        bail!(
            "{why}: {not_run} points were not run. The points run are in {} with a failed row \
             per fault; fix the faulting kernels (compute-sanitizer finds the faulting access) \
             and run again",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{ResultRow, Status};
    use crate::env::Env;
    use clap::Parser;

    fn plan() -> Plan {
        let args = Args::parse_from([
            "kernel_bench",
            "--manifest",
            "examples/matmul_kernels.toml",
            "--device",
            "cpu",
        ]);
        super::super::app::load(&args).unwrap().0
    }

    /// The row the runner writes for point `i` (failed, as a fault's row is).
    fn row(plan: &Plan, i: usize) -> ResultRow {
        let (g, p) = plan
            .groups
            .iter()
            .flat_map(|g| g.points.iter().map(move |p| (g, p)))
            .nth(i)
            .unwrap();
        let mut r = ResultRow::new("user_kernel", &plan.manifest.kernels[p.kernel].name);
        for (k, v) in &g.params {
            r = r.param(k, *v);
        }
        r = r.param("block", block_label(p.block));
        r.status = Status::Failed;
        r.notes.push("kernel faulted".into());
        r
    }

    /// Stand-in processes: each runs `steps[i]` points and ends as told.
    struct StandIn {
        done: usize,
        steps: Vec<(usize, Ended)>,
        started: usize,
    }

    impl Continue for StandIn {
        fn run_fresh(&mut self) -> Result<Ended> {
            let (n, e) = self.steps[self.started].clone();
            self.started += 1;
            self.done += n;
            Ok(e)
        }
        fn done_points(&mut self) -> Result<usize> {
            Ok(self.done)
        }
    }

    fn stand_in(done: usize, steps: &[(usize, Ended)]) -> StandIn {
        StandIn {
            done,
            steps: steps.to_vec(),
            started: 0,
        }
    }

    #[test]
    fn the_rest_runs_in_fresh_processes_until_one_finishes() {
        let mut c = stand_in(5, &[(3, Ended::Faulted), (12, Ended::Finished)]);
        let (legs, out) = continue_sweep(20, 5, 8, &mut c).unwrap();
        assert_eq!(out, Outcome::Finished);
        let ends: Vec<_> = legs.iter().map(|l| (l.first, l.end)).collect();
        assert_eq!(ends, [(0, Some(5)), (5, Some(8)), (8, Some(20))]);
        let text = describe_legs(&legs).join("\n");
        assert!(text.contains("process 1 (the first): points #0 to #4; its last point faulted"));
        assert!(text.contains("process 2: points #5 to #7; its last point faulted"));
        assert!(
            text.contains("process 3: points #8 to #19; finished the run"),
            "{text}"
        );
    }

    #[test]
    fn a_fault_on_the_last_point_starts_nothing_and_finishes_here() {
        let mut c = stand_in(20, &[]);
        let (legs, out) = continue_sweep(20, 20, 8, &mut c).unwrap();
        assert_eq!(out, Outcome::FinishHere { gave_up: None });
        assert_eq!((legs.len(), c.started), (1, 0));
    }

    #[test]
    fn fresh_processes_are_bounded_and_must_make_progress() {
        let faults = vec![(1, Ended::Faulted); 10];
        let mut c = stand_in(1, &faults);
        let (legs, out) = continue_sweep(100, 1, 3, &mut c).unwrap();
        assert_eq!(c.started, 3);
        assert_eq!(legs.len(), 4);
        assert!(matches!(out, Outcome::FinishHere { gave_up: Some(w) } if w.contains("3 fresh")));

        let mut c = stand_in(4, &[(0, Ended::Faulted)]);
        let (_, out) = continue_sweep(100, 4, 8, &mut c).unwrap();
        assert!(
            matches!(out, Outcome::FinishHere { gave_up: Some(w) } if w.contains("without saving"))
        );
    }

    #[test]
    fn a_process_that_fails_otherwise_passes_its_exit_code_on() {
        let mut c = stand_in(2, &[(1, Ended::Exited(1))]);
        let (legs, out) = continue_sweep(10, 2, 8, &mut c).unwrap();
        assert_eq!(out, Outcome::Exited(1));
        assert_eq!(legs[1].end, Some(3));
        assert!(describe_legs(&legs)[1].contains("failed (exit code 1)"));
        let mut c = stand_in(2, &[(0, Ended::Signalled("signal: 9".into()))]);
        assert_eq!(
            continue_sweep(10, 2, 8, &mut c).unwrap().1,
            Outcome::Signalled("signal: 9".into())
        );
    }

    #[test]
    fn a_faulting_reference_leaves_its_parameter_set_unreachable() {
        let p = plan();
        let g1 = &p.groups[1];
        let rest: Vec<usize> = g1.points[1..].iter().map(|p| p.id).collect();
        assert!(!rest.is_empty());
        assert_eq!(unreachable_after(&p, g1.points[0].id), rest);
        assert!(unreachable_after(&p, g1.points[1].id).is_empty());
    }

    #[test]
    fn done_points_checks_the_rows_are_this_sweep_in_order() {
        let p = plan();
        let dir = tempfile::tempdir().unwrap();
        let w = ArtifactWriter::start("kernels", &dir.path().join("k.json"), Env::cpu(), false);
        let mut a = w.unwrap().artifact.clone();
        a.results = (0..4).map(|i| row(&p, i)).collect();
        assert_eq!(done_points(&p, &a, Path::new("k.json.partial")).unwrap(), 4);
        a.results.swap(1, 2);
        let e = done_points(&p, &a, Path::new("k.json.partial"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("k.json.partial: row 2") && e.contains("is not point #1"),
            "{e}"
        );
    }

    #[test]
    fn a_fresh_process_continues_the_partial_of_out_and_notes_it() {
        let p = plan();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("kernels.json");
        let mut w = ArtifactWriter::start("kernels", &out, Env::cpu(), false).unwrap();
        for i in 0..3 {
            w.push(row(&p, i)).unwrap();
        }
        let partial = w.hand_over().unwrap();
        let args = Args::parse_from([
            "kernel_bench".as_ref(),
            "--manifest".as_ref(),
            "examples/matmul_kernels.toml".as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        let (w, done) = open(&args, &p, &partial).unwrap();
        assert_eq!(done, 3);
        assert!(w.artifact.notes.iter().any(|n| n.contains("points #3 to")));
        drop(w);
        let e = format!(
            "{:#}",
            open(&args, &p, &dir.path().join("other.partial"))
                .err()
                .unwrap()
        );
        assert!(e.contains("--resume-partial") && e.contains("--out"), "{e}");
    }

    #[test]
    fn a_fresh_process_gets_the_seed_and_the_partial_file() {
        let argv: Vec<OsString> = vec!["--manifest".into(), "m.toml".into()];
        let v = fresh_args(&argv, Some(7), Path::new("a.json.partial"));
        assert_eq!(
            v,
            [
                "--manifest",
                "m.toml",
                "--seed",
                "7",
                "--resume-partial",
                "a.json.partial"
            ]
            .map(OsString::from)
        );
        assert_eq!(fresh_args(&argv, None, Path::new("p")).len(), 4);
    }
}
