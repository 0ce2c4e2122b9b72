//! `layernorm_bench`'s command line: its arguments, and the run they ask for (sweep, table).

use super::{plan, report, sweep, Dtype, Shape, SweepConfig};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Device {
    /// candle and our kernel on GPU 0 (needs a build with `--features cuda`).
    Cuda,
    /// The f64 reference against candle's CPU LayerNorm only, to test the artifact's shape.
    Cpu,
}

/// LayerNorm forward, y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension:
/// candle's fused kernel (candle_nn::ops::layer_norm) against ours (kernels/layernorm.cu).
///
/// Each point (shape x dtype) draws fresh random inputs, checks both outputs against a float64
/// CPU reference (relative L2 error, f32 <= 1e-5, f16/bf16 <= 1e-2; a failed point is never
/// timed), then times both with CUDA events, warm (back-to-back launches on one buffer set,
/// divided) and cold (by default back-to-back launches cycling through enough buffer sets that
/// each launch finds its input evicted from L2; `--timing flush` flushes L2 before each launch
/// instead). GB/s counts x read once + y written once, and is also given as a percentage of the
/// 1 GiB device-to-device copy bandwidth measured in the same process; a copy of the same
/// bytes, timed the same way, is reported beside it.
/// Results are written as they come to OUT.partial, then to OUT. Progress goes to stderr; a
/// table of the results and the LayerNorm performance bars are printed at the end.
///
/// Without a GPU the cuda run stops with an error; `--device cpu` runs the reference and
/// candle's CPU LayerNorm (host-clock timing) on a small sweep instead.
#[derive(Parser, Debug)]
#[command(
    version,
    after_help = "Examples:\n  layernorm_bench --out artifacts/layernorm.json\n  \
                  layernorm_bench --device cpu --shape 64x1025 --dtype f32 --out /tmp/ln.json"
)]
pub struct Args {
    /// Where to run.
    #[arg(long, value_enum, default_value = "cuda")]
    device: Device,
    /// Shape to run, ROWSxCOLS or a tensor shape like 4x512x1024 (normalized over the last
    /// dimension); repeatable. Default on cuda: 4x512x1024, 4096x{1024,2048,4096,8192},
    /// 16384x8192, 32768x4096, 1x2048; on cpu: 4x512x1024, 64x1025, 1x2048.
    #[arg(long = "shape", value_name = "SHAPE", allow_negative_numbers = true)]
    shapes: Vec<Shape>,
    /// Element type of x, gamma, beta and y: f32, f16 or bf16; repeatable [default: all three].
    #[arg(long = "dtype", value_parser = super::dtype::parse)]
    dtypes: Vec<Dtype>,
    /// The epsilon added to the variance.
    #[arg(
        long,
        default_value_t = 1e-5,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive_f32
    )]
    eps: f32,
    /// Untimed launches before each measurement.
    #[arg(
        long,
        default_value_t = 10,
        allow_negative_numbers = true,
        value_parser = crate::cli::count
    )]
    warmup: usize,
    #[command(flatten)]
    sampling: crate::harness::SamplingArgs,
    /// Launches per warm sample (the time is divided by it).
    #[arg(
        long,
        default_value_t = 20,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    batch: usize,
    /// Row bytes each thread of our kernel holds (16, 32, 64, 128 or 256): fewer means more
    /// threads per row [default: 64; 128 where that keeps a row in one warp with <= 32
    /// values per thread (f32 rows up to 1024) or out of the long-row kernel; 16 with fewer
    /// than 128 rows].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::positive)]
    bytes_per_thread: Option<usize>,
    /// Which of our kernel families may run: regs (the row in registers; rows too long for
    /// them use the long-row kernel), stream (regs on a persistent grid that loads each
    /// group's next row into registers while it finishes the current one) or pipe (an
    /// experimental cp.async ring). Shapes a family cannot serve (rows not 16-byte multiples,
    /// fewer than 128 rows) fall back to regs.
    #[arg(long, value_enum, default_value = "regs")]
    kernel: plan::KernelChoice,
    /// How many blocks our kernel's grid has: rows (one block per row group, handed out by
    /// the hardware as blocks finish), fill (persistent: as many blocks as fit at once) or
    /// even (persistent, the fewest blocks that need no more passes than fill, so every block
    /// gets the same number of row groups give or take one). The persistent grids measured
    /// slower for regs [default: rows for regs, fill for stream and pipe].
    #[arg(long, value_enum)]
    grid: Option<plan::GridChoice>,
    /// How our kernel reads x: auto (under an L2 evict-last policy for f32 tensors whose x
    /// holds at least 128 MiB, with the evict-first hint elsewhere: where each measured faster),
    /// first (the evict-first hint everywhere) or last (evict-last wherever the plan is the regs
    /// kernel with 16-byte vectors; other plans are unchanged). y is stored evict-first either way.
    #[arg(long, value_enum, default_value = "auto")]
    x_cache: plan::XCache,
    /// Persistent grids (fill, even): at most this many resident blocks per SM
    /// [default: as many as fit, from the occupancy query].
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    blocks_per_sm: Option<usize>,
    /// How rows are timed. rotate: cold = back-to-back launches cycling through buffer sets
    /// that together exceed L2 (no flush or event pair per launch; points too small for 64
    /// sets fall back to flush), warm = back to back on one set, both with the stream held
    /// while the host queues a sample. flush: cold = an L2 flush and
    /// one launch between two events per sample, warm = back to back without the hold.
    #[arg(long, value_enum, default_value = "rotate")]
    timing: sweep::TimingMethod,
    /// Cold rotation: the L2 sizes of other data that must pass between two launches on one
    /// buffer set (sets the number of sets).
    #[arg(
        long,
        default_value_t = crate::gpu::rotation::DEFAULT_L2_MULTIPLE,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    rotate_l2_multiple: usize,
    /// Seed of the random inputs [default: drawn at random, recorded in the artifact].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::count_u64)]
    seed: Option<u64>,
    /// Artifact to write.
    #[arg(long, default_value = "artifacts/layernorm.json")]
    out: PathBuf,
    /// Replace --out even when it holds another benchmark's artifact or a run from another
    /// device or GPU (without this flag such a file is left alone and the run stops).
    #[arg(long)]
    overwrite: bool,
    /// Print the results table and bar checks of an existing layernorm artifact and exit
    /// (another kind of artifact is an error).
    #[arg(long, value_name = "ARTIFACT")]
    table: Option<PathBuf>,
    /// Merge mode (no benchmark): add the rows of a peer file written by
    /// bench/peers/layernorm_peers.py (torch, torch-compile, triton) to the layernorm artifact
    /// at --out, which must be of the same GPU and hold every point the file names; repeatable.
    /// A peer row of the same implementation and point replaces the old one.
    #[arg(long = "merge", value_name = "PEERS.json", conflicts_with = "table")]
    merge: Vec<PathBuf>,
}

fn print_summary(path: &std::path::Path) -> anyhow::Result<()> {
    let a = crate::artifact::read_artifact_of_kind(path, "layernorm")?;
    println!("{}", report::markdown_table(&a));
    if let Some(peers) = super::peer_report::markdown_table(&a) {
        println!("{peers}");
    }
    for line in report::bar_report(&a) {
        println!("{line}");
    }
    Ok(())
}

/// Runs `layernorm_bench` with its parsed arguments.
pub fn run(mut args: Args) -> anyhow::Result<()> {
    crate::cli::dedup_warn("--shape", &mut args.shapes);
    crate::cli::dedup_warn("--dtype", &mut args.dtypes);
    if let Some(path) = &args.table {
        return print_summary(path);
    }
    if !args.merge.is_empty() {
        crate::cli::dedup_warn_by("--merge", &mut args.merge, |p| p.display().to_string());
        for line in super::merge::merge(&args.out, &args.merge)? {
            println!("{line}");
        }
        return print_summary(&args.out);
    }
    let cpu = args.device == Device::Cpu;
    let cfg = SweepConfig {
        shapes: if !args.shapes.is_empty() {
            args.shapes
        } else if cpu {
            sweep::default_cpu_shapes()
        } else {
            sweep::default_gpu_shapes()
        },
        dtypes: if args.dtypes.is_empty() {
            crate::layernorm::dtype::LAYERNORM_DTYPES.to_vec()
        } else {
            args.dtypes
        },
        eps: args.eps,
        warmup: args.warmup,
        sampling: args.sampling.sampling(),
        batch: args.batch,
        bytes_per_thread: args.bytes_per_thread,
        kernel: args.kernel,
        grid: args.grid,
        x_cache: args.x_cache,
        blocks_per_sm: args.blocks_per_sm,
        timing: args.timing,
        rotate_l2_multiple: args.rotate_l2_multiple,
        seed: args.seed.unwrap_or_else(rand::random),
        out: args.out,
        overwrite: args.overwrite,
    };
    let path = match args.device {
        Device::Cpu => crate::layernorm::cpu::run(&cfg)?,
        Device::Cuda => run_cuda(&cfg)?,
    };
    eprintln!("wrote {}", path.display());
    print_summary(&path)
}

#[cfg(feature = "cuda")]
fn run_cuda(cfg: &SweepConfig) -> anyhow::Result<PathBuf> {
    crate::layernorm::gpu::run(cfg)
}

#[cfg(not(feature = "cuda"))]
fn run_cuda(_cfg: &SweepConfig) -> anyhow::Result<PathBuf> {
    anyhow::bail!(
        "this layernorm_bench was built without GPU support, so --device cuda cannot run: \
         rebuild with `cargo build --release --features cuda` on a CUDA setup, or pass --device cpu"
    )
}
