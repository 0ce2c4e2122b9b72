//! `comm_bench --merge PEERS.json --out ARTIFACT`: the rows of bench/peers/comm_peers.py
//! (torch.distributed at the artifact's points) added to a comm artifact of the same GPUs; the
//! statistics and the bandwidths are computed here, by the same formulas as NCCL's rows.

use super::row::{Point, KIND, METHOD, NCCL, OWN};
use super::{reference, Collective};
use crate::artifact::peer::{self as peer_file, PeerRow};
use crate::artifact::{Artifact, Param, ResultRow, Status, Timing};
use crate::dtype::Dtype;
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The params that name a point, as NCCL's rows carry them.
pub const POINT_PARAMS: [&str; 5] = ["collective", "dtype", "bytes", "count", "world_size"];

/// Adds each peer file's rows to the comm artifact at `out` (all or nothing).
pub fn merge(out: &Path, files: &[PathBuf]) -> Result<Vec<String>> {
    peer_file::merge_files(
        out,
        files,
        &peer_file::Merger {
            kind: KIND,
            to_row: &to_row,
            same: &|old, new| old.implementation == new.implementation && same_point(old, new),
            describe: &describe,
        },
    )
}

fn same_point(a: &ResultRow, b: &ResultRow) -> bool {
    a.benchmark == b.benchmark
        && POINT_PARAMS
            .iter()
            .all(|k| a.params.get(*k) == b.params.get(*k))
}

/// NCCL's row of the point `params` names.
fn nccl_at<'a>(a: &'a Artifact, params: &BTreeMap<String, Param>) -> Option<&'a ResultRow> {
    a.results.iter().find(|r| {
        r.benchmark == KIND
            && r.implementation == NCCL
            && POINT_PARAMS
                .iter()
                .all(|k| r.params.get(*k) == params.get(*k))
    })
}

/// The point of NCCL's row `r`.
fn point_of(r: &ResultRow) -> Result<Point> {
    let get = |k: &str| r.param_str(k).unwrap_or_default();
    let num = |k: &str| -> Result<u64> {
        get(k)
            .parse()
            .map_err(|_| anyhow::anyhow!("params.{k} is {:?}, not a whole number", get(k)))
    };
    Ok(Point {
        collective: Collective::parse(&get("collective"))?,
        dtype: Dtype::parse_among(&get("dtype"), &reference::DTYPES)
            .map_err(|e| anyhow::anyhow!(e))?,
        bytes: num("bytes")?,
        world: num("world_size")? as usize,
    })
}

/// Peer row `at` as an artifact row of the point it names in `a`.
fn to_row(p: PeerRow, at: &str, a: &Artifact) -> Result<ResultRow> {
    if p.benchmark != KIND {
        bail!(
            "{at}: field `benchmark` is {:?}, expected {KIND:?}",
            p.benchmark
        );
    }
    let imp = p.implementation.trim();
    if imp.is_empty() || OWN.contains(&imp) {
        bail!(
            "{at}: field `implementation` is {imp:?}: a peer names itself (e.g. torch), never \
             one of the artifact's own ({})",
            OWN.join(", ")
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
    let Some(twin) = nccl_at(a, &p.params) else {
        bail!(
            "{at}: field `params` names no NCCL point of the artifact ({:?}): run the peer \
             with --plan on the artifact it is merged into",
            p.params
        );
    };
    let point = point_of(twin).map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
    let mut base = point.row(imp);
    base.notes = p.notes;
    if p.status != Status::Ok {
        if !p.samples_us.is_empty() {
            bail!(
                "{at}: field `samples_us`: a {:?} row carries no timings",
                p.status
            );
        }
        let mut r = crate::harness::failed(base, p.correctness, "not timed (see the notes above)");
        r.status = p.status;
        return Ok(r);
    }
    let Some(mut check) = p.correctness else {
        bail!("{at}: field `correctness` is missing: an ok row was checked before timing");
    };
    // Judged again by this artifact's own bound for the point.
    check.tolerance = reference::tolerance(point.collective, point.dtype, point.world);
    check.passed = check.passed && check.rel_err.is_finite() && check.rel_err <= check.tolerance;
    if !check.passed {
        return Ok(crate::harness::failed(
            base,
            Some(check),
            "off the float64 reference by the artifact's tolerance: timings withdrawn",
        ));
    }
    let Some(t) = p.timing else {
        bail!("{at}: field `timing` is missing: an ok row says how it was timed");
    };
    if t.method != METHOD || t.launches_per_sample == 0 || t.rotation.is_some() {
        bail!(
            "{at}: field `timing`: method {:?} with {} collectives per sample; a comm row is \
             timed as {METHOD:?} with at least one collective per sample and no rotation",
            t.method,
            t.launches_per_sample
        );
    }
    if let Some((k, s)) = p.samples_us.iter().enumerate().find(|(_, s)| **s <= 0.0) {
        bail!("{at}: field `samples_us`: sample {k} is {s}: times are positive microseconds");
    }
    let time_us = crate::stats::summarize(&p.samples_us)
        .map_err(|e| anyhow::anyhow!("{at}: field `samples_us`: {e}"))?;
    let mut r = base;
    r.metrics.insert(
        "algbw_gbps".into(),
        super::algbw_gbps(point.bytes, time_us.p50),
    );
    r.metrics.insert(
        "busbw_gbps".into(),
        super::busbw_gbps(point.collective, point.world, point.bytes, time_us.p50),
    );
    r.stats.insert("time_us".into(), time_us);
    r.timing = Some(Timing {
        method: t.method,
        warmup: t.warmup,
        launches_per_sample: t.launches_per_sample,
        l2_cleared: false,
        sampling: None,
    });
    r.correctness = Some(check);
    Ok(r)
}

/// One line on a merged row: its median and busbw, and NCCL's at the same point.
fn describe(r: &ResultRow, a: &Artifact) -> String {
    let at = format!(
        "{} {} {} {} B x{}",
        r.implementation,
        r.param_str("collective").unwrap_or_default(),
        r.param_str("dtype").unwrap_or_default(),
        r.param_str("bytes").unwrap_or_default(),
        r.param_str("world_size").unwrap_or_default()
    );
    let Some(p50) = r.p50("time_us").filter(|_| r.status == Status::Ok) else {
        return format!(
            "{at}: {}, not timed",
            format!("{:?}", r.status).to_lowercase()
        );
    };
    let bus = r.metrics.get("busbw_gbps").copied().unwrap_or(f64::NAN);
    let nccl = nccl_at(a, &r.params)
        .filter(|n| n.status == Status::Ok)
        .and_then(|n| n.metrics.get("busbw_gbps").copied())
        .map(|n| format!("; nccl {n:.1} GB/s (peer / nccl {:.3})", bus / n))
        .unwrap_or_default();
    format!("{at}: p50 {p50:.2} us, busbw {bus:.1} GB/s{nccl}")
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
