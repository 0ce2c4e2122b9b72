//! The one check on a web address given on the command line: http(s) only, so a link built from
//! it cannot run script (`javascript:`, `data:`) or leave the web (`file:`).

/// A clap value parser for an http(s) address with a host and no space, quote or angle
/// bracket; a trailing `/` is dropped so paths can be appended.
pub fn http_url(s: &str) -> Result<String, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let rest = ["https://", "http://"]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .ok_or_else(|| {
            format!(
                "{s:?} is not an http(s) address: give one such as https://github.com/OWNER/REPO"
            )
        })?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() {
        return Err(format!(
            "{s:?} has no host: give one such as https://github.com/OWNER/REPO"
        ));
    }
    if let Some(c) = t.chars().find(|c| {
        c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '<' | '>' | '`' | '\\')
    }) {
        return Err(format!(
            "{s:?} holds {c:?}, which no address needs: give a plain http(s) address"
        ));
    }
    Ok(t.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_addresses_pass() {
        assert_eq!(
            http_url("https://github.com/o/r/").unwrap(),
            "https://github.com/o/r"
        );
        assert!(http_url("HTTP://example.org").is_ok());
        for bad in [
            "javascript:alert(1)",
            "JavaScript://%0aalert(1)",
            "data:text/html,<script>",
            "file:///etc/passwd",
            "https://",
            "https://x.org/\"onmouseover=\"alert(1)",
            "https://x.org/<script>",
            "//x.org",
            "",
        ] {
            assert!(http_url(bad).is_err(), "{bad}");
        }
    }
}
