//! Progress of a sweep on stderr: a bar on a terminal, one line per point in logs.

use super::{Dtype, Shape};
use crate::artifact::{ResultRow, Status};
use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub fn new(points: usize) -> Self {
        let bar = ProgressBar::new(points as u64);
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        Progress { bar }
    }

    fn line(&self, s: String) {
        if self.bar.is_hidden() {
            eprintln!("{s}");
        } else {
            self.bar.println(s);
        }
    }

    pub fn start(&self, shape: &Shape, dtype: Dtype) {
        self.bar.set_message(format!("{shape} {dtype}"));
    }

    /// One line per finished row: who, where, status, median and error.
    pub fn done(&self, r: &ResultRow) {
        let p = |k: &str| r.param_str(k).unwrap_or_default();
        let err = r
            .correctness
            .as_ref()
            .map(|c| format!("rel_err {:.1e}", c.rel_err))
            .unwrap_or_default();
        let time = match (r.status, r.p50("time_us")) {
            (Status::Ok, Some(t)) => format!("p50 {t:.2} us"),
            (s, _) => format!("{s:?}"),
        };
        let gbps = r
            .metrics
            .get("gbps")
            .map(|g| format!("{g:.0} GB/s"))
            .unwrap_or_default();
        self.line(format!(
            "{:8} {:>11} {:4} {:4} {time:>16} {gbps:>10} {err}",
            r.implementation,
            p("shape"),
            p("dtype"),
            p("mode")
        ));
    }

    pub fn advance(&self) {
        self.bar.inc(1);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
