//! The comparison report as a plain-text table (aligned columns) or a Markdown table.

use super::diff::Report;
use super::line::{Line, Side};
use crate::text::{markdown_text, one_line};
use std::fmt::Write;

/// A number with about 4 significant digits, no exponent for everyday magnitudes.
pub fn fmt_num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..=9).contains(&mag) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - mag).clamp(0, 7) as usize;
    format!("{x:.decimals$}")
}

fn side_cell(s: &Option<Side>) -> String {
    match s {
        Some(s) => format!(
            "{} [{}, {}]",
            fmt_num(s.p50),
            fmt_num(s.median_ci95[0]),
            fmt_num(s.median_ci95[1])
        ),
        None => "-".into(),
    }
}

fn ratio_cell(l: &Line) -> String {
    match l.ratio() {
        Some(r) => format!("{r:.3} ({:+.1}%)", (r - 1.0) * 100.0),
        None => "-".into(),
    }
}

fn verdict_cell(l: &Line) -> String {
    match &l.change {
        super::line::Change::NotComparable { reason, .. } => format!("N/A ({reason})"),
        _ => match &l.control {
            Some(c) => format!("{} ({c})", l.label()),
            None => l.label().to_string(),
        },
    }
}

/// The rule that decided a judged line, by name (the report's notes and JSON give its numbers).
fn rule_cell(l: &Line) -> String {
    l.rule
        .as_deref()
        .and_then(|r| r.split(':').next())
        .unwrap_or("-")
        .to_string()
}

/// The problem parameters, and the row's settings when the point has several rows on a side.
fn params_cell(l: &Line) -> String {
    match &l.variant {
        Some(v) if !v.is_empty() => format!("{} [{v}]", l.point.params),
        _ => l.point.params.clone(),
    }
}

const HEADERS: [&str; 9] = [
    "gpu",
    "kind",
    "benchmark",
    "implementation",
    "params",
    "stat",
    "base p50 [95% CI]",
    "head p50 [95% CI]",
    "head/base",
];

/// Table cells: the GPU column only when the lines span more than one GPU pairing.
pub(super) fn cells(r: &Report) -> (Vec<String>, Vec<Vec<String>>) {
    let multi_gpu = r
        .lines
        .iter()
        .map(|l| &l.gpu)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let with_settings = r.lines.iter().any(|l| !l.settings.is_empty());
    let mut headers: Vec<String> = HEADERS.iter().map(|s| s.to_string()).collect();
    headers.push("verdict".into());
    headers.push("rule".into());
    if with_settings {
        headers.push("settings that differ".into());
    }
    if !multi_gpu {
        headers.remove(0);
    }
    let rows = r
        .lines
        .iter()
        .map(|l| {
            let mut c = vec![
                one_line(&l.gpu),
                one_line(&l.point.kind),
                one_line(&l.point.benchmark),
                one_line(&l.point.implementation),
                one_line(&params_cell(l)),
                one_line(&l.stat),
                side_cell(&l.base),
                side_cell(&l.head),
                ratio_cell(l),
                verdict_cell(l),
                rule_cell(l),
            ];
            if with_settings {
                c.push(l.settings.join("; "));
            }
            if !multi_gpu {
                c.remove(0);
            }
            c
        })
        .collect();
    (headers, rows)
}

pub(super) fn rule_text(r: &Report) -> String {
    format!(
        "verdict rule: FASTER/SLOWER when the 95% CIs of the two medians do not overlap and the \
         medians differ by at least {:.1}%; SAME when they differ by less, or when no change of \
         {:.1}% fits both intervals; otherwise UNCERTAIN. Lower is better for times. Rules before \
         it (the rule column): clocks (a point not measured at full clocks, or by two methods, \
         is never FASTER or SLOWER), library (library code moves only with the machine: never \
         a regression), drift (our code judged against the shift and spread of the library \
         lines and ceilings of the same runs); the column also names host, spread, modes, \
         processes (on one board, a FASTER/SLOWER of ours re-judged against the spread between \
         processes of the same code; UNCERTAIN while that spread is unknown: confirm with \
         scripts/ci/confirm.sh) and boards (a point of ours within what the same launch \
         measured on other boards of the history) where they decided (docs/history.md).",
        r.min_effect * 100.0,
        r.min_effect * 100.0
    )
}

/// The GPUs of every run used, on either side.
pub(super) fn gpus_used(r: &Report) -> Vec<String> {
    let g: std::collections::BTreeSet<String> = r
        .base_runs
        .iter()
        .chain(&r.head_runs)
        .map(|u| u.gpu.clone())
        .collect();
    g.into_iter().collect()
}

pub(super) fn runs_text(runs: &[super::diff::RunUsed]) -> String {
    if runs.is_empty() {
        return "no runs".into();
    }
    runs.iter()
        .map(|u| {
            let commit = u
                .commit
                .as_deref()
                .map(|c| c.chars().take(12).collect::<String>())
                .unwrap_or_else(|| "no commit".into());
            let board = u
                .board
                .as_deref()
                .map(|b| format!(", board {}", one_line(b)))
                .unwrap_or_default();
            format!(
                "{} {} @ {} ({}{board}){}",
                one_line(&u.kind),
                one_line(&u.run_id),
                one_line(&commit),
                one_line(&u.gpu),
                if u.synthetic { " SYNTHETIC" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Plain text: a header, an aligned table, notes.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "base: {} = {}",
        one_line(&r.base_label),
        runs_text(&r.base_runs)
    );
    let _ = writeln!(
        out,
        "head: {} = {}",
        one_line(&r.head_label),
        runs_text(&r.head_runs)
    );
    if let [gpu] = gpus_used(r).as_slice() {
        let _ = writeln!(out, "gpu:  {}", one_line(gpu));
    }
    let _ = writeln!(out, "{}", rule_text(r));
    let _ = writeln!(out, "result: {}", r.tally());
    let (headers, rows) = cells(r);
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", line(&headers));
    let _ = writeln!(
        out,
        "{}",
        width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  ")
    );
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    if r.hidden_same > 0 {
        let _ = writeln!(out, "({} SAME lines not shown)", r.hidden_same);
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {}", one_line_note(n));
    }
    out
}

/// A note for one line: control characters replaced, length capped well above a name's.
fn one_line_note(n: &str) -> String {
    crate::text::elide_to(n, 4 * crate::text::DISPLAY_MAX_CHARS)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// GitHub-flavoured Markdown: a short header, the table, notes. Every piece of text from the
/// runs goes through [`markdown_text`]: it is posted as a pull-request comment, where HTML,
/// line breaks and @mentions in a name would otherwise take effect.
pub fn markdown(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### opbench compare: {}", r.tally());
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "- base {}: {}",
        markdown_text(&one_line(&r.base_label)),
        markdown_text(&runs_text(&r.base_runs))
    );
    let _ = writeln!(
        out,
        "- head {}: {}",
        markdown_text(&one_line(&r.head_label)),
        markdown_text(&runs_text(&r.head_runs))
    );
    if let [gpu] = gpus_used(r).as_slice() {
        let _ = writeln!(out, "- GPU: {}", markdown_text(&one_line(gpu)));
    }
    let _ = writeln!(out, "- {}", rule_text(r));
    let _ = writeln!(out);
    let (headers, rows) = cells(r);
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let _ = writeln!(
        out,
        "|{}|",
        headers.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for row in rows {
        let mut row: Vec<String> = row.iter().map(|c| markdown_text(c)).collect();
        let at = headers.iter().position(|h| h == "verdict").unwrap();
        let verdict = &mut row[at];
        if verdict == "SLOWER" || verdict == "FAILED" {
            *verdict = format!("**{verdict}**");
        }
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    if r.hidden_same > 0 {
        let _ = writeln!(out);
        let _ = writeln!(out, "{} points are SAME and not listed.", r.hidden_same);
    }
    if !r.notes.is_empty() {
        let _ = writeln!(out);
        for n in &r.notes {
            let _ = writeln!(out, "- note: {}", markdown_text(&one_line_note(n)));
        }
    }
    out
}
