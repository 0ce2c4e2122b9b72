//! Commit labels and, when the repository's address is known (`dashboard --repo-url`), links.

use serde::Serialize;

/// A commit as the page shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CommitLink {
    /// First 10 digits, or "unknown".
    pub short: String,
    pub full: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The page address of a commit: `<repo_url>/commit/<hash>` (GitHub, GitLab, Gitea, ...).
pub fn commit_url(repo_url: &str, hash: &str) -> String {
    format!("{}/commit/{hash}", repo_url.trim_end_matches('/'))
}

pub fn commit_link(hash: Option<&str>, repo_url: Option<&str>) -> CommitLink {
    match hash {
        None => CommitLink {
            short: "unknown".into(),
            full: String::new(),
            url: None,
        },
        Some(h) => CommitLink {
            short: h.chars().take(10).collect(),
            full: h.to_string(),
            // Only an http(s) address makes a link: another scheme could run script on click.
            url: repo_url
                .filter(|r| crate::text::url::http_url(r).is_ok())
                .filter(|_| h.chars().all(|c| c.is_ascii_hexdigit()))
                .map(|r| commit_url(r, h)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_address_makes_no_link() {
        let h = Some("4e04d54536be");
        assert_eq!(commit_link(h, Some("javascript:alert(1)")).url, None);
        assert_eq!(
            commit_link(h, Some("https://github.com/o/r"))
                .url
                .as_deref(),
            Some("https://github.com/o/r/commit/4e04d54536be")
        );
    }

    #[test]
    fn hex_commits_link_to_the_repository() {
        let h = "0123456789abcdef0123456789abcdef01234567";
        let l = commit_link(Some(h), Some("https://github.com/o/r/"));
        assert_eq!(l.short, "0123456789");
        assert_eq!(
            l.url.as_deref(),
            Some("https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567")
        );
        assert_eq!(commit_link(Some(h), None).url, None);
        // Not a hash: shown, never put into an address.
        assert_eq!(commit_link(Some("x\"><b>"), Some("https://h")).url, None);
        assert_eq!(commit_link(None, Some("https://h")).short, "unknown");
    }
}
