//! kernel_bench's command line (clap derive), kept in the library so tests can build it.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

/// Where the work runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Device {
    /// Compile with NVRTC, check and time every point on the GPU.
    Cuda,
    /// No GPU: check the manifest against the source's kernel signatures, compile the source
    /// with NVRTC when this build has it (`--features cuda`; otherwise it says the source was
    /// not compiled), evaluate every expression and print the sweep.
    Cpu,
}

/// Which compiler builds the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompilerChoice {
    /// NVRTC in-process; when it fails (a host header, host code) or cannot be loaded, nvcc.
    Auto,
    /// nvcc (from $NVCC, $CUDA_HOME, $CUDA_ROOT, $CUDA_PATH, $PATH or /usr/local/cuda) to a
    /// cubin for the GPU: whole files with host code, host headers and main().
    Nvcc,
    /// NVRTC in-process to PTX: device-only files (host code guarded by
    /// `#ifndef __CUDACC_RTC__`).
    Nvrtc,
}

/// How launches are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Back-to-back launches between two CUDA events, time divided by the count.
    Warm,
    /// L2 flushed before each launch, one launch between two events.
    Cold,
}

/// Benchmark your own CUDA kernels: compile a .cu file (NVRTC, or nvcc for whole files with host
/// code), run every combination of
/// parameters and block sizes, check each kernel against a reference kernel on fresh random
/// inputs (outputs poisoned with NaN first), time the ones that pass with CUDA events, and
/// optionally profile each point with Nsight Compute.
///
/// Two ways to describe kernels:
///
/// 1. Built-in matmul convention (no manifest): kernels whose parameters are
///    `(float* A, float* B, float* C, int ...)` with the ints named from M, N, K.
///    A is M×K, B is K×N, C is M×N (row-major); grid = (ceil(N/block_x), ceil(M/block_y));
///    block 16x16 unless --block; FLOPs = 2·M·N·K; the first --kernel is the reference and is
///    itself checked against a float64 CPU matmul. M and K default to N.
///
///    kernel_bench --source examples/matmul_kernels.cu --kernel matmul_naive
///    --kernel matmul_tiled --param N=256,512,1024
///
/// 2. A TOML manifest for anything else (buffers with type, size expression, role and
///    initialisation; scalar arguments; block sizes to sweep; grid and shared memory as
///    expressions; FLOP and byte counts; the reference kernel). See
///    examples/matmul_kernels.toml and docs/notes/kernels.md.
///
///    kernel_bench --manifest examples/matmul_kernels.toml --param M=512,1024 --profile
///
/// Kernels are named as written in the source: `layernorm_forward_kernel3` (C++ or extern "C"),
/// a template instance `softmax_kernel<256, float>`, an overload `scale(float*, int)`. Files
/// written for a program (host code, host headers, main()) compile with nvcc:
///
///    kernel_bench --manifest tests/fixtures/kernels/llmc/layernorm_forward.toml --compiler nvcc
///
/// Writes artifacts/kernels.json (the opbench artifact schema, kind "kernels") and
/// artifacts/kernels_report.txt (per parameter set, kernels sorted by time).
#[derive(Debug, Clone, Parser)]
#[command(name = "kernel_bench", version, verbatim_doc_comment)]
pub struct Args {
    /// The CUDA source file. With --manifest it replaces the manifest's `source`.
    #[arg(long, value_name = "FILE.cu")]
    pub source: Option<PathBuf>,
    /// A TOML manifest describing the kernels (see examples/matmul_kernels.toml).
    #[arg(long, value_name = "FILE.toml")]
    pub manifest: Option<PathBuf>,
    /// A kernel to run (repeat the flag). With a manifest: a subset of its [[kernel]] tables
    /// (the reference always runs). Without: the kernels, the first being the reference.
    #[arg(long = "kernel", value_name = "NAME")]
    pub kernels: Vec<String>,
    /// Values of a parameter to sweep, e.g. N=128,256,512 (repeat for each parameter). With a
    /// manifest, replaces that parameter's list; the name must be one the manifest defines.
    #[arg(long = "param", value_name = "NAME=V1,V2,...")]
    pub params: Vec<String>,
    /// Block shapes to sweep for every kernel, e.g. 16x16,32x8 or 128,256 (replaces the
    /// manifest's `block` lists).
    #[arg(
        long = "block",
        value_name = "XxY",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub blocks: Vec<String>,
    /// cuda runs the kernels; cpu validates, compiles with NVRTC or nvcc where they are here,
    /// and prints the sweep (no GPU needed).
    #[arg(long, value_enum, default_value_t = Device::Cuda)]
    pub device: Device,
    /// The compiler: auto (NVRTC, then nvcc if NVRTC fails), nvcc or nvrtc.
    #[arg(long, value_enum, default_value_t = CompilerChoice::Auto)]
    pub compiler: CompilerChoice,
    /// A folder searched for `#include` after the source's own (repeat the flag); added to the
    /// manifest's `include` list.
    #[arg(long = "include", value_name = "DIR")]
    pub includes: Vec<PathBuf>,
    /// With --device cpu: also write the sweep's points as JSON (kernel, block, grid, shared
    /// memory, parameters) to this file.
    #[arg(long, value_name = "FILE.json")]
    pub plan_json: Option<PathBuf>,
    /// warm: back-to-back launches; cold: L2 flushed before each timed launch.
    #[arg(long, value_enum, default_value_t = Mode::Warm)]
    pub mode: Mode,
    /// The artifact to write (a `.partial` copy is kept up to date while the run goes on).
    #[arg(
        long,
        default_value = "artifacts/kernels.json",
        value_name = "FILE.json"
    )]
    pub out: PathBuf,
    /// Replace --out even when it holds another benchmark's artifact or a run from another
    /// device or GPU (without this flag such a file is left alone and the run stops).
    #[arg(long)]
    pub overwrite: bool,
    /// The text report [default: <out folder>/<out stem>_report.txt].
    #[arg(long, value_name = "FILE.txt")]
    pub report: Option<PathBuf>,
    /// Profile each measured point once more under Nsight Compute (ncu) and attach memory and
    /// compute throughput %, occupancy, SM efficiency, DRAM bytes and the achieved FLOP rate.
    #[arg(long)]
    pub profile: bool,
    /// The ncu executable used by --profile.
    #[arg(long, default_value = "ncu", value_name = "PATH")]
    pub ncu: String,
    /// Stop ncu after this many seconds (the run then keeps going without metrics).
    #[arg(
        long,
        default_value_t = 600,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        value_parser = crate::cli::positive_u64
    )]
    pub profile_budget_s: u64,
    /// Also save ncu's raw CSV output here.
    #[arg(long, value_name = "FILE.csv")]
    pub ncu_raw: Option<PathBuf>,
    /// When a measurement stops sampling.
    #[command(flatten)]
    pub sampling: crate::harness::SamplingArgs,
    /// Seed of the random inputs [default: drawn at random and recorded in the artifact].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::count_u64)]
    pub seed: Option<u64>,
    /// GPU target, e.g. compute_90a or sm_90 (NVRTC gets compute_XY, nvcc sm_XY) [default: the
    /// GPU's; 90 with --device cpu].
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    /// Skip measuring the copy-bandwidth and f32 cuBLAS ceilings.
    #[arg(long)]
    pub no_ceilings: bool,
    /// GPU index.
    #[arg(
        long,
        default_value_t = 0,
        allow_negative_numbers = true,
        value_parser = crate::cli::count
    )]
    pub gpu: usize,
    /// Internal: the process ncu profiles; launches each listed point once and writes nothing.
    #[arg(long, hide = true, value_name = "IDS")]
    pub ncu_child: Option<String>,
    /// Internal: continue the run whose rows are in this file (`<out>.partial`) from the first
    /// point it does not hold; set on the fresh process started after a kernel faulted.
    #[arg(long, hide = true, value_name = "FILE.partial")]
    pub resume_partial: Option<PathBuf>,
}

impl Args {
    /// The report path: --report, or `<stem>_report.txt` beside --out.
    pub fn report_path(&self) -> PathBuf {
        self.report
            .clone()
            .unwrap_or_else(|| crate::artifact::report_path_beside(&self.out))
    }
}
