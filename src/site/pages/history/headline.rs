//! The headline quantities of the history page: per run, one value with its 95% band for each
//! small chart (LayerNorm % of copy per dtype, GEMM best own % of cuBLAS per dtype, LLM decode
//! tokens/s per implementation and batch, and each other kind's time per implementation).
//!
//! Each family is one pure function from a run's points to `(chart, value)` pairs. Where a
//! value sums up several points (shapes), it is their geometric mean and its band the geometric
//! means of the points' band ends: a band that moves with every point's interval.

use crate::artifact::Status;
use crate::compare::Direction;
use crate::history::{HistoryPoint, HistoryRecord, StatBrief};
use crate::site::names;
use crate::trend::headline_stat;
use std::collections::BTreeMap;

/// What one small chart shows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChartMeta {
    /// Sorts the charts of a kind.
    pub order: String,
    pub title: String,
    /// Axis title with the unit.
    pub quantity: String,
    pub higher_is_better: bool,
    /// Charts of one LLM model share a group; the page shows one group per kind.
    pub group: String,
}

/// One run's value on a chart: the median (or a geometric mean of medians), its band, and how
/// many points it sums up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    pub v: f64,
    pub lo: f64,
    pub hi: f64,
    pub points: usize,
}

impl Value {
    /// The form `compare`'s verdict rule takes.
    pub fn brief(&self) -> StatBrief {
        StatBrief {
            n: self.points,
            p50: self.v,
            median_ci95: [self.lo, self.hi],
            p5: self.lo,
            p95: self.hi,
        }
    }
}

fn param(p: &HistoryPoint, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| p.params.get(*k))
        .map(|v| v.to_string())
}

fn stat<'a>(p: &'a HistoryPoint, keys: &[&str]) -> Option<&'a StatBrief> {
    keys.iter()
        .find_map(|k| p.stats.get(*k))
        .filter(|s| s.p50 > 0.0 && s.median_ci95[0] > 0.0)
}

fn ok(p: &HistoryPoint) -> bool {
    p.status == Status::Ok
}

fn ours(imp: &str) -> bool {
    !crate::identity::is_library(imp) && !names::is_cublas(imp)
}

/// A point's (value, band low, band high).
type Triple = (f64, f64, f64);

/// Geometric mean of positive (value, lo, hi) triples.
fn geomean(xs: &[Triple]) -> Option<Value> {
    let xs: Vec<_> = xs
        .iter()
        .filter(|(v, lo, hi)| *v > 0.0 && *lo > 0.0 && *hi > 0.0)
        .collect();
    if xs.is_empty() {
        return None;
    }
    let g = |f: &dyn Fn(&Triple) -> f64| {
        (xs.iter().map(|x| f(x).ln()).sum::<f64>() / xs.len() as f64).exp()
    };
    Some(Value {
        v: g(&|x| x.0),
        lo: g(&|x| x.1),
        hi: g(&|x| x.2),
        points: xs.len(),
    })
}

/// The median of (value, lo, hi) triples, each of the three the type-7 median of its own
/// column (the overview's `Spread` median): one launch-bound shape does not drag it down as it
/// drags a geometric mean.
fn median(xs: &[Triple]) -> Option<Value> {
    let col = |f: &dyn Fn(&Triple) -> f64| {
        let v: Vec<f64> = xs.iter().map(f).collect();
        crate::stats::percentile(&v, 50.0).ok()
    };
    Some(Value {
        v: col(&|x| x.0)?,
        lo: col(&|x| x.1)?,
        hi: col(&|x| x.2)?,
        points: xs.len(),
    })
}

/// LayerNorm: our kernels' % of copy bandwidth per dtype, the median over the cold-L2 shapes,
/// as the overview's LayerNorm card gives it.
pub fn layernorm(points: &[HistoryPoint]) -> Vec<(ChartMeta, Value)> {
    let mut by_dtype: BTreeMap<String, Vec<Triple>> = BTreeMap::new();
    for p in points.iter().filter(|p| ok(p) && ours(&p.implementation)) {
        if param(p, names::MODE).is_some_and(|m| m == "warm") {
            continue;
        }
        let pct = names::PCT_COPY.iter().find_map(|k| p.metrics.get(*k));
        let (Some(&pct), Some(t)) = (pct, stat(p, names::TIME)) else {
            continue;
        };
        // A time interval [lo, hi] is a bandwidth interval [pct * p50 / hi, pct * p50 / lo].
        let dtype = param(p, names::DTYPE).unwrap_or_else(|| "-".into());
        by_dtype.entry(dtype).or_default().push((
            pct,
            pct * t.p50 / t.median_ci95[1],
            pct * t.p50 / t.median_ci95[0],
        ));
    }
    by_dtype
        .into_iter()
        .filter_map(|(dtype, xs)| {
            let meta = ChartMeta {
                order: dtype_order(&dtype),
                title: format!("{dtype}: % of copy bandwidth"),
                quantity: "% of copy bandwidth".into(),
                higher_is_better: true,
                group: String::new(),
            };
            Some((meta, median(&xs)?))
        })
        .collect()
}

/// GEMM: per dtype, the best of our kernels as % of cuBLAS at each shape, over the shapes with
/// B stored [K, N]. Their [N, K] twins (`--b-layouts nk`) are optional: counting them would move
/// the mean whenever a run measured them or not, with no kernel changing.
pub fn gemm(points: &[HistoryPoint]) -> Vec<(ChartMeta, Value)> {
    // (dtype, problem) -> (cuBLAS time, our best time)
    type Pair<'a> = (Option<&'a StatBrief>, Option<&'a StatBrief>);
    let mut shapes: BTreeMap<(String, String), Pair> = BTreeMap::new();
    let kn = |p: &HistoryPoint| param(p, names::B_LAYOUT).is_none_or(|l| l == "kn");
    for p in points.iter().filter(|p| ok(p) && kn(p)) {
        let Some(t) = stat(p, names::TIME) else {
            continue;
        };
        let dtype = param(p, names::DTYPE).unwrap_or_else(|| "-".into());
        let problem = p.identity("gemm", &[]).problem();
        let e = shapes.entry((dtype, problem)).or_default();
        if names::is_cublas(&p.implementation) {
            e.0 = Some(t);
        } else if ours(&p.implementation) && e.1.is_none_or(|b| t.p50 < b.p50) {
            e.1 = Some(t);
        }
    }
    let mut by_dtype: BTreeMap<String, Vec<Triple>> = BTreeMap::new();
    for ((dtype, _), pair) in shapes {
        if let (Some(c), Some(o)) = pair {
            // % of cuBLAS = cuBLAS time / our time; its band from the two intervals' far ends.
            by_dtype.entry(dtype).or_default().push((
                100.0 * c.p50 / o.p50,
                100.0 * c.median_ci95[0] / o.median_ci95[1],
                100.0 * c.median_ci95[1] / o.median_ci95[0],
            ));
        }
    }
    by_dtype
        .into_iter()
        .filter_map(|(dtype, xs)| {
            let meta = ChartMeta {
                order: dtype_order(&dtype),
                title: format!("{dtype}: best own kernel, % of cuBLAS"),
                quantity: "% of cuBLAS".into(),
                higher_is_better: true,
                group: String::new(),
            };
            Some((meta, geomean(&xs)?))
        })
        .collect()
}

/// LLM: decode tokens/s (batch x 1000 / decode step ms) per model, implementation and batch.
pub fn llm(points: &[HistoryPoint]) -> Vec<(ChartMeta, Value)> {
    let mut out = Vec::new();
    for p in points.iter().filter(|p| ok(p)) {
        if !matches!(p.benchmark.as_str(), "generate" | "decode") {
            continue;
        }
        let batch = param(p, names::BATCH).and_then(|b| b.parse::<f64>().ok());
        let (Some(batch), Some(s)) = (batch, stat(p, names::DECODE_STEP)) else {
            continue;
        };
        let model = param(p, names::MODEL).unwrap_or_else(|| "-".into());
        let rate = |ms: f64| batch * 1000.0 / ms;
        let meta = ChartMeta {
            order: format!("{}\u{1f}{batch:08}", p.implementation),
            title: format!("{} · batch {batch}: decode tokens/s", p.implementation),
            quantity: "decode tokens/s".into(),
            higher_is_better: true,
            group: model,
        };
        let v = Value {
            v: rate(s.p50),
            lo: rate(s.median_ci95[1]),
            hi: rate(s.median_ci95[0]),
            points: 1,
        };
        // A run that timed one point under several settings: its first row (crate::identity).
        if !out.iter().any(|(m, _): &(ChartMeta, Value)| *m == meta) {
            out.push((meta, v));
        }
    }
    out
}

/// Any other kind: per benchmark and implementation, the geometric mean of each point's
/// headline quantity (`time_us`, else its first duration).
pub fn generic(points: &[HistoryPoint]) -> Vec<(ChartMeta, Value)> {
    let mut groups: BTreeMap<(String, String, String), Vec<Triple>> = BTreeMap::new();
    for p in points.iter().filter(|p| ok(p)) {
        let Some(name) = headline_stat(p) else {
            continue;
        };
        let s = &p.stats[name];
        groups
            .entry((
                p.benchmark.clone(),
                p.implementation.clone(),
                name.to_string(),
            ))
            .or_default()
            .push((s.p50, s.median_ci95[0], s.median_ci95[1]));
    }
    groups
        .into_iter()
        .filter_map(|((benchmark, imp, name), xs)| {
            let meta = ChartMeta {
                order: format!("{benchmark}\u{1f}{imp}\u{1f}{name}"),
                title: format!("{imp} ({benchmark}): {name}"),
                quantity: format!("{name}, geometric mean"),
                higher_is_better: Direction::of_stat(&name) == Direction::HigherIsBetter,
                group: String::new(),
            };
            Some((meta, geomean(&xs)?))
        })
        .collect()
}

/// Workload traces (`trace`): per workload, the GPU time of its top kernels (the artifact's
/// trace_kernel rows: each kernel's median duration times its instances, summed; the band sums
/// the medians' 95% intervals the same way). One chart per workload instead of one per kernel.
pub fn trace(points: &[HistoryPoint]) -> Vec<(ChartMeta, Value)> {
    let mut by: BTreeMap<String, (Triple, usize)> = BTreeMap::new();
    for p in points
        .iter()
        .filter(|p| ok(p) && p.benchmark == "trace_kernel")
    {
        let (Some(s), Some(&n)) = (stat(p, &["time_us"]), p.metrics.get("instances")) else {
            continue;
        };
        let e = by.entry(p.implementation.clone()).or_default();
        e.0 .0 += n * s.p50;
        e.0 .1 += n * s.median_ci95[0];
        e.0 .2 += n * s.median_ci95[1];
        e.1 += 1;
    }
    by.into_iter()
        .map(|(w, ((v, lo, hi), kernels))| {
            let meta = ChartMeta {
                order: w.clone(),
                title: format!("{w}: GPU time of its top kernels"),
                quantity: "kernel time (µs)".into(),
                higher_is_better: false,
                group: String::new(),
            };
            let value = Value {
                v,
                lo,
                hi,
                points: kernels,
            };
            (meta, value)
        })
        .collect()
}

/// The headline values of one run.
pub fn of_run(record: &HistoryRecord) -> Vec<(ChartMeta, Value)> {
    match record.kind.as_str() {
        "layernorm" => layernorm(&record.points),
        "gemm" => gemm(&record.points),
        "llm" => llm(&record.points),
        "trace" => trace(&record.points),
        _ => generic(&record.points),
    }
}

/// Narrow dtypes after f32, in the order the other pages use.
fn dtype_order(d: &str) -> String {
    let i = ["f32", "tf32", "f16", "bf16"]
        .iter()
        .position(|x| *x == d)
        .unwrap_or(9);
    format!("{i}{d}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Param;

    fn point(imp: &str, params: &[(&str, Param)], stat: (&str, f64, f64, f64)) -> HistoryPoint {
        let mut p = HistoryPoint {
            benchmark: "b".into(),
            implementation: imp.into(),
            status: Status::Ok,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            stats: BTreeMap::new(),
            metrics: BTreeMap::new(),
            l2_cleared: None,
            rel_err: None,
            clocks: None,
            notes: vec![],
        };
        p.stats.insert(
            stat.0.into(),
            StatBrief {
                n: 10,
                p50: stat.1,
                median_ci95: [stat.2, stat.3],
                p5: stat.2,
                p95: stat.3,
            },
        );
        p
    }

    #[test]
    fn a_trace_is_one_chart_per_workload_of_its_kernels_time() {
        let kernel = |w: &str, med: f64, n: f64| {
            let mut p = point(w, &[], ("time_us", med, med - 1.0, med + 2.0));
            p.benchmark = "trace_kernel".into();
            p.metrics.insert("instances".into(), n);
            p
        };
        let mut other = point("a", &[], ("time_us", 99.0, 98.0, 100.0));
        other.benchmark = "trace_process".into();
        let v = trace(&[
            kernel("a", 10.0, 3.0),
            kernel("a", 5.0, 2.0),
            kernel("b", 2.0, 1.0),
            other,
        ]);
        assert_eq!(v.len(), 2, "one chart per workload");
        let (m, a) = &v[0];
        assert_eq!(m.title, "a: GPU time of its top kernels");
        assert!(!m.higher_is_better);
        assert_eq!(a.points, 2);
        assert!((a.v - 40.0).abs() < 1e-9, "3 x 10 + 2 x 5");
        assert!((a.lo - (3.0 * 9.0 + 2.0 * 4.0)).abs() < 1e-9);
        assert!((a.hi - (3.0 * 12.0 + 2.0 * 7.0)).abs() < 1e-9);
    }

    #[test]
    fn layernorm_is_the_median_of_our_cold_points_with_the_time_band_inverted() {
        let mut a = point(
            "opbench",
            &[("dtype", "f16".into())],
            ("time_us", 10.0, 8.0, 12.5),
        );
        a.metrics.insert("pct_of_copy_bw".into(), 80.0);
        let mut b = point(
            "opbench",
            &[("dtype", "f16".into())],
            ("time_us", 10.0, 10.0, 10.0),
        );
        b.metrics.insert("pct_of_copy_bw".into(), 20.0);
        let mut warm = b.clone();
        warm.params.insert("mode".into(), "warm".into());
        let mut candle = b.clone();
        candle.implementation = "candle".into();
        let v = layernorm(&[a, b, warm, candle]);
        assert_eq!(v.len(), 1);
        let (m, v) = &v[0];
        assert_eq!(m.title, "f16: % of copy bandwidth");
        assert_eq!(v.points, 2);
        assert!((v.v - 50.0).abs() < 1e-9, "(80 + 20) / 2");
        assert!((v.lo - (64.0 + 20.0) / 2.0).abs() < 1e-9);
        assert!((v.hi - (100.0 + 20.0) / 2.0).abs() < 1e-9);
    }

    #[test]
    fn gemm_takes_our_best_kernel_against_cublas_at_each_shape() {
        // One bf16 shape, B stored as `layout` says (no param: [K, N]).
        let at = |imp: &str, t: f64, layout: Option<&str>| {
            let mut params = vec![("dtype", "bf16".into()), ("m", Param::Int(8))];
            params.extend(layout.map(|l| ("b_layout", l.into())));
            point(imp, &params, ("time_us", t, t, t))
        };
        let s = |imp: &str, t: f64| at(imp, t, None);
        let v = gemm(&[
            s("cublas", 10.0),
            s("naive", 40.0),
            s("wgmma", 12.5),
            s("candle", 9.0),
        ]);
        assert_eq!(v.len(), 1);
        assert!((v[0].1.v - 80.0).abs() < 1e-9);
        // A B-stored-[N,K] twin of the shape does not enter the headline.
        let v = gemm(&[
            s("cublas", 10.0),
            s("wgmma", 12.5),
            at("cublas", 10.0, Some("nk")),
            at("wgmma", 20.0, Some("nk")),
        ]);
        assert!((v[0].1.v - 80.0).abs() < 1e-9);
    }

    #[test]
    fn llm_turns_the_decode_step_into_tokens_per_second() {
        let mut p = point(
            "candle",
            &[("batch", Param::Int(4)), ("model", "m".into())],
            ("decode_step_ms", 8.0, 5.0, 10.0),
        );
        p.benchmark = "generate".into();
        let v = llm(&[p.clone(), p]);
        assert_eq!(v.len(), 1, "one value per run and point");
        assert_eq!((v[0].1.v, v[0].1.lo, v[0].1.hi), (500.0, 400.0, 800.0));
        assert_eq!(v[0].0.group, "m");
    }
}
