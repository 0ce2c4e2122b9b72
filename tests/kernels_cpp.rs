//! kernel_bench on files written for their own programs (host main, host headers, C++ kernel
//! names, templates, namespaces, overloads, cooperative groups, a local header defining
//! kernels, launchers): the CPU path always; the nvcc path where an nvcc is installed
//! (scripts/test-nvrtc.sh has one; elsewhere those tests say why they did not run).

use clap::Parser;
use opbench::kernels::app::load;
use opbench::kernels::compile::{compile, nvcc, resolve, Target};
use opbench::kernels::manifest::Arg;
use opbench::kernels::source::Source;
use opbench::kernels::sweep::ArgValue;
use opbench::kernels::Args;
use std::io::Write;
use std::path::Path;

const LLMC: &str = "tests/fixtures/kernels/llmc/layernorm_forward.toml";
const SOFTMAX: &str = "tests/fixtures/kernels/cpp/softmax_forward.toml";

fn args(list: &[&str]) -> Args {
    Args::parse_from(std::iter::once("kernel_bench").chain(list.iter().copied()))
}

fn err(list: &[&str]) -> String {
    match load(&args(list)) {
        Ok(_) => panic!("{list:?} was accepted"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn a_training_codebase_file_loads_unmodified() {
    let (plan, source) = load(&args(&["--manifest", LLMC])).unwrap();
    let names: Vec<&str> = source.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "layernorm_forward_kernel1",
            "normalization_kernel",
            "layernorm_forward_kernel3",
            "layernorm_forward_kernel4",
            "mean_kernel",
            "rstd_kernel"
        ],
        "kernels of the file, then of its local header"
    );
    assert!(source.kernels[4].file.ends_with("layernorm_stats.cuh"));
    assert_eq!(source.headers.len(), 2, "common.h and layernorm_stats.cuh");
    let m = &plan.manifest;
    assert_eq!(m.kernels.len(), 5);
    // The template instance's parameter types are the instance's.
    let k4 = source
        .kernel("layernorm_forward_kernel4<256, float>")
        .unwrap();
    assert_eq!(k4.params[3].ty, "const float*");
    // Optional outputs, and null pointers passed in their place.
    let opt: Vec<bool> = m.buffers.iter().map(|b| b.optional).collect();
    assert_eq!(opt, [false, true, true, false, false, false]);
    assert_eq!(m.kernels[3].args[1], Arg::Null);
    let g = &plan.groups[0];
    let p = g.points.iter().find(|p| p.kernel == 3).unwrap();
    assert_eq!(p.args[1], ArgValue::U64(0));
    assert_eq!(plan.points(), 16);
}

#[test]
fn namespaced_template_instances_and_overloads() {
    let (plan, source) = load(&args(&["--manifest", SOFTMAX])).unwrap();
    assert_eq!(plan.manifest.kernels.len(), 4);
    let q = source
        .qualified_names(&["softmax_kernel<512, float>".into()])
        .unwrap();
    assert_eq!(
        q[0].expression(),
        "&opbench_fixture::softmax_kernel<512, float>"
    );
    let src = "tests/fixtures/kernels/cpp/softmax_forward.cu";
    let e = err(&[
        "--source",
        src,
        "--kernel",
        "scale_kernel",
        "--param",
        "N=64",
    ]);
    assert!(e.contains("`scale_kernel` is ambiguous"), "{e}");
    assert!(e.contains("scale_kernel(float* x, float a, int n)"), "{e}");
    assert!(
        e.contains("scale_kernel(double* x, double a, int n)"),
        "{e}"
    );
    let k = source.kernel("scale_kernel(double*, double, int)").unwrap();
    assert_eq!(k.params[0].ty, "double*");
    let e = err(&[
        "--source",
        src,
        "--kernel",
        "softmax_kernel",
        "--param",
        "N=64",
    ]);
    assert!(e.contains("is a template: name an instance"), "{e}");
    let e = err(&[
        "--source",
        src,
        "--kernel",
        "softmax_kernl<256, float>",
        "--param",
        "N=64",
    ]);
    assert!(
        e.contains("template <int BLOCK, typename T> softmax_kernel("),
        "{e}"
    );
}

#[test]
fn device_cpu_writes_the_plan_and_include_folders_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let a = args(&[
        "--manifest",
        SOFTMAX,
        "--device",
        "cpu",
        "--plan-json",
        plan.to_str().unwrap(),
    ]);
    opbench::kernels::main(a).unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(
        rows[1]["kernel"],
        "opbench_fixture::softmax_kernel<256, float>"
    );
    assert_eq!(rows[1]["grid"][0], 4096);
    assert_eq!(rows[0]["reference"], true);
    let e = err(&["--manifest", SOFTMAX, "--include", "/no/such/dir"]);
    assert!(e.contains("include folder /no/such/dir"), "{e}");
}

#[test]
fn a_kernel_in_a_header_found_through_include() {
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("inc");
    std::fs::create_dir(&inc).unwrap();
    std::fs::write(
        inc.join("k.cuh"),
        "__global__ void from_header(float* x, int n) {}\n",
    )
    .unwrap();
    let src = dir.path().join("main.cu");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include \"k.cuh\"\nint main() { return 0; }\n",
    )
    .unwrap();
    assert!(Source::read(&src).unwrap().kernels.is_empty());
    let s = Source::read_with(&src, std::slice::from_ref(&inc)).unwrap();
    assert_eq!(s.kernels[0].name, "from_header");
    assert_eq!(s.kernel("from_header").unwrap().params.len(), 2);
}

/// An nvcc, or None after saying why the test did not run (OPBENCH_REQUIRE_NVCC=1 makes that a
/// failure).
fn nvcc_or_skip(test: &str) -> Option<nvcc::Nvcc> {
    match nvcc::find() {
        Ok(n) => Some(n),
        Err(why) => {
            if std::env::var("OPBENCH_REQUIRE_NVCC").is_ok_and(|v| v == "1") {
                panic!("OPBENCH_REQUIRE_NVCC=1 but {why}");
            }
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: {why}; scripts/test-nvrtc.sh runs it"
            );
            None
        }
    }
}

#[test]
fn nvcc_builds_whole_files_and_resolves_cpp_symbols() {
    let Some(n) = nvcc_or_skip("nvcc_builds_whole_files_and_resolves_cpp_symbols") else {
        return;
    };
    let target = Target::from_arch("sm_90").unwrap();
    for manifest in [LLMC, SOFTMAX] {
        let (plan, source) = load(&args(&["--manifest", manifest])).unwrap();
        let listed: Vec<String> = plan
            .manifest
            .kernels
            .iter()
            .map(|k| k.name.clone())
            .collect();
        let names = source.qualified_names(&listed).unwrap();
        let c = compile(
            opbench::kernels::args::CompilerChoice::Nvcc,
            &source,
            &names,
            &target,
        )
        .unwrap_or_else(|e| panic!("{manifest}: {e:#}"));
        assert_eq!(c.info.name, "nvcc");
        assert_eq!(c.info.version, n.version);
        assert_eq!(c.info.target, "sm_90");
        assert!(c
            .info
            .flags
            .contains(&"-gencode=arch=compute_90,code=sm_90".to_string()));
        assert_eq!(c.symbols.len(), listed.len());
        assert!(
            c.symbols.iter().all(|s| s.starts_with("_Z")),
            "{:?}",
            c.symbols
        );
    }
    // A name that is not in the cubin lists what is, demangled.
    let source = Source::read(Path::new(
        "tests/fixtures/kernels/llmc/layernorm_forward.cu",
    ))
    .unwrap();
    let out = nvcc::compile(&n, &source, &[], &target).unwrap();
    let syms = opbench::kernels::compile::cubin::kernel_symbols(&out.cubin).unwrap();
    assert_eq!(
        syms.len(),
        6,
        "{syms:?}: kernel4<256> is instantiated by its launcher"
    );
    let e = resolve(
        &[opbench::kernels::kernel_name::KernelName::parse("layernorm_forward_kernel9").unwrap()],
        &syms,
        &source.path,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("mean_kernel(float*, float const*, int, int, int)"),
        "{e}"
    );
}

#[test]
fn the_committed_gpu_runs_record_their_compiler_and_match_the_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../docs/artifact.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    for (file, compiler, target) in [
        ("docs/examples/kernels-llmc-nvcc.json", "nvcc", "sm_90"),
        (
            "docs/examples/kernels-llmc-nvrtc.json",
            "nvrtc",
            "compute_90",
        ),
        ("docs/examples/kernels-softmax.json", "nvrtc", "compute_90"),
    ] {
        let a = opbench::artifact::read_artifact(Path::new(file)).unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        assert!(v.is_valid(&json), "{file} does not match the JSON Schema");
        let c = a.compiler.as_ref().unwrap();
        assert_eq!(
            (c.name.as_str(), c.target.as_str()),
            (compiler, target),
            "{file}"
        );
        assert!(
            a.results
                .iter()
                .all(|r| r.correctness.as_ref().is_none_or(|c| c.passed)),
            "{file}"
        );
        assert!(
            a.results.iter().any(|r| r.implementation.contains("<")),
            "{file}: a template instance"
        );
    }
}
