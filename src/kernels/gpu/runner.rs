//! The sweep on the GPU: per parameter set, fresh inputs, the reference output, then each point
//! checked and (if it passed) timed; rows are saved as they come. A sticky CUDA fault ends this
//! process's part: a failed row names it and the partial artifact is handed over, for a fresh
//! process (`--resume-partial`, see `kernels::resume`) to run the points after it.

use super::check::{
    compare, cpu_matmul, fresh_inputs, prepare, run_once, upload_inputs, used_buffers, Outputs,
};
use super::launch::{launch, Buffers};
use super::{ceilings, profile, sticky_error};
use crate::artifact::{Correctness, ResultRow, Status};
use crate::gpu::{measure, Gpu, Measured, TimingConfig, TimingMode};
use crate::harness::{Session, SessionSpec};
use crate::kernels::args::{Args, Mode};
use crate::kernels::compile::Compiled;
use crate::kernels::manifest::{block_label, CpuReference};
use crate::kernels::report;
use crate::kernels::resume::{self, RunEnd};
use crate::kernels::sweep::{Group, Plan, Point};
use anyhow::{Context, Result};
use cudarc::driver::CudaFunction;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeSet;

/// A fault that leaves the CUDA context unusable, at one point.
struct Fault {
    point: usize,
    error: anyhow::Error,
}

/// Why a parameter set stopped the run.
enum Stop {
    Fault(Fault),
    /// Anything else that cannot be recorded as a failed row (writing the artifact failed).
    Other(anyhow::Error),
}

struct Run<'a> {
    s: Session,
    plan: &'a Plan,
    funcs: &'a [CudaFunction],
    args: &'a Args,
    /// (row index, point id) of every point that was timed, for the profiler.
    measured: Vec<(usize, usize)>,
    copy_gbps: Option<f64>,
    f32_tflops: Option<f64>,
    pb: crate::progress::Progress,
    /// Points before this id ran in an earlier process of the run: no row is written for them.
    skip: usize,
}

/// Runs every point (or, continuing a run, those after the partial file's rows) and writes the
/// artifact and the report; after a fault, hands the partial file over instead.
pub fn sweep(
    gpu: Gpu,
    plan: &Plan,
    funcs: &[CudaFunction],
    args: &Args,
    compiled: &Compiled,
) -> Result<RunEnd> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let (s, skip) = match &args.resume_partial {
        Some(partial) => {
            let (w, done) = resume::open(args, plan, partial)?;
            (Session::resume(gpu, w), done)
        }
        None => (start(gpu, plan, args, compiled, seed)?, 0),
    };
    let copy_gbps = s.copy_gbps;
    let f32_tflops = s.w.artifact.ceilings.matmul_tflops.get("f32").copied();
    let mut run = Run {
        s,
        plan,
        funcs,
        args,
        measured: Vec::new(),
        copy_gbps,
        f32_tflops,
        pb: crate::progress::Progress::new(plan.points().saturating_sub(skip) as u64),
        skip,
    };
    if !args.no_ceilings && args.resume_partial.is_none() {
        run.ceilings()?;
    }
    for (gi, g) in plan.groups.iter().enumerate() {
        // A parameter set an earlier process of the run finished.
        if g.points.iter().all(|p| p.id < skip) {
            continue;
        }
        match run.group(g, seed.wrapping_add(gi as u64)) {
            Ok(()) => {}
            Err(Stop::Fault(fault)) => return run.stop(g, fault),
            Err(Stop::Other(e)) => return Err(e),
        }
    }
    run.pb.finish();
    if args.profile {
        profile::attach(args, plan, &run.measured, &mut run.s.w)?;
    }
    let path = run.s.finish()?;
    let text = report::render(&crate::artifact::read_artifact(&path)?);
    let report_path = args.report_path();
    crate::artifact::write_bytes_atomic(&report_path, text.as_bytes())?;
    print!("{text}");
    eprintln!("wrote {} and {}", path.display(), report_path.display());
    Ok(RunEnd::Finished)
}

/// A new run: the ceilings' session, the artifact started with the compiler and the notes.
fn start(gpu: Gpu, plan: &Plan, args: &Args, compiled: &Compiled, seed: u64) -> Result<Session> {
    if !args.no_ceilings {
        eprintln!("measuring ceilings: device copy (1 GiB) and cuBLAS SGEMM 4096^3");
    }
    let mut s = Session::start(
        gpu,
        SessionSpec {
            kind: "kernels",
            out: &args.out,
            overwrite: args.overwrite,
            copy_ceiling: !args.no_ceilings,
            launch_interval: false,
        },
    )?;
    let w = &mut s.w;
    let m = &plan.manifest;
    let info = &compiled.info;
    w.artifact.notes.push(format!(
        "kernels from {} ({}), compiled by {} {} for {}{}",
        m.source.display(),
        m.origin,
        info.name,
        info.version,
        info.target,
        if info.name == "nvrtc" {
            " in-process"
        } else {
            " to a cubin"
        }
    ));
    w.artifact.notes.extend(compiled.notes.iter().cloned());
    w.artifact.compiler = Some(info.clone());
    w.artifact.notes.push(args.sampling.sampling().describe());
    w.artifact.notes.push(format!(
        "correctness: every point is compared with the reference kernel `{}` on fresh random \
         inputs (outputs poisoned with NaN before each launch){}; random seed {seed} (parameter \
         set i uses seed + i)",
        m.reference,
        if m.cpu_reference == Some(CpuReference::Matmul) {
            "; the reference itself is compared with a float64 CPU matmul"
        } else {
            "; the manifest names no CPU reference, so the reference kernel defines the expected output"
        }
    ));
    Ok(s)
}

/// As ncu's target: launches each listed point once (inputs random, outputs poisoned).
pub fn ncu_target(gpu: &mut Gpu, plan: &Plan, funcs: &[CudaFunction], ids: &str) -> Result<()> {
    let ids: BTreeSet<usize> = ids
        .split(',')
        .map(|s| s.trim().parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .context("--ncu-child: a comma-separated list of point ids")?;
    let mut rng = StdRng::seed_from_u64(0x6e6375);
    let m = &plan.manifest;
    let names: Vec<String> = m.buffers.iter().map(|b| b.name.clone()).collect();
    for g in &plan.groups {
        let points: Vec<&Point> = g.points.iter().filter(|p| ids.contains(&p.id)).collect();
        if points.is_empty() {
            continue;
        }
        let host = fresh_inputs(m, g, &mut rng)?;
        let mut bufs = Buffers::alloc(gpu, &g.buffers, &names)?;
        upload_inputs(gpu, &mut bufs, &host)?;
        for p in points {
            prepare(gpu, m, &mut bufs, &host)?;
            launch(gpu, &funcs[p.kernel], p, &bufs.ptrs)?;
            gpu.synchronize()
                .with_context(|| format!("profiling {}", plan.point_label(g, p)))?;
        }
    }
    Ok(())
}

impl Run<'_> {
    /// The f32 matrix ceiling (the session measured the copy ceiling).
    fn ceilings(&mut self) -> Result<()> {
        let (sgemm, method) = ceilings::sgemm_tflops(&mut self.s.gpu, 4096)?;
        self.f32_tflops = Some(sgemm);
        let c = &mut self.s.w.artifact.ceilings;
        c.matmul_tflops.insert("f32".to_string(), sgemm);
        c.method.push(method);
        self.s.w.flush()
    }

    fn row(&self, g: &Group, p: &Point) -> ResultRow {
        let mut r = ResultRow::new("user_kernel", &self.plan.manifest.kernels[p.kernel].name);
        for (k, v) in &g.params {
            r = r.param(k, *v);
        }
        r = r.param("block", block_label(p.block));
        crate::code_id::tag(&mut r, &[super::CODE_MODULE]);
        r.notes.push(format!(
            "grid {}x{}x{}, block {}x{}x{}, dynamic shared memory {} B",
            p.grid[0], p.grid[1], p.grid[2], p.block[0], p.block[1], p.block[2], p.shared_bytes
        ));
        r
    }

    fn push(&mut self, row: ResultRow) -> Result<()> {
        self.pb.step();
        self.pb.row(&row);
        self.s.w.push(row)?;
        self.s.gpu.sample_clocks();
        Ok(())
    }

    fn failed(&mut self, g: &Group, p: &Point, why: String, c: Option<Correctness>) -> Result<()> {
        let label = self.plan.point_label(g, p);
        self.pb.start(label);
        let mut r = self.row(g, p);
        r.status = Status::Failed;
        r.notes.insert(0, why);
        r.correctness = c;
        self.push(r)
    }

    /// Splits an error into a fault (stops the run) or an ordinary failure (recorded).
    fn classify(&self, p: &Point, e: anyhow::Error) -> std::result::Result<anyhow::Error, Stop> {
        if sticky_error(&e).is_some() {
            Err(Stop::Fault(Fault {
                point: p.id,
                error: e,
            }))
        } else {
            Ok(e)
        }
    }

    fn group(&mut self, g: &Group, seed: u64) -> std::result::Result<(), Stop> {
        let first = &g.points[0];
        // Rows only for points this process runs; the reference output is computed regardless.
        let skip = self.skip;
        let io = Stop::Other;
        let m = &self.plan.manifest;
        let mut rng = StdRng::seed_from_u64(seed);
        let names: Vec<String> = m.buffers.iter().map(|b| b.name.clone()).collect();
        let prepared = fresh_inputs(m, g, &mut rng).and_then(|host| {
            let mut bufs = Buffers::alloc(&self.s.gpu, &g.buffers, &names)?;
            upload_inputs(&self.s.gpu, &mut bufs, &host)?;
            Ok((host, bufs))
        });
        let (host, mut bufs) = match prepared {
            Ok(x) => x,
            Err(e) => {
                let e = self.classify(first, e)?;
                let why = format!("could not set up this parameter set: {e:#}");
                for p in g.points.iter().filter(|p| p.id >= skip) {
                    self.failed(g, p, why.clone(), None).map_err(io)?;
                }
                return Ok(());
            }
        };
        // The reference output, and the reference's own check.
        let reference = match run_once(
            &self.s.gpu,
            &self.funcs[first.kernel],
            first,
            m,
            &mut bufs,
            &host,
        ) {
            Ok(out) => out,
            Err(e) => {
                let e = self.classify(first, e)?;
                if first.id >= skip {
                    self.failed(g, first, format!("reference kernel failed: {e:#}"), None)
                        .map_err(io)?;
                }
                for p in g.points[1..].iter().filter(|p| p.id >= skip) {
                    self.failed(
                        g,
                        p,
                        "not checked: the reference kernel failed at this parameter set".into(),
                        None,
                    )
                    .map_err(io)?;
                }
                return Ok(());
            }
        };
        let ref_check = self.reference_check(g, first, &host, &reference, &mut rng);
        let ref_ok = ref_check.as_ref().is_none_or(|c| c.passed);
        for p in g.points.iter().filter(|p| p.id >= skip) {
            if !ref_ok && p.id != first.id {
                self.failed(
                    g,
                    p,
                    "not checked: the reference kernel failed its own check here".into(),
                    None,
                )
                .map_err(io)?;
                continue;
            }
            let (correctness, detail) = if p.id == first.id {
                (ref_check.clone(), None)
            } else {
                let against = format!("kernel:{}", m.reference);
                match run_once(&self.s.gpu, &self.funcs[p.kernel], p, m, &mut bufs, &host) {
                    Ok(out) => {
                        let (c, d) = compare(m, &out, &reference, &against, &used_buffers(p));
                        (Some(c), Some(d))
                    }
                    Err(e) => {
                        let e = self.classify(p, e)?;
                        self.failed(g, p, format!("launch failed: {e:#}"), None)
                            .map_err(io)?;
                        continue;
                    }
                }
            };
            if let Some(c) = correctness.as_ref().filter(|c| !c.passed) {
                let why =
                    format!(
                    "correctness failed against {}: rel_err {:.3e} > tolerance {:.1e}; not timed{}",
                    c.reference,
                    c.rel_err,
                    c.tolerance,
                    detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default()
                );
                self.failed(g, p, why, correctness.clone()).map_err(io)?;
                continue;
            }
            match self.time(p, &bufs) {
                Ok(measured) => self
                    .ok_row(g, p, measured, correctness, detail)
                    .map_err(io)?,
                Err(e) => {
                    let e = self.classify(p, e)?;
                    self.failed(g, p, format!("timing failed: {e:#}"), None)
                        .map_err(io)?;
                }
            }
        }
        Ok(())
    }

    /// The reference kernel's own check: a CPU matmul, or (without one) that it wrote every
    /// output it was given (an optional one may be left entirely unwritten).
    fn reference_check(
        &self,
        g: &Group,
        first: &Point,
        host: &[Option<Vec<u8>>],
        reference: &Outputs,
        rng: &mut StdRng,
    ) -> Option<Correctness> {
        let m = &self.plan.manifest;
        match m.cpu_reference {
            Some(CpuReference::Matmul) => Some(
                cpu_matmul(m, g, host, reference, rng).unwrap_or_else(|e| Correctness {
                    // The check could not run: the reference names why, no error is measured.
                    reference: format!("cpu_f64_matmul: {e:#}"),
                    max_abs_err: 0.0,
                    rel_err: 0.0,
                    tolerance: 0.0,
                    passed: false,
                    non_finite: 0,
                }),
            ),
            None => {
                let used = used_buffers(first);
                let unwritten = reference.iter().find(|(i, v)| {
                    let b = &m.buffers[*i];
                    let all_nan = !v.is_empty() && v.iter().all(|x| x.is_nan());
                    used.contains(i) && !(b.optional && all_nan) && v.iter().any(|x| !x.is_finite())
                });
                // Nothing was compared: no error to report, only the NaN/inf count.
                unwritten.map(|(i, v)| Correctness {
                    reference: format!(
                        "poison check of the reference (buffer {} holds NaN/inf: unwritten or invalid)",
                        m.buffers[*i].name
                    ),
                    max_abs_err: 0.0,
                    rel_err: 0.0,
                    tolerance: 0.0,
                    passed: false,
                    non_finite: v.iter().filter(|x| !x.is_finite()).count(),
                })
            }
        }
    }

    /// Times a checked point: a short estimate, then enough launches per sample to last ~1 ms
    /// (warm), sampled until the median settles (the harness's --ci-target-pct, budget, cap).
    fn time(&mut self, p: &Point, bufs: &Buffers) -> Result<Measured> {
        let f = &self.funcs[p.kernel];
        let ptrs = bufs.ptrs.clone();
        let est = measure(
            &mut self.s.gpu,
            TimingConfig::fixed(2, 3, 1),
            TimingMode::Warm,
            |g| launch(g, f, p, &ptrs),
        )?;
        let t1 = est.time_us.p50.max(0.5);
        let (mode, batch) = match self.args.mode {
            Mode::Warm => (
                TimingMode::Warm,
                ((1000.0 / t1).ceil() as usize).clamp(1, 1000),
            ),
            Mode::Cold => (TimingMode::Cold, 1),
        };
        let cfg = TimingConfig {
            warmup: batch.max(3),
            sampling: self.args.sampling.sampling(),
            batch,
        };
        measure(&mut self.s.gpu, cfg, mode, |g| launch(g, f, p, &ptrs))
    }

    fn ok_row(
        &mut self,
        g: &Group,
        p: &Point,
        t: Measured,
        c: Option<Correctness>,
        detail: Option<String>,
    ) -> Result<()> {
        let mut r = self.row(g, p);
        r.notes.extend(detail);
        let secs = t.time_us.p50 * 1e-6;
        let gbps = g.bytes_moved / secs / 1e9;
        r.metrics.insert("gbps".into(), gbps);
        r.metrics.insert("bytes_count".into(), g.bytes_moved);
        if let Some(copy) = self.copy_gbps {
            r.metrics
                .insert("pct_of_copy_bw".into(), 100.0 * gbps / copy);
        }
        if let Some(fl) = g.flops {
            let tflops = fl / secs / 1e12;
            r.metrics.insert("tflops".into(), tflops);
            r.metrics.insert("flop_count".into(), fl);
            if g.bytes_moved > 0.0 {
                r.metrics.insert("flop_per_byte".into(), fl / g.bytes_moved);
            }
            if let Some(peak) = self.f32_tflops {
                r.metrics
                    .insert("pct_of_f32_matmul".into(), 100.0 * tflops / peak);
            }
        }
        r.stats.insert("time_us".into(), t.time_us);
        r.timing = Some(t.timing);
        r.correctness = c;
        self.pb.start(self.plan.point_label(g, p));
        let row_index = self.s.w.artifact.results.len();
        self.push(r)?;
        self.measured.push((row_index, p.id));
        Ok(())
    }

    /// After a fault: records it (and the points of its parameter set it leaves with no
    /// reference output), then hands the partial file over for a fresh process to continue.
    fn stop(mut self, g: &Group, fault: Fault) -> Result<RunEnd> {
        self.pb.finish();
        let cause = sticky_error(&fault.error).map_or("a CUDA error".into(), |d| {
            let text = d.error_string().map(|c| c.to_string_lossy().into_owned());
            format!("{:?}: {}", d.0, text.unwrap_or_default())
        });
        let unreachable = resume::unreachable_after(self.plan, fault.point);
        let skip = self.skip;
        for p in g.points.iter().filter(|p| p.id >= skip) {
            let why = if p.id == fault.point {
                format!(
                    "kernel faulted: {cause} (seen at: {}). The CUDA context is unusable after \
                     this error, so the points after it run in a fresh process",
                    fault.error
                )
            } else if unreachable.contains(&p.id) {
                format!("not checked: the reference kernel faulted at this parameter set ({cause})")
            } else {
                continue;
            };
            let label = self.plan.point_label(g, p);
            eprintln!("{label}: {why}");
            let mut r = self.row(g, p);
            r.status = Status::Failed;
            r.notes.insert(0, why);
            self.s.w.push(r)?;
        }
        Ok(RunEnd::Faulted {
            partial: self.s.w.hand_over()?,
        })
    }
}
