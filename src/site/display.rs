//! The copies of the loaded runs the pages are built from: every name longer than
//! `text::DISPLAY_MAX_CHARS` elided (summary.json and summary.csv keep the originals).
//!
//! Validation already rejects absurd lengths; this keeps a merely long name (up to
//! `artifact::limits::NAME_MAX_CHARS`) from widening every table, legend and filter it enters.

use crate::artifact::Loaded;
use crate::artifact::{Param, ResultRow};
use crate::env::Env;
use crate::history::{HistoryPoint, HistoryRecord};
use crate::text::{elide, DISPLAY_MAX_CHARS};
use std::borrow::Cow;
use std::collections::BTreeMap;

fn long(s: &str) -> bool {
    s.len() > DISPLAY_MAX_CHARS && s.chars().count() > DISPLAY_MAX_CHARS
}

fn cut(s: &mut String) {
    if long(s) {
        *s = elide(s).into_owned();
    }
}

fn params_long(p: &BTreeMap<String, Param>) -> bool {
    p.iter()
        .any(|(k, v)| long(k) || matches!(v, Param::Text(t) if long(t)))
}

fn cut_params(p: &mut BTreeMap<String, Param>) {
    if params_long(p) {
        *p = std::mem::take(p)
            .into_iter()
            .map(|(mut k, mut v)| {
                cut(&mut k);
                if let Param::Text(t) = &mut v {
                    cut(t);
                }
                (k, v)
            })
            .collect();
    }
}

fn env_long(e: &Env) -> bool {
    long(&e.device)
        || long(&e.host.cpu_model)
        || long(&e.host.os)
        || e.gpu.as_ref().is_some_and(|g| long(&g.name))
}

fn cut_env(e: &mut Env) {
    cut(&mut e.device);
    cut(&mut e.host.cpu_model);
    cut(&mut e.host.os);
    if let Some(g) = e.gpu.as_mut() {
        cut(&mut g.name);
    }
}

fn row_long(r: &ResultRow) -> bool {
    long(&r.benchmark) || long(&r.implementation) || params_long(&r.params)
}

fn cut_row(r: &mut ResultRow) {
    cut(&mut r.benchmark);
    cut(&mut r.implementation);
    cut_params(&mut r.params);
}

/// `loaded` as the pages show it: borrowed as it is unless some name needs eliding.
pub fn artifacts(loaded: &[Loaded]) -> Cow<'_, [Loaded]> {
    let any = loaded.iter().any(|l| {
        let a = &l.artifact;
        long(&a.kind) || long(&l.file) || env_long(&a.env) || a.results.iter().any(row_long)
    });
    if !any {
        return Cow::Borrowed(loaded);
    }
    let mut v = loaded.to_vec();
    for l in &mut v {
        cut(&mut l.file);
        cut(&mut l.artifact.kind);
        cut_env(&mut l.artifact.env);
        l.artifact.results.iter_mut().for_each(cut_row);
    }
    Cow::Owned(v)
}

fn point_long(p: &HistoryPoint) -> bool {
    long(&p.benchmark) || long(&p.implementation) || params_long(&p.params)
}

/// A history record as the history page shows it (names elided in place).
pub fn history_record(r: &mut HistoryRecord) {
    if long(&r.kind) || env_long(&r.env) || r.points.iter().any(point_long) {
        cut(&mut r.kind);
        cut_env(&mut r.env);
        for p in &mut r.points {
            cut(&mut p.benchmark);
            cut(&mut p.implementation);
            cut_params(&mut p.params);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_names_are_cut() {
        let mut p = BTreeMap::new();
        p.insert("dtype".to_string(), Param::Text("f16".into()));
        p.insert("k".repeat(200), Param::Text("v".repeat(300)));
        p.insert("rows".to_string(), Param::Int(4));
        cut_params(&mut p);
        assert_eq!(p["dtype"], Param::Text("f16".into()));
        assert_eq!(p["rows"], Param::Int(4));
        let (k, v) = p.iter().find(|(k, _)| k.starts_with('k')).unwrap();
        assert_eq!(k.chars().count(), DISPLAY_MAX_CHARS);
        assert!(matches!(v, Param::Text(t) if t.chars().count() == DISPLAY_MAX_CHARS));
    }
}
