//! kernel_bench on the CPU: manifest parsing and validation, sweep expansion, bad input, and the
//! `--device cpu` path, on the shipped example and the test fixtures.

use clap::Parser;
use opbench::kernels::app::{describe, load};
use opbench::kernels::manifest::{Arg, Manifest, Role};
use opbench::kernels::sweep::{expand, ArgValue};
use opbench::kernels::Args;
use std::path::Path;

fn args(list: &[&str]) -> Args {
    Args::parse_from(std::iter::once("kernel_bench").chain(list.iter().copied()))
}

fn err(list: &[&str]) -> String {
    match load(&args(list)) {
        Ok(_) => panic!("{list:?} was accepted"),
        Err(e) => format!("{e:#}"),
    }
}

/// A manifest from text, with the source resolved against the fixtures folder.
fn manifest(text: &str) -> anyhow::Result<Manifest> {
    Manifest::parse(
        text,
        Path::new("tests/fixtures/kernels"),
        "manifest test.toml",
    )
}

const SAXPY: &str = include_str!("fixtures/kernels/saxpy.toml");

#[test]
fn the_example_manifest_expands_to_every_combination() {
    let (plan, source) = load(&args(&["--manifest", "examples/matmul_kernels.toml"])).unwrap();
    assert_eq!(source.kernels.len(), 4);
    // 3 M x 3 N x 1 K, and per set: naive x 2 blocks + tiled + 1d + 2d.
    assert_eq!(plan.groups.len(), 9);
    assert_eq!(plan.points(), 45);
    let g = &plan.groups[0];
    assert_eq!(
        g.params.values().copied().collect::<Vec<_>>(),
        [1024, 512, 512]
    );
    assert_eq!(g.flops, Some(2.0 * 512.0 * 512.0 * 1024.0));
    assert_eq!(g.bytes_moved, 4.0 * (512.0 * 1024.0 * 2.0 + 512.0 * 512.0));
    let names: Vec<&str> = g
        .points
        .iter()
        .map(|p| plan.manifest.kernels[p.kernel].name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "matmul_naive",
            "matmul_naive",
            "matmul_tiled",
            "matmul_blocktile_1d",
            "matmul_blocktile_2d"
        ]
    );
    assert_eq!(g.points[0].grid, [32, 32, 1]);
    assert_eq!(g.points[1].block, [32, 8, 1]);
    assert_eq!(g.points[1].grid, [16, 64, 1]);
    assert_eq!(g.points[3].grid, [8, 8, 1]);
    assert_eq!(g.points[4].grid, [4, 4, 1]);
    assert_eq!(
        g.points[0].args,
        [
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2),
            ArgValue::I32(512),
            ArgValue::I32(512),
            ArgValue::I32(1024)
        ]
    );
    let ids: Vec<usize> = plan
        .groups
        .iter()
        .flat_map(|g| &g.points)
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, (0..45).collect::<Vec<_>>());
}

#[test]
fn command_line_overrides_params_blocks_and_kernels() {
    let (plan, _) = load(&args(&[
        "--manifest",
        "examples/matmul_kernels.toml",
        "--param",
        "M=64",
        "--param",
        "N=64,128",
        "--kernel",
        "matmul_tiled",
        "--block",
        "16x16,8x8",
    ]))
    .unwrap();
    assert_eq!(plan.groups.len(), 2);
    // The reference (naive) always runs; both kernels get both blocks.
    assert_eq!(plan.points(), 8);
    assert_eq!(plan.manifest.kernels.len(), 2);
    let e = err(&[
        "--manifest",
        "examples/matmul_kernels.toml",
        "--param",
        "Q=1",
    ]);
    assert!(e.contains("does not define a parameter `Q`"), "{e}");
    assert!(e.contains("K, M, N"), "{e}");
    let e = err(&[
        "--manifest",
        "examples/matmul_kernels.toml",
        "--kernel",
        "matmul_fast",
    ]);
    assert!(e.contains("no [[kernel]] `matmul_fast`"), "{e}");
    let e = err(&[
        "--manifest",
        "examples/matmul_kernels.toml",
        "--block",
        "64x64",
    ]);
    assert!(e.contains("4096 threads per block"), "{e}");
}

#[test]
fn the_convention_runs_without_a_manifest() {
    let (plan, _) = load(&args(&[
        "--source",
        "examples/matmul_kernels.cu",
        "--kernel",
        "matmul_naive",
        "--kernel",
        "matmul_tiled",
        "--param",
        "N=128,256",
    ]))
    .unwrap();
    assert_eq!(plan.points(), 4);
    assert_eq!(plan.groups[1].params["M"], 256);
    assert_eq!(plan.groups[1].points[0].grid, [16, 16, 1]);
    let text = describe(&plan);
    assert!(text.contains("built-in matmul convention"), "{text}");
    assert!(text.contains("2 parameter sets, 4 points"), "{text}");
}

#[test]
fn bad_input_names_what_is_wrong() {
    let e = err(&[
        "--source",
        "no/such/file.cu",
        "--kernel",
        "k",
        "--param",
        "N=4",
    ]);
    assert!(e.contains("no/such/file.cu"), "{e}");
    let e = err(&["--manifest", "no/such/manifest.toml"]);
    assert!(e.contains("no/such/manifest.toml"), "{e}");
    let e = err(&[
        "--source",
        "examples/matmul_kernels.cu",
        "--kernel",
        "matmul_fastest",
        "--param",
        "N=4",
    ]);
    assert!(
        e.contains("`matmul_fastest` is not defined in examples/matmul_kernels.cu"),
        "{e}"
    );
    assert!(
        e.contains("matmul_naive(const float* A, const float* B, float* C, int M, int N, int K)  (examples/matmul_kernels.cu:11)"),
        "{e}"
    );
    let e = err(&[]);
    assert!(e.contains("--manifest"), "{e}");
    // A size that overflows i64: the message names the expression and the values.
    let e = err(&[
        "--manifest",
        "examples/matmul_kernels.toml",
        "--param",
        "M=4000000000000",
        "--param",
        "K=4000000000",
    ]);
    assert!(e.contains("buffer `A` len"), "{e}");
    assert!(e.contains("`M * K`"), "{e}");
    assert!(e.contains("overflow"), "{e}");
    // A parameter too large for the kernel's int argument.
    let e = err(&[
        "--manifest",
        "examples/matmul_kernels.toml",
        "--param",
        "M=1",
        "--param",
        "N=3000000000",
        "--param",
        "K=1",
    ]);
    assert!(
        e.contains("N = 3000000000 does not fit the kernel's 32-bit int"),
        "{e}"
    );
    // A grid beyond CUDA's limits.
    let e = err(&[
        "--manifest",
        "examples/matmul_kernels.toml",
        "--param",
        "M=3000000000",
        "--param",
        "N=1",
        "--param",
        "K=1",
    ]);
    assert!(
        e.contains("grid[1] `ceil_div(M, block_y)` is 187500000"),
        "{e}"
    );
}

#[test]
fn manifest_validation_catches_mistakes() {
    let m = manifest(SAXPY).unwrap();
    assert_eq!(m.buffers[1].role, Role::Inout);
    assert_eq!(m.kernels[0].args[0], Arg::Scalar("a".into()));
    assert_eq!(m.kernels[0].blocks, [[128, 1, 1], [256, 1, 1]]);
    let plan = expand(m).unwrap();
    assert_eq!(plan.points(), 8);
    let big = &plan.groups[1];
    assert_eq!(big.points[0].args[0], ArgValue::F32(2.5));
    assert_eq!(big.points[0].args[3], ArgValue::I64(1048576));
    assert_eq!(
        big.points[2].grid,
        [264, 1, 1],
        "saxpy_stride grid is capped"
    );
    assert_eq!(big.bytes_moved, 12.0 * 1048576.0);

    let cases: &[(&str, &str, &str)] = &[
        (
            "name = \"saxpy\"\n",
            "name = \"saxpy\"\nblok = [1]\n",
            "unknown field `blok`",
        ),
        (
            "args = [\"a\", \"x\", \"y\", \"len\"]",
            "args = [\"a\", \"x\", \"z\", \"len\"]",
            "argument `z` is not a buffer",
        ),
        (
            "grid = [\"ceil_div(n, block_x)\"]",
            "grid = [\"ceil_div(n, block_w)\"]",
            "uses `block_w`",
        ),
        (
            "role = \"inout\"",
            "role = \"output\"",
            "outputs are always poisoned",
        ),
        (
            "reference = \"saxpy\"",
            "reference = \"saxpy_fast\"",
            "reference kernel `saxpy_fast`",
        ),
        (
            "flops = \"2 * n\"",
            "flops = \"2 * n +\"",
            "cannot parse expression `2 * n +`",
        ),
        (
            "type = \"f32\"\nlen = \"n\"\nrole = \"input\"",
            "type = \"f31\"\nlen = \"n\"\nrole = \"input\"",
            "unknown variant `f31`",
        ),
        (
            "block = [128, 256]",
            "block = [[32, 64]]",
            "2048 threads per block",
        ),
        (
            "init = \"normal(0, 1)\"",
            "init = \"normal(0, -1)\"",
            "std > 0",
        ),
        ("role = \"inout\"", "role = \"input\"", "no buffer has role"),
    ];
    for (from, to, want) in cases {
        assert!(SAXPY.contains(from), "fixture lacks {from:?}");
        let text = SAXPY.replacen(from, to, 1);
        let e = format!("{:#}", manifest(&text).unwrap_err());
        assert!(e.contains(want), "{to:?}: expected {want:?} in: {e}");
        assert!(
            e.contains("manifest test.toml"),
            "error does not name the file: {e}"
        );
    }
}

#[test]
fn expressions_are_checked_per_point() {
    // A grid that is 0 at some point, and a length that overflows when multiplied by the
    // element size, are both caught before any GPU work.
    let text = SAXPY.replacen("[\"min(ceil_div(n, block_x), 264)\"]", "[\"n / 2000\"]", 1);
    let e = format!("{:#}", expand(manifest(&text).unwrap()).unwrap_err());
    assert!(e.contains("grid[0] `n / 2000` is 0 at n=1000"), "{e}");
    let text = SAXPY.replacen("n = [1000, 1048576]", "n = [4611686018427387904]", 1);
    let e = format!("{:#}", expand(manifest(&text).unwrap()).unwrap_err());
    assert!(e.contains("elements of f32 overflow"), "{e}");
}

#[test]
fn signatures_must_match_the_manifest() {
    // saxpy.toml with one argument dropped: the kernel takes 4.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("saxpy.cu");
    std::fs::copy("tests/fixtures/kernels/saxpy.cu", &src).unwrap();
    let m = dir.path().join("m.toml");
    std::fs::write(
        &m,
        SAXPY.replacen(
            "args = [\"a\", \"x\", \"y\", \"len\"]",
            "args = [\"a\", \"x\", \"y\"]",
            1,
        ),
    )
    .unwrap();
    let e = err(&["--manifest", m.to_str().unwrap()]);
    assert!(e.contains("takes 4 parameters but the manifest"), "{e}");
    std::fs::write(
        &m,
        SAXPY.replacen(
            "args = [\"a\", \"x\", \"y\", \"len\"]",
            "args = [\"x\", \"a\", \"y\", \"len\"]",
            1,
        ),
    )
    .unwrap();
    let e = err(&["--manifest", m.to_str().unwrap()]);
    assert!(
        e.contains("argument 1 (`a`) is a scalar in the source"),
        "{e}"
    );
}

#[test]
fn device_cpu_lists_the_sweep_and_cuda_needs_the_feature() {
    let a = args(&[
        "--manifest",
        "tests/fixtures/kernels/fault.toml",
        "--device",
        "cpu",
    ]);
    opbench::kernels::main(a).unwrap();
    if !cfg!(feature = "cuda") {
        let e = opbench::kernels::main(args(&["--manifest", "tests/fixtures/kernels/fault.toml"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("without the `cuda` feature"), "{e}");
        assert!(e.contains("--device cpu"), "{e}");
    }
}

#[test]
fn the_committed_report_is_the_committed_artifact_rendered() {
    // artifacts/kernels_report.txt came from the H200 run that wrote artifacts/kernels.json; the
    // report is a pure function of the artifact, so rendering the JSON again must give it back.
    let path = Path::new("artifacts/kernels.json");
    if !path.exists() {
        panic!("artifacts/kernels.json is missing: it is committed with kernel_bench");
    }
    let a = opbench::artifact::read_artifact(path).unwrap();
    assert_eq!(a.kind, "kernels");
    assert!(a
        .results
        .iter()
        .all(|r| r.benchmark == "user_kernel" && r.params.contains_key("block")));
    assert!(a
        .results
        .iter()
        .any(|r| r.metrics.contains_key("ncu_memory_throughput_pct")));
    let text = opbench::kernels::report::render(&a);
    let committed = std::fs::read_to_string("artifacts/kernels_report.txt").unwrap();
    assert_eq!(text, committed);
}
