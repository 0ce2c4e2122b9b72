//! The timeline: the first GPU activities of every traced process, one lane per process, GPU
//! and stream, from the Chrome trace-event file `trace` writes beside its artifact
//! (`timeline.trace.json`).

use super::rows::{dims, WorkloadRows, TRACED};
use crate::site::chart::{pt_num, ChartKind, ChartView, Trace};
use crate::site::fmt;
use crate::site::pages::common::Section;
use crate::site::palette::Palette;
use crate::trace::by_class::activity_class;
use crate::trace::chrome::GPU_PID_BASE;
use crate::trace::{Activity, ActivityKind};
use serde_json::Value;
use std::path::Path;

/// The Chrome file's name beside the artifact (`trace`'s output folder).
pub const CHROME_FILE: &str = crate::trace::tool::CHROME;
/// Activities drawn: enough for a few steps of a model, few enough for a page.
pub const MAX_ACTIVITIES: usize = 400;
/// A Chrome file larger than this is not read for the page (ui.perfetto.dev opens it).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// One GPU activity of the Chrome file.
struct Ev {
    /// The GPU track: `GPU_PID_BASE * (device + 1) + process pid`.
    pid: u64,
    stream: u64,
    ts_us: f64,
    dur_us: f64,
    name: String,
    kind: ActivityKind,
}

fn events(doc: &Value) -> Vec<Ev> {
    let Some(list) = doc.get("traceEvents").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter(|e| e.get("ph").and_then(Value::as_str) == Some("X"))
        .filter_map(|e| {
            let kind = match e.get("cat")?.as_str()? {
                "kernel" | "graph" => ActivityKind::Kernel,
                "memcpy" => ActivityKind::Memcpy,
                "memset" => ActivityKind::Memset,
                _ => return None,
            };
            Some(Ev {
                pid: e.get("pid")?.as_u64()?,
                stream: e.get("tid").and_then(Value::as_u64).unwrap_or(0),
                ts_us: e.get("ts")?.as_f64()?,
                dur_us: e.get("dur")?.as_f64()?,
                name: e.get("name")?.as_str()?.to_string(),
                kind,
            })
        })
        .filter(|e| e.pid >= GPU_PID_BASE)
        .collect()
}

/// "pid 661 GPU 0" of a GPU track id.
fn track_label(pid: u64) -> String {
    format!("pid {} GPU {}", pid % GPU_PID_BASE, pid / GPU_PID_BASE - 1)
}

/// The first activities of every GPU track (process and GPU: a rank), an equal share of
/// `MAX_ACTIVITIES` each, so every rank is drawn; sorted by start.
fn first_of_each_track(mut evs: Vec<Ev>) -> (Vec<Ev>, usize, usize) {
    evs.sort_by(|a, b| a.pid.cmp(&b.pid).then(a.ts_us.total_cmp(&b.ts_us)));
    let total = evs.len();
    let mut tracks: Vec<u64> = evs.iter().map(|e| e.pid).collect();
    tracks.dedup();
    let each = (MAX_ACTIVITIES / tracks.len().max(1)).max(1);
    let mut kept: Vec<Ev> = Vec::new();
    let mut seen = 0;
    let mut last = None;
    for e in evs {
        if last != Some(e.pid) {
            last = Some(e.pid);
            seen = 0;
        }
        seen += 1;
        if seen <= each {
            kept.push(e);
        }
    }
    kept.sort_by(|a, b| a.ts_us.total_cmp(&b.ts_us));
    (kept, total, tracks.len())
}

/// The timeline chart: one lane per process, GPU and stream (a lane per rank and stream of a
/// multi-process job), coloured by process; x from the first activity drawn.
fn chart(rows: &WorkloadRows, evs: Vec<Ev>) -> Option<ChartView> {
    let (shown, total, tracks) = first_of_each_track(evs);
    let t0 = shown.first()?.ts_us;
    let end = shown.iter().map(|e| e.ts_us + e.dur_us).fold(t0, f64::max);
    let mut order: Vec<u64> = shown.iter().map(|e| e.pid).collect();
    order.sort_unstable();
    order.dedup();
    // (track, stream) -> lane index, lanes in track then stream order.
    let mut keys: Vec<(u64, u64)> = shown.iter().map(|e| (e.pid, e.stream)).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut lanes: Vec<Trace> = keys
        .iter()
        .map(|(pid, stream)| {
            let color = Palette::nth(order.iter().position(|p| p == pid).unwrap_or(0));
            Trace::new(
                format!("{} · stream {stream}", track_label(*pid)),
                &color,
                "bar",
            )
        })
        .collect();
    for e in &shown {
        let mut a = Activity::kernel(&e.name, 0, 0);
        a.kind = e.kind;
        let class = activity_class(&a);
        let i = keys.binary_search(&(e.pid, e.stream)).unwrap_or(0);
        let hover = format!(
            "{}\n{} · {class}: {} µs at {} µs",
            crate::text::elide_to(&e.name, 120),
            lanes[i].name,
            fmt::num(e.dur_us),
            fmt::num(e.ts_us - t0)
        );
        lanes[i].points.push(pt_num(
            e.ts_us - t0,
            e.dur_us,
            hover,
            dims(&rows.workload, Some(class)),
        ));
    }
    let mut c = ChartView::new(
        "wt-timeline",
        &format!(
            "Timeline of {} on {}: the first {} of {} GPU activities",
            if tracks == 1 {
                "one process".to_string()
            } else {
                format!("{tracks} processes")
            },
            if keys.len() == 1 {
                "one stream".to_string()
            } else {
                format!("{} streams", keys.len())
            },
            fmt::count(shown.len() as f64),
            fmt::count(total as f64)
        ),
        &format!(
            "Each bar is one kernel, memcpy or memset (CUPTI device timestamps), from its start \
             to its end; x = µs since the first activity drawn, on one clock for every process. \
             The top lane holds every activity, so its white gaps are the time no GPU ran \
             anything; below, one lane per process (rank), GPU and stream, coloured by process: \
             each process's first activities, an equal share of {MAX_ACTIVITIES}. Hover a bar \
             for its kernel and class (the class filter applies). With more than 150 activities \
             the chart opens on the densest run of 150 (a quarter of them below 600); the \
             autoscale button of the mode bar shows them all. Drag to zoom, double-click to \
             come back; the whole run is in timeline.trace.json (ui.perfetto.dev)."
        ),
        "time since the first GPU activity drawn (µs)",
        "duration (µs)",
    );
    c.kind = ChartKind::Timeline;
    c.traces = lanes;
    c.traces.push(Trace::window_frame("drawn window", end - t0));
    Some(
        c.measured(rows.points, TRACED)
            .finish("The Chrome file holds no GPU activity."),
    )
}

/// The "Timeline" section: the chart, or why there is none.
pub fn section(rows: &WorkloadRows, artifacts_dir: &str) -> Section {
    let mut s = Section::new(
        "timeline",
        "Timeline",
        "The first GPU activities of every traced process, kernel by kernel, a lane per rank and stream.",
    );
    let file = Path::new(artifacts_dir).join(&rows.points[0].loaded.file);
    let path = file.with_file_name(CHROME_FILE);
    let shown = path
        .strip_prefix(artifacts_dir)
        .unwrap_or(&path)
        .display()
        .to_string();
    let text = match std::fs::metadata(&path) {
        Err(_) => {
            s.intro = format!(
                "No {CHROME_FILE} beside the artifact ({shown}): keep the Chrome file `trace` \
                 wrote in its output folder next to trace.json to draw the timeline."
            );
            return s;
        }
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            s.intro = format!(
                "{shown} is {} (more than {} are not read for the page): open it in \
                 ui.perfetto.dev.",
                fmt::bytes(m.len() as f64),
                fmt::bytes(MAX_FILE_BYTES as f64)
            );
            return s;
        }
        Ok(_) => crate::input::read_text(&path, "Chrome trace", MAX_FILE_BYTES),
    };
    let doc = text
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    match doc.map(|d| chart(rows, events(&d))) {
        Some(Some(c)) => {
            s.intro = format!("From {shown}.");
            s.charts.push(c);
        }
        Some(None) => s.intro = format!("{shown} holds no GPU activity."),
        None => {
            s.intro = format!(
                "{shown} is not Chrome trace-event JSON: rewrite it with `trace --from-raw`."
            )
        }
    }
    s
}
