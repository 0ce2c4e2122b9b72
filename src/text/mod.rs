//! Untrusted text from artifacts made safe to show: long names elided, Markdown neutralised,
//! spreadsheet formulas defused.
//!
//! Names (kinds, implementations, parameters) come from files anyone can write. Validation
//! rejects absurd lengths (`artifact::limits`); [`elide`] shortens what is left wherever a name
//! enters a page or a comparison table, so one long name cannot blow up every page.

mod csv;
mod markdown;
pub mod url;

pub use csv::csv_cell;
pub use markdown::markdown_text;

use std::borrow::Cow;

/// Longest name shown whole in pages and tables, in characters.
pub const DISPLAY_MAX_CHARS: usize = 120;

/// `s` cut to [`DISPLAY_MAX_CHARS`] characters, ending in "…" when it was cut.
pub fn elide(s: &str) -> Cow<'_, str> {
    elide_to(s, DISPLAY_MAX_CHARS)
}

/// `s` cut to `max` characters (at least 1), the last one "…" when it was cut.
pub fn elide_to(s: &str, max: usize) -> Cow<'_, str> {
    let max = max.max(1);
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some(_) => {
            let cut = s.char_indices().nth(max - 1).map_or(s.len(), |(i, _)| i);
            Cow::Owned(format!("{}…", &s[..cut]))
        }
    }
}

/// `s` for one line of terminal or plain-text output: elided, and every control character
/// (line breaks, escape sequences) replaced by a space so a name cannot break the table or
/// drive the terminal.
pub fn one_line(s: &str) -> String {
    elide(s)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_with_an_ellipsis_short_ones_kept() {
        assert_eq!(elide("candle"), "candle");
        let exact = "x".repeat(DISPLAY_MAX_CHARS);
        assert!(matches!(elide(&exact), Cow::Borrowed(_)));
        let long = "é".repeat(10_000_000);
        let e = elide(&long);
        assert_eq!(e.chars().count(), DISPLAY_MAX_CHARS);
        assert!(e.ends_with('…'));
        assert_eq!(elide_to("abcdef", 4), "abc…");
        assert_eq!(elide_to("abcd", 4), "abcd");
        assert_eq!(one_line("a\nb\u{1b}[31mc"), "a b [31mc");
    }
}
