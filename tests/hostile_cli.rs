//! Hostile command lines through the real binaries: an output flag never replaces a file it
//! did not write, and nothing panics or reads without limit.

mod common;

use common::{repo, run_bin as bin};

#[test]
fn plan_json_never_replaces_the_manifest_or_a_foreign_file() {
    let d = tempfile::tempdir().unwrap();
    let fixtures = repo().join("tests/fixtures/kernels");
    for f in ["saxpy.cu", "saxpy.toml"] {
        std::fs::copy(fixtures.join(f), d.path().join(f)).unwrap();
    }
    let manifest = std::fs::read(d.path().join("saxpy.toml")).unwrap();
    let run = |plan: &str, extra: &[&str]| {
        let mut a = vec![
            "--device",
            "cpu",
            "--manifest",
            "saxpy.toml",
            "--plan-json",
            plan,
        ];
        a.extend_from_slice(extra);
        bin(env!("CARGO_BIN_EXE_kernel_bench"), &a, d.path())
    };
    let (rc, _, err) = run("saxpy.toml", &["--overwrite"]);
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("--plan-json") && err.contains("is the input"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.path().join("saxpy.toml")).unwrap(),
        manifest
    );

    std::fs::write(d.path().join("gpu.json"), "{\"kind\": \"kernels\"}").unwrap();
    let (rc, _, err) = run("gpu.json", &[]);
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("refusing to replace") && err.contains("--overwrite"),
        "{err}"
    );
    assert!(std::fs::read_to_string(d.path().join("gpu.json"))
        .unwrap()
        .contains("kernels"));

    // A new path, then a rerun onto the plan it wrote: both fine.
    for _ in 0..2 {
        let (rc, _, err) = run("plan.json", &[]);
        assert_eq!(rc, Some(0), "{err}");
    }
}

#[test]
fn a_manifest_naming_an_endless_source_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("tests/fixtures/kernels/saxpy.toml")).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("source") {
                "source = \"/dev/zero\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(d.path().join("m.toml"), text).unwrap();
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_kernel_bench"),
        &["--device", "cpu", "--manifest", "m.toml"],
        d.path(),
    );
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("/dev/zero") && err.contains("larger than"),
        "{err}"
    );
}

#[test]
fn a_budget_past_what_a_duration_holds_is_refused_not_a_panic() {
    let d = tempfile::tempdir().unwrap();
    for exe in [
        env!("CARGO_BIN_EXE_layernorm_bench"),
        env!("CARGO_BIN_EXE_gemm_bench"),
        env!("CARGO_BIN_EXE_kernel_bench"),
    ] {
        let (rc, _, err) = bin(
            exe,
            &["--device", "cpu", "--point-budget-ms", "1e308"],
            d.path(),
        );
        assert_eq!(rc, Some(2), "{exe}: {err}");
        assert!(
            err.contains("--point-budget-ms") && !err.contains("panicked"),
            "{exe}: {err}"
        );
        let (rc, out, _) = bin(exe, &["--help"], d.path());
        assert_eq!(rc, Some(0));
        assert!(
            out.contains("--samples <SAMPLES>"),
            "{exe} --help lacks --samples"
        );
    }
}

#[test]
fn dashboard_refuses_a_repo_url_that_is_not_http() {
    let d = tempfile::tempdir().unwrap();
    for bad in [
        "javascript:alert(1)",
        "data:text/html,x",
        "file:///etc/passwd",
    ] {
        let (rc, _, err) = bin(
            env!("CARGO_BIN_EXE_dashboard"),
            &["--repo-url", bad],
            d.path(),
        );
        assert_eq!(rc, Some(2), "{bad}: {err}");
        assert!(
            err.contains("--repo-url") && err.contains("http(s)"),
            "{bad}: {err}"
        );
    }
    assert!(!d.path().join("site").exists());
}

#[test]
fn dashboard_refuses_an_against_that_names_no_single_commit() {
    let d = tempfile::tempdir().unwrap();
    let hist = d.path().join("artifacts/history/gemm");
    std::fs::create_dir_all(&hist).unwrap();
    // The check reads history file names only.
    for (i, c) in ["b111aaaaaaaa", "b111bbbbbbbb", "0123456789ab"]
        .iter()
        .enumerate()
    {
        let name = format!("2026010{}T000000Z-{c}-nvidia-h100-abcd{i}.json.gz", i + 1);
        std::fs::write(hist.join(name), b"").unwrap();
    }
    let exe = env!("CARGO_BIN_EXE_dashboard");
    for (bad, says) in [
        ("zz", "not a commit hash prefix"),
        ("", "not a commit hash prefix"),
        ("b", "not a commit hash prefix"),
        ("deadbeef", "no run in"),
        ("b111", "b111aaaaaaaa, b111bbbbbbbb"),
    ] {
        let (rc, _, err) = bin(exe, &["--against", bad], d.path());
        assert_eq!(rc, Some(1), "{bad:?}: {err}");
        assert!(
            err.contains("--against") && err.contains(says),
            "{bad:?}: {err}"
        );
    }
    assert!(!d.path().join("site").exists());
}

#[test]
fn dashboard_refuses_a_foreign_index_and_the_artifacts_folder() {
    let d = tempfile::tempdir().unwrap();
    let arts = d.path().join("artifacts");
    std::fs::create_dir_all(&arts).unwrap();
    let exe = env!("CARGO_BIN_EXE_dashboard");
    for out in ["artifacts", "artifacts/site", "./artifacts/../artifacts"] {
        let (rc, _, err) = bin(exe, &["--out", out], d.path());
        assert_eq!(rc, Some(1), "{out}: {err}");
        assert!(err.contains("--artifacts folder"), "{out}: {err}");
    }
    assert!(!arts.join("index.html").exists() && !arts.join("site").exists());
    let site = d.path().join("mine");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<h1>my home page</h1>").unwrap();
    let (rc, _, err) = bin(exe, &["--out", "mine"], d.path());
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("index.html exists") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(site.join("index.html")).unwrap(),
        b"<h1>my home page</h1>"
    );
}

#[test]
fn folder_outputs_refuse_a_file_and_what_they_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    let arts = d.path().join("artifacts");
    std::fs::create_dir_all(&arts).unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/artifacts/softmax-fixture.json"),
        arts.join("softmax.json"),
    )
    .unwrap();
    let a_file = d.path().join("notes.txt");
    std::fs::write(&a_file, "mine").unwrap();
    let summarize = env!("CARGO_BIN_EXE_summarize");

    // summarize --out-dir: a file, or a folder whose summary.csv is someone else's, is refused.
    let (rc, _, err) = bin(summarize, &["--out-dir", "notes.txt"], d.path());
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("--out-dir notes.txt is a file, not a folder"),
        "{err}"
    );
    let out = d.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("summary.csv"), "my spreadsheet").unwrap();
    let (rc, _, err) = bin(summarize, &["--out-dir", "out"], d.path());
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("summary.csv exists") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(out.join("summary.csv")).unwrap(),
        b"my spreadsheet"
    );
    assert!(!out.join("summary.json").exists());
    // Its own earlier summary is replaced; --overwrite replaces the foreign file.
    let (rc, _, err) = bin(summarize, &["--out-dir", "out", "--overwrite"], d.path());
    assert_eq!(rc, Some(0), "{err}");
    let (rc, _, err) = bin(summarize, &["--out-dir", "out"], d.path());
    assert_eq!(rc, Some(0), "{err}");

    // history record --into and synth --out: a file (or a path inside one) is refused.
    let history = env!("CARGO_BIN_EXE_history");
    let (rc, _, err) = bin(
        history,
        &["record", "artifacts/softmax.json", "--into", "notes.txt"],
        d.path(),
    );
    assert_eq!(rc, Some(1), "{err}");
    assert!(err.contains("--artifacts notes.txt is a file"), "{err}");
    let (rc, _, err) = bin(
        history,
        &[
            "record",
            "artifacts/softmax.json",
            "--into",
            "artifacts/softmax.json",
        ],
        d.path(),
    );
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("--artifacts") && err.contains("not a folder"),
        "{err}"
    );
    // `--artifacts`, as `history list` takes it, names the same folder as `--into`.
    let (rc, _, err) = bin(
        history,
        &[
            "record",
            "artifacts/softmax.json",
            "--artifacts",
            "notes.txt",
        ],
        d.path(),
    );
    assert_eq!(rc, Some(1), "{err}");
    assert!(err.contains("--artifacts notes.txt is a file"), "{err}");
    let (rc, _, err) = bin(history, &["synth", "--out", "notes.txt/synth"], d.path());
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("--out notes.txt/synth lies inside the file notes.txt"),
        "{err}"
    );

    // llm_bench --save-weights: a file is refused before any model is built.
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_llm_bench"),
        &[
            "--weights",
            "random",
            "--device",
            "cpu",
            "--save-weights",
            "notes.txt",
        ],
        d.path(),
    );
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("--save-weights notes.txt is a file, not a folder"),
        "{err}"
    );
    assert_eq!(std::fs::read(&a_file).unwrap(), b"mine");
}

#[test]
fn every_binarys_help_gives_an_example_command() {
    let d = tempfile::tempdir().unwrap();
    for (exe, name) in [
        (env!("CARGO_BIN_EXE_summarize"), "summarize"),
        (env!("CARGO_BIN_EXE_history"), "history"),
        (env!("CARGO_BIN_EXE_layernorm_bench"), "layernorm_bench"),
        (env!("CARGO_BIN_EXE_llm_bench"), "llm_bench"),
        (env!("CARGO_BIN_EXE_opbench_env"), "opbench_env"),
        (env!("CARGO_BIN_EXE_dashboard"), "dashboard"),
    ] {
        let (rc, out, err) = bin(exe, &["--help"], d.path());
        assert_eq!(rc, Some(0), "{name}: {err}");
        let example = out.split_once("Example").map(|(_, e)| e).unwrap_or("");
        assert!(example.contains(&format!("  {name} ")), "{name}: {out}");
    }
}
