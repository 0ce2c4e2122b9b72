//! Tests of point identity: problem against settings, the committed artifacts under the rule,
//! and `compare` pairing rows that differ only in settings.

use opbench::artifact::{Artifact, Param};
use opbench::compare::{compare, Change, Options};
use opbench::history::HistoryRun;
use opbench::identity::*;
use std::path::Path;

fn params(kv: &[(&str, Param)]) -> Params {
    kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn llm(batch: i64, extra: &[(&str, Param)]) -> Params {
    let mut p = params(&[
        ("model", "tinyllama-1.1b".into()),
        ("dtype", "f16".into()),
        ("batch", Param::Int(batch)),
        ("prompt_len", Param::Int(128)),
        ("new_tokens", Param::Int(128)),
    ]);
    p.extend(params(extra));
    p
}

#[test]
fn settings_are_not_identity_and_problem_parameters_are() {
    let plain = Identity::of("llm", "generate", "candle", &llm(1, &[]));
    let tracked = Identity::of(
        "llm",
        "generate",
        "candle",
        &llm(
            1,
            &[
                ("event_tracking", "off".into()),
                ("mem_sampled", Param::Bool(true)),
            ],
        ),
    );
    assert_eq!(plain, tracked);
    assert_ne!(
        plain,
        Identity::of("llm", "generate", "candle", &llm(4, &[]))
    );
    assert_ne!(
        plain,
        Identity::of("llm", "generate", "transformers-eager", &llm(1, &[]))
    );
    // One problem, two implementations: peers.
    assert_eq!(
        plain.problem(),
        Identity::of("llm", "generate", "transformers-eager", &llm(1, &[])).problem()
    );
    // A launch configuration is a setting of LayerNorm, the block shape a point of the sweep.
    let ln = |v: &str| params(&[("rows", Param::Int(4096)), ("variant", v.into())]);
    assert_eq!(
        Identity::of("layernorm", "layernorm_forward", "opbench", &ln("a")),
        Identity::of("layernorm", "layernorm_forward", "opbench", &ln("b"))
    );
    let k = |b: &str| params(&[("M", Param::Int(512)), ("block", b.into())]);
    assert_ne!(
        Identity::of("kernels", "user_kernel", "naive", &k("16x16")),
        Identity::of("kernels", "user_kernel", "naive", &k("32x8"))
    );
    // An undeclared parameter keeps points apart; a parameter of another kind's settings too.
    let u = |v: i64| params(&[("new_param", Param::Int(v)), ("variant", Param::Int(v))]);
    assert_ne!(
        Identity::of("softmax", "b", "i", &u(1)),
        Identity::of("softmax", "b", "i", &u(2))
    );
}

#[test]
fn settings_differences_read_base_to_head() {
    let base = llm(1, &[("event_tracking", "off".into())]);
    let head = llm(
        1,
        &[
            ("event_tracking", "off".into()),
            ("mem_sampled", Param::Bool(true)),
        ],
    );
    assert_eq!(
        settings_diff("llm", &base, &head),
        ["mem_sampled: - -> true"]
    );
    assert!(settings_diff("llm", &head, &head).is_empty());
    assert_eq!(
        settings_text("llm", &head),
        "event_tracking=off, mem_sampled=true"
    );
}

#[test]
fn rows_of_one_identity_pair_by_their_settings() {
    let on = llm(1, &[("event_tracking", "on".into())]);
    let off = llm(1, &[("event_tracking", "off".into())]);
    let off_sampled = llm(
        1,
        &[
            ("event_tracking", "off".into()),
            ("mem_sampled", Param::Bool(true)),
        ],
    );
    // Exact settings first, whatever the order.
    assert_eq!(
        pair_rows("llm", &[&on, &off], &[&off, &on]),
        [(0, 1), (1, 0)]
    );
    // Then most settings in common: off pairs with off (mem_sampled added), on is left over.
    assert_eq!(pair_rows("llm", &[&off, &on], &[&off_sampled]), [(0, 0)]);
}

/// Every artifact committed under artifacts/ (not the history's compact files).
fn committed_artifacts() -> Vec<(String, Artifact)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    let (loaded, warnings) = opbench::artifact::load_dir(&root, false).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(loaded.len() >= 8, "{} artifacts", loaded.len());
    loaded.into_iter().map(|l| (l.file, l.artifact)).collect()
}

#[test]
fn committed_artifacts_declare_every_parameter_and_keep_their_rows_apart() {
    for (file, a) in committed_artifacts() {
        let mut seen = std::collections::BTreeSet::new();
        for r in &a.results {
            for k in r.params.keys() {
                assert!(
                    is_declared(&a.kind, k),
                    "{file}: {} param `{k}` is neither problem nor setting in DECLARED",
                    a.kind
                );
            }
            // Rows of one identity in one run differ in their settings.
            let id = Identity::of(&a.kind, &r.benchmark, &r.implementation, &r.params);
            assert!(
                seen.insert((id.clone(), settings_text(&a.kind, &r.params))),
                "{file}: two rows of {id:?} with the same settings"
            );
        }
    }
}

#[test]
fn committed_history_files_load_under_the_rule() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts/history");
    let h = opbench::history::History::load(&dir, false).unwrap();
    assert!(h.runs.len() >= 10, "{} runs", h.runs.len());
    let series = h.series(&Options::default());
    // LayerNorm's launch configuration changed between those runs; its lines go on.
    let longest = series
        .iter()
        .filter(|s| s.point.kind == "layernorm")
        .map(|s| s.points.len())
        .max()
        .unwrap();
    assert!(longest >= 4, "longest LayerNorm line has {longest} runs");
}

/// A committed history record (written once, never modified), as a run.
fn recorded(name: &str) -> HistoryRun {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("artifacts/history/llm")
        .join(name);
    let record = opbench::history::read_history_file(&p).unwrap();
    HistoryRun::new(name.to_string(), record).unwrap()
}

#[test]
fn llm_rows_differing_only_in_settings_pair_with_a_verdict() {
    // The recorded H200 run of eed9d5c has no mem_sampled / harness params; the H100 run of
    // 7964199, a later commit, has them on every generate row.
    let base = recorded("20261122T023534Z-eed9d5c80bae-nvidia-h200-8e373f33.json.gz");
    let head = recorded("20261122T034918Z-7964199debeb-nvidia-h100-80gb-hbm3-0ff5934b.json.gz");
    let r = compare("h200", &[base], "h100", &[head], &Options::default());
    let tiny: Vec<_> = r
        .lines
        .iter()
        .filter(|l| l.point.params.contains("tinyllama") && l.point.benchmark == "generate")
        .collect();
    assert!(!tiny.is_empty());
    for l in &tiny {
        assert!(
            !matches!(l.change, Change::Added | Change::Removed),
            "{l:?}"
        );
    }
    // Each generate point of both sides is judged, and says which settings differ.
    let judged: Vec<_> = tiny
        .iter()
        .filter(|l| matches!(l.change, Change::Compared(_)))
        .collect();
    assert_eq!(
        judged.len(),
        6 * 4,
        "3 batches x 2 implementations x 4 quantities"
    );
    assert!(judged
        .iter()
        .all(|l| l.settings.iter().any(|s| s == "mem_sampled: - -> true")));
    // The H200 run also timed batch 1 with event tracking on: an extra measurement, not a
    // point removed.
    let extra: Vec<_> = tiny
        .iter()
        .filter(|l| matches!(l.change, Change::NotComparable { .. }))
        .collect();
    assert_eq!(extra.len(), 4);
    assert_eq!(
        extra[0]
            .variant
            .as_deref()
            .map(|v| v.contains("event_tracking=on")),
        Some(true)
    );
    let text = opbench::compare::render::text(&r);
    assert!(text.contains("settings that differ"), "{text}");
    assert!(text.contains("mem_sampled: - -> true"));
}
