//! Progress of a benchmark run on stderr, one format for every benchmark: an indicatif bar
//! (steps done, elapsed, ETA, the current point) on a terminal, and one line per finished row
//! either way, so a piped log shows where a run is and what each point measured.

use crate::artifact::{ResultRow, Status};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::{Cell, RefCell};
use std::time::Instant;

/// The bar's template, shared by every benchmark.
const TEMPLATE: &str = "{bar:30} {pos}/{len} [{elapsed_precise}, ETA {eta}] {wide_msg}";

pub struct Progress {
    bar: ProgressBar,
    total: u64,
    done: Cell<u64>,
    started: Instant,
    current: RefCell<String>,
    /// No bar and no lines (`--quiet`).
    quiet: bool,
}

impl Progress {
    /// A run of `total_steps` steps (what a step is, the benchmark says: a point, or one
    /// implementation at a point, or one timed repeat), drawn on stderr.
    pub fn new(total_steps: u64) -> Self {
        Self::with_target(total_steps, ProgressDrawTarget::stderr())
    }

    /// Nothing drawn and no lines printed (`--quiet`).
    pub fn quiet(total_steps: u64) -> Self {
        let mut p = Self::with_target(total_steps, ProgressDrawTarget::hidden());
        p.quiet = true;
        p
    }

    fn with_target(total_steps: u64, target: ProgressDrawTarget) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total_steps), target);
        bar.set_style(ProgressStyle::with_template(TEMPLATE).expect("static progress template"));
        Progress {
            bar,
            total: total_steps,
            done: Cell::new(0),
            started: Instant::now(),
            current: RefCell::new(String::new()),
            quiet: false,
        }
    }

    /// The point being measured now, e.g. "4096x1024 f16" or "tinyllama-1.1b P=128 batch=4".
    pub fn start(&self, label: impl Into<String>) {
        let label = label.into();
        self.bar.set_message(label.clone());
        *self.current.borrow_mut() = label;
    }

    /// One step finished.
    pub fn step(&self) {
        self.done.set(self.done.get() + 1);
        self.bar.inc(1);
    }

    /// Logs a finished row under the current point: its median time, rate and check, or why it
    /// failed or was skipped.
    pub fn row(&self, row: &ResultRow) {
        self.note(&format!(
            "{} {}: {}",
            self.position(),
            self.current.borrow(),
            row_summary(row)
        ));
    }

    /// A line outside the per-row flow (ceilings, skips); printed above the bar.
    pub fn note(&self, line: &str) {
        if self.quiet {
            return;
        }
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    /// Runs `f` with the bar cleared, for output of several lines.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// "[3/40 12s, ETA 148s]": steps done, seconds elapsed and the estimate of the rest.
    fn position(&self) -> String {
        let (done, elapsed) = (self.done.get(), self.started.elapsed().as_secs_f64());
        if done == 0 || self.total == 0 {
            return format!("[{done}/{} {elapsed:.0}s]", self.total);
        }
        let eta = elapsed / done as f64 * self.total.saturating_sub(done) as f64;
        format!("[{done}/{} {elapsed:.0}s, ETA {eta:.0}s]", self.total)
    }
}

/// What a log line says of one row: "candle (cold): p50 12.34 us, 2345 GB/s, rel_err 1.2e-4".
pub fn row_summary(row: &ResultRow) -> String {
    let mode = row
        .param_str("mode")
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    let what = match row.status {
        Status::Ok => {
            let mut parts = Vec::new();
            if let Some(t) = row.p50("time_us") {
                parts.push(format!("p50 {t:.2} us"));
            }
            if let Some(t) = row.metrics.get("tflops") {
                parts.push(format!("{t:.2} TFLOP/s"));
            }
            if let Some(g) = row.metrics.get("gbps") {
                parts.push(format!("{g:.0} GB/s"));
            }
            if let Some(r) = row.metrics.get("decode_tokens_per_s") {
                parts.push(format!("{r:.1} tokens/s decode"));
            }
            if let Some(c) = &row.correctness {
                parts.push(format!("rel_err {:.1e}", c.rel_err));
            }
            if parts.is_empty() {
                "ok".to_string()
            } else {
                parts.join(", ")
            }
        }
        Status::Failed => match &row.correctness {
            Some(c) if c.non_finite > 0 => format!("FAILED {} output(s) NaN/inf", c.non_finite),
            Some(c) if !c.passed => {
                format!("FAILED rel_err {:.2e} > {:.0e}", c.rel_err, c.tolerance)
            }
            _ => format!("FAILED {}", row.notes.join("; ")),
        },
        Status::Skipped => format!("skipped: {}", row.notes.join("; ")),
    };
    format!("{}{mode}: {what}", row.implementation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Correctness;

    #[test]
    fn rows_summarize_time_rate_check_and_failure() {
        let mut r = ResultRow::new("layernorm", "ours").param("mode", "cold");
        r.metrics.insert("gbps".into(), 2345.4);
        r.correctness = Some(Correctness {
            reference: "f64".into(),
            max_abs_err: 0.0,
            rel_err: 1.2e-4,
            tolerance: 1e-2,
            passed: true,
            non_finite: 0,
        });
        assert_eq!(row_summary(&r), "ours (cold): 2345 GB/s, rel_err 1.2e-4");
        r.status = Status::Failed;
        r.correctness.as_mut().unwrap().passed = false;
        r.correctness.as_mut().unwrap().rel_err = 0.5;
        assert_eq!(
            row_summary(&r),
            "ours (cold): FAILED rel_err 5.00e-1 > 1e-2"
        );
        let mut s = ResultRow::new("gemm", "cublas");
        s.status = Status::Skipped;
        s.notes.push("needs 12 GB".into());
        assert_eq!(row_summary(&s), "cublas: skipped: needs 12 GB");
    }

    #[test]
    fn position_counts_steps_and_estimates_the_rest() {
        let p = Progress::with_target(4, ProgressDrawTarget::hidden());
        assert!(p.position().starts_with("[0/4 "));
        p.step();
        p.step();
        let pos = p.position();
        assert!(pos.starts_with("[2/4 ") && pos.contains("ETA"), "{pos}");
    }
}
