//! Command-line options of `gemm_bench` (clap derive), kept in the library so tests parse them.

use super::dtype::Dtype;
use super::impls::Impl;
use super::shapes::{BLayout, LayerOp};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;

/// Where the measured work runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceKind {
    /// The GPU: cuBLAS, candle and our kernel ladder (needs a build with --features cuda).
    Cuda,
    /// The CPU: candle's CPU matmul only, timed with the host clock (tests the artifact path).
    Cpu,
}

/// Which model's projection shapes to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    /// TinyLlama-1.1B (hidden 2048, intermediate 5632, 4 KV heads x 64, vocabulary 32000).
    #[value(name = "tinyllama-1.1b")]
    TinyLlama,
    /// No model shapes.
    None,
}

/// Whether L2 is flushed before each timed launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum L2Policy {
    /// Cold for model shapes (their weights are streamed from memory in a real forward pass),
    /// warm (back-to-back launches) for square and axes shapes, as library benchmarks do.
    Auto,
    /// Back-to-back launches, time divided by the batch.
    Warm,
    /// L2 flushed before every timed launch.
    Cold,
}

/// GEMM sweeps: cuBLAS against a ladder of our own kernels, with roofline data.
///
/// Computes C[M,N] = A[M,K] * B[K,N] (row-major, f32 accumulation) for every shape, dtype and
/// implementation, checks each output against a float64 CPU reference on sampled rows and
/// against cuBLAS on the whole matrix (outputs poisoned with NaN first), then times the ones
/// that pass with CUDA events. Writes the artifact (JSON, rewritten after every shape so an
/// interrupted run keeps what it finished) and a text report sorted by time.
///
/// Shapes: --square sizes (M = N = K), the Cartesian product of --m/--n/--k, and the
/// projection shapes of --model at --tokens (M = tokens, N = out features, K = in features).
/// Axis syntax: `1024,2048`, `4k`, `1024:8192:x2` (powers of two), `128:512:+128`, `none`.
///
/// Example: gemm_bench --square 4096 --dtypes bf16 --model none --impls cublas,mma_pipelined_128x128
#[derive(Debug, Clone, Parser)]
#[command(version, verbatim_doc_comment)]
pub struct GemmArgs {
    /// Where to run: cuda, or cpu (candle's CPU matmul only).
    #[arg(long, value_enum, default_value = "cuda")]
    pub device: DeviceKind,

    /// Square sizes M = N = K (axis syntax, or `none`) [default: 1024:8192:x2 on cuda,
    /// 64:256:x2 on cpu].
    #[arg(long, allow_negative_numbers = true)]
    pub square: Option<String>,

    /// M axis; with --n and --k adds their Cartesian product (all three are required).
    #[arg(long, allow_negative_numbers = true)]
    pub m: Option<String>,
    /// N axis (see --m).
    #[arg(long, allow_negative_numbers = true)]
    pub n: Option<String>,
    /// K axis (see --m).
    #[arg(long, allow_negative_numbers = true)]
    pub k: Option<String>,

    /// Dtypes of the square and axes shapes, of f32, tf32, f16, bf16 [default: all four on
    /// cuda, f32 on cpu].
    #[arg(long, value_delimiter = ',', value_parser = super::dtype::parse)]
    pub dtypes: Vec<Dtype>,

    /// Model whose projection shapes are added [default: tinyllama-1.1b on cuda, none on cpu].
    #[arg(long, value_enum)]
    pub model: Option<ModelArg>,

    /// Token counts (M = batch x sequence) of the model shapes.
    #[arg(
        long,
        default_value = "1,8,32,128,512,2048",
        allow_negative_numbers = true
    )]
    pub tokens: String,

    /// Projections of the model shapes [default: all].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub layer_ops: Vec<LayerOp>,

    /// Dtypes of the model shapes (f32, tf32, f16, bf16).
    #[arg(long, value_delimiter = ',', default_value = "bf16", value_parser = super::dtype::parse)]
    pub model_dtypes: Vec<Dtype>,

    /// How B is stored, for every shape: kn (row-major [K, N]) and/or nk (row-major [N, K],
    /// a linear layer's weight: C = A * W^T). nk points run only the implementations that
    /// read that layout (cuBLAS, candle and the warp-specialized TMA kernels).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "kn")]
    pub b_layouts: Vec<BLayout>,

    /// Implementations to run [default: every one that supports the dtype; on model shapes
    /// cuBLAS, candle and the pipelined tensor-core kernels].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub impls: Vec<Impl>,

    /// Implementations never to run (applied after --impls), e.g. a kernel that faulted in a
    /// smoke run.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub skip_impls: Vec<Impl>,

    /// Skip the naive and coalesced kernels above this many GFLOP (2*M*N*K / 1e9); 140 lets
    /// them run up to 4096^3, where a launch already takes a fraction of a second.
    #[arg(
        long,
        default_value_t = 140.0,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive_f64
    )]
    pub slow_max_gflop: f64,

    /// L2 policy for timing.
    #[arg(long, value_enum, default_value = "auto")]
    pub l2: L2Policy,

    /// When a measurement stops sampling (on the CPU, --point-budget-ms sizes a fixed
    /// count of 5 to 100 samples).
    #[command(flatten)]
    pub sampling: crate::harness::SamplingArgs,

    /// Rows of C compared with the float64 CPU reference (all rows when M is smaller).
    #[arg(
        long,
        default_value_t = 16,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    pub check_rows: usize,

    /// M = N = K of the cuBLAS GEMM that measures each dtype's matmul ceiling before the sweep
    /// (halved until it fits in memory); 0 uses only the sweep's own cuBLAS points.
    #[arg(
        long,
        default_value_t = 8192,
        allow_negative_numbers = true,
        value_parser = crate::cli::count
    )]
    pub ceiling_size: usize,

    /// Seed for the random inputs [default: drawn from the clock, recorded in the artifact].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::count_u64)]
    pub seed: Option<u64>,

    /// Artifact path.
    #[arg(long, default_value = "artifacts/gemm.json")]
    pub out: PathBuf,

    /// Replace --out even when it holds another benchmark's artifact or a run from another
    /// device or GPU (without this flag such a file is left alone and the run stops).
    #[arg(long)]
    pub overwrite: bool,

    /// Text report path [default: <out folder>/<out stem>_report.txt].
    #[arg(long)]
    pub report: Option<PathBuf>,

    /// CUDA device ordinal.
    #[arg(
        long,
        default_value_t = 0,
        allow_negative_numbers = true,
        value_parser = crate::cli::count
    )]
    pub gpu: usize,
}

impl GemmArgs {
    /// A copy with every repeated value of a list flag dropped (first kept), each with a
    /// warning on stderr: a repeated dtype or projection would measure the same points twice.
    pub fn deduplicated(&self) -> GemmArgs {
        use crate::cli::{dedup_warn, dedup_warn_by};
        let mut a = self.clone();
        dedup_warn("--dtypes", &mut a.dtypes);
        dedup_warn("--model-dtypes", &mut a.model_dtypes);
        dedup_warn_by("--layer-ops", &mut a.layer_ops, |o| o.name().to_string());
        dedup_warn_by("--b-layouts", &mut a.b_layouts, |l| l.name().to_string());
        dedup_warn_by("--impls", &mut a.impls, |i| i.name().to_string());
        dedup_warn_by("--skip-impls", &mut a.skip_impls, |i| i.name().to_string());
        a
    }

    /// The report path: --report, or `<stem>_report.txt` beside --out.
    pub fn report_path(&self) -> PathBuf {
        self.report
            .clone()
            .unwrap_or_else(|| crate::artifact::report_path_beside(&self.out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_enums() {
        let a = GemmArgs::try_parse_from([
            "gemm_bench",
            "--device",
            "cpu",
            "--dtypes",
            "f32,bf16",
            "--impls",
            "cublas,warptile_bk16",
            "--model",
            "tinyllama-1.1b",
            "--layer-ops",
            "q_o_proj,lm_head",
        ])
        .unwrap();
        assert_eq!(a.device, DeviceKind::Cpu);
        assert_eq!(a.dtypes, vec![Dtype::F32, Dtype::Bf16]);
        assert_eq!(a.impls, vec![Impl::Cublas, Impl::WarptileBk16]);
        assert_eq!(a.model, Some(ModelArg::TinyLlama));
        assert_eq!(a.layer_ops, vec![LayerOp::QOProj, LayerOp::LmHead]);
        assert_eq!(a.model_dtypes, vec![Dtype::Bf16]);
        assert_eq!(a.b_layouts, vec![BLayout::Kn]);
        let a = GemmArgs::try_parse_from(["gemm_bench", "--b-layouts", "kn,nk"]).unwrap();
        assert_eq!(a.b_layouts, vec![BLayout::Kn, BLayout::Nk]);
        assert!(GemmArgs::try_parse_from(["gemm_bench", "--b-layouts", "t"]).is_err());
        assert!(GemmArgs::try_parse_from(["gemm_bench", "--dtypes", "fp8"]).is_err());
    }

    #[test]
    fn report_goes_beside_the_artifact_unless_given() {
        let a = GemmArgs::try_parse_from(["gemm_bench", "--out", "/tmp/x/run.json"]).unwrap();
        assert_eq!(a.report_path(), PathBuf::from("/tmp/x/run_report.txt"));
        let a = GemmArgs::try_parse_from(["gemm_bench"]).unwrap();
        assert_eq!(a.report_path(), PathBuf::from("artifacts/gemm_report.txt"));
        let a = GemmArgs::try_parse_from(["gemm_bench", "--report", "r.txt"]).unwrap();
        assert_eq!(a.report_path(), PathBuf::from("r.txt"));
    }
}
