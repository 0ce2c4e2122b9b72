//! The comm page's rows: each timed point's collective, size, rank count and figures, the
//! series it belongs to, and its hover text.

use crate::site::chart::{Trace, TraceSet};
use crate::site::fmt;
use crate::site::names;
use crate::site::palette::Palette;
use crate::site::points::Point;

/// A timed comm point with the figures the charts draw.
#[derive(Clone, Copy)]
pub struct CommRow<'a> {
    pub p: Point<'a>,
    pub collective: &'a str,
    pub bytes: f64,
    pub ranks: u64,
    /// Median time per collective (µs) and its P5–P95.
    pub p50_us: f64,
    pub p5_us: f64,
    pub p95_us: f64,
    pub busbw_gbps: Option<f64>,
}

impl<'a> CommRow<'a> {
    /// The row of a timed point with a collective, a size, a rank count and a time; None else.
    pub fn of(p: Point<'a>) -> Option<Self> {
        if !p.ok() {
            return None;
        }
        let r = p.row;
        let collective = match r.params.get("collective")? {
            crate::artifact::Param::Text(t) => t.as_str(),
            _ => return None,
        };
        let s = r.stats.get("time_us")?;
        Some(CommRow {
            p,
            collective,
            bytes: names::param_f64(r, &["bytes"])?,
            ranks: names::param_f64(r, &["world_size"])? as u64,
            p50_us: s.p50,
            p5_us: s.p5,
            p95_us: s.p95,
            busbw_gbps: names::metric(r, &["busbw_gbps"]),
        })
    }

    /// "nccl · 4 GPUs · bf16", plus the GPU model when the page holds several.
    pub fn series(&self, multi_gpu: bool) -> String {
        let base = format!(
            "{} · {} GPUs · {}",
            self.p.imp(),
            self.ranks,
            self.p.dtype().unwrap_or_default()
        );
        if multi_gpu {
            format!("{base} · {}", self.p.gpu())
        } else {
            base
        }
    }

    /// The peer-copy ceiling of the row's run: the median over the GPU pairs (GB/s).
    pub fn peer_copy_gbps(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .p
            .artifact()
            .ceilings
            .peer_copy_gbps
            .values()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        crate::stats::percentile(&v, 50.0).ok()
    }

    pub fn hover(&self, extra: &str) -> String {
        let mut h = format!(
            "{} {} · {} · {} GPUs · {}\nP50 {} µs (P5 {} – P95 {})",
            self.collective,
            self.p.dtype().unwrap_or_default(),
            fmt::bytes(self.bytes),
            self.ranks,
            self.p.imp(),
            fmt::num(self.p50_us),
            fmt::num(self.p5_us),
            fmt::num(self.p95_us),
        );
        if let Some(b) = self.busbw_gbps {
            h.push_str(&format!("\nbus bandwidth {} GB/s", fmt::num(b)));
        }
        if !extra.is_empty() {
            h.push('\n');
            h.push_str(extra);
        }
        h
    }
}

/// Every timed comm row of the points, smallest message first.
pub fn comm_rows<'a>(points: &[Point<'a>]) -> Vec<CommRow<'a>> {
    let mut v: Vec<CommRow> = points.iter().filter_map(|p| CommRow::of(*p)).collect();
    v.sort_by(|a, b| a.bytes.total_cmp(&b.bytes));
    v
}

/// The line series of `name` in the implementation's colour, dotted for 2 GPUs, diamonds for
/// bf16.
pub fn line<'s>(set: &'s mut TraceSet, name: &str, r: &CommRow, pal: &Palette) -> &'s mut Trace {
    set.get(name, || {
        styled(Trace::new(name, pal.of(r.p.imp()), "lines+markers"), r)
    })
}

/// The same series (keyed by `r.series`), named in the legend by its implementation only, once:
/// for charts with more series than a legend holds, where colour names the implementation and
/// the caption says what dots and diamonds mean. `named` holds the implementations already in
/// the legend.
pub fn line_by_implementation<'s>(
    set: &'s mut TraceSet,
    r: &CommRow,
    multi_gpu: bool,
    pal: &Palette,
    named: &mut std::collections::BTreeSet<String>,
) -> &'s mut Trace {
    let legend = if multi_gpu {
        format!("{} · {}", r.p.imp(), r.p.gpu())
    } else {
        r.p.imp().to_string()
    };
    set.get(&r.series(multi_gpu), || {
        let mut t = styled(Trace::new(&legend, pal.of(r.p.imp()), "lines+markers"), r);
        t.no_legend = !named.insert(legend.clone());
        t
    })
}

fn styled(mut t: Trace, r: &CommRow) -> Trace {
    t.dash = (r.ranks == 2).then(|| "dot".to_string());
    t.symbol = (r.p.dtype().as_deref() == Some("bf16")).then(|| "diamond".to_string());
    t
}
