//! NVRTC compiles the shipped example and the fixtures, a compile error names file and line, and
//! `kernel_bench --device cpu` compiles the source and stops on an error.
//!
//! Needs the `cuda` feature and a real libnvrtc (no GPU): `scripts/test-nvrtc.sh` runs it with
//! one from PyPI and OPBENCH_REQUIRE_NVRTC=1, so a missing library fails instead of skipping.
//! Elsewhere (the link-time stub loaded) each test prints why it did not run, uncaptured.
#![cfg(feature = "cuda")]

use opbench::kernels::gpu::nvrtc::{arch_for, compile, real_library};
use opbench::kernels::source::Source;
use std::io::Write;
use std::path::Path;

/// True when a real NVRTC is loaded; otherwise says why (past the test harness's capture) and
/// returns false, or panics when OPBENCH_REQUIRE_NVRTC=1 demands the test run.
fn nvrtc_available(test: &str) -> bool {
    match real_library() {
        Ok(_) => true,
        Err(why) => {
            if std::env::var("OPBENCH_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
                panic!("OPBENCH_REQUIRE_NVRTC=1 but {why}");
            }
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: {why}; run scripts/test-nvrtc.sh to run it"
            );
            false
        }
    }
}

#[test]
fn example_and_fixtures_compile_for_hopper() {
    if !nvrtc_available("example_and_fixtures_compile_for_hopper") {
        return;
    }
    assert_eq!(arch_for((9, 0)), "compute_90");
    for path in [
        "examples/matmul_kernels.cu",
        "tests/fixtures/kernels/fault.cu",
        "tests/fixtures/kernels/saxpy.cu",
    ] {
        let src = Source::read(Path::new(path)).unwrap();
        let ptx = compile(&src, "compute_90")
            .unwrap_or_else(|e| panic!("{path}: {e:#}"))
            .to_src();
        assert!(!src.kernels.is_empty());
        for k in &src.kernels {
            assert!(
                ptx.contains(&format!(".entry {}(", k.name)),
                "{path}: no .entry for {} in the PTX",
                k.name
            );
        }
        assert!(ptx.contains(".target sm_90"), "{path}: PTX not for sm_90");
    }
}

#[test]
fn a_compile_error_shows_nvrtc_log_with_file_and_line() {
    if !nvrtc_available("a_compile_error_shows_nvrtc_log_with_file_and_line") {
        return;
    }
    let path = "tests/fixtures/kernels/compile_error.cu";
    let src = Source::read(Path::new(path)).unwrap();
    let e = format!("{:#}", compile(&src, "compute_90").unwrap_err());
    assert!(e.contains("NVRTC could not compile"), "{e}");
    assert!(e.contains(&format!("{path}(5)")), "no file(line) in: {e}");
    assert!(e.contains("not_declared_anywhere"), "{e}");
}

#[test]
fn device_cpu_compiles_the_source_and_stops_on_a_compile_error() {
    if !nvrtc_available("device_cpu_compiles_the_source_and_stops_on_a_compile_error") {
        return;
    }
    use clap::Parser;
    use opbench::kernels::compile_check::{check, CompileCheck};
    let args = opbench::kernels::Args::parse_from([
        "kernel_bench",
        "--device",
        "cpu",
        "--source",
        "tests/fixtures/kernels/compile_error.cu",
        "--kernel",
        "broken",
        "--param",
        "N=64",
    ]);
    let broken = Source::read(Path::new("tests/fixtures/kernels/compile_error.cu")).unwrap();
    let e = format!("{:#}", check(&args, &broken).unwrap_err());
    assert!(
        e.contains("--device cpu compiles the source with NVRTC")
            && e.contains("NVRTC could not compile")
            && e.contains("not_declared_anywhere"),
        "{e}"
    );
    let good = Source::read(Path::new("examples/matmul_kernels.cu")).unwrap();
    assert_eq!(
        check(&args, &good).unwrap(),
        CompileCheck::Compiled {
            arch: "compute_90".into()
        }
    );
}
