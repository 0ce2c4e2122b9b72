//! JSON for a `<script type="application/json">` block, escaped so no string can end the script.

use serde::Serialize;

/// Serializes `value` and escapes `<`, `>`, `&` and the JavaScript line separators as `\uXXXX`.
///
/// JSON allows these escapes anywhere a string can hold the character, and outside strings they
/// never occur, so the result still parses to the same value while `</script>` or `<!--` cannot
/// appear in the page source.
pub fn script_json<T: Serialize>(value: &T) -> anyhow::Result<String> {
    let raw = serde_json::to_string(value)?;
    let mut out = String::with_capacity(raw.len() + raw.len() / 16);
    for c in raw.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_cannot_break_out_and_the_value_survives() {
        let evil = "</script><img src=x onerror=alert(1)><!-- & \u{2028}";
        let s = script_json(&serde_json::json!({ "k": evil })).unwrap();
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["k"], evil);
    }
}
