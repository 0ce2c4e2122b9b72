//! Progress of a sweep on stderr: an indicatif bar (current point, ETA) on a terminal, and one
//! line per finished measurement either way, so a piped log shows where a run is.

use super::impls::Impl;
use super::plan::Point;
use crate::artifact::{ResultRow, Status};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

pub struct Progress {
    bar: ProgressBar,
    total: u64,
    done: u64,
    started: Instant,
    current: String,
}

impl Progress {
    /// One step per (point, implementation) that will run.
    pub fn new(points: &[Point]) -> Self {
        let total: u64 = points.iter().map(|p| p.runnable().count() as u64).sum();
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} [{elapsed_precise}, ETA {eta}] {wide_msg}",
            )
            .expect("static progress template"),
        );
        Progress {
            bar,
            total,
            done: 0,
            started: Instant::now(),
            current: String::new(),
        }
    }

    pub fn start(&mut self, p: &Point, imp: Impl) {
        self.current = format!("{} {} {}", p.shape.label(), p.dtype, imp.name());
        self.bar.set_message(self.current.clone());
    }

    /// Logs the finished row: its median time and TFLOP/s, or why it failed.
    pub fn done(&mut self, row: &ResultRow) {
        self.done += 1;
        self.bar.inc(1);
        let what = match row.status {
            Status::Ok => format!(
                "{:.2} us, {:.2} TFLOP/s",
                row.p50("time_us").unwrap_or(f64::NAN),
                row.metrics.get("tflops").copied().unwrap_or(f64::NAN)
            ),
            Status::Failed => match &row.correctness {
                Some(c) => format!("FAILED rel_err {:.2e} > {:.0e}", c.rel_err, c.tolerance),
                None => format!("FAILED {}", row.notes.join("; ")),
            },
            Status::Skipped => format!("skipped: {}", row.notes.join("; ")),
        };
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = elapsed / self.done as f64 * (self.total - self.done.min(self.total)) as f64;
        let line = format!(
            "[{}/{} {:.0}s, ETA {:.0}s] {}: {what}",
            self.done, self.total, elapsed, eta, self.current
        );
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    /// A note outside the per-row flow (memory skips, ceilings).
    pub fn note(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
