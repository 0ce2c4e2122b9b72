//! The nccl-tests table of each collective and world size: size, count, type, time, algbw,
//! busbw and #wrong per point, the columns `all_reduce_perf` prints, for readers who compare
//! with its output.
use crate::artifact::Param;
use crate::site::chart::{TableRow, TableView};
use crate::site::fmt;
use crate::site::names;
use crate::site::pages::common::{slug, NamedTable};
use crate::site::points::Point;

/// A point's collective, when it has one.
fn collective<'a>(p: &Point<'a>) -> Option<&'a str> {
    match p.row.params.get("collective")? {
        Param::Text(t) => Some(t.as_str()),
        _ => None,
    }
}

/// "#wrong" from the correctness check: 0 where it passed, its non-finite outputs and
/// relative error where it failed (the check compares norms, it does not count elements).
fn wrong(p: &Point) -> String {
    match &p.row.correctness {
        None => "not checked".into(),
        Some(c) if c.passed => "0".into(),
        Some(c) if c.non_finite > 0 => format!("{} non-finite", c.non_finite),
        Some(c) => format!(
            "rel err {} > {}",
            fmt::num(c.rel_err),
            fmt::num(c.tolerance)
        ),
    }
}

/// One row: a point of the collective at one world size, timed or not.
fn row(p: &Point) -> Option<(Vec<f64>, TableRow)> {
    let r = p.row;
    let bytes = names::param_f64(r, &["bytes"])?;
    let dtype = p.dtype().unwrap_or_default();
    let count =
        names::param_f64(r, &["count"]).or_else(|| Some(bytes / names::dtype_bytes(&dtype)?));
    let time_us = p
        .ok()
        .then(|| r.stats.get("time_us").map(|s| s.p50))
        .flatten();
    let algbw = names::metric(r, &["algbw_gbps"])
        .or_else(|| Some(bytes / (time_us? * 1e3)))
        .filter(|_| time_us.is_some());
    let busbw = names::metric(r, &["busbw_gbps"]).filter(|_| time_us.is_some());
    let opt = |v: Option<f64>| v.map_or("—".to_string(), fmt::num);
    let mut f = p.dims();
    f.retain(|k, _| ["gpu", "dtype", "impl", "ranks"].contains(&k.as_str()));
    let cells = vec![
        p.imp().to_string(),
        fmt::num(bytes),
        opt(count),
        dtype.clone(),
        opt(time_us),
        opt(algbw),
        opt(busbw),
        wrong(p),
    ];
    let raw = vec![None, Some(bytes), count, None, time_us, algbw, busbw, None];
    let key = vec![names::dtype_bytes(&dtype).unwrap_or(0.0), bytes];
    Some((key, TableRow { cells, f, raw }))
}

/// One table per collective (in `order`) and world size (smallest first), rows by
/// implementation, dtype and size.
pub fn tables(points: &[Point], order: &[&str]) -> Vec<NamedTable> {
    let mut groups: Vec<(usize, u64, Vec<&Point>)> = Vec::new();
    for p in points {
        let (Some(c), Some(n)) = (collective(p), names::param_f64(p.row, &["world_size"])) else {
            continue;
        };
        let i = order.iter().position(|o| *o == c).unwrap_or(order.len());
        let n = n as u64;
        match groups.iter_mut().find(|(gi, gn, g)| {
            *gi == i && *gn == n && g.first().and_then(|q| collective(q)) == Some(c)
        }) {
            Some((_, _, g)) => g.push(p),
            None => groups.push((i, n, vec![p])),
        }
    }
    groups.sort_by_key(|(i, n, _)| (*i, *n));
    groups
        .into_iter()
        .filter_map(|(_, n, g)| {
            let c = collective(g.first()?)?;
            let mut rows: Vec<(String, Vec<f64>, TableRow)> = g
                .iter()
                .filter_map(|p| row(p).map(|(k, r)| (p.imp().to_string(), k, r)))
                .collect();
            rows.sort_by(|a, b| {
                a.0.cmp(&b.0).then_with(|| {
                    a.1.iter()
                        .zip(&b.1)
                        .map(|(x, y)| x.total_cmp(y))
                        .find(|o| o.is_ne())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
            });
            Some(NamedTable {
                id: format!("comm-nccl-{}-{n}-gpus", slug(c)),
                title: format!("{c}, {n} GPUs: nccl-tests table"),
                caption: format!(
                    "The columns nccl-tests prints, one row per implementation, type and \
                     message size of {c} across {n} GPUs: time is the P50 per collective \
                     (stats.time_us), algbw the bytes over that time, busbw algbw times \
                     nccl-tests' factor for {c} (metrics.busbw_gbps). #wrong: 0 where the \
                     result matched the float64 host reference within its tolerance, else \
                     what failed (a failed point is not timed)."
                ),
                table: TableView {
                    columns: [
                        "implementation",
                        "size (B)",
                        "count (elements)",
                        "type",
                        "time (µs)",
                        "algbw (GB/s)",
                        "busbw (GB/s)",
                        "#wrong",
                    ]
                    .map(String::from)
                    .to_vec(),
                    rows: rows.into_iter().map(|(_, _, r)| r).collect(),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::ResultRow;

    #[test]
    fn one_table_per_collective_and_world_size_with_the_nccl_tests_columns() {
        let row = |c: &str, n: u64, bytes: u64| {
            ResultRow::new("comm", "nccl")
                .param("collective", c)
                .param("world_size", n as f64)
                .param("bytes", bytes as f64)
                .param("dtype", "f32")
        };
        let loaded = crate::artifact::fixture::loaded(
            "comm",
            "a",
            "2026-01-01T00:00:00Z",
            vec![
                row("all_gather", 2, 1024),
                row("all_reduce", 4, 8),
                row("all_reduce", 2, 16),
                row("all_reduce", 2, 8),
            ],
        );
        let points = Point::all_of(&loaded);
        let t = tables(&points, &["all_reduce", "all_gather"]);
        let ids: Vec<&str> = t.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "comm-nccl-all-reduce-2-gpus",
                "comm-nccl-all-reduce-4-gpus",
                "comm-nccl-all-gather-2-gpus"
            ]
        );
        assert_eq!(t[0].table.columns.len(), 8);
        // Sizes in order; count from bytes and type where the row has none.
        let sizes: Vec<&str> = t[0]
            .table
            .rows
            .iter()
            .map(|r| r.cells[1].as_str())
            .collect();
        assert_eq!(sizes, ["8", "16"]);
        assert_eq!(t[0].table.rows[0].cells[2], "2");
    }
}
