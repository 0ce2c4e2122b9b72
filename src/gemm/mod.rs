//! The GEMM benchmark (`gemm_bench`): cuBLAS, candle and a ladder of our own kernels over
//! square, axes and model shapes, checked, timed, and written as a `gemm` artifact plus a
//! text report.

pub mod args;
pub mod check;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod dtype;
pub mod impls;
pub mod memory;
pub mod metrics;
pub mod plan;
pub mod record;
pub mod report;
pub mod shapes;
pub mod splitk;

pub use args::GemmArgs;

use anyhow::Result;
use args::DeviceKind;

/// Runs the sweep the arguments describe.
pub fn run(args: &GemmArgs) -> Result<()> {
    let args = &args.deduplicated();
    args.sampling.sampling().check()?;
    let report = args.report_path();
    crate::cli::output::check_output(
        &crate::cli::output::Output {
            flag: "--report",
            path: &report,
            what: "a GEMM report",
            ours: |b| crate::cli::output::starts_with(b, "GEMM report:"),
        },
        &[&args.out],
        args.overwrite,
    )?;
    let points = plan::build(args)?;
    match args.device {
        DeviceKind::Cpu => cpu::run(args, &points),
        #[cfg(feature = "cuda")]
        DeviceKind::Cuda => cuda::run(args, &points),
        #[cfg(not(feature = "cuda"))]
        DeviceKind::Cuda => anyhow::bail!(
            "this gemm_bench was built without the `cuda` feature, so it cannot use a GPU: \
             rebuild with `cargo build --release --features cuda`, or pass --device cpu to time \
             candle's CPU matmul"
        ),
    }
}
