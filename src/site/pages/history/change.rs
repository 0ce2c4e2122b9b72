//! One signed number for "did our code get slower": over the judged lines of our own
//! implementations, the geometric mean of head/base time (rates inverted, so + is slower
//! everywhere) with its 95% interval over the points (a t interval on the log ratios).

use crate::compare::{Change, Direction, Line};
use serde::Serialize;

/// The geometric-mean change of our code's time between two runs.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct TimeChange {
    /// (head/base − 1) × 100 of the geometric mean: + is slower.
    pub pct: f64,
    /// The 95% interval of that mean over the points, in the same units.
    pub lo_pct: f64,
    pub hi_pct: f64,
    /// Points it averages.
    pub points: usize,
}

/// Student's t at 97.5% for 1..=30 degrees of freedom; 1.96 beyond.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

fn t975(df: usize) -> f64 {
    T975.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}

/// head/base of one line as a time ratio (> 1: slower), for our implementations' judged lines
/// with positive medians.
fn time_ratio(l: &Line) -> Option<f64> {
    if crate::identity::is_library(&l.point.implementation) {
        return None;
    }
    let Change::Compared(j) = &l.change else {
        return None;
    };
    let r = j.ratio.filter(|r| r.is_finite() && *r > 0.0)?;
    Some(match Direction::of_stat(&l.stat) {
        Direction::LowerIsBetter => r,
        Direction::HigherIsBetter => 1.0 / r,
    })
}

/// The change over `lines`; `None` when no line of ours was judged.
pub fn time_change(lines: &[Line]) -> Option<TimeChange> {
    let logs: Vec<f64> = lines.iter().filter_map(time_ratio).map(f64::ln).collect();
    let n = logs.len();
    if n == 0 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    let half = if n > 1 {
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t975(n - 1) * (var / n as f64).sqrt()
    } else {
        0.0
    };
    let pct = |x: f64| (x.exp() - 1.0) * 100.0;
    Some(TimeChange {
        pct: pct(mean),
        lo_pct: pct(mean - half),
        hi_pct: pct(mean + half),
        points: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Judgement, Verdict};
    use crate::identity::Identity;

    fn line(implementation: &str, stat: &str, ratio: f64) -> Line {
        Line {
            gpu: "NVIDIA H200".into(),
            point: Identity {
                kind: "layernorm".into(),
                benchmark: "layernorm".into(),
                implementation: implementation.into(),
                params: "rows=1 cols=2048".into(),
            },
            settings: Vec::new(),
            variant: None,
            stat: stat.into(),
            base: None,
            head: None,
            change: Change::Compared(Judgement {
                verdict: Verdict::Same,
                ratio: Some(ratio),
                ci_overlap: true,
            }),
            control: None,
            rule: None,
            confirm: false,
        }
    }

    #[test]
    fn a_uniform_slowdown_is_its_own_mean_with_no_width() {
        let lines = vec![line("opbench", "time_us", 1.05); 4];
        let c = time_change(&lines).unwrap();
        assert!((c.pct - 5.0).abs() < 1e-9, "{c:?}");
        assert!((c.lo_pct - 5.0).abs() < 1e-9 && (c.hi_pct - 5.0).abs() < 1e-9);
        assert_eq!(c.points, 4);
    }

    #[test]
    fn rates_count_as_times_and_library_lines_are_left_out() {
        // tokens/s down 1/1.1: 10% slower; cuBLAS's move is the machine's, not ours.
        let lines = vec![
            line("opbench", "tokens_per_s", 1.0 / 1.1),
            line("opbench", "time_us", 1.1),
            line("cublas", "time_us", 2.0),
        ];
        let c = time_change(&lines).unwrap();
        assert!((c.pct - 10.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.points, 2);
        assert_eq!(time_change(&lines[2..]), None);
    }

    #[test]
    fn the_interval_widens_with_the_spread_and_holds_the_mean() {
        let lines: Vec<Line> = [0.97, 1.0, 1.03, 1.06]
            .iter()
            .map(|r| line("opbench", "time_us", *r))
            .collect();
        let c = time_change(&lines).unwrap();
        assert!(c.lo_pct < c.pct && c.pct < c.hi_pct, "{c:?}");
        // mean of logs ~ 1.4%; sd ~ 3.9%; t(3) = 3.182: half-width ~ 6.2%.
        assert!((c.hi_pct - c.lo_pct - 12.4).abs() < 0.6, "{c:?}");
    }
}
