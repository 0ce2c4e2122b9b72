//! Text safe inside a GitHub Markdown table cell or list item (the `compare` PR comment).
//!
//! GitHub renders inline HTML and notifies @mentioned users, so a name such as
//! `<details><img src=x>` or `@org/team` would otherwise change the comment or ping people.

/// Escapes `s` for one line of GitHub-flavoured Markdown: HTML special characters become
/// entities, line breaks become spaces, `|` and the characters of code, emphasis, links and
/// strike-through are backslash-escaped, and an `@` before a name is followed by a zero-width
/// joiner so it does not mention anyone. The text reads the same.
pub fn markdown_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\r' | '\n' | '\u{2028}' | '\u{2029}' => out.push(' '),
            '|' | '\\' | '`' | '*' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '@' if chars
                .peek()
                .is_some_and(|n| n.is_alphanumeric() || *n == '-' || *n == '_') =>
            {
                out.push_str("@\u{200d}")
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_newlines_pipes_and_mentions_are_neutralised() {
        let s = markdown_text("<details><img src=x onerror=alert(1)>|a\nb @octocat & `x`");
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('\n'),
            "{s}"
        );
        assert!(
            s.contains("&lt;details&gt;&lt;img src=x onerror=alert(1)&gt;"),
            "{s}"
        );
        assert!(s.contains("\\|a b"), "{s}");
        assert!(s.contains("@\u{200d}octocat"), "{s}");
        assert!(s.contains("&amp;") && s.contains("\\`x\\`"), "{s}");
        assert_eq!(markdown_text("layernorm_forward"), "layernorm_forward");
        assert_eq!(markdown_text("run @ abc"), "run @ abc");
        assert_eq!(markdown_text("[x](http://e)"), "\\[x\\](http://e)");
        assert_eq!(
            markdown_text("rows=4096, cols=1024"),
            "rows=4096, cols=1024"
        );
    }
}
