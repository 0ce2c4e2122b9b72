//! The comparison report as one self-contained HTML page (no script, no external file), so a
//! pull request's table can be published beside the dashboard and read in a browser.

use super::diff::Report;
use super::render::{cells, gpus_used, rule_text, runs_text};
use std::fmt::Write;

/// Text as HTML text or attribute value: every name in the report comes from artifacts.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.5 system-ui,sans-serif;color:#1f2937;margin:24px;}\
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums;}\
th{background:#f3f4f6;text-align:left;position:sticky;top:0;}\
th,td{padding:4px 10px;border-bottom:1px solid #e5e7eb;vertical-align:top;}\
td.SLOWER,td.FAILED{color:#b91c1c;font-weight:700;}td.FASTER{color:#15803d;font-weight:700;}\
.muted{color:#6b7280;}";

/// The page: title with the tally, base and head runs, the rule, the table, the notes.
pub fn html(r: &Report) -> String {
    let mut out = String::new();
    let title = format!("opbench compare: {}", r.tally());
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n<ul>\n",
        escape(&title),
        escape(&title)
    );
    let _ = writeln!(
        out,
        "<li>base <code>{}</code>: {}</li>",
        escape(&r.base_label),
        escape(&runs_text(&r.base_runs))
    );
    let _ = writeln!(
        out,
        "<li>head <code>{}</code>: {}</li>",
        escape(&r.head_label),
        escape(&runs_text(&r.head_runs))
    );
    if let [gpu] = gpus_used(r).as_slice() {
        let _ = writeln!(out, "<li>GPU: {}</li>", escape(gpu));
    }
    let _ = writeln!(
        out,
        "<li class=\"muted\">{}</li>\n</ul>",
        escape(&rule_text(r))
    );
    let (headers, rows) = cells(r);
    let at = headers.iter().position(|h| h == "verdict");
    out.push_str("<table>\n<thead><tr>");
    for h in &headers {
        let _ = write!(out, "<th scope=\"col\">{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            if Some(i) == at {
                let _ = write!(out, "<td class=\"{}\">{}</td>", escape(c), escape(c));
            } else {
                let _ = write!(out, "<td>{}</td>", escape(c));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    if r.hidden_same > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} points are SAME and not listed.</p>",
            r.hidden_same
        );
    }
    for n in &r.notes {
        let _ = writeln!(out, "<p class=\"muted\">note: {}</p>", escape(n));
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_artifacts_stay_text() {
        assert_eq!(
            escape("</td><script>alert('x')</script>&"),
            "&lt;/td&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"
        );
        let r = Report {
            base_label: "<b>base</b>".into(),
            head_label: "head".into(),
            min_effect: 0.03,
            base_runs: vec![],
            head_runs: vec![],
            lines: vec![],
            notes: vec!["<img src=x onerror=alert(1)>".into()],
            hidden_same: 0,
        };
        let page = html(&r);
        assert!(
            !page.contains("<b>base") && !page.contains("<img"),
            "{page}"
        );
        assert!(page.contains("&lt;b&gt;base&lt;/b&gt;"));
        assert!(page.starts_with("<!doctype html>") && page.ends_with("</html>\n"));
    }
}
