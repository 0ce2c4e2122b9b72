//! The GPU half of `comm_bench` (feature `cuda`): join the other ranks, open this rank's GPU
//! and an NCCL communicator on its stream, measure the ceilings, then check and time every
//! point in step with the other ranks. Only rank 0 writes the artifact.

use super::cli::Config;
use super::group::Group;
use super::lockstep::sample_in_lockstep;
use super::oneshot::OneShot;
use super::reference::{check_seeded, fill_input, Element};
use super::row::{self, Point, KIND, NCCL, NCCL_IN_PLACE};
use super::wire::RankCheck;
use super::{size_plan, Collective, RankEnv};
use crate::artifact::ArtifactWriter;
use crate::dtype::Dtype;
use crate::gpu::{hold_after, Gpu, Hold};
use crate::harness::start_artifact;
use crate::progress::Progress;
use crate::sampling::{Prepare, Sample, Sampling};
use anyhow::{Context, Result};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use cudarc::nccl::{Comm, Id, NcclType, ReduceOp};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Collectives per sample at the most, however short one is.
const MAX_PER_SAMPLE: usize = 10_000;
/// Samples of the 8-byte all-reduce ceiling.
const LATENCY_SAMPLES: usize = 30;

/// Runs this rank's part; rank 0 returns the artifact's path.
pub fn run(cfg: &Config, env: &RankEnv) -> Result<Option<PathBuf>> {
    let mut group = Group::join(env, &cfg.plan_text(), cfg.rendezvous_timeout)?;
    let r = run_joined(cfg, env, &mut group);
    if let Err(e) = &r {
        group.abandon(&format!("rank {}: {e:#}", env.rank));
    }
    r
}

fn run_joined(cfg: &Config, env: &RankEnv, group: &mut Group) -> Result<Option<PathBuf>> {
    let mut gpu = Gpu::open(env.local_rank).with_context(|| {
        format!(
            "rank {}: LOCAL_RANK={} names its GPU",
            env.rank, env.local_rank
        )
    })?;
    // SAFETY: every buffer, collective, copy and event of this process lives on the one stream
    // of `gpu`, so stream order alone orders their uses; the tracking events would only add
    // event records between the timed collectives.
    unsafe { gpu.cuda.disable_event_tracking() };
    let leader = group.is_leader();
    let peer = if leader && cfg.ceilings {
        Some(super::peer_copy::peer_copy_gbps()?)
    } else {
        None
    };
    let id = if leader {
        let id = Id::new().map_err(|e| anyhow::anyhow!("ncclGetUniqueId: {e:?}"))?;
        Some(id.internal().iter().map(|c| *c as u8).collect())
    } else {
        None
    };
    let bytes = group.share(id)?;
    // NCCL takes its device from the thread's current context; the peer copies left another
    // GPU's context current on rank 0.
    gpu.ctx
        .bind_to_thread()
        .context("making this rank's GPU current")?;
    let internal: [std::ffi::c_char; 128] = bytes
        .iter()
        .map(|b| *b as std::ffi::c_char)
        .collect::<Vec<_>>()
        .try_into()
        .map_err(|_| {
            anyhow::anyhow!("the NCCL id from rank 0 is {} bytes, not 128", bytes.len())
        })?;
    let comm = Comm::from_rank(
        gpu.stream.clone(),
        env.rank,
        env.world_size,
        Id::uninit(internal),
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "ncclCommInitRank (rank {} of {}): {e:?}",
            env.rank,
            env.world_size
        )
    })?;
    let seed = group.decide(cfg.seed.unwrap_or_else(rand::random))?;
    let mut w = if leader {
        let mut w = start_artifact(
            KIND,
            &cfg.out,
            gpu.env(),
            cfg.overwrite,
            None,
            gpu.nvml_note(),
        )?;
        if let Some((gbps, method)) = peer {
            w.artifact.ceilings.peer_copy_gbps = gbps;
            w.artifact.ceilings.method.push(method);
        }
        Some(w)
    } else {
        None
    };
    let ours = if cfg.ours_max_bytes > 0 && cfg.collectives.contains(&Collective::AllReduce) {
        cfg.ours_kernels
            .iter()
            .map(|k| {
                OneShot::open(
                    &gpu,
                    group,
                    *k,
                    cfg.ours_max_bytes as usize,
                    cfg.ours_twoshot_from,
                )
            })
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let hold = Hold::load(&gpu)?;
    let align = (
        gpu.stream
            .clone_htod(&[1.0f32, 2.0])
            .context("uploading the alignment all-reduce's input")?,
        gpu.stream
            .alloc_zeros(2)
            .context("allocating the alignment all-reduce's output")?,
    );
    let mut run = Run {
        cfg,
        env,
        group,
        gpu: &mut gpu,
        comm: &comm,
        ours,
        hold,
        align,
        seed,
        threads: host_threads(),
    };
    if cfg.ceilings {
        let us = run.latency_us()?;
        if let (Some(w), Some(us)) = (w.as_mut(), us) {
            eprintln!(
                "collective latency: {us:.2} us per 8-byte all-reduce over {} ranks",
                env.world_size
            );
            w.artifact.ceilings.collective_latency_us = Some(us);
            w.artifact.ceilings.method.push(format!(
                "collective_latency_us: 8-byte f32 all-reduce over {} ranks, 100 back to back \
                 between CUDA events on each rank, mean over ranks, median of {LATENCY_SAMPLES} \
                 samples",
                env.world_size
            ));
        }
    }
    let plans = cfg
        .dtypes
        .iter()
        .flat_map(|d| cfg.collectives.iter().map(move |c| (*d, *c)))
        .map(|(d, c)| {
            let p = size_plan(
                c,
                env.world_size,
                d.size_bytes() as u64,
                cfg.min_bytes,
                cfg.max_bytes,
            )?;
            Ok((d, c, p))
        })
        .collect::<Result<Vec<_>>>()?;
    let total: usize = plans.iter().map(|(_, _, p)| p.bytes.len()).sum();
    let progress = if leader {
        Progress::new(total as u64)
    } else {
        Progress::quiet(total as u64)
    };
    if let Some(w) = w.as_mut() {
        w.artifact.notes.push(cfg.sampling.describe());
        w.artifact.notes.push(format!(
            "comm_bench: {} ranks (one process per GPU), NCCL through cudarc; \
             NCCL_NVLS_ENABLE={}; seed {seed}; each point checked on every rank before timing; \
             each sample starts behind a stream hold and an 8-byte all-reduce that lines the \
             ranks up",
            env.world_size,
            std::env::var("NCCL_NVLS_ENABLE").unwrap_or_default()
        ));
        if !run.ours.is_empty() {
            w.artifact.notes.push(format!(
                "our all-reduce kernels ({}) beside NCCL up to {} B; opbench runs the two-shot \
                 kernel from {} B on 3 ranks and more (--ours-twoshot-from), the one-shot \
                 kernel elsewhere",
                cfg.ours_kernel_names(),
                cfg.ours_max_bytes,
                cfg.ours_twoshot_from
            ));
        }
        for (d, c, p) in &plans {
            for (want, got) in &p.raised {
                w.artifact.notes.push(format!(
                    "{c} {}: {want} B raised to {got} B (a whole number of elements per rank)",
                    d.name()
                ));
            }
        }
    }
    for (dtype, c, plan) in &plans {
        for &bytes in &plan.bytes {
            let p = Point {
                collective: *c,
                dtype: *dtype,
                bytes,
                world: env.world_size,
            };
            progress.start(p.label());
            let rows = match dtype {
                Dtype::F32 => run.point::<f32>(&p)?,
                Dtype::Bf16 => run.point::<half::bf16>(&p)?,
                d => anyhow::bail!("--dtype {}: comm_bench moves f32 and bf16", d.name()),
            };
            if let Some(w) = w.as_mut() {
                for row in rows {
                    progress.row(&row);
                    w.push(row)?;
                }
            }
            run.gpu.sample_clocks();
            progress.step();
        }
    }
    progress.finish();
    run.group.finish_together()?;
    match w {
        Some(w) => finish(w, run.gpu).map(Some),
        None => Ok(None),
    }
}

fn finish(mut w: ArtifactWriter, gpu: &mut Gpu) -> Result<PathBuf> {
    w.artifact.env = gpu.env();
    w.finish()
}

/// Host threads for filling and checking: this host's cores shared by its ranks.
fn host_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let local: usize = std::env::var("LOCAL_WORLD_SIZE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1);
    (cores / local.max(1)).max(1)
}

/// Enqueues one collective from an input buffer to an output buffer (NCCL's or ours).
type Launch<'a, T> = dyn FnMut(&CudaSlice<T>, &mut CudaSlice<T>) -> Result<()> + 'a;

/// One rank's sweep state.
struct Run<'a> {
    cfg: &'a Config,
    env: &'a RankEnv,
    group: &'a mut Group,
    gpu: &'a mut Gpu,
    comm: &'a Comm,
    /// Our all-reduce kernels, when --ours-max-bytes asks for them.
    ours: Vec<OneShot>,
    /// Keeps the stream busy before each sample while the host queues it.
    hold: Hold,
    /// The 8-byte all-reduce that lines the ranks up before each sample: source, destination.
    align: (CudaSlice<f32>, CudaSlice<f32>),
    seed: u64,
    threads: usize,
}

/// Enqueues one collective of `c` on the communicator's stream (the benchmark's stream).
fn launch<T: NcclType>(
    comm: &Comm,
    c: Collective,
    src: &CudaSlice<T>,
    dst: &mut CudaSlice<T>,
) -> Result<()> {
    let r = match c {
        Collective::AllReduce => comm.all_reduce(src, dst, &ReduceOp::Sum),
        Collective::AllGather => comm.all_gather(src, dst),
        Collective::ReduceScatter => comm.reduce_scatter(src, dst, &ReduceOp::Sum),
        Collective::Broadcast => comm.broadcast(Some(src), dst, 0),
    };
    r.map(|_| ())
        .map_err(|e| anyhow::anyhow!("NCCL {c}: {e:?}"))
}

impl Run<'_> {
    /// The seed of one point's inputs: fresh data at every point.
    fn point_seed(&self, p: &Point) -> u64 {
        let c = Collective::ALL
            .iter()
            .position(|x| *x == p.collective)
            .unwrap_or(0) as u64;
        self.seed ^ p.bytes.rotate_left(17) ^ (c << 56) ^ ((p.dtype.size_bytes() as u64) << 48)
    }

    /// NCCL's row of one point and, for an all-reduce, NCCL's in-place row (when asked for)
    /// and, for a small enough one, ours; rank 0 gets the rows.
    fn point<T>(&mut self, p: &Point) -> Result<Vec<crate::artifact::ResultRow>>
    where
        T: Element + NcclType + DeviceRepr + ValidAsZeroBits,
    {
        let comm = self.comm;
        let c = p.collective;
        let mut rows: Vec<_> = self
            .measure::<T>(p, NCCL, false, &mut |s, d| launch(comm, c, s, d))?
            .into_iter()
            .collect();
        if c == Collective::AllReduce && self.cfg.nccl_in_place {
            rows.extend(self.measure::<T>(p, NCCL_IN_PLACE, true, &mut |_, d| {
                comm.all_reduce_in_place(d, &ReduceOp::Sum)
                    .map(|_| ())
                    .map_err(|e| anyhow::anyhow!("NCCL in-place {c}: {e:?}"))
            })?);
        }
        if c == Collective::AllReduce && p.bytes <= self.cfg.ours_max_bytes {
            let mut ours = std::mem::take(&mut self.ours);
            let timed = ours.iter_mut().try_for_each(|k| {
                let imp = k.kernel.implementation();
                rows.extend(self.measure::<T>(p, imp, false, &mut |s, d| k.launch(s, d))?);
                Ok::<_, anyhow::Error>(())
            });
            self.ours = ours;
            timed?;
        }
        Ok(rows)
    }

    /// Checks one point of `implementation` (`launch` enqueues one collective from the input to
    /// the output) on every rank and, when all passed, times it; rank 0 gets the row. An
    /// `in_place` launch works on the output alone: it starts from a copy of the input, and
    /// its timed calls run on zeros (repeated sums of one buffer would overflow).
    fn measure<T>(
        &mut self,
        p: &Point,
        implementation: &str,
        in_place: bool,
        launch: &mut Launch<'_, T>,
    ) -> Result<Option<crate::artifact::ResultRow>>
    where
        T: Element + DeviceRepr + ValidAsZeroBits,
    {
        let world = self.env.world_size;
        let count = p.count() as usize;
        let (in_len, out_len) = match p.collective {
            Collective::AllReduce | Collective::Broadcast => (count, count),
            Collective::AllGather => (count / world, count),
            Collective::ReduceScatter => (count, count / world),
        };
        let seed = self.point_seed(p);
        let mut host = vec![T::from_f64(0.0); in_len];
        fill_input(seed, self.env.rank, &mut host, self.threads);
        let stream = self.gpu.stream.clone();
        let src = stream.clone_htod(&host).context("uploading the input")?;
        drop(host);
        let mut dst: CudaSlice<T> = stream
            .alloc_zeros(out_len)
            .context("allocating the output")?;
        if in_place {
            stream
                .memcpy_dtod(&src, &mut dst)
                .context("copying the input into the in-place buffer")?;
        } else {
            self.gpu.poison(&mut dst)?;
        }
        launch(&src, &mut dst)?;
        let got = stream
            .clone_dtoh(&dst)
            .context("reading the output back (a collective may have failed)")?;
        let c = check_seeded(
            p.collective,
            seed,
            world,
            self.env.rank,
            0,
            in_len,
            &got,
            self.threads,
        );
        drop(got);
        let mine = RankCheck {
            max_abs_err: c.max_abs_err,
            max_rel_err: c.max_rel_err,
            tolerance: c.tolerance,
            non_finite: c.non_finite,
            passed: c.passed,
        };
        let (all_passed, checks) = self.group.agree(mine)?;
        if !all_passed {
            return Ok(self
                .group
                .is_leader()
                .then(|| row::failed_row(p, implementation, &checks)));
        }
        if in_place {
            stream
                .memset_zeros(&mut dst)
                .context("zeroing the in-place buffer")?;
        }
        let mut once = || launch(&src, &mut dst);
        let per_sample = self.warm_up(&mut once)?;
        let sampling = self.cfg.sampling;
        let got = self.sampled(&sampling, per_sample, &mut once)?;
        match got {
            Some(l) => Ok(Some(row::timed_row(
                p,
                implementation,
                &checks,
                &l,
                &sampling,
                self.cfg.warmup,
                per_sample,
            )?)),
            None => Ok(None),
        }
    }

    /// --warmup untimed collectives, timed together to choose the collectives per sample
    /// (rank 0's choice, so every rank runs the same number).
    fn warm_up(&mut self, once: &mut dyn FnMut() -> Result<()>) -> Result<usize> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let n = self.cfg.warmup.max(1);
        let start = self.gpu.stream.record_event(flags)?;
        for _ in 0..n {
            once()?;
        }
        let end = self.gpu.stream.record_event(flags)?;
        let each_us = (start.elapsed_ms(&end).context("timing the warm-up")? as f64 * 1e3
            / n as f64)
            .max(1e-3);
        let mine = ((self.cfg.min_sample_us / each_us).ceil() as usize).clamp(1, MAX_PER_SAMPLE);
        Ok(self.group.decide(mine as u64)? as usize)
    }

    /// Samples `per_sample` collectives at a time in step with the other ranks. A hold kernel
    /// before each sample keeps the stream busy while the host queues the sample, so that
    /// queueing (NCCL's enqueue, a launch) is not timed. Behind the hold, an 8-byte all-reduce
    /// that every rank leaves at about the same moment starts the timed region, so ranks whose
    /// holds end apart (their hosts queue at different speeds) do not time the wait for each
    /// other: without it, the early rank's first collective waits for the late one and the
    /// sample's mean over ranks carries half the skew.
    fn sampled(
        &mut self,
        sampling: &Sampling,
        per_sample: usize,
        once: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<super::lockstep::Lockstep>> {
        let gpu = &mut *self.gpu;
        let hold = &self.hold;
        let comm = self.comm;
        let (align_src, align_dst) = (&self.align.0, &mut self.align.1);
        let mut hold_for = hold_after(Duration::from_micros(10) * per_sample as u32);
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        sample_in_lockstep(self.group, sampling, |prepare| {
            let recovered = match prepare {
                Prepare::BackToBack => None,
                Prepare::Recover(max_wait) => {
                    let r = gpu.wait_for_clocks(max_wait);
                    once()?;
                    Some(r)
                }
            };
            let t = Instant::now();
            hold.enqueue(gpu, hold_for)?;
            let queue = Instant::now();
            launch(comm, Collective::AllReduce, align_src, align_dst)
                .context("the all-reduce that lines the ranks up")?;
            let start = gpu
                .stream
                .record_event(flags)
                .context("recording start event")?;
            for _ in 0..per_sample {
                once()?;
            }
            hold_for = hold_after(queue.elapsed());
            let end = gpu
                .stream
                .record_event(flags)
                .context("recording end event")?;
            let throttled = gpu.throttled_recently();
            let ms = start
                .elapsed_ms(&end)
                .context("reading event time (a collective may have failed)")?;
            Ok(Sample {
                us: ms as f64 * 1e3 / per_sample as f64,
                wall: t.elapsed(),
                throttled,
                recovered,
            })
        })
    }

    /// The 8-byte all-reduce ceiling: rank 0 gets the median time per collective.
    fn latency_us(&mut self) -> Result<Option<f64>> {
        let stream = self.gpu.stream.clone();
        let src = stream.clone_htod(&[1.0f32, 2.0])?;
        let mut dst: CudaSlice<f32> = stream.alloc_zeros(2)?;
        let comm = self.comm;
        for _ in 0..10 {
            launch(comm, Collective::AllReduce, &src, &mut dst)?;
        }
        self.gpu.synchronize()?;
        let got = self.sampled(&Sampling::fixed(LATENCY_SAMPLES), 100, &mut || {
            launch(comm, Collective::AllReduce, &src, &mut dst)
        })?;
        Ok(got
            .map(|l| crate::stats::percentile(&l.sampled.samples_us, 50.0))
            .transpose()?)
    }
}
