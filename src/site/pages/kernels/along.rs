//! "P50 time along X": one line per kernel and block, for one GPU and setting of the other
//! parameters.

use super::fields::{block, dims, hover, param_of, pset_text};
use crate::site::chart::{pt_num, ChartView, Trace, TraceSet};
use crate::site::measured;
use crate::site::names;
use crate::site::palette::Palette;
use crate::site::points::Point;

/// The timed points `ok` along the parameter `ax`; each point's `fixed` coordinate names the
/// other parameters' values.
pub fn chart(ok: &[Point], ax: &str, pal: &Palette) -> ChartView {
    let mut c = ChartView::new(
        "kern-along",
        &format!("P50 time along {ax}"),
        &format!(
            "x: {ax}; y: P50 of time_us (log), whiskers P5 to P95. One line per kernel and \
             block (a kernel's colour, its other blocks dashed), one chart per GPU and setting of the other parameters (in the title)."
        ),
        ax,
        "P50 time (µs)",
    );
    c.log_x = true;
    c.log_y = true;
    c.compact = true;
    let mut set = TraceSet::default();
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut sorted = ok.to_vec();
    sorted.sort_by(|a, b| {
        param_of(a, ax)
            .unwrap_or(0.0)
            .total_cmp(&param_of(b, ax).unwrap_or(0.0))
    });
    for p in &sorted {
        let (Some(x), Some(s)) = (param_of(p, ax), names::stat(p.row, &["time_us"])) else {
            continue;
        };
        let fixed = pset_text(p, &[ax]);
        let mut f = dims(p);
        f.insert("fixed".into(), fixed.clone());
        let mut pt = pt_num(x, s.1.p50, hover(p), f);
        pt.lo = Some(s.1.p5);
        pt.hi = Some(s.1.p95);
        let name = format!("{} {}", p.imp(), block(p));
        // A kernel's colour; its second and later blocks dashed.
        if !blocks.contains(&(p.imp().to_string(), block(p))) {
            blocks.push((p.imp().to_string(), block(p)));
        }
        let nth = blocks
            .iter()
            .filter(|(imp, _)| imp == p.imp())
            .position(|(_, b)| *b == block(p))
            .unwrap_or(0);
        set.get(&name, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "lines+markers");
            t.dash = [None, Some("dash"), Some("dot")][nth % 3].map(String::from);
            t
        })
        .points
        .push(pt);
    }
    c.traces = set.into_vec();
    c.measured(ok, measured::MEDIAN_P5_P95)
        .finish("No timed point has a numeric parameter.")
}
