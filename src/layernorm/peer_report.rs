//! The peers beside our kernel, per point: a table printed after a merge and by `--table`
//! when the artifact holds peer rows.

use super::report::{BENCHMARK, CANDLE, OPBENCH};
use crate::artifact::{Artifact, ResultRow, Status};

/// The peer implementations in the artifact, in first-seen order.
fn peer_names(a: &Artifact) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in a.results.iter().filter(|r| r.benchmark == BENCHMARK) {
        let own = r.implementation == CANDLE || r.implementation == OPBENCH;
        if !own && !names.contains(&r.implementation) {
            names.push(r.implementation.clone());
        }
    }
    names
}

fn p50(r: Option<&ResultRow>) -> Option<f64> {
    r.filter(|r| r.status == Status::Ok)
        .and_then(|r| r.p50("time_us"))
}

fn cell(r: Option<&ResultRow>) -> String {
    match (r, p50(r)) {
        (_, Some(t)) => format!(
            "{t:.1} ({:.0})",
            r.and_then(|r| r.metrics.get("gbps")).unwrap_or(&f64::NAN)
        ),
        (Some(r), None) => format!("{:?}", r.status).to_lowercase(),
        (None, None) => "-".into(),
    }
}

/// A Markdown table: per point, p50 us (GB/s) of ours and each peer, and the best peer's time
/// over ours; None when the artifact holds no peer rows.
pub fn markdown_table(a: &Artifact) -> Option<String> {
    let names = peer_names(a);
    if names.is_empty() {
        return None;
    }
    let mut s = format!(
        "| shape | dtype | mode | opbench p50 us (GB/s) | {} | best peer / opbench |\n|---|---|---|---|{}---|\n",
        names
            .iter()
            .map(|n| format!("{n} p50 us (GB/s)"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(names.len())
    );
    for ours in a
        .results
        .iter()
        .filter(|r| r.benchmark == BENCHMARK && r.implementation == OPBENCH)
    {
        let at = |imp: &str| super::peers::row_at(a, imp, &ours.params);
        let peers: Vec<Option<&ResultRow>> = names.iter().map(|n| at(n)).collect();
        let best = peers.iter().filter_map(|r| p50(*r)).reduce(f64::min);
        let ratio = match (best, p50(Some(ours))) {
            (Some(b), Some(o)) => format!("{:.2}", b / o),
            _ => "-".into(),
        };
        let v = |k: &str| ours.param_str(k).unwrap_or_default();
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {ratio} |\n",
            v("shape"),
            v("dtype"),
            v("mode"),
            cell(Some(ours)),
            peers
                .iter()
                .map(|r| cell(*r))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_has_a_column_per_peer_and_the_best_peer_over_ours() {
        let dir = tempfile::tempdir().unwrap();
        let fx = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/layernorm_peers"
        );
        let out = dir.path().join("layernorm.json");
        std::fs::copy(format!("{fx}/layernorm.json"), &out).unwrap();
        let a = crate::artifact::read_artifact(&out).unwrap();
        assert!(super::markdown_table(&a).is_none());
        crate::layernorm::merge::merge(&out, &[format!("{fx}/peers_valid.json").into()]).unwrap();
        let a = crate::artifact::read_artifact(&out).unwrap();
        let t = super::markdown_table(&a).unwrap();
        assert!(
            t.starts_with("| shape | dtype | mode | opbench p50 us (GB/s) | torch p50 us (GB/s) | torch-compile p50 us (GB/s) | triton p50 us (GB/s) |"),
            "{t}"
        );
        // 4096x1024 f16 warm: torch 10.02 us, torch-compile failed, no triton row.
        let warm = t
            .lines()
            .find(|l| l.starts_with("| 4096x1024 | f16 | warm |"))
            .unwrap();
        assert!(
            warm.ends_with("| 5.6 (3011) | 10.0 (1674) | failed | - | 1.80 |"),
            "{warm}"
        );
        assert_eq!(t.lines().count(), 2 + 4);
    }
}
