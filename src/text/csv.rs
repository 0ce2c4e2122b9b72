//! CSV cells a spreadsheet will not run as formulas (OWASP's CSV-injection rule).

use std::borrow::Cow;

/// A text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading
/// `'`, so Excel, LibreOffice and Google Sheets show it as text instead of evaluating it. Call it
/// on text cells only: numbers (`-3.5`) are written as they are and stay numbers.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => Cow::Owned(format!("'{s}")),
        _ => Cow::Borrowed(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_starts_are_quoted_plain_text_is_not() {
        assert_eq!(
            csv_cell("=HYPERLINK(\"http://x\")"),
            "'=HYPERLINK(\"http://x\")"
        );
        for s in ["+1", "-cmd", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(csv_cell(s), format!("'{s}"));
        }
        assert!(matches!(csv_cell("candle"), Cow::Borrowed("candle")));
        assert_eq!(csv_cell(""), "");
    }
}
