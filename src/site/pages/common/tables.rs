//! Tables every detail page may end with: failed and skipped points, and every other row.

use super::section::NamedTable;
use super::text::{correctness_text, metrics_text, params_text, stats_text, status_text};
use crate::site::chart::{TableRow, TableView};
use crate::site::points::Point;

/// Every failed or skipped point, with its notes; `None` when all points are ok.
pub fn not_ok_table(points: &[Point]) -> Option<NamedTable> {
    let rows: Vec<TableRow> = points
        .iter()
        .filter(|p| !p.ok())
        .map(|p| TableRow {
            cells: vec![
                p.row.benchmark.clone(),
                p.imp().to_string(),
                status_text(p.row.status).to_string(),
                params_text(p),
                correctness_text(p),
                p.row.notes.join("; "),
                p.gpu(),
            ],
            f: p.dims(),
            raw: Vec::new(),
        })
        .collect();
    (!rows.is_empty()).then(|| NamedTable {
        id: "not-ok".into(),
        title: "Failed and skipped points".into(),
        caption: "Points that were not timed: a failed correctness check is never timed, and \
                  a skipped point says why in its notes."
            .into(),
        table: TableView {
            columns: [
                "benchmark",
                "implementation",
                "status",
                "params",
                "correctness",
                "notes",
                "GPU",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        },
    })
}

/// Rows of other benchmarks a page has no chart for, as a generic table.
pub fn other_rows_table(id: &str, title: &str, points: &[Point]) -> Option<NamedTable> {
    if points.is_empty() {
        return None;
    }
    let rows = points
        .iter()
        .map(|p| TableRow {
            cells: vec![
                p.row.benchmark.clone(),
                p.imp().to_string(),
                status_text(p.row.status).to_string(),
                params_text(p),
                stats_text(p),
                metrics_text(p),
                correctness_text(p),
                p.gpu(),
            ],
            f: p.dims(),
            raw: Vec::new(),
        })
        .collect();
    Some(NamedTable {
        id: id.into(),
        title: title.into(),
        caption: "Every result of these benchmarks as recorded, one row per point.".into(),
        table: TableView {
            columns: [
                "benchmark",
                "implementation",
                "status",
                "params",
                "P50 (P5 – P95)",
                "metrics",
                "correctness",
                "GPU",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        },
    })
}
