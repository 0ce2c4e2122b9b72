//! The median of a set of values with its P5–P95 spread: how every overview card states its
//! figure.

use crate::stats::percentile;

/// Median and type-7 P5 and P95 of `n` values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub p5: f64,
    pub p95: f64,
    pub n: usize,
}

impl Spread {
    /// `None` for no values or a non-finite one.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let q = |p: f64| percentile(values, p).ok();
        Some(Spread {
            median: q(50.0)?,
            p5: q(5.0)?,
            p95: q(95.0)?,
            n: values.len(),
        })
    }

    /// "P5–P95 1.19× – 4.87×", each end written by `f`.
    pub fn interval(&self, f: impl Fn(f64) -> String) -> String {
        format!("P5–P95 {} – {}", f(self.p5), f(self.p95))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_type7_percentiles() {
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!((s.median, s.n), (3.0, 5));
        assert!((s.p5 - 1.2).abs() < 1e-12 && (s.p95 - 4.8).abs() < 1e-12);
        assert_eq!(s.interval(|v| format!("{v:.1}")), "P5–P95 1.2 – 4.8");
        assert!(Spread::of(&[]).is_none());
    }
}
