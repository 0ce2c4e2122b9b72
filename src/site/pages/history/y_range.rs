//! A small chart's y range: every band in view, and never narrower than the verdict rule's
//! threshold around the values, so noise smaller than a change compare would call looks small
//! (Plotly's autorange stretches a 1.5% spread over the full height).

use crate::compare::DEFAULT_MIN_EFFECT;

/// `[low, high]` over the bands `(lo, hi)` of every point and their values `v`; `None` without
/// finite values.
pub fn y_range(bands: &[(f64, f64, f64)]) -> Option<[f64; 2]> {
    let finite: Vec<&(f64, f64, f64)> = bands
        .iter()
        .filter(|(v, lo, hi)| v.is_finite() && lo.is_finite() && hi.is_finite())
        .collect();
    if finite.is_empty() {
        return None;
    }
    let lo = finite
        .iter()
        .map(|b| b.1.min(b.0))
        .fold(f64::INFINITY, f64::min);
    let hi = finite
        .iter()
        .map(|b| b.2.max(b.0))
        .fold(f64::NEG_INFINITY, f64::max);
    let mut values: Vec<f64> = finite.iter().map(|b| b.0.abs()).collect();
    values.sort_by(f64::total_cmp);
    let typical = values[values.len() / 2];
    // Twice the threshold on either side of the middle: a change the rule calls is a quarter
    // of the height at least.
    let min_span = 4.0 * DEFAULT_MIN_EFFECT * typical;
    let (mut a, mut b) = (lo, hi);
    if b - a < min_span {
        let mid = (a + b) / 2.0;
        a = mid - min_span / 2.0;
        b = mid + min_span / 2.0;
    }
    let pad = 0.05 * (b - a).max(f64::MIN_POSITIVE);
    Some([a - pad, b + pad])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_spread_is_drawn_on_the_rules_scale() {
        // 100 ± 0.75: a 1.5% spread, under the 3% threshold.
        let r = y_range(&[(99.25, 99.0, 99.5), (100.75, 100.5, 101.0)]).unwrap();
        let span = r[1] - r[0];
        assert!(span >= 4.0 * DEFAULT_MIN_EFFECT * 99.25, "{r:?}");
        assert!(r[0] < 99.0 && r[1] > 101.0, "every band in view: {r:?}");
    }

    #[test]
    fn a_wide_spread_keeps_every_band_and_no_more_than_a_margin() {
        let r = y_range(&[(50.0, 45.0, 55.0), (100.0, 95.0, 105.0)]).unwrap();
        assert!(r[0] < 45.0 && r[0] > 40.0, "{r:?}");
        assert!(r[1] > 105.0 && r[1] < 110.0, "{r:?}");
    }

    #[test]
    fn no_finite_value_no_range() {
        assert_eq!(y_range(&[(f64::NAN, 1.0, 2.0)]), None);
        assert_eq!(y_range(&[]), None);
    }
}
