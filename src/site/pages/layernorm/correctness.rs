//! "Correctness of every point": each check's relative error beside its tolerance, failed
//! checks as red crosses.

use super::fields::hover;
use super::rows::LnRows;
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::measured;
use crate::site::pages::common::{correctness_text, series};
use crate::site::palette::{self, Palette};

pub fn chart(rows: &LnRows, pal: &Palette) -> ChartView {
    let mut cor = ChartView::new(
        "ln-correctness",
        "Correctness of every point",
        "Relative error ||y − ref||₂ / ||ref||₂ against the float64 CPU reference (markers), \
         and the tolerance it was judged by (dashes). Red crosses failed and were not timed.",
        "shape · dtype · L2 mode",
        "relative error",
    );
    cor.log_y = true;
    cor.x_order = rows.x_order.clone();
    let mut set = TraceSet::default();
    for p in rows.points {
        let Some(c) = &p.row.correctness else {
            continue;
        };
        let name = if c.passed {
            series(p.imp(), p, rows.multi)
        } else {
            "failed check".to_string()
        };
        let color = if c.passed {
            pal.of(p.imp())
        } else {
            palette::FAIL.to_string()
        };
        let lab = rows.lab(p);
        let extra = vec![correctness_text(p)];
        let t = set.get(&name, || {
            let mut t = Trace::new(&name, color, "markers");
            if !c.passed {
                t.symbol = Some("x".into());
            }
            t
        });
        t.points.push(pt_cat(
            &lab,
            c.rel_err.max(1e-12),
            hover(p, &lab, &extra),
            p.dims(),
        ));
        let tol = set.get("tolerance", || {
            let mut t = Trace::new("tolerance", palette::GUIDE, "markers");
            t.symbol = Some("line-ew-open".into());
            t
        });
        tol.points
            .push(pt_cat(&lab, c.tolerance, hover(p, &lab, &[]), p.dims()));
    }
    cor.traces = set.into_vec();
    cor.measured(rows.points, measured::CHECK)
        .finish("No point carries a correctness check.")
}
