//! Pure statistics over timing samples: percentiles, median confidence interval, Tukey outliers.
//!
//! Invariants: every function takes a non-empty sample of finite values and says so in its
//! error otherwise. Percentiles use linear interpolation between closest ranks (Hyndman & Fan
//! type 7, numpy's default): for sorted x[0..n), p in [0,100], h = (n-1)·p/100,
//! q = x[⌊h⌋] + (h-⌊h⌋)·(x[⌊h⌋+1]-x[⌊h⌋]).

use serde::{Deserialize, Serialize};

/// Why a sample cannot be summarized.
#[derive(Debug, Clone, PartialEq)]
pub enum StatsError {
    Empty,
    NonFinite { index: usize, value: f64 },
    BadPercentile(f64),
}

impl std::fmt::Display for StatsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatsError::Empty => write!(f, "empty sample: at least one measurement is needed"),
            StatsError::NonFinite { index, value } => {
                write!(
                    f,
                    "sample {index} is {value}: measurements must be finite numbers"
                )
            }
            StatsError::BadPercentile(p) => write!(f, "percentile {p} is outside 0..=100"),
        }
    }
}

impl std::error::Error for StatsError {}

/// The statistics block every result row carries for each sampled quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub p5: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n-1 denominator); 0 for n = 1.
    pub stdev: f64,
    /// stdev / mean; 0 when mean is 0.
    pub cv: f64,
    /// Distribution-free 95% confidence interval of the median: [low, high].
    pub median_ci95: [f64; 2],
    /// Samples outside [Q1 - 1.5 IQR, Q3 + 1.5 IQR].
    pub outliers_tukey: usize,
}

fn checked_sorted(samples: &[f64]) -> Result<Vec<f64>, StatsError> {
    if samples.is_empty() {
        return Err(StatsError::Empty);
    }
    if let Some((index, &value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(StatsError::NonFinite { index, value });
    }
    let mut v = samples.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Ok(v)
}

/// Type-7 percentile of an already sorted, non-empty, finite slice.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p / 100.0;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Type-7 (linear interpolation) percentile, p in 0..=100.
pub fn percentile(samples: &[f64], p: f64) -> Result<f64, StatsError> {
    if !(0.0..=100.0).contains(&p) {
        return Err(StatsError::BadPercentile(p));
    }
    Ok(percentile_sorted(&checked_sorted(samples)?, p))
}

/// Ranks (1-based, inclusive) of the order statistics bounding a 95% CI of the median:
/// the narrowest symmetric pair [x_(j), x_(n+1-j)] with binomial(n, 1/2) coverage >= 0.95.
/// For n < 6 no pair reaches 95%, and the interval is the whole range [1, n].
pub fn median_ci_ranks(n: usize) -> (usize, usize) {
    if n < 6 {
        return (1, n.max(1));
    }
    // P(j <= B <= n-j) for B ~ Binomial(n, 1/2), in log space to stay exact for big n;
    // ln C(n, k) built up from ln C(n, k-1), so the whole table costs O(n).
    let half_ln = (n as f64) * 0.5f64.ln();
    let mut ln_choose = 0.0f64;
    let mut pmf = Vec::with_capacity(n + 1);
    for k in 0..=n {
        if k > 0 {
            ln_choose += ((n + 1 - k) as f64 / k as f64).ln();
        }
        pmf.push((ln_choose + half_ln).exp());
    }
    // Coverage of [j, n-j] is 1 - 2 P(B < j) by symmetry: one running tail sum.
    let mut best = 1;
    let mut tail = 0.0f64;
    for j in 1..=n / 2 {
        tail += pmf[j - 1];
        let coverage = 1.0 - 2.0 * tail;
        if coverage >= 0.95 {
            best = j;
        } else {
            break;
        }
    }
    (best, n + 1 - best)
}

/// The larger distance from the median to either end of its 95% interval, relative to the
/// median (0.0025 = the interval lies within +-0.25% of the median); infinite for a zero median.
pub fn median_ci_halfwidth_rel(samples: &[f64]) -> Result<f64, StatsError> {
    let s = checked_sorted(samples)?;
    let (lo, hi) = median_ci_ranks(s.len());
    let p50 = percentile_sorted(&s, 50.0);
    let half = (p50 - s[lo - 1]).max(s[hi - 1] - p50);
    Ok(if p50 != 0.0 {
        half / p50.abs()
    } else {
        f64::INFINITY
    })
}

/// Number of samples outside Tukey's fences [Q1 - 1.5 IQR, Q3 + 1.5 IQR] (type-7 quartiles).
pub fn tukey_outliers(samples: &[f64]) -> Result<usize, StatsError> {
    let s = checked_sorted(samples)?;
    Ok(tukey_outliers_sorted(&s))
}

fn tukey_outliers_sorted(s: &[f64]) -> usize {
    let q1 = percentile_sorted(s, 25.0);
    let q3 = percentile_sorted(s, 75.0);
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    s.iter().filter(|&&x| x < lo || x > hi).count()
}

/// Coefficient of variation: sample stdev / mean (0 when the mean is 0).
pub fn coefficient_of_variation(samples: &[f64]) -> Result<f64, StatsError> {
    Ok(summarize(samples)?.cv)
}

/// The full statistics block of a sample.
pub fn summarize(samples: &[f64]) -> Result<Summary, StatsError> {
    let s = checked_sorted(samples)?;
    let n = s.len();
    let mean = s.iter().sum::<f64>() / n as f64;
    let stdev = if n > 1 {
        (s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let (lo, hi) = median_ci_ranks(n);
    Ok(Summary {
        n,
        min: s[0],
        p5: percentile_sorted(&s, 5.0),
        p50: percentile_sorted(&s, 50.0),
        p95: percentile_sorted(&s, 95.0),
        p99: percentile_sorted(&s, 99.0),
        max: s[n - 1],
        mean,
        stdev,
        cv: if mean != 0.0 { stdev / mean } else { 0.0 },
        median_ci95: [s[lo - 1], s[hi - 1]],
        outliers_tukey: tukey_outliers_sorted(&s),
    })
}

impl Summary {
    /// Every number of the block with its field name, in a fixed order.
    pub fn fields(&self) -> [(&'static str, f64); 11] {
        [
            ("min", self.min),
            ("p5", self.p5),
            ("p50", self.p50),
            ("p95", self.p95),
            ("p99", self.p99),
            ("max", self.max),
            ("mean", self.mean),
            ("stdev", self.stdev),
            ("cv", self.cv),
            ("median_ci95[0]", self.median_ci95[0]),
            ("median_ci95[1]", self.median_ci95[1]),
        ]
    }

    /// Every number finite and ordered min <= p50 <= max: what validation of an artifact checks.
    pub fn check(&self) -> Result<(), String> {
        let fields = self.fields();
        if let Some((name, v)) = fields.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("{name} is {v}, not a finite number"));
        }
        if self.n == 0 {
            return Err("n is 0: a statistics block needs at least one sample".into());
        }
        if !(self.min <= self.p50 && self.p50 <= self.max) {
            return Err(format!(
                "min {} <= p50 {} <= max {} does not hold",
                self.min, self.p50, self.max
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn percentiles_interpolate_linearly() {
        // Sorted 1..=5: h = 4p/100. p25 -> x[1] = 2; p10 -> 1 + 0.4*1 = 1.4; p95 -> 4.8.
        let x = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert!(close(percentile(&x, 25.0).unwrap(), 2.0));
        assert!(close(percentile(&x, 10.0).unwrap(), 1.4));
        assert!(close(percentile(&x, 95.0).unwrap(), 4.8));
        assert!(close(percentile(&x, 0.0).unwrap(), 1.0));
        assert!(close(percentile(&x, 100.0).unwrap(), 5.0));
        // Even count: the median is the mean of the two middle values.
        assert!(close(
            percentile(&[1.0, 2.0, 3.0, 10.0], 50.0).unwrap(),
            2.5
        ));
    }

    #[test]
    fn single_sample_is_every_percentile() {
        let s = summarize(&[7.5]).unwrap();
        assert_eq!(
            (s.min, s.p50, s.p99, s.max, s.stdev),
            (7.5, 7.5, 7.5, 7.5, 0.0)
        );
        assert_eq!(s.median_ci95, [7.5, 7.5]);
    }

    #[test]
    fn summary_matches_hand_computation() {
        // 2,4,4,4,5,5,7,9: mean 5, sum of squares 32, sample variance 32/7.
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0));
        assert!(close(s.stdev, (32.0f64 / 7.0).sqrt()));
        assert!(close(s.cv, (32.0f64 / 7.0).sqrt() / 5.0));
        assert!(close(s.p50, 4.5));
        // h = 7*0.95 = 6.65 -> 7 + 0.65*2 = 8.3
        assert!(close(s.p95, 8.3));
        // n = 8: P(1 <= B <= 7) = 1 - 2/256 = 0.992 >= .95, P(2 <= B <= 6) = 1 - 18/256 = 0.93 < .95
        assert_eq!(median_ci_ranks(8), (1, 8));
        assert_eq!(s.median_ci95, [2.0, 9.0]);
    }

    #[test]
    fn median_ci_ranks_match_binomial_tables() {
        // Classic table values (e.g. Conover): n=6 -> (1,6), n=10 -> (2,9), n=20 -> (6,15),
        // n=100 -> (40,61).
        assert_eq!(median_ci_ranks(5), (1, 5));
        assert_eq!(median_ci_ranks(6), (1, 6));
        assert_eq!(median_ci_ranks(10), (2, 9));
        assert_eq!(median_ci_ranks(20), (6, 15));
        assert_eq!(median_ci_ranks(100), (40, 61));
        let (lo, hi) = median_ci_ranks(1000);
        assert!(lo > 400 && hi < 600 && lo + hi == 1001);
        // Normal approximation: n/2 - 1.96 sqrt(n)/2 = 469.0 for n = 1000; 4902.0 for 10000.
        assert!((468..=470).contains(&lo), "{lo}");
        let (lo, _) = median_ci_ranks(10_000);
        assert!((4901..=4903).contains(&lo), "{lo}");
    }

    #[test]
    fn median_interval_half_width_is_relative_to_the_median() {
        // 1..=20: median 10.5, ranks (6, 15) -> [6, 15]: 4.5 / 10.5 either side.
        let x: Vec<f64> = (1..=20).map(f64::from).collect();
        let h = median_ci_halfwidth_rel(&x).unwrap();
        assert!((h - 4.5 / 10.5).abs() < 1e-12, "{h}");
        assert_eq!(median_ci_halfwidth_rel(&[5.0; 30]).unwrap(), 0.0);
        assert!(median_ci_halfwidth_rel(&[0.0; 10]).unwrap().is_infinite());
        assert!(median_ci_halfwidth_rel(&[]).is_err());
    }

    #[test]
    fn tukey_counts_points_beyond_fences() {
        // 1..=8 and 100: Q1 = 3, Q3 = 7, IQR 4, fences [-3, 13]: only 100 is out.
        let mut x: Vec<f64> = (1..=8).map(f64::from).collect();
        x.push(100.0);
        assert_eq!(tukey_outliers(&x).unwrap(), 1);
        assert_eq!(tukey_outliers(&[1.0, 1.0, 1.0]).unwrap(), 0);
    }

    #[test]
    fn rejects_empty_nan_and_bad_percentile() {
        assert_eq!(summarize(&[]), Err(StatsError::Empty));
        match summarize(&[1.0, f64::NAN]) {
            Err(StatsError::NonFinite { index: 1, .. }) => {}
            other => panic!("expected NonFinite at 1, got {other:?}"),
        }
        assert!(summarize(&[f64::INFINITY]).is_err());
        assert_eq!(
            percentile(&[1.0], 101.0),
            Err(StatsError::BadPercentile(101.0))
        );
        assert!(coefficient_of_variation(&[]).is_err());
        assert!(summarize(&[1.0, 2.0]).unwrap().to_string_err_free());
    }

    impl Summary {
        fn to_string_err_free(&self) -> bool {
            self.check().is_ok()
        }
    }

    #[test]
    fn check_rejects_inconsistent_blocks() {
        let mut s = summarize(&[1.0, 2.0, 3.0]).unwrap();
        assert!(s.check().is_ok());
        s.p50 = 10.0;
        assert!(s.check().unwrap_err().contains("p50"));
        s.p50 = f64::NAN;
        assert!(s.check().unwrap_err().contains("p50"));
    }
}
