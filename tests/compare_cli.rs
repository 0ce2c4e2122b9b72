//! End-to-end: `history record` then `compare` on synthetic runs, through the real binaries.

use opbench::artifact::write_json_atomic;
use opbench::history::synthetic::{self, RunSpec};
use std::path::Path;
use std::process::{Command, Output};

const H100: &str = "NVIDIA H100 80GB HBM3";
const H200: &str = "NVIDIA H200";

fn bin(name: &str, args: &[&str], cwd: &Path) -> Output {
    let exe = match name {
        "compare" => env!("CARGO_BIN_EXE_compare"),
        _ => env!("CARGO_BIN_EXE_history"),
    };
    Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Writes a gemm run as a plain artifact and records it with the `history` binary.
fn record(dir: &Path, i: usize, gpu: &str, seed: u64, slow_first: bool) -> String {
    let mut spec = RunSpec::new(
        "gemm",
        &synthetic::commit(i),
        gpu,
        &synthetic::started(i),
        seed,
    );
    if slow_first {
        let first = synthetic::suite()
            .iter()
            .position(|p| p.kind == "gemm" && p.implementation == "opbench")
            .unwrap();
        spec.factors.insert(first, 1.10);
    }
    let a = synthetic::run(&spec);
    let p = dir.join(format!("runs/gemm-{i}-{seed}.json"));
    write_json_atomic(&p, &a).unwrap();
    let o = bin(
        "history",
        &["record", p.to_str().unwrap(), "--into", "artifacts"],
        dir,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.starts_with("recorded artifacts/history/gemm/"), "{out}");
    a.run.id
}

#[test]
fn record_then_compare_commits_gpus_and_run_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let id0 = record(d, 0, H100, 1, false);
    record(d, 1, H100, 2, false);
    let id2 = record(d, 2, H100, 3, true);
    record(d, 2, H200, 4, false);
    let c = |i: usize| synthetic::commit(i)[..10].to_string();

    // Noise only between commits 0 and 1: no regression, exit 0 even when asked to fail.
    let o = bin(
        "compare",
        &[
            "--base",
            &c(0),
            "--head",
            &c(1),
            "--gpu",
            "h100",
            "--fail-on-regression",
        ],
        d,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(!out.lines().any(|l| l.contains(" SLOWER ")), "{out}");
    assert!(out.contains(&format!("commit {}", c(0))));

    // Commit 2 slowed one point by 10%: the table says so; --fail-on-regression exits 1.
    let args = ["--base", &c(1), "--head", &c(2), "--gpu", "h100"];
    let o = bin("compare", &args, d);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert_eq!(
        out.lines().filter(|l| l.contains(" SLOWER ")).count(),
        1,
        "{out}"
    );
    let mut failing = args.to_vec();
    failing.push("--fail-on-regression");
    let o = bin("compare", &failing, d);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("1 regression"), "{err}");

    // Markdown, run ids (whole and random tail) and GPUs resolve against the history.
    let tail0 = id0.rsplit('-').next().unwrap();
    let o = bin(
        "compare",
        &["--base", tail0, "--head", &id2, "--format", "markdown"],
        d,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("### opbench compare: 1 SLOWER"), "{out}");
    let o = bin("compare", &["--base", "h100", "--head", "h200"], d);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("comparing across GPUs"), "{out}");

    // Files and folders work too; the history folder itself holds every run.
    let o = bin(
        "compare",
        &[
            "--base",
            "runs/gemm-0-1.json",
            "--head",
            "artifacts",
            "--format",
            "json",
        ],
        d,
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["lines"].as_array().unwrap().len() >= 48);

    // A spec that matches nothing names what is known.
    let o = bin("compare", &["--base", "a100", "--head", "h200"], d);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("--base a100")
            && err.contains("Known GPUs: NVIDIA H100 80GB HBM3, NVIDIA H200"),
        "{err}"
    );

    // One commit on both sides (a short and a long prefix): the same runs, refused.
    let long = synthetic::commit(1)[..12].to_string();
    let o = bin("compare", &["--base", &c(1)[..4], "--head", &long], d);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        err.contains("are the same 1 run(s)") && err.contains("two commits"),
        "{err}"
    );

    // A control or an ignored parameter that the runs do not hold is refused, with the names
    // they do hold.
    let o = bin(
        "compare",
        &["--base", &c(0), "--head", &c(1), "--control", "nosuchimpl"],
        d,
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--control \"nosuchimpl\"") && err.contains("cublas"),
        "{err}"
    );
    let o = bin(
        "compare",
        &[
            "--base",
            &c(0),
            "--head",
            &c(1),
            "--ignore-params",
            "m,nosuchparam",
        ],
        d,
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--ignore-params \"nosuchparam\"") && err.contains("dtype"),
        "{err}"
    );
    let o = bin(
        "compare",
        &["--base", &c(0), "--head", &c(1), "--control", "cublas"],
        d,
    );
    assert!(o.status.success(), "{}", text(&o).1);

    // A GPU name that matches several GPUs is refused, naming them and the way to pick one.
    let o = bin("compare", &["--base", "nvidia", "--head", "h200"], d);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        err.contains("--base nvidia")
            && err.contains("matches 2 GPUs")
            && err.contains("NVIDIA H100 80GB HBM3 (3 runs)")
            && err.contains("NVIDIA H200 (1 run)")
            && err.contains("--gpu"),
        "{err}"
    );
    // The whole name of one of them picks it.
    let o = bin("compare", &["--base", "nvidia h200", "--head", "h100"], d);
    assert!(o.status.success(), "{}", text(&o).1);

    // `history list` shows the four runs.
    let o = bin("history", &["list", "--artifacts", "artifacts"], d);
    let (out, _) = text(&o);
    assert!(out.contains("4 runs, 3 commits"), "{out}");
}

/// The recorded H200 LLM run of eed9d5c against the H100 run of a later commit, whose generate
/// rows carry settings the older ones lack (history records: written once, never changed):
/// every TinyLlama generate point is judged, the settings that differ are shown, and the HTML
/// page keeps artifact text as text.
#[test]
fn committed_llm_runs_pair_across_new_settings_in_every_format() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args = |format: &str| {
        bin(
            "compare",
            &[
                "--base",
                "artifacts/history/llm/20261122T023534Z-eed9d5c80bae-nvidia-h200-8e373f33.json.gz",
                "--head",
                "artifacts/history/llm/20261122T034918Z-7964199debeb-nvidia-h100-80gb-hbm3-0ff5934b.json.gz",
                "--format",
                format,
            ],
            root,
        )
    };
    let o = args("text");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    let tiny: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("tinyllama-1.1b") && l.contains("generate"))
        .collect();
    assert!(!tiny.is_empty(), "{out}");
    assert!(
        tiny.iter()
            .all(|l| !l.contains("ADDED") && !l.contains("REMOVED")),
        "{out}"
    );
    assert!(out.contains("settings that differ"), "{out}");
    assert!(out.contains("mem_sampled: - -> true"), "{out}");
    let (md, _) = text(&args("markdown"));
    assert!(md.contains("| settings that differ |"), "{md}");
    let o = args("html");
    let (page, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(page.contains("mem_sampled: - -&gt; true"), "{page}");
    assert!(!page.contains("<script"), "self-contained, no script");
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/artifacts")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn different_kinds_are_refused_and_a_lost_point_fails_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (ln, gemm) = (
        fixture("layernorm-fixture-gpu-a.json"),
        fixture("gemm-fixture.json"),
    );
    let o = bin(
        "compare",
        &["--base", &ln, "--head", &gemm, "--fail-on-regression"],
        d,
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.is_empty(), "no table: {out}");
    assert!(
        err.contains("holds layernorm (") && err.contains("holds gemm ("),
        "{err}"
    );
    assert!(
        err.contains("layernorm-fixture-gpu-a.json") && err.contains("gemm-fixture.json"),
        "{err}"
    );

    // The head lost one point, everything else is as in base: REMOVED fails the gate.
    let mut head: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&ln).unwrap()).unwrap();
    head["results"].as_array_mut().unwrap().pop();
    head["run"]["id"] = "20261122T040000Z-f1x70002".into();
    let head_path = d.join("head.json");
    write_json_atomic(&head_path, &head).unwrap();
    let args = ["--base", &ln, "--head", head_path.to_str().unwrap()];
    let o = bin("compare", &args, d);
    let (out, err) = text(&o);
    assert!(o.status.success(), "without the gate: {err}");
    assert!(out.lines().any(|l| l.contains(" REMOVED")), "{out}");
    let mut gated = args.to_vec();
    gated.push("--fail-on-regression");
    let o = bin("compare", &gated, d);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("0 regression(s)") && err.contains("REMOVED line(s)"),
        "{err}"
    );
}

#[test]
fn out_over_an_input_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let a = d.join("a.json");
    let b = d.join("b.json");
    std::fs::copy(fixture("layernorm-fixture-gpu-a.json"), &a).unwrap();
    std::fs::copy(fixture("layernorm-fixture-gpu-b.json"), &b).unwrap();
    let before = std::fs::read(&b).unwrap();
    // The same file under another spelling is still the input (before and after sub/ exists).
    let same_file = [
        "--base",
        "a.json",
        "--head",
        "b.json",
        "--out",
        "./sub/../b.json",
    ];
    let o = bin("compare", &same_file, d);
    std::fs::create_dir_all(d.join("sub")).unwrap();
    let o2 = bin("compare", &same_file, d);
    for o in [o, o2] {
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("--head b.json reads"), "{err}");
    }
    assert_eq!(std::fs::read(&b).unwrap(), before, "the input is untouched");
    let o = bin(
        "compare",
        &["--base", "a.json", "--head", "b.json", "--out", "table.txt"],
        d,
    );
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(d.join("table.txt").exists());
    // An earlier comparison is replaced, in any format; a file it did not write is not.
    for format in ["markdown", "json", "html", "text"] {
        let o = bin(
            "compare",
            &[
                "--base",
                "a.json",
                "--head",
                "b.json",
                "--out",
                "table.txt",
                "--format",
                format,
            ],
            d,
        );
        assert!(o.status.success(), "{format}: {}", text(&o).1);
    }
    std::fs::write(d.join("notes.md"), "# my notes\n").unwrap();
    let o = bin(
        "compare",
        &["--base", "a.json", "--head", "b.json", "--out", "notes.md"],
        d,
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--out notes.md exists and does not hold an earlier comparison"),
        "{err}"
    );
    assert_eq!(std::fs::read(d.join("notes.md")).unwrap(), b"# my notes\n");
    let o = bin(
        "compare",
        &[
            "--base",
            "a.json",
            "--head",
            "b.json",
            "--out",
            "notes.md",
            "--overwrite",
        ],
        d,
    );
    assert!(o.status.success(), "{}", text(&o).1);
}

/// The committed H100 LayerNorm run of 5214588 against the committed H100 artifact, on two
/// boards: the one-block point 1x2048 f16 warm moved +3.5% with every control still, within
/// what it measured on the history's other boards. With the history (the default
/// `--artifacts`) the gate passes and the line names rule `boards`; without it, it fails.
#[test]
fn a_board_effect_on_a_one_block_kernel_is_judged_against_the_points_other_boards() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let head = "artifacts/history/layernorm/20261128T000405Z-52145882577b-nvidia-h100-80gb-hbm3-83ab4144.json.gz";
    let args = |artifacts: &str| {
        vec![
            "--base",
            "artifacts/h100/layernorm.json",
            "--head",
            head,
            "--fail-on-regression",
            "--format",
            "json",
            "--artifacts",
        ]
        .into_iter()
        .map(String::from)
        .chain([artifacts.to_string()])
        .collect::<Vec<_>>()
    };
    let run = |artifacts: &str| {
        let a = args(artifacts);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        bin("compare", &refs, root)
    };
    let o = run("artifacts");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let line = report["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["point"]["implementation"] == "opbench"
                && l["point"]["params"].as_str().is_some_and(|p| {
                    p.contains("dtype=f16") && p.contains("mode=warm") && p.contains("shape=1x2048")
                })
                && l["stat"] == "time_us"
        })
        .expect("the 1x2048 f16 warm line");
    assert_eq!(line["change"]["verdict"], "SAME", "{line}");
    assert!(
        line["rule"].as_str().unwrap().starts_with("boards: "),
        "{line}"
    );
    // An artifacts folder without a history: the same line is a regression.
    let empty = tempfile::tempdir().unwrap();
    let o = run(empty.path().to_str().unwrap());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).1);
    // The H100 runs of the history beside a corrupt file: the rule goes on without that file
    // and says so.
    let dir = tempfile::tempdir().unwrap();
    let ln = dir.path().join("history/layernorm");
    std::fs::create_dir_all(&ln).unwrap();
    for e in std::fs::read_dir(root.join("artifacts/history/layernorm")).unwrap() {
        let p = e.unwrap().path();
        if p.to_str().unwrap().contains("nvidia-h100") {
            std::fs::copy(&p, ln.join(p.file_name().unwrap())).unwrap();
        }
    }
    let bad = "20261128T010000Z-52145882577b-nvidia-h100-80gb-hbm3-deadbeef.json.gz";
    std::fs::write(ln.join(bad), b"not gzip").unwrap();
    let o = run(dir.path().to_str().unwrap());
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("rules `processes` and `boards` go on without") && err.contains(bad),
        "{err}"
    );
}

#[test]
fn history_calibrate_writes_the_rates_that_compare_then_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let arts = d.join("artifacts");
    let mut a = opbench::artifact::read_artifact(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("artifacts/layernorm.json")
            .as_path(),
    )
    .unwrap();
    let mut ids = Vec::new();
    for i in 0..2 {
        a.run.id = format!("20261203T00000{i}Z-cafe000{i}");
        write_json_atomic(&arts.join(format!("layernorm-{i}.json")), &a).unwrap();
        ids.push(a.run.id.clone());
    }
    let json = arts.join("calibration.json");
    let o = bin(
        "history",
        &[
            "calibrate",
            "--artifacts",
            "artifacts",
            "--processes",
            "1,2",
            "--json",
            json.to_str().unwrap(),
        ],
        d,
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains("layernorm") && out.contains("0 of 1"), "{out}");
    let f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(f["runs"], 2);
    assert_eq!(f["groups"][0]["pairs"], 1);

    // compare reads it from --artifacts (and does not take it for a run).
    let o = bin("compare", &["--base", &ids[0], "--head", &ids[1]], d);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("calibration.json"), "{err}");
    assert!(
        out.contains("calibration (layernorm, one board, 1 process(es) a side;")
            && out.contains("0 of 1 same-code pairs raised a false alarm"),
        "{out}"
    );

    // --json never replaces a file that holds something else (here a run), unless asked.
    let run = arts.join("layernorm-0.json");
    let before = std::fs::read(&run).unwrap();
    let o = bin(
        "history",
        &[
            "calibrate",
            "--artifacts",
            "artifacts",
            "--json",
            run.to_str().unwrap(),
        ],
        d,
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--json") && err.contains("refusing to replace it"),
        "{err}"
    );
    assert_eq!(std::fs::read(&run).unwrap(), before);

    // A damaged file is a warning that names it; the comparison goes on.
    std::fs::write(&json, "{").unwrap();
    let o = bin("compare", &["--base", &ids[0], "--head", &ids[1]], d);
    let (_, err) = text(&o);
    assert!(o.status.success());
    assert!(
        err.contains("calibration.json: not a calibration file"),
        "{err}"
    );
}
