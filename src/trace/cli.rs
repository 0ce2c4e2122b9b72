//! Arguments and body of the `trace` binary.

use super::overhead::{self, Overhead};
use super::tool;
use anyhow::{Context, Result};
use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitStatus;

/// Profile any CUDA workload, no Nsight needed: runs CMD with opbench's CUPTI injection
/// library, recording every kernel, memcpy, memset, runtime/driver API call, synchronization
/// and NVTX range of every process CMD starts (children included, one raw file each), then
/// writes into --out:
///   trace.json            a `trace` artifact (kernel summary as nsys' cuda_gpu_kern_sum,
///                         temporal breakdown, idle time per stream, launch statistics, NVTX
///                         range totals; see docs/artifacts.md)
///   trace.sqlite          Nsight Systems' export tables and columns
///                         (CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME,
///                         NVTX_EVENTS, StringIds, TARGET_INFO_GPU), so SQL written for
///                         `nsys export --type sqlite` runs on it
///   timeline.trace.json   Chrome trace events: open in ui.perfetto.dev
///   raw/trace-PID.raw     what each process recorded (re-analyse with --from-raw)
///
/// CMD's exit status is trace's exit status (a CMD killed by a signal kills trace with it,
/// once the outputs are written). Without a GPU CMD still runs and trace says nothing was
/// recorded. libcupti 13 is taken from the CUDA toolkit (--cupti names another), except in a
/// process that loaded its own before CUDA started (PyTorch, from its wheel): that one is used
/// there, so torch.profiler inside the program still records. NVTX ranges need NVTX 3
/// (torch.cuda.nvtx, nvtx3).
///
/// Examples:
///   trace --out out/gemm -- ./gemm_test 4096
///   trace --out out/llm --name tinyllama -- python3 generate.py
///   trace --out out/train --overhead 3 --max-records 20000000 -- python3 train.py
///   trace --out out/again --from-raw out/llm/raw
///   trace --diff out/before out/after
#[derive(Debug, Parser)]
#[command(name = "trace", verbatim_doc_comment)]
pub struct Args {
    /// Output folder (created if missing). CMD records into OUT/raw.partial; an earlier trace
    /// in OUT is replaced only once the new run has recorded something.
    #[arg(long, default_value = "trace_out")]
    pub out: PathBuf,
    /// The workload's name in the artifact (default: CMD's file name).
    #[arg(long)]
    pub name: Option<String>,
    /// The injection library (default: $OPBENCH_TRACE_INJECTION, else
    /// libopbench_trace_inject.so beside this binary).
    #[arg(long)]
    pub injection: Option<PathBuf>,
    /// The libcupti the traced processes load (default: $OPBENCH_CUPTI_LIB, else
    /// libcupti.so.13 of the CUDA toolkit in $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT or
    /// /usr/local/cuda; else the processes' own library path decides). It goes first on their
    /// LD_LIBRARY_PATH as libcupti.so and libcupti.so.13 (links in OUT/raw.partial/.cupti/
    /// while CMD runs, OUT/raw/.cupti/ after), so the
    /// tracer and a profiler of the program's own that looks CUPTI up by name use one copy. A
    /// process that already holds a libcupti when CUDA starts is recorded through that one.
    #[arg(long, value_name = "PATH")]
    pub cupti: Option<PathBuf>,
    /// How CUDA graphs are recorded: `node`, every kernel of a graph (with its graph id);
    /// `graph`, one record per graph execution (less overhead; CUPTI may then record no kernels
    /// outside graphs either, which the run's warnings say).
    #[arg(long, value_enum, default_value_t = Graphs::Node)]
    pub graphs: Graphs,
    /// Which runtime and driver API calls are recorded: `work`, every call except queries that
    /// neither enqueue GPU work nor wait for it (cudaGetDevice, cudaGetLastError,
    /// cuCtxGetCurrent, ...: PyTorch makes a dozen per kernel, 13 of every 14 API records of
    /// a traced eager decode); `all`, those too; `none`, no API call: kernels, copies,
    /// memsets, syncs and NVTX ranges only, for programs that launch a kernel every few
    /// microseconds from the host, where CUPTI's API tracing costs most (3.5-4.4 us per kernel
    /// in a launch loop on two H200 hosts, against 0.4-1.1 us for the kernel records alone;
    /// docs/notes/trace_tool.md).
    /// Launch delays and host waits are then unknown: every kernel counts as without its
    /// launch call.
    #[arg(long, value_enum, default_value_t = Api::Work)]
    pub api: Api,
    /// Start every traced process with recording paused: nothing is recorded (and CUPTI is not
    /// attached) until the program calls `opbench_trace_resume`, and `opbench_trace_pause`
    /// stops it again, as cudaProfilerStart/Stop bound what Nsight Systems records. From
    /// Python: `import trace_control` (python/opbench/trace_control.py), then `trace_control.resume()`
    /// and `trace_control.pause()` (after torch.cuda.synchronize()). The program runs
    /// untraced while paused, so a run can time traced and untraced steps side by side.
    #[arg(long)]
    pub start_paused: bool,
    /// Measure what tracing costs the command: run it N times untraced and N times traced,
    /// alternately (untraced first; the last traced run is the one kept), and write the
    /// median wall times and the slowdown into the artifact (`trace_overhead`) and its page.
    /// Every run must succeed. 0: no untraced run.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub overhead: u32,
    /// Most records each traced process keeps (kernels, copies, memsets, API calls,
    /// synchronizations, NVTX ranges): once a process has written N, later records are counted
    /// but not written, and its trace reads as incomplete with the count. Bounds the raw
    /// files of a long job (each record is some 60-120 bytes). 0: no limit.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_records: u64,
    /// Replace output files that do not look like an earlier trace's.
    #[arg(long)]
    pub overwrite: bool,
    /// Do not run anything: analyse the raw files already in this folder (a `raw/` of an
    /// earlier run) and write the outputs into --out.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["cmd", "overhead", "max_records"])]
    pub from_raw: Option<PathBuf>,
    /// Do not run anything: compare the kernels of two traces (output folders of earlier runs,
    /// or their raw/ folders) and print the kernels added, removed and changed.
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], conflicts_with_all = ["cmd", "from_raw"])]
    pub diff: Option<Vec<PathBuf>>,
    /// With --diff: a kernel in both traces has changed when its total time moved by more than
    /// this percentage (or its instance count changed).
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub diff_tol_pct: f64,
    /// The command to trace and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Graphs {
    Node,
    Graph,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    Work,
    All,
    /// No API calls recorded.
    #[value(name = "none")]
    NoCalls,
}

impl Api {
    /// The injection library's name for it (`rawfmt::API_ENV`).
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Work => "work",
            Api::All => "all",
            Api::NoCalls => "none",
        }
    }
}

impl Graphs {
    /// The injection library's name for it (`rawfmt::GRAPHS_ENV`).
    pub fn as_str(self) -> &'static str {
        match self {
            Graphs::Node => "node",
            Graphs::Graph => "graph",
        }
    }
}

/// What the process should end with.
pub enum Exit {
    Code(i32),
    /// CMD died of this signal.
    Signal(i32),
}

fn workload_name(args: &Args) -> String {
    if let Some(n) = &args.name {
        return n.clone();
    }
    args.cmd
        .first()
        .map(|c| {
            PathBuf::from(c)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| c.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "workload".into())
}

/// Temporal-breakdown lines printed (one per process and GPU); trace.json has the rest.
const TEMPORAL_LINES: usize = 16;

/// Analyses and writes what the processes recorded, and says so on stderr.
fn report(
    raw: &std::path::Path,
    args: &Args,
    name: &str,
    status: Option<ExitStatus>,
    overhead: Option<&Overhead>,
) -> Result<()> {
    let w = super::raw::read_raw_dir(raw)?;
    if w.processes.is_empty() {
        if status.is_none() {
            anyhow::bail!(
                "no raw trace files (trace-PID.raw) in {}: give --from-raw the raw/ folder of an \
                 earlier trace",
                raw.display()
            );
        }
        tool::discard_partial(raw)?;
        eprintln!(
            "trace: nothing was recorded: no process of the command initialised CUDA (no GPU or \
             CUDA driver on this machine, or the command does not use CUDA); no outputs written \
             (an earlier trace in {} is kept)",
            args.out.display()
        );
        return Ok(());
    }
    if status.is_some() {
        tool::promote_raw(&args.out, raw)?;
    }
    let facts = tool::RunFacts {
        workload: name,
        command: &args.cmd,
        status,
        overwrite: args.overwrite,
        overhead,
    };
    let (a, files) = tool::write_outputs(&w, &args.out, &facts)?;
    eprintln!(
        "trace: {} process(es), {} kernels, {} dropped records",
        a.processes.len(),
        a.kernel_count(),
        a.dropped_records()
    );
    // The processes trace.json keeps rows of (all of them, up to 100) are the ones named here.
    let shown = super::workload_rows::shown_pids(&a);
    let named: Vec<_> = a
        .processes
        .iter()
        .filter(|p| shown.contains(&p.pid))
        .collect();
    for p in &named {
        for w in &p.warnings {
            eprintln!("trace: warning: pid {}: {w}", p.pid);
        }
        if let Some(n) = p.paused_note() {
            eprintln!("trace: pid {}: {n}", p.pid);
        }
        for m in p.missing() {
            eprintln!("trace: warning: pid {}: incomplete: {m}", p.pid);
        }
    }
    if named.len() < a.processes.len() {
        let incomplete = a.processes.iter().filter(|p| !p.complete).count();
        eprintln!(
            "trace: {} processes ({incomplete} incomplete): the lines above name {} of them (the \
             incomplete first, then by kernels); trace.sqlite's OPBENCH_TRACE_PROCESS has all",
            a.processes.len(),
            named.len()
        );
    }
    for t in a
        .temporal
        .iter()
        .filter(|t| shown.contains(&t.pid))
        .take(TEMPORAL_LINES)
    {
        eprintln!(
            "trace:   pid {} GPU {}: span {:.3} ms: compute {:.1}%, communication {:.1}%, memory \
             {:.1}%, idle {:.1}%",
            t.pid,
            t.device,
            t.span_ns as f64 / 1e6,
            t.pct(t.compute_ns),
            t.pct(t.communication_ns),
            t.pct(t.memory_ns),
            t.pct(t.idle_ns)
        );
    }
    for k in a.kernels.iter().take(5) {
        eprintln!(
            "trace:   {:5.1}%  {:>9} x  {}",
            k.time_pct,
            k.instances,
            crate::text::elide_to(&k.name, 90)
        );
    }
    if let Some(d) = overhead.and_then(Overhead::describe) {
        eprintln!("trace: {d}");
    }
    for f in files {
        eprintln!("trace: wrote {}", f.display());
    }
    Ok(())
}

/// `--diff BEFORE AFTER`: the kernel table of the two traces' differences.
fn diff(dirs: &[PathBuf], tol_pct: f64) -> Result<()> {
    let sums = dirs
        .iter()
        .map(|d| super::diff_input::kernels_of(d))
        .collect::<Result<Vec<_>>>()?;
    let rows = super::diff::diff(&sums[0], &sums[1], tol_pct);
    println!(
        "{:<8} {:>10} {:>10} {:>14} {:>14} {:>12}  kernel",
        "change", "count_a", "count_b", "total_us_a", "total_us_b", "delta_us"
    );
    for r in rows
        .iter()
        .filter(|r| r.change != super::diff::Change::Same)
    {
        println!(
            "{:<8} {:>10} {:>10} {:>14.1} {:>14.1} {:>+12.1}  {}",
            format!("{:?}", r.change).to_lowercase(),
            r.instances_a,
            r.instances_b,
            r.total_ns_a as f64 / 1e3,
            r.total_ns_b as f64 / 1e3,
            r.delta_ns() as f64 / 1e3,
            crate::text::elide_to(&r.name, 100)
        );
    }
    let same = rows
        .iter()
        .filter(|r| r.change == super::diff::Change::Same)
        .count();
    println!("{same} kernel(s) unchanged (within {tol_pct}% and the same count)");
    Ok(())
}

/// Largest `--diff-tol-pct`: a kernel ten times slower is a change at any sane tolerance.
pub const DIFF_TOL_PCT_MAX: f64 = 1000.0;

/// Every argument checked before anything runs or is read, each error naming its flag.
fn check_args(args: &Args) -> Result<()> {
    let t = args.diff_tol_pct;
    if !(0.0..=DIFF_TOL_PCT_MAX).contains(&t) {
        anyhow::bail!(
            "--diff-tol-pct {t}: give a percentage from 0 to {DIFF_TOL_PCT_MAX}, e.g. \
             --diff-tol-pct 5"
        );
    }
    if args.overhead > overhead::PAIRS_MAX {
        anyhow::bail!(
            "--overhead {}: give at most {} pairs of runs, e.g. --overhead 3",
            args.overhead,
            overhead::PAIRS_MAX
        );
    }
    if let Some(n) = &args.name {
        if n.trim().is_empty() || n.chars().any(char::is_control) {
            anyhow::bail!(
                "--name {n:?}: give a non-empty name without control characters, e.g. \
                 --name tinyllama"
            );
        }
        crate::artifact::limits::name("--name", n)
            .context("--name: the workload's name in the artifact is too long")?;
    }
    if let Some(d) = args.from_raw.as_ref().filter(|d| !d.is_dir()) {
        anyhow::bail!(
            "--from-raw {}: not a folder; give the raw/ folder of an earlier trace (OUT/raw)",
            d.display()
        );
    }
    if let Some(prog) = args.cmd.first() {
        let p = std::path::Path::new(prog);
        if !p.as_os_str().as_encoded_bytes().contains(&b'/') && on_path(prog).is_none() {
            anyhow::bail!("command {prog:?} not found: give a program on PATH or its path");
        }
        if p.is_dir() {
            anyhow::bail!(
                "CMD {prog:?} is a folder, not a program: give the program to trace after `--`, \
                 e.g. `trace --out out -- python3 train.py`"
            );
        }
    }
    Ok(())
}

/// The first file named `prog` in a folder of $PATH, as the shell would find it.
fn on_path(prog: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

/// Runs the tool; the exit to end with.
pub fn run(args: Args) -> Result<Exit> {
    check_args(&args)?;
    if let Some(d) = &args.diff {
        diff(d, args.diff_tol_pct)?;
        return Ok(Exit::Code(0));
    }
    let name = workload_name(&args);
    if let Some(dir) = &args.from_raw {
        tool::prepare_out_files(&args.out, args.overwrite)?;
        report(dir, &args, &name, None, None)
            .with_context(|| format!("--from-raw {}", dir.display()))?;
        return Ok(Exit::Code(0));
    }
    if args.cmd.is_empty() {
        anyhow::bail!(
            "no command to trace: give it after `--`, e.g. `trace --out out -- python3 \
             train.py` (or --from-raw DIR to re-analyse raw files)"
        );
    }
    let lib = tool::find_injection(args.injection.as_deref())?;
    let cupti = tool::find_cupti(args.cupti.as_deref())?;
    match &cupti {
        Some(p) => eprintln!("trace: libcupti: {}", p.display()),
        None => eprintln!(
            "trace: libcupti: none found in a CUDA toolkit (--cupti PATH names one); the traced \
             processes look it up on their library path"
        ),
    }
    let mut raw = tool::prepare_out(&args.out, args.overwrite)?;
    // The command records into OUT/raw.partial; the earlier trace in OUT stays until the new
    // one has records to replace it.
    let rec = tool::Recording {
        lib: &lib,
        cupti: cupti.as_deref(),
        graphs: args.graphs.as_str(),
        api: args.api.as_str(),
        start_paused: args.start_paused,
        max_records: args.max_records,
    };
    let mut cost = Overhead::default();
    let pairs = args.overhead;
    for i in 1..=pairs {
        let (s, t) = overhead::run_untraced(&args.cmd)?;
        eprintln!("trace: --overhead run {i}/{pairs} untraced: {t:.3} s");
        check_overhead_run(s, i, "untraced")?;
        cost.untraced_s.push(t);
        if i == pairs {
            break;
        }
        let started = std::time::Instant::now();
        let s = tool::run_traced(&args.cmd, &rec, &raw);
        let t = started.elapsed().as_secs_f64();
        tool::discard_partial(&raw)?;
        eprintln!("trace: --overhead run {i}/{pairs} traced: {t:.3} s (records discarded)");
        check_overhead_run(s?, i, "traced")?;
        cost.traced_s.push(t);
        raw = tool::prepare_out(&args.out, args.overwrite)?;
    }
    let started = std::time::Instant::now();
    let status = match tool::run_traced(&args.cmd, &rec, &raw) {
        Ok(s) => s,
        Err(e) => {
            let _ = tool::discard_partial(&raw);
            return Err(e);
        }
    };
    if pairs > 0 {
        cost.traced_s.push(started.elapsed().as_secs_f64());
    }
    eprintln!(
        "trace: the command ended: {}",
        tool::describe_status(status)
    );
    report(
        &raw,
        &args,
        &name,
        Some(status),
        (pairs > 0).then_some(&cost),
    )?;
    use std::os::unix::process::ExitStatusExt;
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(s)) => Exit::Signal(s),
        _ => Exit::Code(1),
    })
}

/// A run of `--overhead` that failed ends the measurement: its time says nothing.
fn check_overhead_run(s: ExitStatus, i: u32, side: &str) -> Result<()> {
    if s.success() {
        return Ok(());
    }
    anyhow::bail!(
        "--overhead: {side} run {i} of the command ended with {}: the overhead is measured on \
         a command that succeeds; fix the command or leave --overhead out",
        tool::describe_status(s)
    )
}

/// Ends this process as CMD ended: same exit code, or the same signal (reset to its default
/// action and raised); signals that would dump a core exit with 128 + the signal instead.
pub fn exit_as(e: Exit) -> ! {
    match e {
        Exit::Code(c) => std::process::exit(c),
        Exit::Signal(s) => {
            use nix::sys::signal::{self, SigHandler, Signal};
            if let Ok(sig) = Signal::try_from(s) {
                let no_core = matches!(
                    sig,
                    Signal::SIGKILL
                        | Signal::SIGTERM
                        | Signal::SIGINT
                        | Signal::SIGHUP
                        | Signal::SIGPIPE
                        | Signal::SIGALRM
                        | Signal::SIGUSR1
                        | Signal::SIGUSR2
                );
                if no_core {
                    // SAFETY: restoring the default action of a signal has no preconditions.
                    unsafe {
                        let _ = signal::signal(sig, SigHandler::SigDfl);
                    }
                    let _ = signal::raise(sig);
                }
            }
            std::process::exit(128 + s)
        }
    }
}
