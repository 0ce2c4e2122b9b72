//! JSON syntax errors in words a user can act on: where, and whether it is a NaN or Infinity
//! (which JSON does not have) rather than a truncated or hand-edited file.

/// The non-finite number token at the error's position (`NaN`, `-Infinity`, `inf`, ...), if
/// that is what stopped the parser.
pub fn non_finite_token(text: &str, e: &serde_json::Error) -> Option<String> {
    let line = text.lines().nth(e.line().checked_sub(1)?)?.as_bytes();
    let at = e.column().checked_sub(1)?.min(line.len());
    let is_tok = |b: u8| b.is_ascii_alphabetic() || b == b'-' || b == b'+';
    let mut start = at;
    while start > 0 && is_tok(line[start - 1]) && at - start < 12 {
        start -= 1;
    }
    let mut end = at;
    while end < line.len() && is_tok(line[end]) && end - start < 16 {
        end += 1;
    }
    let token = String::from_utf8_lossy(&line[start..end]).to_string();
    let word = token.trim_start_matches(['-', '+']).to_ascii_lowercase();
    matches!(word.as_str(), "nan" | "infinity" | "inf").then_some(token)
}

/// A JSON syntax error as one message: line and column, and for a NaN or Infinity, that JSON
/// does not allow them.
pub fn describe(text: &str, e: &serde_json::Error) -> String {
    match non_finite_token(text, e) {
        Some(tok) => format!(
            "{tok} at line {}, column {} is not allowed: JSON has no NaN or Infinity, and every \
             number in an artifact must be finite (a producer that measured a NaN error writes \
             1.7976931348623157e308 and marks the check failed; see docs/artifacts.md)",
            e.line(),
            e.column()
        ),
        None => format!(
            "JSON syntax error at line {}, column {}: {e} (truncated or hand-edited file?)",
            e.line(),
            e.column()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(t: &str) -> String {
        describe(
            t,
            &serde_json::from_str::<serde_json::Value>(t).unwrap_err(),
        )
    }

    #[test]
    fn nan_and_infinity_are_named_with_their_position() {
        let m = msg("{\"a\": NaN}");
        assert!(
            m.starts_with("NaN at line 1, column 7 is not allowed"),
            "{m}"
        );
        let m = msg("{\"a\":\n  -Infinity}");
        assert!(
            m.starts_with("-Infinity at line 2, column 4 is not allowed"),
            "{m}"
        );
        assert!(msg("{\"a\": [1, nan]}").starts_with("nan at line 1"));
        assert!(msg("{\"a\": inf}").starts_with("inf at line 1"));
        let m = msg("{\"a\": [1, 2");
        assert!(
            m.starts_with("JSON syntax error at line 1") && m.contains("truncated"),
            "{m}"
        );
        assert!(msg("{\"a\": nul}").starts_with("JSON syntax error"));
    }
}
