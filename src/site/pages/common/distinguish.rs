//! Labels that tell apart points of one implementation sharing a category (a switch measured
//! both ways, runs with another setting).

use crate::site::points::Point;
use std::collections::HashMap;

/// Label suffixes for points that would otherwise share a category with another point of the
/// same implementation, keyed by row address (see `distinguishing`).
pub type Distinguishing = HashMap<usize, String>;

fn row_id(p: &Point) -> usize {
    p.row as *const crate::artifact::ResultRow as usize
}

/// Suffixes that tell apart points sharing a label, an implementation and a GPU: a switch measured
/// both ways (`event_tracking=on` beside `off`) or runs with another setting
/// (`mem_sampled=true`). In each such group, a param that differs is shown on the points whose
/// value is not the default: no value when some point of the group lacks the param, else the
/// implementation's most common value. Points in no such group keep the plain label their
/// peers have too.
pub fn distinguishing(points: &[Point], label: impl Fn(&Point) -> String) -> Distinguishing {
    // Points on two GPUs are told apart by their series (the GPU), whatever launch each ran.
    let mut groups: HashMap<(String, &str, String), Vec<&Point>> = HashMap::new();
    for p in points {
        groups
            .entry((label(p), p.imp(), p.gpu()))
            .or_default()
            .push(p);
    }
    // Most common value of each (implementation, param) among the points that have it.
    let mut counts: HashMap<(&str, &str, String), usize> = HashMap::new();
    for p in points {
        for (k, v) in &p.row.params {
            *counts
                .entry((p.imp(), k.as_str(), v.to_string()))
                .or_default() += 1;
        }
    }
    let mut common: HashMap<(&str, &str), (usize, String)> = HashMap::new();
    for ((imp, k, v), n) in counts {
        let e = common.entry((imp, k)).or_insert((0, String::new()));
        if n > e.0 || (n == e.0 && v < e.1) {
            *e = (n, v);
        }
    }
    let mut out = Distinguishing::new();
    for ((_, imp, _), g) in groups.iter().filter(|(_, g)| g.len() >= 2) {
        let mut keys: Vec<&String> = g.iter().flat_map(|p| p.row.params.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let vals: Vec<Option<String>> = g
                .iter()
                .map(|p| p.row.params.get(k).map(|v| v.to_string()))
                .collect();
            if vals.iter().all(|v| *v == vals[0]) {
                continue;
            }
            let default = if vals.iter().any(|v| v.is_none()) {
                None
            } else {
                common.get(&(*imp, k.as_str())).map(|c| c.1.clone())
            };
            for (p, v) in g.iter().zip(&vals) {
                if *v != default {
                    let shown = v.clone().unwrap_or_else(|| "—".into());
                    out.entry(row_id(p))
                        .or_default()
                        .push_str(&format!(" {k}={shown}"));
                }
            }
        }
    }
    out
}

/// `base` plus the point's suffix from `distinguishing`, if it has one.
pub fn with_extra(base: String, p: &Point, d: &Distinguishing) -> String {
    match d.get(&row_id(p)) {
        Some(sfx) => base + sfx,
        None => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::ResultRow;
    use crate::site::names;

    #[test]
    fn a_switch_measured_both_ways_marks_only_the_uncommon_value() {
        let row = |imp: &str, model: &str, et: Option<&str>| {
            let r = ResultRow::new("generate", imp).param("model", model);
            match et {
                Some(v) => r.param("event_tracking", v),
                None => r,
            }
        };
        let loaded = crate::artifact::fixture::loaded(
            "llm",
            "a",
            "2026-01-01T00:00:00Z",
            vec![
                row("candle", "a", Some("off")),
                row("candle", "a", Some("on")),
                row("candle", "b", Some("off")),
                row("peer", "a", None),
            ],
        );

        let points = Point::all_of(&loaded);
        let label = |p: &Point| names::param_str(p.row, names::MODEL).unwrap_or_default();
        let keys = distinguishing(&points, label);
        let labels: Vec<String> = points
            .iter()
            .map(|p| with_extra(label(p), p, &keys))
            .collect();
        assert_eq!(labels, ["a", "a event_tracking=on", "b", "a"]);
    }

    #[test]
    fn the_same_point_on_two_gpus_keeps_its_label_whatever_each_launched() {
        let row = |variant: &str| {
            ResultRow::new("layernorm_forward", "opbench")
                .param("shape", "32768x4096")
                .param("variant", variant)
        };
        let a = crate::artifact::fixture::loaded(
            "layernorm",
            "a",
            "2026-01-01T00:00:00Z",
            vec![row("regs_xlast")],
        );
        let mut b = crate::artifact::fixture::loaded(
            "layernorm",
            "b",
            "2026-01-01T00:00:00Z",
            vec![row("regs"), row("regs_other")],
        );
        b.artifact.env.host.cpu_model = "another host".into();
        let points: Vec<Point> = Point::all_of(&a)
            .into_iter()
            .chain(Point::all_of(&b))
            .collect();
        let label = |p: &Point| names::param_str(p.row, &["shape"]).unwrap_or_default();
        let keys = distinguishing(&points, label);
        let labels: Vec<String> = points
            .iter()
            .map(|p| with_extra(label(p), p, &keys))
            .collect();
        // The first machine's one launch keeps the plain label; within the second machine, its
        // two launches are told apart.
        assert_eq!(
            labels,
            ["32768x4096", "32768x4096", "32768x4096 variant=regs_other"]
        );
    }
}
