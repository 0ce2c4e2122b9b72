//! The timeline: the first GPU activities of the first traced process, one lane per kernel
//! class, from the Chrome trace-event file `trace` writes beside its artifact
//! (`timeline.trace.json`).

use super::rows::{dims, WorkloadRows, TRACED};
use crate::site::chart::{pt_num, ChartKind, ChartView, Trace};
use crate::site::fmt;
use crate::site::pages::common::Section;
use crate::site::pages::trace::classes::{class_color, class_rank};
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
    pid: u64,
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
                ts_us: e.get("ts")?.as_f64()?,
                dur_us: e.get("dur")?.as_f64()?,
                name: e.get("name")?.as_str()?.to_string(),
                kind,
            })
        })
        .filter(|e| e.pid >= GPU_PID_BASE)
        .collect()
}

/// The timeline chart of the first `MAX_ACTIVITIES` activities of the lowest GPU track id
/// (the first process's first GPU), x from its first activity.
fn chart(rows: &WorkloadRows, evs: Vec<Ev>) -> Option<ChartView> {
    let pid = evs.iter().map(|e| e.pid).min()?;
    let mut mine: Vec<Ev> = evs.into_iter().filter(|e| e.pid == pid).collect();
    mine.sort_by(|a, b| a.ts_us.total_cmp(&b.ts_us));
    let total = mine.len();
    mine.truncate(MAX_ACTIVITIES);
    let t0 = mine.first()?.ts_us;
    let end = mine.iter().map(|e| e.ts_us + e.dur_us).fold(t0, f64::max);
    let (proc_pid, device) = (pid % GPU_PID_BASE, pid / GPU_PID_BASE - 1);
    let mut lanes: Vec<Trace> = Vec::new();
    for e in &mine {
        let mut a = Activity::kernel(&e.name, 0, 0);
        a.kind = e.kind;
        let class = activity_class(&a);
        let hover = format!(
            "{}\n{class}: {} µs at {} µs",
            crate::text::elide_to(&e.name, 120),
            fmt::num(e.dur_us),
            fmt::num(e.ts_us - t0)
        );
        let i = match lanes.iter().position(|t| t.name == class) {
            Some(i) => i,
            None => {
                lanes.push(Trace::new(class, class_color(class), "bar"));
                lanes.len() - 1
            }
        };
        lanes[i].points.push(pt_num(
            e.ts_us - t0,
            e.dur_us,
            hover,
            dims(&rows.workload, Some(class)),
        ));
    }
    lanes.sort_by_key(|t| class_rank(&t.name));
    let mut c = ChartView::new(
        "wt-timeline",
        &format!(
            "Timeline of pid {proc_pid} on GPU {device}: its first {} of {} GPU activities",
            fmt::count(mine.len() as f64),
            fmt::count(total as f64)
        ),
        "Each bar is one kernel, memcpy or memset (CUPTI device timestamps), from its start to \
         its end; x = µs since the process's first GPU activity. The top lane holds every \
         activity, so its white gaps are the time the GPU ran nothing; below, one lane per \
         kernel class. With more than 150 activities the chart opens on the densest run of \
         150 from the first kernel on (the workload's steady loop; a quarter of them below \
         600); the autoscale button of the mode bar shows them all. Drag to zoom, \
         double-click to come back; the whole run is in timeline.trace.json \
         (ui.perfetto.dev).",
        "time since the first GPU activity (µs)",
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
        "The first GPU activities of the first traced process, kernel by kernel.",
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
