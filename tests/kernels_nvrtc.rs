//! NVRTC compiles the shipped example and the fixtures (C++ kernels and template instances
//! through name expressions, the same symbols nvcc gives), a compile error names file and line,
//! a host header is explained, and `kernel_bench --device cpu` compiles the source and stops on
//! an error.
//!
//! Needs the `cuda` feature and a real libnvrtc (no GPU): `scripts/test-nvrtc.sh` runs it with
//! one from PyPI and OPBENCH_REQUIRE_NVRTC=1, so a missing library fails instead of skipping.
//! Elsewhere (the link-time stub loaded) each test prints why it did not run, uncaptured.
#![cfg(feature = "cuda")]

use opbench::kernels::compile::{compile, Target};
use opbench::kernels::gpu::nvrtc::{compile_named, real_library};
use opbench::kernels::kernel_name::KernelName;
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

/// The plain (non-template) kernels of a file, as names (an overload with its parameter types).
fn plain_kernels(src: &Source) -> Vec<KernelName> {
    let names: Vec<String> = src
        .kernels
        .iter()
        .filter(|k| k.template.is_none())
        .map(|k| {
            if src.kernels.iter().filter(|o| o.name == k.name).count() > 1 {
                let types: Vec<&str> = k.params.iter().map(|p| p.ty.as_str()).collect();
                format!("{}({})", k.name, types.join(", "))
            } else {
                k.name.clone()
            }
        })
        .collect();
    src.qualified_names(&names).unwrap()
}

#[test]
fn example_and_fixtures_compile_for_hopper() {
    if !nvrtc_available("example_and_fixtures_compile_for_hopper") {
        return;
    }
    assert_eq!(Target::from_cc((9, 0)).nvrtc_arch(), "compute_90");
    for path in [
        "examples/matmul_kernels.cu",
        "tests/fixtures/kernels/fault.cu",
        "tests/fixtures/kernels/saxpy.cu",
        "tests/fixtures/kernels/llmc/layernorm_forward_rtc.cu",
        "tests/fixtures/kernels/cpp/softmax_forward.cu",
    ] {
        let src = Source::read(Path::new(path)).unwrap();
        let names = plain_kernels(&src);
        let out =
            compile_named(&src, &names, "compute_90").unwrap_or_else(|e| panic!("{path}: {e:#}"));
        assert!(!names.is_empty());
        for (n, sym) in names.iter().zip(&out.lowered) {
            assert!(
                out.ptx.contains(&format!(".entry {sym}(")),
                "{path}: no .entry for {} ({sym}) in the PTX",
                n.text
            );
        }
        assert!(
            out.ptx.contains(".target sm_90"),
            "{path}: PTX not for sm_90"
        );
        assert!(out.version.starts_with("13."), "{}", out.version);
    }
}

#[test]
fn template_instances_get_the_symbols_nvcc_gives() {
    if !nvrtc_available("template_instances_get_the_symbols_nvcc_gives") {
        return;
    }
    let src = Source::read(Path::new(
        "tests/fixtures/kernels/llmc/layernorm_forward_rtc.cu",
    ))
    .unwrap();
    let names = src
        .qualified_names(&[
            "layernorm_forward_kernel3".into(),
            "layernorm_forward_kernel4<128, float>".into(),
            "mean_kernel".into(),
        ])
        .unwrap();
    let out = compile_named(&src, &names, "compute_90").unwrap();
    assert_eq!(
        out.lowered,
        [
            "_Z25layernorm_forward_kernel3PfS_S_PKfS1_S1_ii",
            "_Z25layernorm_forward_kernel4ILi128EfEvPT0_S1_S1_PKS0_S3_S3_ii",
            "_Z11mean_kernelPfPKfiii"
        ]
    );
    let src = Source::read(Path::new("tests/fixtures/kernels/cpp/softmax_forward.cu")).unwrap();
    let names = src
        .qualified_names(&[
            "softmax_kernel<256, float>".into(),
            "scale_kernel(double*, double, int)".into(),
        ])
        .unwrap();
    let out = compile_named(&src, &names, "compute_90").unwrap();
    assert_eq!(
        out.lowered,
        [
            "_ZN15opbench_fixture14softmax_kernelILi256EfEEvPT0_PKS1_ii",
            "_Z12scale_kernelPddi"
        ]
    );
}

#[test]
fn a_host_header_is_explained() {
    if !nvrtc_available("a_host_header_is_explained") {
        return;
    }
    let src = Source::read(Path::new(
        "tests/fixtures/kernels/llmc/layernorm_forward.cu",
    ))
    .unwrap();
    let names = plain_kernels(&src);
    let choice = opbench::kernels::args::CompilerChoice::Nvrtc;
    let e = format!(
        "{:#}",
        compile(choice, &src, &names, &Target::from_arch("90").unwrap()).unwrap_err()
    );
    assert!(e.contains("includes the host header <stdio.h>"), "{e}");
    assert!(e.contains("NVRTC compiles device code only"), "{e}");
    assert!(e.contains("__CUDACC_RTC__"), "{e}");
}

#[test]
fn a_compile_error_shows_nvrtc_log_with_file_and_line() {
    if !nvrtc_available("a_compile_error_shows_nvrtc_log_with_file_and_line") {
        return;
    }
    let path = "tests/fixtures/kernels/compile_error.cu";
    let src = Source::read(Path::new(path)).unwrap();
    let e = format!("{:#}", compile_named(&src, &[], "compute_90").unwrap_err());
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
        "--compiler",
        "nvrtc",
        "--source",
        "tests/fixtures/kernels/compile_error.cu",
        "--kernel",
        "broken",
        "--param",
        "N=64",
    ]);
    let broken = Source::read(Path::new("tests/fixtures/kernels/compile_error.cu")).unwrap();
    let e = format!(
        "{:#}",
        check(&args, &broken, &["broken".into()]).unwrap_err()
    );
    assert!(
        e.contains("--device cpu compiles the source")
            && e.contains("NVRTC could not compile")
            && e.contains("not_declared_anywhere"),
        "{e}"
    );
    let good = Source::read(Path::new("examples/matmul_kernels.cu")).unwrap();
    match check(&args, &good, &["matmul_naive".into()]).unwrap() {
        CompileCheck::Compiled {
            compiler,
            target,
            symbols,
        } => {
            assert!(compiler.starts_with("nvrtc 13."), "{compiler}");
            assert_eq!(target, "compute_90");
            assert_eq!(
                symbols,
                [("matmul_naive".to_string(), "matmul_naive".to_string())]
            );
        }
        other => panic!("{other:?}"),
    }
}
