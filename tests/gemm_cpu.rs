//! End to end on the CPU: `gemm_bench --device cpu` writes a valid `gemm` artifact and report.

use clap::Parser;
use opbench::artifact::{read_artifact, Status};
use opbench::gemm::GemmArgs;

#[test]
fn cpu_sweep_writes_a_valid_artifact_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gemm.json");
    let report = dir.path().join("gemm_report.txt");
    let args = GemmArgs::try_parse_from([
        "gemm_bench",
        "--device",
        "cpu",
        "--square",
        "16,32",
        "--m",
        "8",
        "--n",
        "24",
        "--k",
        "40",
        "--dtypes",
        "f32,bf16",
        "--budget-ms",
        "5",
        "--out",
        out.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ])
    .unwrap();
    opbench::gemm::run(&args).unwrap();

    let a = read_artifact(&out).unwrap();
    assert_eq!(a.kind, "gemm");
    assert!(a.run.complete);
    assert_eq!(
        a.results.len(),
        6,
        "2 square + 1 axes shape, 2 dtypes, candle only"
    );
    for r in &a.results {
        assert_eq!(r.implementation, "candle");
        assert_eq!(r.status, Status::Ok, "{r:?}");
        let c = r.correctness.as_ref().unwrap();
        assert!(c.passed && c.reference == "cpu_f64_rows");
        for p in [
            "m",
            "n",
            "k",
            "dtype",
            "shape_set",
            "impl_kind",
            "ladder_step",
        ] {
            assert!(r.params.contains_key(p), "missing param {p}");
        }
        for m in [
            "tflops",
            "min_bytes",
            "intensity_flop_per_byte",
            "pct_of_ceiling",
            "speedup_vs_slowest",
        ] {
            assert!(r.metrics.contains_key(m), "missing metric {m}");
        }
        assert!(r.metrics["pct_of_ceiling"] <= 100.0 + 1e-9);
    }
    for d in ["f32", "bf16"] {
        assert!(a.ceilings.matmul_tflops[d] > 0.0);
        let best = a
            .results
            .iter()
            .filter(|r| r.param_str("dtype").as_deref() == Some(d))
            .map(|r| r.metrics["pct_of_ceiling"])
            .fold(0.0, f64::max);
        assert!(
            (best - 100.0).abs() < 1e-9,
            "the best {d} row defines the ceiling"
        );
    }
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("== 16x16x16 f32 (square) =="), "{text}");
    assert!(text.contains("== 8x24x40 bf16 (axes) =="), "{text}");
    assert!(text.contains("complete: true"));
}

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_device_without_the_feature_says_how_to_fix_it() {
    let args =
        GemmArgs::try_parse_from(["gemm_bench", "--square", "64", "--model", "none"]).unwrap();
    let e = format!("{:#}", opbench::gemm::run(&args).unwrap_err());
    assert!(
        e.contains("--features cuda") && e.contains("--device cpu"),
        "{e}"
    );
}

/// `--square` sizes too large to count or to fit are refused before any allocation, with the
/// flag, the shape and the bytes needed against the bytes available; nothing is written.
#[test]
fn oversized_shapes_are_refused_with_the_flag_shape_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gemm.json");
    let run = |square: &str| {
        let args = GemmArgs::try_parse_from([
            "gemm_bench",
            "--device",
            "cpu",
            "--square",
            square,
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap();
        format!("{:#}", opbench::gemm::run(&args).unwrap_err())
    };
    let e = run("99999999999");
    assert!(
        e.contains("--square: shape 99999999999x99999999999x99999999999")
            && e.contains("does not fit in 64 bits"),
        "{e}"
    );
    // 10^6 cubed in f32: 36 TB of matrices and copies, more than any test machine has.
    if opbench::env::available_memory_bytes().is_some() {
        let e = run("1000000");
        assert!(
            e.contains("--square: shape 1000000x1000000x1000000")
                && e.contains("36000.0 GB of host memory (A, B and C with their f32 copies: 36000000000000 bytes)")
                && e.contains("is available"),
            "{e}"
        );
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn cpu_sampling_takes_the_count_the_sampling_flags_ask_for() {
    let dir = tempfile::tempdir().unwrap();
    for (flags, n) in [
        (&["--min-samples", "2", "--max-samples", "2"][..], 2),
        (&["--samples", "7"][..], 7),
        // The interval rule off: two CPU samples a hair apart would meet it at the minimum,
        // and this case is about the budget, which stops no earlier than the cap here.
        (
            &[
                "--point-budget-ms",
                "0.001",
                "--ci-target-pct",
                "0",
                "--min-samples",
                "2",
                "--max-samples",
                "4",
            ][..],
            4,
        ),
    ] {
        let out = dir.path().join("gemm.json");
        let mut argv = vec![
            "gemm_bench",
            "--device",
            "cpu",
            "--square",
            "16",
            "--model",
            "none",
            "--dtypes",
            "f32",
            "--overwrite",
            "--out",
            out.to_str().unwrap(),
        ];
        argv.extend_from_slice(flags);
        opbench::gemm::run(&GemmArgs::try_parse_from(argv).unwrap()).unwrap();
        let a = read_artifact(&out).unwrap();
        assert_eq!(a.results.len(), 1);
        let r = &a.results[0];
        assert_eq!(r.stats["time_us"].n, n, "{flags:?}");
        let s = r.timing.as_ref().unwrap().sampling.as_ref().unwrap();
        assert!(!s.stopped_by.is_empty(), "{flags:?}");
    }
}
