//! What the kernel charts read from a row: the swept parameters, the block, the P50 time, the
//! filter coordinates and the hover.

use crate::artifact::Param;
use crate::site::chart::Dims;
use crate::site::fmt;
use crate::site::names;
use crate::site::points::Point;
use std::collections::{BTreeMap, BTreeSet};

/// The swept parameters of a row: every param but `block`, numbers first.
pub fn sweep(p: &Point) -> Vec<(String, f64)> {
    p.row
        .params
        .iter()
        .filter(|(k, _)| k.as_str() != "block")
        .filter_map(|(k, v)| match v {
            Param::Int(i) => Some((k.clone(), *i as f64)),
            Param::Float(f) => Some((k.clone(), *f)),
            _ => None,
        })
        .collect()
}

pub fn block(p: &Point) -> String {
    names::param_str(p.row, &["block"]).unwrap_or_else(|| "—".into())
}

/// "M=512 N=1024 K=1024" without the named parameters.
pub fn pset_text(p: &Point, without: &[&str]) -> String {
    sweep(p)
        .iter()
        .filter(|(k, _)| !without.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={}", fmt::num(*v).replace(',', "")))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn dims(p: &Point) -> Dims {
    let mut d = p.dims();
    d.insert("block".into(), block(p));
    d.insert("pset".into(), pset_text(p, &[]));
    d
}

pub fn p50(p: &Point) -> Option<f64> {
    names::stat(p.row, &["time_us"]).map(|(_, s)| s.p50)
}

pub fn hover(p: &Point) -> String {
    let s = names::stat(p.row, &["time_us"]).map(|(_, s)| s);
    let mut h = format!("{} block {}\n{}", p.imp(), block(p), pset_text(p, &[]));
    if let Some(s) = s {
        h += &format!(
            "\nP50 {} µs (P5 {}, P95 {}, n={})",
            fmt::num(s.p50),
            fmt::num(s.p5),
            fmt::num(s.p95),
            s.n
        );
    }
    if let Some(t) = names::metric(p.row, &["tflops"]) {
        h += &format!("\n{} TFLOP/s", fmt::num(t));
    }
    h + &format!("\n{}", p.gpu())
}

/// The two parameters with the most values (ties: M before N before others by name).
pub fn axes(points: &[Point]) -> Vec<String> {
    let mut vals: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for p in points {
        for (k, v) in sweep(p) {
            vals.entry(k).or_default().insert(v.to_bits());
        }
    }
    let pref = |k: &str| match k {
        "M" => 0,
        "N" => 1,
        _ => 2,
    };
    let mut v: Vec<(String, usize)> = vals.into_iter().map(|(k, s)| (k, s.len())).collect();
    v.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(pref(&a.0).cmp(&pref(&b.0)))
            .then(a.0.cmp(&b.0))
    });
    v.into_iter()
        .filter(|(_, n)| *n >= 2)
        .map(|(k, _)| k)
        .collect()
}

pub fn param_of(p: &Point, k: &str) -> Option<f64> {
    sweep(p).into_iter().find(|(n, _)| n == k).map(|(_, v)| v)
}

pub fn num_label(v: f64) -> String {
    fmt::num(v).replace(',', "")
}
