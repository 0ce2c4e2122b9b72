//! Value parsers for number flags: a negative, zero or fractional value where the flag cannot
//! take one gets an error that says what it takes, instead of clap's "unexpected argument '-1'".
//!
//! Use them with `allow_negative_numbers = true`, so that `-1` reaches the parser as a value
//! rather than being read as an unknown flag.

fn whole(s: &str, min: u64, what: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    match t.parse::<u64>() {
        Ok(v) if v >= min => Ok(v),
        Ok(v) => Err(format!("{v} is too small: must be {what}")),
        Err(_) if t.starts_with('-') && (t.parse::<i128>().is_ok() || t.parse::<f64>().is_ok()) => {
            Err(format!("{s} is negative: must be {what}"))
        }
        Err(_)
            if !t.is_empty()
                && t.trim_start_matches('+')
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            Err(format!(
                "{s} is too large: must be {what} of at most {}",
                u64::MAX
            ))
        }
        Err(_) => Err(format!("{s:?} is not a whole number: must be {what}")),
    }
}

fn to_usize(v: u64) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("{v} is too large for this machine"))
}

/// A whole number of 1 or more (sizes, batch sizes, repeats).
pub fn positive(s: &str) -> Result<usize, String> {
    whole(s, 1, "a positive integer (1 or more)").and_then(to_usize)
}

/// A whole number of 0 or more (counts that may be zero: warm-up runs, indices).
pub fn count(s: &str) -> Result<usize, String> {
    whole(s, 0, "a whole number (0 or more)").and_then(to_usize)
}

/// A whole number of 2 or more (sample counts: a spread needs two samples).
pub fn at_least_two(s: &str) -> Result<usize, String> {
    whole(
        s,
        2,
        "a whole number of 2 or more (a spread needs two samples)",
    )
    .and_then(to_usize)
}

/// The longest time budget a flag in milliseconds takes: one day. Far beyond any useful
/// budget, and far inside what a `Duration` holds.
pub const MAX_BUDGET_MS: f64 = 86_400_000.0;

/// A time budget in milliseconds: a finite number above 0 and at most [`MAX_BUDGET_MS`].
pub fn budget_ms(s: &str) -> Result<f64, String> {
    let v = positive_f64(s)?;
    if v > MAX_BUDGET_MS {
        return Err(format!(
            "{s} ms is more than a day: must be at most {MAX_BUDGET_MS} ms"
        ));
    }
    Ok(v)
}

/// [`positive`] as a u64 (time budgets).
pub fn positive_u64(s: &str) -> Result<u64, String> {
    whole(s, 1, "a positive integer (1 or more)")
}

/// [`count`] as a u64 (seeds).
pub fn count_u64(s: &str) -> Result<u64, String> {
    whole(s, 0, "a whole number (0 or more)")
}

/// A finite number above 0 (time budgets, epsilons).
pub fn positive_f64(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(v) if v.is_finite() => Err(format!("{s} must be a positive number (above 0)")),
        _ => Err(format!(
            "{s:?} is not a finite number: must be a positive number (above 0)"
        )),
    }
}

/// [`positive_f64`] as an f32.
pub fn positive_f32(s: &str) -> Result<f32, String> {
    let v = positive_f64(s)?;
    let f = v as f32;
    if f > 0.0 && f.is_finite() {
        Ok(f)
    } else {
        Err(format!("{s} is outside the range of a 32-bit float"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_and_fractional_values_say_what_the_flag_takes() {
        assert_eq!(positive("64"), Ok(64));
        assert_eq!(positive("1_024"), Ok(1024));
        assert_eq!(count("0"), Ok(0));
        assert_eq!(count_u64("18446744073709551615"), Ok(u64::MAX));
        let e = positive("-1").unwrap_err();
        assert!(
            e.contains("-1 is negative") && e.contains("positive integer"),
            "{e}"
        );
        let e = count("-3").unwrap_err();
        assert!(e.contains("negative") && e.contains("0 or more"), "{e}");
        let e = positive("0").unwrap_err();
        assert!(e.contains("too small"), "{e}");
        let e = positive("1.5").unwrap_err();
        assert!(e.contains("not a whole number"), "{e}");
        let e = positive("-0.5").unwrap_err();
        assert!(e.contains("negative"), "{e}");
        assert_eq!(positive_f64("0.25"), Ok(0.25));
        assert!(positive_f64("-2").unwrap_err().contains("positive number"));
        assert!(positive_f64("0").is_err() && positive_f64("NaN").is_err());
        assert_eq!(positive_f32("1e-5"), Ok(1e-5));
        assert!(positive_f32("1e300").is_err());
    }

    #[test]
    fn a_huge_count_is_too_large_not_negative() {
        let e = positive("99999999999999999999").unwrap_err();
        assert!(e.contains("too large") && !e.contains("negative"), "{e}");
        assert!(count("-99999999999999999999")
            .unwrap_err()
            .contains("negative"));
    }

    #[test]
    fn sample_counts_and_budgets_are_bounded_at_parse_time() {
        assert_eq!(at_least_two("2"), Ok(2));
        assert!(at_least_two("1").unwrap_err().contains("2 or more"));
        assert_eq!(budget_ms("0.5"), Ok(0.5));
        assert_eq!(budget_ms("86400000"), Ok(MAX_BUDGET_MS));
        let e = budget_ms("1e308").unwrap_err();
        assert!(e.contains("at most"), "{e}");
        assert!(budget_ms("inf").is_err() && budget_ms("0").is_err());
    }
}
