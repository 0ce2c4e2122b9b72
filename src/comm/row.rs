//! One point of a `comm_bench` sweep as an artifact row: the params that name it, every rank's
//! check, the time per collective (mean over ranks of each sample) and the bandwidths.

use super::lockstep::Lockstep;
use super::wire::RankCheck;
use super::{algbw_gbps, busbw_gbps, Collective};
use crate::artifact::{Correctness, ResultRow, Timing};
use crate::dtype::Dtype;
use crate::sampling::Sampling;
use crate::stats::{percentile, summarize};
use anyhow::Result;

/// The artifact's `kind` and every row's `benchmark`.
pub const KIND: &str = "comm";
/// The implementation name of NCCL's rows (through cudarc, one process per GPU).
pub const NCCL: &str = "nccl";
/// NCCL's in-place all-reduce (send buffer = receive buffer), the call
/// `torch.distributed.all_reduce` makes, when `--nccl-in-place` asks for it.
pub const NCCL_IN_PLACE: &str = "nccl-inplace";
/// The implementation name of our all-reduce's rows (kernels/comm_oneshot.cu, the push
/// kernels: one-shot, or two-shot from `--ours-twoshot-from` on 3 ranks and more).
pub const OURS: &str = "opbench";
/// The one-shot push kernel at every size, when `--ours-kernel` names it.
pub const OURS_ONESHOT: &str = "opbench-oneshot";
/// The two-shot push kernel at every size, when `--ours-kernel` names it.
pub const OURS_TWOSHOT: &str = "opbench-twoshot";
/// Our pull kernel's rows (kernels/comm_oneshot.cu), when `--ours-kernel` names it.
pub const OURS_PULL: &str = "opbench-pull";
/// Every implementation comm_bench itself times (a peer file may name none of them).
pub const OWN: [&str; 6] = [
    NCCL,
    NCCL_IN_PLACE,
    OURS,
    OURS_ONESHOT,
    OURS_TWOSHOT,
    OURS_PULL,
];
/// How rows are timed: CUDA events around back-to-back collectives on each rank.
pub const METHOD: &str = "cuda_events";
/// The reference every row's correctness names.
pub const REFERENCE: &str =
    "float64 host reference of every rank's seeded inputs (worst rank); copies exact, sums within (n+1) unit roundoffs of the magnitude";

/// One point: a collective of `bytes` (nccl-tests' size) in `dtype` over `world` ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub collective: Collective,
    pub dtype: Dtype,
    pub bytes: u64,
    pub world: usize,
}

impl Point {
    /// Elements of the message (`bytes` / element size).
    pub fn count(&self) -> u64 {
        self.bytes / self.dtype.size_bytes() as u64
    }

    /// "all_reduce bf16 256 KiB x4" for progress lines.
    pub fn label(&self) -> String {
        format!(
            "{} {} {} x{}",
            self.collective,
            self.dtype.name(),
            human_bytes(self.bytes),
            self.world
        )
    }

    /// The row of `implementation` at this point, params only.
    pub fn row(&self, implementation: &str) -> ResultRow {
        ResultRow::new(KIND, implementation)
            .param("collective", self.collective.name())
            .param("dtype", self.dtype.name())
            .param("bytes", self.bytes as usize)
            .param("count", self.count() as usize)
            .param("world_size", self.world)
    }
}

/// "8 B", "256 KiB", "4 GiB" (binary units, whole when exact).
pub fn human_bytes(b: u64) -> String {
    let units = [(30, "GiB"), (20, "MiB"), (10, "KiB")];
    for (shift, u) in units {
        if b >= 1 << shift {
            let v = b as f64 / (1u64 << shift) as f64;
            return if b.is_multiple_of(1 << shift) {
                format!("{v:.0} {u}")
            } else {
                format!("{v:.1} {u}")
            };
        }
    }
    format!("{b} B")
}

/// Every rank's check as the row's correctness: the worst rank's errors.
pub fn correctness(checks: &[RankCheck]) -> Correctness {
    let worst = |f: fn(&RankCheck) -> f64| checks.iter().map(f).fold(0.0, f64::max);
    Correctness {
        reference: REFERENCE.into(),
        max_abs_err: worst(|c| c.max_abs_err),
        rel_err: worst(|c| c.max_rel_err),
        tolerance: worst(|c| c.tolerance),
        passed: !checks.is_empty() && checks.iter().all(|c| c.passed),
        non_finite: checks.iter().map(|c| c.non_finite).sum(),
    }
}

/// The row of a point some rank failed: not timed, every rank's verdict in the notes.
pub fn failed_row(p: &Point, implementation: &str, checks: &[RankCheck]) -> ResultRow {
    let who: Vec<String> = checks
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.passed)
        .map(|(r, c)| {
            format!(
                "rank {r} (rel err {:.2e}, tolerance {:.2e}, {} non-finite)",
                c.max_rel_err, c.tolerance, c.non_finite
            )
        })
        .collect();
    crate::harness::failed(
        p.row(implementation),
        Some(correctness(checks)),
        &format!(
            "check failed on {}: not timed (a timing of a wrong result is never reported)",
            who.join(", ")
        ),
    )
}

/// The row of a point every rank passed and timed: the time per collective (each sample the
/// mean over ranks), algbw and busbw at the median, each rank's own median in the notes.
pub fn timed_row(
    p: &Point,
    implementation: &str,
    checks: &[RankCheck],
    got: &Lockstep,
    sampling: &Sampling,
    warmup: usize,
    per_sample: usize,
) -> Result<ResultRow> {
    let mut row = p.row(implementation);
    let time_us = summarize(&got.sampled.samples_us)?;
    row.metrics
        .insert("algbw_gbps".into(), algbw_gbps(p.bytes, time_us.p50));
    row.metrics.insert(
        "busbw_gbps".into(),
        busbw_gbps(p.collective, p.world, p.bytes, time_us.p50),
    );
    row.stats.insert("time_us".into(), time_us);
    row.timing = Some(Timing {
        method: METHOD.into(),
        warmup,
        launches_per_sample: per_sample,
        l2_cleared: false,
        sampling: Some(got.sampled.record(sampling)),
    });
    row.correctness = Some(correctness(checks));
    let medians: Vec<String> = got
        .per_rank_us
        .iter()
        .enumerate()
        .map(|(r, v)| match percentile(v, 50.0) {
            Ok(m) => format!("{r}: {m:.2}"),
            Err(_) => format!("{r}: none"),
        })
        .collect();
    row.notes.push(format!(
        "each sample is the mean over ranks of {per_sample} back-to-back collectives timed with \
         CUDA events on each rank; each rank's own median (us): {}",
        medians.join(", ")
    ));
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Status;
    use crate::sampling::{Clocks, Sampled, Stop};
    use std::time::Duration;

    fn pass(rel: f64) -> RankCheck {
        RankCheck {
            max_abs_err: rel / 2.0,
            max_rel_err: rel,
            tolerance: 0.02,
            non_finite: 0,
            passed: rel <= 0.02,
        }
    }

    fn point() -> Point {
        Point {
            collective: Collective::AllReduce,
            dtype: Dtype::Bf16,
            bytes: 1 << 20,
            world: 4,
        }
    }

    #[test]
    fn a_timed_row_carries_the_params_and_bandwidths_at_the_median() {
        let got = Lockstep {
            sampled: Sampled {
                samples_us: vec![10.0, 12.0, 11.0],
                stop: Stop::Fixed,
                throttled: 0,
                halfwidth_rel: 0.1,
                clocks: Clocks::Steady,
                sustained_p50_us: None,
                taken: 3,
                recovery_wait: Duration::ZERO,
            },
            per_rank_us: vec![vec![9.0, 11.0, 10.0], vec![11.0, 13.0, 12.0]],
        };
        let r = timed_row(
            &point(),
            NCCL,
            &[pass(0.001), pass(0.003)],
            &got,
            &Sampling::fixed(3),
            5,
            8,
        )
        .unwrap();
        assert_eq!(r.param_str("collective").unwrap(), "all_reduce");
        assert_eq!(r.param_str("bytes").unwrap(), "1048576");
        assert_eq!(r.param_str("count").unwrap(), "524288");
        assert_eq!(r.param_str("world_size").unwrap(), "4");
        assert_eq!(r.param_str("dtype").unwrap(), "bf16");
        // 1 MiB in 11 us: 95.3 GB/s algbw; all-reduce over 4 ranks: x1.5.
        let alg = r.metrics["algbw_gbps"];
        assert!((alg - 1048576.0 / 11e-6 / 1e9).abs() < 1e-9, "{alg}");
        assert!((r.metrics["busbw_gbps"] - 1.5 * alg).abs() < 1e-9);
        let c = r.correctness.unwrap();
        assert_eq!((c.rel_err, c.passed), (0.003, true));
        assert!(r.notes[0].contains("0: 10.00, 1: 12.00"), "{:?}", r.notes);
        assert_eq!(r.timing.unwrap().launches_per_sample, 8);
    }

    #[test]
    fn a_failed_check_on_any_rank_leaves_no_numbers() {
        let r = failed_row(&point(), NCCL, &[pass(0.001), pass(0.5)]);
        assert_eq!(r.status, Status::Failed);
        assert!(r.metrics.is_empty() && r.stats.is_empty());
        assert!(!r.correctness.unwrap().passed);
        assert!(
            r.notes[0].contains("rank 1 (rel err 5.00e-1"),
            "{:?}",
            r.notes
        );
        assert!(!correctness(&[]).passed);
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(human_bytes(8), "8 B");
        assert_eq!(human_bytes(256 << 10), "256 KiB");
        assert_eq!(human_bytes(4 << 30), "4 GiB");
        assert_eq!(human_bytes(3 << 19), "1.5 MiB");
        assert_eq!(point().label(), "all_reduce bf16 1 MiB x4");
    }
}
