//! The peers' rows (bench/peers/layernorm_peers.py: torch, torch.compile, Triton) as artifact
//! rows: the statistics, GB/s and % of copy computed here exactly as for our own rows.
//!
//! The peer times each point of an artifact with layernorm_bench's method and writes raw
//! per-sample times; a row names its point by the same params as candle's row of that point.

use super::report::{self, BENCHMARK, CANDLE, OPBENCH};
use super::{Dtype, Shape};
use crate::artifact::{Artifact, Correctness, Param, ResultRow, SamplingRecord, Status, Timing};
use crate::gpu::rotation;
use crate::sampling;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;

/// The params that name a point, exactly as candle's rows carry them.
pub const POINT_PARAMS: [&str; 7] = ["shape", "rows", "cols", "dtype", "mode", "eps", "device"];

/// `Timing::method` of cold rows flushed per launch and of warm rows without a hold.
pub const METHOD_EVENTS: &str = "cuda_events";

pub use crate::artifact::peer::{PeerRotation, PeerRow, PeerTiming};

/// Whether `r` is a row of the point `params` names.
pub fn at_point(r: &ResultRow, params: &BTreeMap<String, Param>) -> bool {
    r.benchmark == BENCHMARK
        && POINT_PARAMS
            .iter()
            .all(|k| r.params.get(*k) == params.get(*k))
}

/// The artifact's row of `imp` at the point `params` names, if any.
pub fn row_at<'a>(
    a: &'a Artifact,
    imp: &str,
    params: &BTreeMap<String, Param>,
) -> Option<&'a ResultRow> {
    a.results
        .iter()
        .find(|r| r.implementation == imp && at_point(r, params))
}

fn point_text(params: &BTreeMap<String, Param>) -> String {
    let v = |k: &str| params.get(k).map(|p| p.to_string()).unwrap_or_default();
    format!("{} {} {}", v("shape"), v("dtype"), v("mode"))
}

/// Turns peer row `at` (e.g. "peers.json: rows[3]") into an artifact row of the point it names
/// in `a`; refuses a row of another point, a malformed one, or one that claims our names.
pub fn to_row(p: PeerRow, at: &str, a: &Artifact) -> Result<ResultRow> {
    if p.benchmark != BENCHMARK {
        bail!(
            "{at}: field `benchmark` is {:?}, expected {BENCHMARK:?}",
            p.benchmark
        );
    }
    let imp = p.implementation.trim();
    if imp.is_empty() || imp == CANDLE || imp == OPBENCH {
        bail!(
            "{at}: field `implementation` is {imp:?}: a peer names itself (torch, torch-compile, \
             triton), never the artifact's own {CANDLE:?} or {OPBENCH:?}"
        );
    }
    if let Some(k) = p
        .params
        .keys()
        .find(|k| !POINT_PARAMS.contains(&k.as_str()))
    {
        bail!(
            "{at}: field `params.{k}` is not a point param: a peer row carries exactly {}",
            POINT_PARAMS.join(", ")
        );
    }
    let Some(twin) = row_at(a, CANDLE, &p.params).or_else(|| row_at(a, OPBENCH, &p.params)) else {
        bail!(
            "{at}: field `params` names no point of the artifact ({}, {:?}): run the peer with \
             --plan on the artifact it is merged into",
            point_text(&p.params),
            p.params
        );
    };
    let shape: Shape = twin.param_str("shape").unwrap_or_default().parse()?;
    let dtype: Dtype = super::dtype::parse(&twin.param_str("dtype").unwrap_or_default())
        .map_err(|e| anyhow::anyhow!("{at}: field `params.dtype`: {e}"))?;
    let mode = twin.param_str("mode").unwrap_or_default();
    let mut row = ResultRow::new(BENCHMARK, imp);
    row.params = p.params;
    row.notes = p.notes;
    let correctness = p.correctness.map(|c| rejudged(c, dtype));
    if p.status != Status::Ok {
        if !p.samples_us.is_empty() {
            bail!(
                "{at}: field `samples_us`: a {:?} row carries no timings",
                p.status
            );
        }
        let why = "not timed (see the notes above)";
        let mut row = crate::harness::failed(row, correctness, why);
        row.status = p.status;
        return Ok(row);
    }
    let Some(check) = correctness else {
        bail!("{at}: field `correctness` is missing: an ok row was checked before timing");
    };
    if !check.passed {
        return Ok(crate::harness::failed(
            row,
            Some(check),
            "off the f64 reference by the artifact's tolerance: timings withdrawn",
        ));
    }
    let Some(t) = p.timing else {
        bail!("{at}: field `timing` is missing: an ok row says how it was timed");
    };
    let bytes = shape.bytes_moved(dtype);
    let timing = timing_of(&t, &mode, bytes, p.samples_us.len())
        .with_context(|| format!("{at}: field `timing`"))?;
    if let Some((k, s)) = p.samples_us.iter().enumerate().find(|(_, s)| **s <= 0.0) {
        bail!("{at}: field `samples_us`: sample {k} is {s}: times are positive microseconds");
    }
    let time_us = crate::stats::summarize(&p.samples_us)
        .map_err(|e| anyhow::anyhow!("{at}: field `samples_us`: {e}"))?;
    if let Some(r) = &t.rotation {
        row.notes.push(rotation_note(r, bytes, &timing));
    }
    if let Some(ours) = row_at(a, OPBENCH, &row.params).and_then(|r| r.timing.as_ref()) {
        if (ours.method.as_str(), ours.launches_per_sample)
            != (timing.method.as_str(), timing.launches_per_sample)
        {
            row.notes.push(format!(
                "timed as {} x {} launches per sample, but opbench's row of this point as {} x {}",
                timing.method, timing.launches_per_sample, ours.method, ours.launches_per_sample
            ));
        }
    }
    Ok(report::timed(
        row,
        check,
        time_us,
        timing,
        bytes,
        a.ceilings.copy_gbps,
    ))
}

/// The check judged again by the artifact's own tolerance for `dtype`.
fn rejudged(mut c: Correctness, dtype: Dtype) -> Correctness {
    c.tolerance = super::dtype::tolerance(dtype);
    c.passed = c.passed && c.rel_err.is_finite() && c.rel_err <= c.tolerance;
    c
}

/// The artifact's timing block for a peer's `samples` samples: `l2_cleared` follows from the
/// method and, for a rotation, from the rule of `gpu::rotation` on the sets the peer used; the
/// sampling record (a fixed count) from the throttled samples the peer counted, where it read
/// the clocks.
fn timing_of(t: &PeerTiming, mode: &str, bytes: usize, samples: usize) -> Result<Timing> {
    if t.launches_per_sample == 0 {
        bail!("`launches_per_sample` is 0");
    }
    if let Some(k) = t.throttled_samples.filter(|&k| k > samples) {
        bail!("`throttled_samples` is {k}, more than the row's {samples} samples");
    }
    let l2_cleared =
        match (t.method.as_str(), mode, &t.rotation) {
            (rotation::METHOD, "cold", Some(r)) => {
                rotation::evicts(r.sets, bytes, r.l2_bytes, r.l2_multiple)
            }
            (rotation::METHOD, _, None) => bail!("method {} without `rotation`", rotation::METHOD),
            (rotation::METHOD_HELD, "warm", None) => false,
            (METHOD_EVENTS, "warm", None) => false,
            (METHOD_EVENTS, "cold", None) if t.launches_per_sample == 1 => true,
            (m, _, _) => {
                bail!(
            "method {m:?} with {} launches per sample{} does not time a {mode} row (methods: \
             {} and {} warm, {} cold, {METHOD_EVENTS} either with one launch per cold sample)",
            t.launches_per_sample,
            if t.rotation.is_some() { " and a rotation" } else { "" },
            rotation::METHOD_HELD,
            METHOD_EVENTS,
            rotation::METHOD,
        )
            }
        };
    Ok(Timing {
        method: t.method.clone(),
        warmup: t.warmup,
        launches_per_sample: t.launches_per_sample,
        l2_cleared,
        sampling: t.throttled_samples.map(|k| fixed_count(k, samples)),
    })
}

/// How a peer row of `n` samples, `throttled` of them under held-back clocks, was sampled: a
/// fixed count, back to back (a peer does not wait for the clocks to recover).
fn fixed_count(throttled: usize, n: usize) -> SamplingRecord {
    let clocks = if throttled > 0 && sampling::mostly_throttled(throttled, n) {
        sampling::Clocks::Throttled
    } else {
        sampling::Clocks::Steady
    };
    SamplingRecord {
        stopped_by: sampling::Stop::Fixed.name().into(),
        target_median_ci_pct: 0.0,
        min_samples: n,
        max_samples: n,
        budget_ms: None,
        throttled_samples: throttled,
        clocks: Some(clocks.name().into()),
        samples_taken: Some(n),
        sustained_p50_us: None,
        recovery_wait_ms: None,
    }
}

/// What a rotation did, in the words of `gpu::measure_rotating`'s note.
fn rotation_note(r: &PeerRotation, bytes: usize, timing: &Timing) -> String {
    let rule = rotation::sets_needed(bytes, r.l2_bytes, r.l2_multiple);
    format!(
        "cold by rotation: {} buffer sets of {:.1} MB cycled in order ({:.1} MB of other sets \
         between two launches on one set, L2 {:.1} MB: rule {}x L2 {}{})",
        r.sets,
        bytes as f64 / 1e6,
        r.sets.saturating_sub(1) as f64 * bytes as f64 / 1e6,
        r.l2_bytes as f64 / 1e6,
        r.l2_multiple,
        if timing.l2_cleared { "met" } else { "NOT met" },
        if r.sets == rule {
            String::new()
        } else {
            format!("; the rule's count is {rule}")
        },
    )
}
