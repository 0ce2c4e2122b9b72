//! List-valued flags and sweeps: a value given twice would measure the same point twice, so
//! repeats are dropped (first occurrence kept, order kept) with a warning that names the flag.

use std::fmt::Display;

/// Removes repeated values from `list` in place, keeping the first of each; returns the
/// values that were removed, in order.
pub fn repeats<T: PartialEq + Clone>(list: &mut Vec<T>) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(list.len());
    let mut dropped = Vec::new();
    for v in list.drain(..) {
        if kept.contains(&v) {
            dropped.push(v);
        } else {
            kept.push(v);
        }
    }
    *list = kept;
    dropped
}

/// [`repeats`], returning the warning that names `flag` and the repeated values, each shown
/// with `show` (None when nothing was repeated).
pub fn dedup_flag_by<T: PartialEq + Clone>(
    flag: &str,
    list: &mut Vec<T>,
    show: impl Fn(&T) -> String,
) -> Option<String> {
    let dropped = repeats(list);
    if dropped.is_empty() {
        return None;
    }
    let mut shown: Vec<String> = Vec::new();
    for d in &dropped {
        let s = crate::text::one_line(&show(d));
        if !shown.contains(&s) {
            shown.push(s);
        }
    }
    Some(format!(
        "{flag} lists {} more than once; each value runs once",
        shown.join(", ")
    ))
}

/// [`dedup_flag_by`] for values that display themselves.
pub fn dedup_flag<T: PartialEq + Clone + Display>(flag: &str, list: &mut Vec<T>) -> Option<String> {
    dedup_flag_by(flag, list, |v| v.to_string())
}

/// [`dedup_flag`], printing the warning on stderr.
pub fn dedup_warn<T: PartialEq + Clone + Display>(flag: &str, list: &mut Vec<T>) {
    dedup_warn_by(flag, list, |v| v.to_string());
}

/// [`dedup_flag_by`], printing the warning on stderr.
pub fn dedup_warn_by<T: PartialEq + Clone>(
    flag: &str,
    list: &mut Vec<T>,
    show: impl Fn(&T) -> String,
) {
    if let Some(w) = dedup_flag_by(flag, list, show) {
        eprintln!("warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_dropped_in_order_and_named() {
        let mut v = vec![64, 128, 64, 256, 128, 64];
        assert_eq!(repeats(&mut v), vec![64, 128, 64]);
        assert_eq!(v, vec![64, 128, 256]);
        let mut k = vec!["a".to_string(), "a".to_string()];
        let w = dedup_flag("--kernel", &mut k).unwrap();
        assert_eq!(w, "--kernel lists a more than once; each value runs once");
        assert_eq!(k, vec!["a"]);
        let mut none = vec![1, 2];
        assert_eq!(dedup_flag("--batch", &mut none), None);
    }
}
