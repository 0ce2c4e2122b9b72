//! The `trace` tool: runs a command with the CUPTI injection library (`CUDA_INJECTION64_PATH`),
//! passes its exit status through, then reads the raw file each traced process wrote, analyses
//! them and writes the outputs: a `trace` artifact, an Nsight-Systems-shaped SQLite file and
//! Chrome trace-event JSON.

use super::raw::raw_files;
use super::rawfmt::{
    API_ENV, CUPTI_ALIAS_ENV, CUPTI_LIB_ENV, GRAPHS_ENV, MAX_RECORDS_ENV, OUT_DIR_ENV, START_ENV,
};
use super::report::{analyze_workload, WorkloadAnalysis};
use super::workload::Workload;
use crate::artifact::ArtifactWriter;
use crate::cli::launch;
use crate::cli::output::{check_output_dir, json_object_with, starts_with, DirFile, OutputDir};
use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The injection library's file name, as cargo builds it (`trace-inject` crate).
pub const INJECTION_LIB: &str = "libopbench_trace_inject.so";
/// Overrides where `trace` looks for the injection library.
pub const INJECTION_ENV: &str = "OPBENCH_TRACE_INJECTION";

pub const ARTIFACT: &str = "trace.json";
pub const SQLITE: &str = "trace.sqlite";
pub const CHROME: &str = "timeline.trace.json";
/// The folder (inside `--out`) the traced processes write their raw files into.
pub const RAW_DIR: &str = "raw";

fn is_artifact(b: &[u8]) -> bool {
    json_object_with(b, "schema_version")
}

fn is_sqlite(b: &[u8]) -> bool {
    b.starts_with(b"SQLite format 3\0")
}

fn is_chrome(b: &[u8]) -> bool {
    starts_with(b, "{\"displayTimeUnit\"")
}

/// The files `--out` receives.
pub const OUT_FILES: [DirFile; 3] = [
    DirFile {
        name: ARTIFACT,
        what: "a trace artifact (JSON)",
        ours: is_artifact,
    },
    DirFile {
        name: SQLITE,
        what: "a trace SQLite file",
        ours: is_sqlite,
    },
    DirFile {
        name: CHROME,
        what: "a Chrome trace-event file",
        ours: is_chrome,
    },
];

/// Where the injection library is: `--injection`, else `$OPBENCH_TRACE_INJECTION`, else beside
/// the running `trace` binary (cargo puts both in `target/<profile>/`).
pub fn find_injection(flag: Option<&Path>) -> Result<PathBuf> {
    let (p, from) = if let Some(p) = flag {
        (p.to_path_buf(), "--injection")
    } else if let Some(p) = std::env::var_os(INJECTION_ENV) {
        (PathBuf::from(p), INJECTION_ENV)
    } else {
        let exe = std::env::current_exe().context("locating the trace binary")?;
        let dir = exe.parent().unwrap_or(Path::new("."));
        (dir.join(INJECTION_LIB), "the folder of the trace binary")
    };
    if p.is_dir() {
        bail!(
            "the CUPTI injection library {} (from {from}) is a folder: give the path of \
             {INJECTION_LIB} itself (e.g. target/release/{INJECTION_LIB})",
            p.display()
        );
    }
    if p.is_file() && !is_shared_object(&p) {
        bail!(
            "the CUPTI injection library {} (from {from}) is not a shared object (no ELF \
             shared-library header): give the path of {INJECTION_LIB}, built with `cargo build \
             --release -p opbench-trace-inject`",
            p.display()
        );
    }
    if !p.is_file() {
        bail!(
            "the CUPTI injection library {} (from {from}) does not exist: build it with \
             `cargo build --release -p opbench-trace-inject` (needs CUDA; see README), or name \
             it with --injection PATH",
            p.display()
        );
    }
    p.canonicalize()
        .with_context(|| format!("resolving {}", p.display()))
}

/// The libcupti the traced processes load (`rawfmt::CUPTI_LIB_ENV`): `--cupti`, else
/// `$OPBENCH_CUPTI_LIB`, else the first `libcupti.so.13` of a CUDA toolkit (`$CUDA_HOME`,
/// `$CUDA_PATH`, `$CUDA_ROOT`, /usr/local/cuda: `lib64/` or `extras/CUPTI/lib64/`). None: the
/// processes look libcupti up on their own library path.
pub fn find_cupti(flag: Option<&Path>) -> Result<Option<PathBuf>> {
    if let Some(p) = flag {
        if !p.is_file() {
            bail!(
                "--cupti {} does not exist: give the path of libcupti.so.13 (in a CUDA 13 \
                 toolkit, lib64/ or extras/CUPTI/lib64/)",
                p.display()
            );
        }
        return Ok(Some(p.to_path_buf()));
    }
    if let Some(p) = std::env::var_os(CUPTI_LIB_ENV) {
        return Ok(Some(PathBuf::from(p)));
    }
    let roots = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")]);
    // Then the folders the wheel's launcher found (pip's nvidia-cuda-cupti, as torch has it).
    let launcher: Vec<PathBuf> = std::env::var_os(launch::LIB_DIRS_ENV)
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    Ok(roots
        .flat_map(|r| {
            [
                r.join("lib64/libcupti.so.13"),
                r.join("extras/CUPTI/lib64/libcupti.so.13"),
            ]
        })
        .chain(launcher.iter().map(|d| d.join("libcupti.so.13")))
        .find(|p| p.is_file()))
}

/// What the outputs say about the run that recorded them.
pub struct RunFacts<'a> {
    /// The workload's name in the artifact.
    pub workload: &'a str,
    /// The traced command, empty for `--from-raw`.
    pub command: &'a [OsString],
    /// How the command ended (None: not run here, `--from-raw`).
    pub status: Option<ExitStatus>,
    pub overwrite: bool,
    /// `--overhead`'s untraced and traced wall times.
    pub overhead: Option<&'a super::overhead::Overhead>,
}

/// Checks the files `out` receives and creates the folder (for `--from-raw`).
pub fn prepare_out_files(out: &Path, overwrite: bool) -> Result<()> {
    let o = OutputDir {
        flag: "--out",
        path: out,
        files: &OUT_FILES,
    };
    check_output_dir(&o, &[], overwrite)?;
    std::fs::create_dir_all(out).with_context(|| {
        format!(
            "--out {}: cannot create the folder; give --out a folder you can write to",
            out.display()
        )
    })
}

/// The folder (inside `--out`) the traced processes write into while the command runs; moved
/// to [`RAW_DIR`] once it holds records, so a run that records nothing loses no earlier trace.
pub const PARTIAL_RAW_DIR: &str = "raw.partial";

/// Checks `out` and returns an empty `out/raw.partial` for the command's raw files. Nothing
/// of an earlier trace in `out` is touched (see [`promote_raw`]).
pub fn prepare_out(out: &Path, overwrite: bool) -> Result<PathBuf> {
    let o = OutputDir {
        flag: "--out",
        path: out,
        files: &OUT_FILES,
    };
    check_output_dir(&o, &[], overwrite)?;
    let raw = out.join(PARTIAL_RAW_DIR);
    // A leftover of a run that died before its records were moved: ours, never a result.
    discard_partial(&raw)?;
    std::fs::create_dir_all(&raw).with_context(|| {
        format!(
            "--out {}: cannot create the folder {} (is it writable?); give --out a folder you \
             can write to",
            out.display(),
            raw.display()
        )
    })?;
    // A probe write: the traced processes must be able to create files here.
    let probe = tempfile::Builder::new()
        .prefix(".trace-probe-")
        .tempfile_in(&raw)
        .with_context(|| {
            format!(
                "--out {}: cannot write in {}; give --out a folder you can write to",
                out.display(),
                raw.display()
            )
        })?;
    drop(probe);
    Ok(raw)
}

/// Removes the partial raw folder of a run (its raw files and libcupti links).
pub fn discard_partial(partial: &Path) -> Result<()> {
    if partial.is_dir() {
        std::fs::remove_dir_all(partial)
            .with_context(|| format!("removing the unfinished raw folder {}", partial.display()))?;
    }
    Ok(())
}

/// Replaces the raw files of `out/raw` with those of `partial` (the new run's, which has
/// records): the earlier raw files and libcupti links go, anything else in raw/ stays.
pub fn promote_raw(out: &Path, partial: &Path) -> Result<PathBuf> {
    let raw = out.join(RAW_DIR);
    std::fs::create_dir_all(&raw).with_context(|| format!("creating {}", raw.display()))?;
    for f in raw_files(&raw)? {
        std::fs::remove_file(&f)
            .with_context(|| format!("removing the earlier raw file {}", f.display()))?;
    }
    for e in std::fs::read_dir(partial).with_context(|| format!("listing {}", partial.display()))? {
        let e = e.with_context(|| format!("listing {}", partial.display()))?;
        let to = raw.join(e.file_name());
        if to.is_dir() && !to.is_symlink() {
            std::fs::remove_dir_all(&to)
                .with_context(|| format!("removing the earlier {}", to.display()))?;
        }
        std::fs::rename(e.path(), &to)
            .with_context(|| format!("moving {} to {}", e.path().display(), to.display()))?;
    }
    std::fs::remove_dir(partial).with_context(|| format!("removing {}", partial.display()))?;
    Ok(raw)
}

/// How the traced processes record.
pub struct Recording<'a> {
    /// The injection library.
    pub lib: &'a Path,
    /// The libcupti they load (None: their library path decides).
    pub cupti: Option<&'a Path>,
    /// "node" or "graph" (`rawfmt::GRAPHS_ENV`).
    pub graphs: &'a str,
    /// "work", "all" or "none" (`rawfmt::API_ENV`).
    pub api: &'a str,
    /// Processes start with recording paused (`rawfmt::START_ENV`).
    pub start_paused: bool,
    /// Most records a process writes (`rawfmt::MAX_RECORDS_ENV`; 0: no limit).
    pub max_records: u64,
}

/// Runs `cmd` under `rec`, every process writing its raw file into `raw`.
pub fn run_traced(cmd: &[OsString], rec: &Recording, raw: &Path) -> Result<ExitStatus> {
    let Some((prog, args)) = cmd.split_first() else {
        bail!("no command to trace: give it after `--`, e.g. `trace -- python3 train.py`");
    };
    let raw = raw
        .canonicalize()
        .with_context(|| format!("resolving {}", raw.display()))?;
    let mut c = Command::new(prog);
    as_the_user_had_it(&mut c);
    c.args(args)
        .env("CUDA_INJECTION64_PATH", rec.lib)
        // NVTX loads the same library for its ranges (its own NVTX entry point).
        .env("NVTX_INJECTION64_PATH", rec.lib)
        .env(OUT_DIR_ENV, &raw)
        .env(GRAPHS_ENV, rec.graphs)
        .env(API_ENV, rec.api);
    if rec.start_paused {
        c.env(START_ENV, "paused");
    } else {
        c.env_remove(START_ENV);
    }
    if rec.max_records > 0 {
        c.env(MAX_RECORDS_ENV, rec.max_records.to_string());
    } else {
        c.env_remove(MAX_RECORDS_ENV);
    }
    if let Some(p) = rec.cupti {
        c.env(CUPTI_LIB_ENV, p);
        let dir = super::cupti_alias::alias_dir(&raw, p)?;
        c.env(
            "LD_LIBRARY_PATH",
            path_list_with(&dir, user_ld_library_path()),
        )
        .env(CUPTI_ALIAS_ENV, &dir);
    }
    if let Some(v) = preload_with(rec.lib, std::env::var_os("LD_PRELOAD")) {
        c.env("LD_PRELOAD", v);
    }
    if let Some(earlier) = std::env::var_os("CUDA_INJECTION64_PATH") {
        eprintln!(
            "trace: warning: CUDA_INJECTION64_PATH was {earlier:?}; the command runs with \
             trace's injection library instead"
        );
    }
    let forward = signals::Forward::install();
    let child = c.spawn();
    let mut child = match child {
        Ok(ch) => ch,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "command {:?} not found: give a program on PATH or its path",
            prog
        ),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            bail!("command {:?} cannot be executed (permission denied)", prog)
        }
        Err(e) => return Err(e).with_context(|| format!("starting {prog:?}")),
    };
    forward.child(child.id());
    child
        .wait()
        .with_context(|| format!("waiting for {prog:?}"))
}

/// `LD_PRELOAD` for the command: the injection library ahead of what was there. Preloaded, the
/// library's `cuptiActivityRegisterCallbacks` comes before libcupti's, so a program that starts
/// its own CUPTI subscriber (torch.profiler) makes the library step aside (its output is then
/// marked incomplete from that time) instead of the program's profiler recording nothing.
/// None (nothing changed) when `lib` is not an ELF shared object: the dynamic loader would
/// only complain in every process.
fn preload_with(lib: &Path, earlier: Option<OsString>) -> Option<OsString> {
    let mut magic = [0u8; 4];
    let elf = std::fs::File::open(lib)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && magic == *b"\x7fELF";
    if !elf {
        return None;
    }
    Some(path_list_with(lib, earlier))
}

/// Whether `p` starts as an ELF shared object does: the magic, then `e_type` ET_DYN (3) at
/// byte 16 in either byte order.
fn is_shared_object(p: &Path) -> bool {
    let mut h = [0u8; 18];
    let read = std::fs::File::open(p).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut h));
    read.is_ok() && h[..4] == *b"\x7fELF" && matches!((h[5], h[16], h[17]), (1, 3, 0) | (2, 0, 3))
}

/// The LD_LIBRARY_PATH the user had: the `opbench` launcher of the wheel adds the CUDA library
/// folders for this binary and keeps the user's value aside (`crate::cli::launch`).
pub(crate) fn user_ld_library_path() -> Option<OsString> {
    if std::env::var_os(launch::LIB_DIRS_ENV).is_some() {
        std::env::var_os(launch::USER_LD_PATH_ENV)
    } else {
        std::env::var_os("LD_LIBRARY_PATH")
    }
}

/// Gives a command the environment the user started `trace` with: without the launcher's
/// LD_LIBRARY_PATH, which would otherwise change which CUDA libraries the command loads.
pub(crate) fn as_the_user_had_it(c: &mut Command) {
    if std::env::var_os(launch::LIB_DIRS_ENV).is_none() {
        return;
    }
    match user_ld_library_path() {
        Some(v) => c.env("LD_LIBRARY_PATH", v),
        None => c.env_remove("LD_LIBRARY_PATH"),
    };
    c.env_remove(launch::LIB_DIRS_ENV)
        .env_remove(launch::USER_LD_PATH_ENV);
}

/// A colon-separated list (`LD_LIBRARY_PATH`, `LD_PRELOAD`) with `first` ahead of what was
/// there.
pub(crate) fn path_list_with(first: &Path, earlier: Option<OsString>) -> OsString {
    let mut v = OsString::from(first);
    if let Some(e) = earlier.filter(|e| !e.is_empty()) {
        v.push(":");
        v.push(e);
    }
    v
}

/// While the command runs, `trace` outlives the signals meant to end it, so it can still write
/// what was recorded: Ctrl-C and Ctrl-\ (which the terminal sends to the command as well) are
/// caught and dropped, SIGTERM and SIGHUP are passed on to the command (one that arrives before
/// the command started is passed on as soon as it has). Handlers, unlike ignored signals, are
/// reset in the command when it starts, so its own signal behaviour is unchanged.
mod signals {
    use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
    use std::sync::atomic::{AtomicI32, Ordering};

    static CHILD: AtomicI32 = AtomicI32::new(0);
    static PENDING: AtomicI32 = AtomicI32::new(0);

    fn kill(pid: i32, sig: i32) {
        if let Ok(s) = Signal::try_from(sig) {
            let _ = signal::kill(nix::unistd::Pid::from_raw(pid), s);
        }
    }

    extern "C" fn forward(sig: i32) {
        // Only atomics and kill(2), which are async-signal-safe.
        match CHILD.load(Ordering::SeqCst) {
            0 => PENDING.store(sig, Ordering::SeqCst),
            pid => kill(pid, sig),
        }
    }

    extern "C" fn drop_signal(_sig: i32) {}

    /// (signal, passed on to the command: otherwise dropped).
    const HANDLED: [(Signal, bool); 4] = [
        (Signal::SIGINT, false),
        (Signal::SIGQUIT, false),
        (Signal::SIGTERM, true),
        (Signal::SIGHUP, true),
    ];

    /// The handlers in place; the earlier ones come back when dropped.
    pub struct Forward(Vec<(Signal, SigAction)>);

    impl Forward {
        /// Installs the handlers (before the command is started).
        pub fn install() -> Self {
            let mut old = Vec::new();
            for (sig, pass_on) in HANDLED {
                let h = SigHandler::Handler(if pass_on { forward } else { drop_signal });
                let a = SigAction::new(h, SaFlags::SA_RESTART, SigSet::empty());
                // SAFETY: the handlers only touch atomics and call kill(2).
                if let Ok(o) = unsafe { signal::sigaction(sig, &a) } {
                    old.push((sig, o));
                }
            }
            Forward(old)
        }

        /// The command started as `pid`: signals from now on go to it.
        pub fn child(&self, pid: u32) {
            CHILD.store(pid as i32, Ordering::SeqCst);
            match PENDING.swap(0, Ordering::SeqCst) {
                0 => {}
                sig => kill(pid as i32, sig),
            }
        }
    }

    impl Drop for Forward {
        fn drop(&mut self) {
            for (sig, o) in &self.0 {
                // SAFETY: restoring the handler that was there before.
                let _ = unsafe { signal::sigaction(*sig, o) };
            }
            CHILD.store(0, Ordering::SeqCst);
            PENDING.store(0, Ordering::SeqCst);
        }
    }
}

/// Analyses `w` and writes the artifact, the SQLite file and the Chrome JSON into `out`; the
/// SQLite file is written on a second thread meanwhile (the slowest output). Returns the
/// analysis and the paths written.
pub fn write_outputs(
    w: &Workload,
    out: &Path,
    facts: &RunFacts,
) -> Result<(WorkloadAnalysis, Vec<PathBuf>)> {
    let sqlite = out.join(SQLITE);
    let chrome = out.join(CHROME);
    let path = out.join(ARTIFACT);
    std::thread::scope(|scope| {
        let sql = scope.spawn(|| super::sqlite::write_sqlite(w, &sqlite));
        let a = analyze_workload(w);
        let meta = serde_json::json!({
            "workload": facts.workload,
            "command": facts.command.iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>(),
            "source": "opbench trace: CUPTI activity API through CUDA_INJECTION64_PATH",
        });
        let rest = write_atomic(&chrome, |f| {
            super::chrome::write_workload_chrome(w, &meta, f)
        })
        .and_then(|()| {
            let mut env = crate::env::Env::cpu();
            if ran_on_gpu(w) {
                env.device = "cuda".into();
                env.gpu = crate::env::GpuProbe::open(0).ok().map(|p| p.env());
            }
            let mut aw =
                ArtifactWriter::start("trace", &path, env, facts.overwrite).context("--out")?;
            for r in super::workload_rows::workload_rows(&a, facts.workload) {
                aw.push(r)?;
            }
            if let Some(r) = facts.overhead.and_then(|o| o.row(facts.workload)) {
                aw.push(r)?;
            }
            aw.artifact.notes.extend(notes(facts, &a));
            aw.finish()
        });
        let sql = sql
            .join()
            .map_err(|_| anyhow::anyhow!("the SQLite export panicked"))?;
        sql?;
        let artifact = rest?;
        Ok((a, vec![artifact, sqlite.clone(), chrome.clone()]))
    })
}

/// Whether the traced processes used a GPU: a GPU record, or any GPU activity. CUPTI gives the
/// GPU records when a context is created, so a recording started after that (`--start-paused`,
/// resumed later) holds kernels but no GPU record.
fn ran_on_gpu(w: &Workload) -> bool {
    w.processes
        .iter()
        .any(|p| !p.gpus.is_empty() || !p.activities.is_empty() || !p.graphs.is_empty())
}

/// The artifact's notes: how it was recorded, exit status, completeness.
fn notes(facts: &RunFacts, a: &WorkloadAnalysis) -> Vec<String> {
    let cmd: Vec<String> = facts
        .command
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let run = match facts.status {
        Some(s) => format!(
            "traced command: {}; exit: {}",
            crate::text::elide_to(&cmd.join(" "), 2000),
            describe_status(s)
        ),
        None => "rebuilt with --from-raw from the raw files of an earlier run".to_string(),
    };
    let mut v = vec![
        run,
        "recorded by the CUPTI injection library (CUDA_INJECTION64_PATH): concurrent kernels, \
         memcpy, memset, runtime and driver API, synchronization, NVTX ranges; times in the \
         CUPTI clock. Analyses follow Holistic Trace Analysis (temporal breakdown, idle time \
         per stream with a 30 ns kernel-wait threshold, launch delay = kernel start - launch \
         call start, short kernel = GPU time < launch call CPU time) and nsys' \
         cuda_gpu_kern_sum (trace_kernel: top 100 by total time; trace.sqlite holds every \
         record)"
            .to_string(),
    ];
    v.extend(facts.overhead.and_then(|o| o.describe()));
    let shown = super::workload_rows::shown_pids(a);
    let hidden = a.processes.len() - shown.len();
    if hidden > 0 {
        let incomplete = a.processes.iter().filter(|p| !p.complete).count();
        v.push(format!(
            "{} processes ({incomplete} incomplete): the rows and notes of {} of them are here \
             (the incomplete first, then by kernels); trace.sqlite holds every process",
            a.processes.len(),
            shown.len()
        ));
    }
    for p in a.processes.iter().filter(|p| shown.contains(&p.pid)) {
        for w in &p.warnings {
            v.push(format!(
                "pid {}: the injection library reported: {w}",
                p.pid
            ));
        }
        if let Some(n) = p.paused_note() {
            v.push(format!("pid {}: {n}", p.pid));
        }
        for m in p.missing() {
            v.push(format!(
                "pid {}: the trace of this process is incomplete: {m}",
                p.pid
            ));
        }
    }
    v
}

/// "exit code 3", "killed by signal 9 (SIGKILL)".
pub fn describe_status(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(c) = s.code() {
        format!("exit code {c}")
    } else if let Some(sig) = s.signal() {
        let name = nix::sys::signal::Signal::try_from(sig)
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|_| "unknown".into());
        format!("killed by signal {sig} ({name})")
    } else {
        "ended in an unknown way".into()
    }
}

/// Writes a file through `f` into a temporary file beside `path`, then renames it.
fn write_atomic(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<&std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".trace-out-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file());
        f(&mut w).with_context(|| format!("writing {}", path.display()))?;
        std::io::Write::flush(&mut w).with_context(|| format!("writing {}", path.display()))?;
    }
    tmp.persist(path)
        .with_context(|| format!("moving {} into place", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_entry_goes_ahead_and_an_empty_list_adds_nothing() {
        let d = Path::new("/x/.cupti");
        assert_eq!(path_list_with(d, None), OsString::from("/x/.cupti"));
        assert_eq!(
            path_list_with(d, Some(OsString::new())),
            OsString::from("/x/.cupti")
        );
        assert_eq!(
            path_list_with(d, Some(OsString::from("/usr/local/cuda/lib64"))),
            OsString::from("/x/.cupti:/usr/local/cuda/lib64")
        );
    }
}
