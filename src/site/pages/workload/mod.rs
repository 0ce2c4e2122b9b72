//! The page of one traced workload (`trace`, kind `trace`): the headline numbers and the top
//! kernels as nsys' cuda_gpu_kern_sum lists them, a timeline of every rank and stream, the time
//! per kernel class, which processes recorded what (and whether all of it arrived) with the
//! temporal breakdown, the time per module (NVTX range), and the launch statistics. One page per workload; the newest run of each is shown.

mod breakdown;
mod headline;
pub mod index;
mod kernels;
mod launch;
mod modules;
mod processes;
pub mod rows;
mod timeline;

use super::common::{not_ok_table, Section};
use super::PageContext;
use crate::site::points::Point;
use rows::WorkloadRows;

/// The page's file stem for a workload: `trace-<slug>`.
pub fn file_stem(workload: &str) -> String {
    format!("trace-{}", super::slug(workload))
}

/// The workloads of `trace` artifacts among `points`, in first-seen order.
pub fn workloads(points: &[Point]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in points {
        if !v.iter().any(|w| w == p.imp()) {
            v.push(p.imp().to_string());
        }
    }
    v
}

/// Builds the page of `workload` from the trace points (every workload's; the newest run of
/// each point is already kept).
pub fn build(page: &mut PageContext, workload: &str, points: &[Point]) {
    let mine: Vec<Point> = points
        .iter()
        .filter(|p| p.imp() == workload)
        .copied()
        .collect();
    if mine.is_empty() {
        return;
    }
    let rows = WorkloadRows::new(workload, &mine);
    page.intro = format!(
        "The workload {workload:?} traced with `trace` (CUPTI injection library, every \
         process of the command). {} Analyses as Holistic Trace Analysis defines them; the \
         kernel table has nsys' cuda_gpu_kern_sum columns.",
        processes::intro(&rows)
    );
    // The numbers and the kernel table first (nsys' and Perfetto's opening view), the timeline
    // and the per-process detail after.
    let mut s_top = Section::new("summary", "Summary", "");
    s_top.tables.push(headline::table(&rows));
    s_top.tables.push(kernels::table(&rows));
    let s_tl = timeline::section(&rows, &page.site.artifacts_dir);
    let mut s_k = Section::new("classes", "Kernel classes", "The kernel time by class.");
    s_k.charts.push(kernels::classes_chart(&rows));
    let mut s_proc = Section::new(
        "processes",
        "Processes and temporal breakdown",
        "What each process recorded, and where its span went.",
    );
    s_proc.tables.push(breakdown::table(&rows));
    s_proc.tables.push(processes::table(&rows));
    let mut s_m = Section::new(
        "modules",
        "Modules",
        "Kernel time per NVTX range: module paths from python/opbench/trace_modules.py, or any range \
         the program opens.",
    );
    s_m.tables.push(modules::table(&rows));
    let mut s_l = Section::new(
        "launch",
        "Launches and idle time",
        "How long kernels waited for their launch, and why the streams sat idle.",
    );
    s_l.tables.extend(launch::table(&rows));
    s_l.tables.push(launch::idle_table(&rows));
    let mut sections = vec![s_top, s_tl, s_k, s_proc, s_m, s_l];
    if let Some(t) = not_ok_table(&mine) {
        let mut s = Section::new("failed", "Failed and skipped rows", "");
        s.tables.push(t);
        sections.push(s);
    }
    let d: Vec<_> = sections
        .iter()
        .flat_map(|s| &s.charts)
        .flat_map(|c| c.traces.iter().flat_map(|t| t.points.iter().map(|p| &p.f)))
        .cloned()
        .collect();
    page.filters = crate::site::filters::collect(d.iter(), &["class"]);
    page.sections = sections;
}
