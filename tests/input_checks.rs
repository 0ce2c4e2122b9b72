//! Bad input as a new user gives it, through the real binaries: each gets an error (or a
//! warning) that names the file, field or flag, never a silent wrong result.

mod common;

use common::{fixture_artifact, repo, run_bin as bin, write_fixture};

#[test]
fn kernel_bench_on_the_cpu_says_whether_the_source_was_compiled() {
    let d = tempfile::tempdir().unwrap();
    let src = repo().join("tests/fixtures/kernels/compile_error.cu");
    let (rc, out, err) = bin(
        env!("CARGO_BIN_EXE_kernel_bench"),
        &[
            "--device",
            "cpu",
            "--source",
            src.to_str().unwrap(),
            "--kernel",
            "broken",
            "--param",
            "N=64",
        ],
        d.path(),
    );
    if cfg!(feature = "cuda") {
        // A cuda build compiles with NVRTC when it can load it, and then the error is fatal.
        assert!(
            (rc == Some(1) && err.contains("NVRTC could not compile"))
                || out.contains("NOT compiled (NVRTC could not be loaded"),
            "{rc:?}\n{out}\n{err}"
        );
    } else {
        assert_eq!(rc, Some(0), "{err}");
        let first = out.lines().next().unwrap();
        assert!(first.contains("compile_error.cu NOT compiled"), "{out}");
        assert!(first.contains("without the `cuda` feature"), "{first}");
        assert!(
            first.contains("only its kernel signatures were checked"),
            "{first}"
        );
    }
}

#[test]
fn repeated_list_values_run_once_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let src = repo().join("examples/matmul_kernels.cu");
    let (rc, out, err) = bin(
        env!("CARGO_BIN_EXE_kernel_bench"),
        &[
            "--device",
            "cpu",
            "--source",
            src.to_str().unwrap(),
            "--kernel",
            "matmul_naive",
            "--kernel",
            "matmul_naive",
            "--param",
            "N=64,64,128",
            "--block",
            "16x16,16x16",
        ],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    assert!(out.contains("2 parameter sets, 2 points"), "{out}");
    assert!(
        err.contains("warning: --kernel lists matmul_naive more than once"),
        "{err}"
    );
    assert!(
        err.contains("warning: --param N lists 64 more than once"),
        "{err}"
    );
    assert!(
        err.contains("warning: --block lists 16x16 more than once"),
        "{err}"
    );
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_kernel_bench"),
        &[
            "--device",
            "cpu",
            "--source",
            src.to_str().unwrap(),
            "--kernel",
            "matmul_naive",
            "--param",
            "N=64",
            "--param",
            "N=128",
        ],
        d.path(),
    );
    assert_eq!(rc, Some(1));
    assert!(
        err.contains(
            "--param N is given twice: give all its values in one flag, e.g. --param N=128,256"
        ),
        "{err}"
    );

    // A manifest's own lists too: n = [1000, 1000] and block = [128, 128, 256].
    let toml = std::fs::read_to_string(repo().join("tests/fixtures/kernels/saxpy.toml"))
        .unwrap()
        .replace("n = [1000, 1048576]", "n = [1000, 1000]")
        .replace("block = [128, 256]", "block = [128, 128, 256]");
    std::fs::copy(
        repo().join("tests/fixtures/kernels/saxpy.cu"),
        d.path().join("saxpy.cu"),
    )
    .unwrap();
    std::fs::write(d.path().join("dup.toml"), toml).unwrap();
    let (rc, out, err) = bin(
        env!("CARGO_BIN_EXE_kernel_bench"),
        &["--device", "cpu", "--manifest", "dup.toml"],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    assert!(out.contains("1 parameter sets, 4 points"), "{out}");
    assert!(
        err.contains("parameter `n` of the manifest dup.toml lists 1000 more than once"),
        "{err}"
    );
    assert!(
        err.contains("`block` of kernel `saxpy` in the manifest dup.toml lists 128"),
        "{err}"
    );
}

#[test]
fn negative_numbers_say_what_the_flag_takes() {
    let d = tempfile::tempdir().unwrap();
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_layernorm_bench"),
        &["--device", "cpu", "--batch", "-1"],
        d.path(),
    );
    assert_eq!(rc, Some(2));
    assert!(!err.contains("unexpected argument"), "{err}");
    assert!(
        err.contains("'-1' for '--batch <BATCH>': -1 is negative: must be a positive integer"),
        "{err}"
    );
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_llm_bench"),
        &["--device", "cpu", "--batch", "1,-4"],
        d.path(),
    );
    assert_eq!(rc, Some(2));
    assert!(
        err.contains("-4 is negative: must be a positive integer"),
        "{err}"
    );
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_gemm_bench"),
        &["--device", "cpu", "--square", "-8"],
        d.path(),
    );
    assert_eq!(rc, Some(1));
    assert!(err.contains("--square") && err.contains("\"-8\""), "{err}");
    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_opbench_env"),
        &["--gpu", "-1"],
        d.path(),
    );
    assert_eq!(rc, Some(2));
    assert!(err.contains("must be a whole number (0 or more)"), "{err}");
}

#[test]
fn the_shared_sampling_flags_are_checked_alike_in_every_gpu_benchmark() {
    let d = tempfile::tempdir().unwrap();
    for exe in [
        env!("CARGO_BIN_EXE_layernorm_bench"),
        env!("CARGO_BIN_EXE_gemm_bench"),
        env!("CARGO_BIN_EXE_kernel_bench"),
    ] {
        let (rc, _, err) = bin(exe, &["--ci-target-pct", "150"], d.path());
        assert_eq!(rc, Some(2), "{exe}: {err}");
        assert!(
            err.contains("--ci-target-pct") && err.contains("percentage from 0 to under 100"),
            "{exe}: {err}"
        );
        let (rc, _, err) = bin(exe, &["--min-samples", "0"], d.path());
        assert_eq!(rc, Some(2), "{exe}: {err}");
        assert!(err.contains("--min-samples"), "{exe}: {err}");
        // Refused before any work, on the CPU too, naming both flags.
        let (rc, _, err) = bin(
            exe,
            &[
                "--device",
                "cpu",
                "--min-samples",
                "50",
                "--max-samples",
                "10",
            ],
            d.path(),
        );
        assert_eq!(rc, Some(1), "{exe}: {err}");
        assert!(
            err.contains("--min-samples 50 is above --max-samples 10"),
            "{exe}: {err}"
        );
        let (rc, out, _) = bin(exe, &["--help"], d.path());
        assert_eq!(rc, Some(0));
        for flag in [
            "--ci-target-pct",
            "--min-samples",
            "--max-samples",
            "--point-budget-ms",
        ] {
            assert!(out.contains(flag), "{exe} --help lacks {flag}");
        }
    }
}

#[test]
fn layernorm_table_refuses_another_kind_of_artifact() {
    let d = tempfile::tempdir().unwrap();
    let gemm = write_fixture(d.path(), "gemm.json", &fixture_artifact("gemm", "g1"));
    let (rc, out, err) = bin(
        env!("CARGO_BIN_EXE_layernorm_bench"),
        &["--table", gemm.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(rc, Some(1), "{out}");
    assert!(out.is_empty(), "no table for a gemm artifact: {out}");
    assert!(
        err.contains("gemm.json: a \"gemm\" artifact, not a \"layernorm\" one (field `kind`)"),
        "{err}"
    );
    // llm_bench --merge takes rows from llm artifacts only.
    let llm = write_fixture(d.path(), "llm.json", &fixture_artifact("llm", "m1"));
    let e = format!(
        "{:#}",
        opbench::llm::merge::merge(&llm, std::slice::from_ref(&gemm), None).unwrap_err()
    );
    assert!(
        e.contains("gemm.json: a \"gemm\" artifact, not an \"llm\" one"),
        "{e}"
    );
    let ln = write_fixture(d.path(), "ln.json", &fixture_artifact("layernorm", "l1"));
    let (rc, out, err) = bin(
        env!("CARGO_BIN_EXE_layernorm_bench"),
        &["--table", ln.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(rc, Some(0), "{err}");
    assert!(out.contains("| shape |"), "{out}");
}

#[test]
fn negative_times_and_rates_are_rejected_naming_file_result_and_field() {
    for (what, edit) in [
        ("results[0].stats.time_us.min", "time_us"),
        ("results[0].metrics.gbps", "gbps"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let arts = d.path().join("artifacts");
        let mut a = fixture_artifact("layernorm", "neg");
        let row = &mut a.results[0];
        if edit == "gbps" {
            row.metrics.insert("gbps".into(), -1600.0);
        } else {
            let s = row.stats.get_mut("time_us").unwrap();
            s.min = -10.0;
            s.p5 = -9.0;
        }
        write_fixture(&arts, "neg.json", &a);
        let (rc, _, err) = bin(env!("CARGO_BIN_EXE_summarize"), &[], d.path());
        assert_eq!(rc, Some(1), "{err}");
        assert!(
            err.contains("neg.json: not a valid opbench artifact")
                && err.contains(&format!("field `{what}`"))
                && err.contains("cannot be negative"),
            "{err}"
        );
        let (rc, _, err) = bin(env!("CARGO_BIN_EXE_dashboard"), &["--strict"], d.path());
        assert_eq!(rc, Some(1), "{err}");
        assert!(err.contains(&format!("field `{what}`")), "{err}");
    }
    // A unitless figure may be anything finite.
    let mut a = fixture_artifact("layernorm", "ok");
    a.results[0].metrics.insert("speedup_delta".into(), -0.2);
    opbench::artifact::validate(&a).unwrap();
}

#[test]
fn dashboard_messages_name_its_own_flags() {
    let d = tempfile::tempdir().unwrap();
    let arts = d.path().join("artifacts");
    let bad = write_fixture(&arts, "bad.json", &fixture_artifact("layernorm", "b"));
    let text = std::fs::read_to_string(&bad).unwrap();
    let p50 = text.find("\"p50\": ").unwrap() + "\"p50\": ".len();
    let end = p50 + text[p50..].find(',').unwrap();
    std::fs::write(&bad, format!("{}NaN{}", &text[..p50], &text[end..])).unwrap();
    let line = text[..p50].lines().count();

    let (rc, _, err) = bin(env!("CARGO_BIN_EXE_dashboard"), &["--strict"], d.path());
    assert_eq!(rc, Some(1));
    assert!(
        !err.contains("--skip-invalid"),
        "dashboard has no --skip-invalid: {err}"
    );
    assert!(err.contains("leave out --strict"), "{err}");
    assert!(
        err.contains(&format!("NaN at line {line}, column")) && err.contains("is not allowed"),
        "{err}"
    );
    assert!(!err.contains("truncated or hand-edited"), "{err}");
    let (rc, _, err) = bin(env!("CARGO_BIN_EXE_summarize"), &[], d.path());
    assert_eq!(rc, Some(1));
    assert!(err.contains("use --skip-invalid"), "{err}");

    let (rc, _, err) = bin(
        env!("CARGO_BIN_EXE_dashboard"),
        &["--artifacts", bad.to_str().unwrap(), "--out", "site"],
        d.path(),
    );
    assert_eq!(rc, Some(1));
    assert!(
        err.contains("bad.json is a file, not a folder") && !err.contains("does not exist"),
        "{err}"
    );
}

#[test]
fn gpu_messages_point_inside_the_repository() {
    let d = tempfile::tempdir().unwrap();
    if !cfg!(feature = "cuda") {
        let (rc, _, err) = bin(
            env!("CARGO_BIN_EXE_llm_bench"),
            &[
                "--device",
                "cuda",
                "--weights",
                "random",
                "--config",
                "llama-9m",
                "--out",
                "x.json",
            ],
            d.path(),
        );
        assert_eq!(rc, Some(1));
        assert!(!err.contains("shared/"), "{err}");
        assert!(
            err.contains("\"GPU usage\"") && err.contains("README.md"),
            "{err}"
        );
    }
    let (rc, out, err) = bin(env!("CARGO_BIN_EXE_opbench_env"), &[], d.path());
    assert_eq!(rc, Some(0), "{err}");
    // opbench_env has no --device flag: its messages must not tell the user to pass one.
    assert!(!out.contains("use --device"), "{out}");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains("## GPU usage"));
}

#[test]
fn the_json_schema_rejects_negative_quantities_and_accepts_every_committed_artifact() {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../docs/artifact.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let good = serde_json::to_value(fixture_artifact("layernorm", "x")).unwrap();
    assert!(v.is_valid(&good));
    let mut bad = good.clone();
    bad["results"][0]["stats"]["time_us"]["p50"] = (-1.0).into();
    assert!(!v.is_valid(&bad), "a negative time");
    let mut bad = good.clone();
    bad["results"][0]["metrics"]["gbps"] = (-1.0).into();
    assert!(!v.is_valid(&bad), "a negative rate");
    let mut bad = good.clone();
    bad["results"][0]["implementation"] = "x".repeat(300).into();
    assert!(!v.is_valid(&bad), "a 300-character name");
    let mut ok = good.clone();
    ok["results"][0]["metrics"]["speedup_delta"] = (-1.0).into();
    ok["run"]["synthetic"] = true.into();
    assert!(
        v.is_valid(&ok),
        "unitless figures may be negative; `synthetic` is a field"
    );

    let mut files = Vec::new();
    for dir in [
        "artifacts",
        "tests/fixtures/artifacts",
        "tests/fixtures/hostile",
    ] {
        for e in walkdir::WalkDir::new(repo().join(dir)) {
            let e = e.unwrap();
            if opbench::artifact::is_artifact_file(e.path()) {
                files.push(e.into_path());
            }
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let a = opbench::artifact::parse_artifact(&text)
            .unwrap_or_else(|e| panic!("{}: {e:#}", f.display()));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
        assert!(!a.run.synthetic);
    }
}

#[test]
fn dashboard_refuses_a_folder_of_only_invalid_artifacts_and_renders_an_empty_one() {
    let d = tempfile::tempdir().unwrap();
    let arts = d.path().join("artifacts");
    std::fs::create_dir_all(&arts).unwrap();
    let (rc, out, err) = bin(env!("CARGO_BIN_EXE_dashboard"), &[], d.path());
    assert_eq!(rc, Some(0), "an empty folder renders the empty site: {err}");
    assert!(out.contains("from 0 artifacts"), "{out}");
    let mut zero = fixture_artifact("layernorm", "z");
    zero.results.push(zero.results[0].clone());
    write_fixture(&arts, "twice.json", &zero);
    std::fs::write(arts.join("cut.json"), "{\"schema_version\": 1").unwrap();
    let (rc, out, err) = bin(env!("CARGO_BIN_EXE_dashboard"), &[], d.path());
    assert_eq!(rc, Some(1), "{out}{err}");
    assert!(
        err.contains("no usable artifact under artifacts: 2 invalid file(s) left out")
            && err.contains("cut.json")
            && err.contains("twice.json")
            && err.contains("repeats `results[0]`"),
        "{err}"
    );
}
