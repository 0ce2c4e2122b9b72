//! Number formatting for the pages: every figure a template shows is formatted here.

/// About four significant digits, thousands separated: 12,346 · 812.3 · 13.27 · 0.01234.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if a >= 1e4 {
        return group(&format!("{v:.0}"));
    }
    if a < 1e-3 {
        return format!("{v:.2e}");
    }
    let decimals = 3 - a.log10().floor() as i32;
    let s = format!("{v:.*}", decimals.clamp(0, 6) as usize);
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    group(&s)
}

/// Inserts thousands separators into the integer part of a plain decimal string.
fn group(s: &str) -> String {
    let (sign, rest) = match s.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", s),
    };
    let (int, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

/// A percentage already scaled to 0..100: "93.4%".
pub fn pct(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v.abs() >= 100.0 {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

/// A ratio: "2.61×".
pub fn times(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v >= 100.0 {
        format!("{v:.0}×")
    } else {
        format!("{v:.2}×")
    }
}

/// A power-of-two size as message sizes are written: "256 KiB", "64 MiB", "8 B".
pub fn bytes_binary(v: f64) -> String {
    scaled(v, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB"])
}

/// Bytes in SI units: "2.07 GB".
pub fn bytes(v: f64) -> String {
    scaled(v, 1000.0, &["B", "kB", "MB", "GB", "TB"])
}

/// `v` divided by `step` until it is below it (or the units run out), with its unit.
fn scaled(v: f64, step: f64, units: &[&str]) -> String {
    let mut x = v;
    let mut u = 0;
    while x.abs() >= step && u + 1 < units.len() {
        x /= step;
        u += 1;
    }
    format!("{} {}", num(x), units[u])
}

/// A count of parameters: "1.10 B", "302 M".
pub fn count(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2} B", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.0} M", v / 1e6)
    } else {
        num(v)
    }
}

/// "2026-11-22T03:06:40Z" -> "2026-11-22 03:06 UTC"; other text is returned as is.
pub fn time_utc(t: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(t) {
        Ok(d) => d
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M UTC")
            .to_string(),
        Err(_) => t.to_string(),
    }
}

/// The first 10 characters of a commit, with a mark when the tree was dirty.
pub fn commit(c: Option<&str>, dirty: Option<bool>) -> String {
    match c {
        None => "unknown".into(),
        Some(c) => {
            let short: String = c.chars().take(10).collect();
            if dirty == Some(true) {
                format!("{short} (dirty)")
            } else {
                short
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_sizes_are_binary() {
        assert_eq!(bytes_binary(262144.0), "256 KiB");
        assert_eq!(bytes_binary(64.0 * 1024.0 * 1024.0), "64 MiB");
        assert_eq!(bytes_binary(8.0), "8 B");
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(num(12345.6), "12,346");
        assert_eq!(num(812.34), "812.3");
        assert_eq!(num(13.271), "13.27");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(0.012345), "0.01235");
        assert_eq!(num(2000.0), "2,000");
        assert_eq!(num(-1234.6), "-1,235");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(3.1e-5), "3.10e-5");
    }

    #[test]
    fn units_and_ratios() {
        assert_eq!(pct(93.44), "93.4%");
        assert_eq!(times(2.613), "2.61×");
        assert_eq!(bytes(2.07e9), "2.07 GB");
        assert_eq!(count(1.1e9), "1.10 B");
        assert_eq!(time_utc("2026-11-22T03:06:40Z"), "2026-11-22 03:06 UTC");
        assert_eq!(
            commit(Some("0123456789abcdef"), Some(true)),
            "0123456789 (dirty)"
        );
    }
}
