//! The latency charts: P50 per configuration with its P5-P95 whiskers, and the distribution
//! (min to max) of each phase. Labels carry only the problem parameters that vary; the
//! constant ones go into the caption, and a GPU is a filled or open marker, not a label.

use super::config::{base_config, config_key, stat_line, Phase, MIN_SAMPLES_P99, PHASES};
use crate::identity;
use crate::site::chart::{pt_cat, ChartView, Trace, TraceSet};
use crate::site::measured;
use crate::site::names;
use crate::site::pages::common::{gpus, ordered_categories};
use crate::site::palette::Palette;
use crate::site::points::Point;
use crate::site::rules;
use std::collections::{BTreeSet, HashMap};

/// What the distribution charts draw of each point's samples.
const DISTRIBUTION: &str = "min, P50, P99 and max of each point's samples";

/// Labels of the points' problems with only the varying parts, and the constant parts.
fn labels(points: &[Point]) -> (HashMap<String, String>, Vec<String>) {
    let problems: Vec<String> = points
        .iter()
        .map(base_config)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let parts: Vec<Vec<String>> = problems
        .iter()
        .map(|p| p.split(' ').map(str::to_string).collect())
        .collect();
    let (shown, common) = rules::varying(&parts);
    (problems.into_iter().zip(shown).collect(), common)
}

/// The first row of each (GPU, problem, implementation): run settings do not make another
/// point (`crate::identity`); the hover names them.
pub(super) fn first_per_identity<'a>(points: &[Point<'a>]) -> Vec<Point<'a>> {
    let mut seen = BTreeSet::new();
    points
        .iter()
        .filter(|p| seen.insert((p.gpu(), p.identity().problem(), p.imp().to_string())))
        .copied()
        .collect()
}

pub(super) fn hover(p: &Point, extra: &str) -> String {
    let settings = identity::settings_text(&p.artifact().kind, &p.row.params);
    let mut lines = vec![
        format!("{} · {}", p.imp(), p.row.benchmark),
        base_config(p),
        extra.to_string(),
    ];
    if !settings.is_empty() {
        lines.push(format!("settings: {settings}"));
    }
    lines.push(p.gpu());
    lines.join("\n")
}

/// "filled: H200, open: H100" for the caption, where there are several GPUs.
pub(super) fn gpu_key(gpu_list: &[String]) -> String {
    if gpu_list.len() < 2 {
        return String::new();
    }
    let marks = ["filled", "open", "dotted"];
    let key: Vec<String> = gpu_list
        .iter()
        .zip(marks)
        .map(|(g, m)| format!("{m}: {}", rules::short_gpu(g)))
        .collect();
    format!(" Markers {}.", key.join(", "))
}

pub(super) fn gpu_symbol(base: &str, gpu_list: &[String], p: &Point) -> String {
    match gpu_list.iter().position(|g| *g == p.gpu()) {
        Some(1) => format!("{base}-open"),
        Some(2) => format!("{base}-open-dot"),
        _ => base.to_string(),
    }
}

fn common_text(common: &[String]) -> String {
    if common.is_empty() {
        String::new()
    } else {
        format!(" Every configuration here: {}.", common.join(" "))
    }
}

/// P50 of time to first token, decode step and end to end, whiskers P5 to P95.
pub fn latency(charted: &[Point], pal: &Palette) -> ChartView {
    let pts = first_per_identity(charted);
    let gpu_list = gpus(&pts);
    let (label, common) = labels(&pts);
    let mut c = ChartView::new(
        "llm-latency",
        "Latency per configuration",
        &format!(
            "P50 of time to first token (triangles), decode step (circles) and end-to-end \
             generation (squares), side by side at each configuration; whiskers P5 to P95. \
             Log scale: the phases differ by orders of magnitude.{}{}",
            gpu_key(&gpu_list),
            common_text(&common)
        ),
        "configuration",
        "time (ms)",
    );
    c.log_y = true;
    c.offset_markers = true;
    c.x_order = ordered_categories(
        pts.iter()
            .map(|p| (config_key(p), label[&base_config(p)].clone()))
            .collect(),
    );
    let mut set = TraceSet::default();
    let mut named = BTreeSet::new();
    for (p, ph) in pts
        .iter()
        .flat_map(|p| PHASES.iter().map(move |ph| (p, ph)))
    {
        let Some((k, s)) = names::stat(p.row, ph.stat) else {
            continue;
        };
        let f = names::to_us(k) / 1e3;
        let mut pt = pt_cat(
            &label[&base_config(p)],
            s.p50 * f,
            hover(p, &stat_line(k, s)),
            p.dims(),
        );
        pt.lo = Some(s.p5 * f);
        pt.hi = Some(s.p95 * f);
        // One legend entry per implementation (its colour); the phase is the marker shape,
        // named in the caption, so five implementations stay five entries.
        let name = p.imp().to_string();
        let id = format!("{name}\u{1f}{}\u{1f}{}", ph.label, p.gpu());
        let first = named.insert(name.clone());
        let base = match ph.benchmark {
            "prefill" => "triangle-up",
            "decode" => "circle",
            _ => "square",
        };
        set.get(&id, || {
            let mut t = Trace::new(&name, pal.of(p.imp()), "markers");
            t.symbol = Some(gpu_symbol(base, &gpu_list, p));
            t.no_legend = !first;
            t
        })
        .points
        .push(pt);
    }
    c.traces = set.into_vec();
    c.measured(&pts, measured::MEDIAN_P5_P95)
        .finish("No prefill, decode or e2e point carries its time statistic.")
}

/// One chart of `ph` for the points of one GPU: per configuration, each implementation's
/// median with whiskers from min to max, and its P99 as a dash where the samples suffice.
pub fn distribution(charted: &[Point], ph: &Phase, pal: &Palette) -> ChartView {
    let pts = first_per_identity(charted);
    let (label, common) = labels(&pts);
    let mut c = ChartView::new(
        &format!("llm-pct-{}", ph.benchmark),
        &format!("Distribution: {}", ph.label),
        &format!(
            "Each implementation's median (marker) with whiskers from the fastest to the \
             slowest sample, per configuration; a dash marks the P99 where a point has at \
             least {MIN_SAMPLES_P99} samples. A long tail shows as a long upper whisker.{}",
            common_text(&common)
        ),
        "configuration",
        "time (ms)",
    );
    c.log_y = true;
    let mut cats = Vec::new();
    let mut set = TraceSet::default();
    for p in &pts {
        let Some((k, s)) = names::stat(p.row, ph.stat) else {
            continue;
        };
        let f = names::to_us(k) / 1e3;
        let x = label[&base_config(p)].clone();
        cats.push((config_key(p), x.clone()));
        let hover = hover(p, &stat_line(k, s));
        let mut pt = pt_cat(&x, s.p50 * f, hover.clone(), p.dims());
        pt.lo = Some(s.min * f);
        pt.hi = Some(s.max * f);
        set.get(p.imp(), || Trace::new(p.imp(), pal.of(p.imp()), "markers"))
            .points
            .push(pt);
        if s.n >= MIN_SAMPLES_P99 {
            let id = format!("{}\u{1f}P99", p.imp());
            set.get(&id, || {
                let mut t = Trace::new(p.imp(), pal.of(p.imp()), "markers");
                t.symbol = Some("line-ew-open".into());
                t.no_legend = true;
                t
            })
            .points
            .push(pt_cat(&x, s.p99 * f, format!("P99\n{hover}"), p.dims()));
        }
    }
    c.x_order = ordered_categories(cats);
    c.traces = set.into_vec();
    c.measured(&pts, DISTRIBUTION)
        .finish(&format!("No {} point carries samples.", ph.benchmark))
}
