//! `comm_bench`'s command line: its arguments, the run they ask for, and the checks made
//! before any GPU is touched (a launcher's rank environment, at least two ranks).

use super::ours::Kernel;
use super::plan::{parse_bytes, DEFAULT_MAX_BYTES, DEFAULT_MIN_BYTES};
use super::reference::DTYPES;
use super::{group::DEFAULT_RENDEZVOUS_TIMEOUT, Collective, RankEnv};
use crate::dtype::Dtype;
use crate::sampling::Sampling;
use anyhow::Result;
use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// Collectives across the GPUs of one host (or several), through NCCL: all-reduce, all-gather,
/// reduce-scatter and broadcast, message sizes doubling from --min-bytes to --max-bytes, in f32
/// and bf16. One process per GPU, started by a launcher the way torchrun starts ranks:
///
///   torchrun --standalone --nproc-per-node 4 --no-python comm_bench --out artifacts/comm.json
///
/// (Slurm's srun, or a Kubernetes indexed Job with WORLD_SIZE, work too: see below.) Each rank
/// reads RANK, WORLD_SIZE, LOCAL_RANK (its GPU), MASTER_ADDR and MASTER_PORT; rank 0 listens
/// for the others on MASTER_PORT (MASTER_PORT + 1 under torchrun, whose own store holds
/// MASTER_PORT; COMM_BENCH_PORT overrides) and hands out the NCCL id there. One GPU, or no
/// launcher, is an error: there is nothing to measure.
///
/// Every point (collective x dtype x size) is first run once on fresh random inputs and every
/// rank checks its output against a float64 host reference; only when every rank passed is
/// the point timed. A sample is k back-to-back collectives between two CUDA events on each
/// rank (k chosen so a sample lasts at least --min-sample-us), after --warmup untimed ones;
/// the sample's time is the mean over ranks. Rank 0 decides when a point has enough samples
/// (the shared sampling flags) and tells the others after every sample, so no rank waits in a
/// collective the others left. algbw = bytes / time; busbw = algbw x nccl-tests' factor
/// (2(n-1)/n all-reduce, (n-1)/n all-gather and reduce-scatter, 1 broadcast).
///
/// Ceilings, measured by rank 0 before the sweep: the copy bandwidth from each GPU to each
/// other GPU (cuMemcpyPeerAsync, peer access enabled where the driver allows it) and the time
/// of an 8-byte all-reduce. Only rank 0 writes: OUT.partial as points finish, moved to OUT at
/// the end. NVLink multicast is off (NCCL_NVLS_ENABLE=0 unless set). --merge adds the rows of
/// bench/peers/comm_peers.py (torch.distributed at the same points) to OUT.
#[derive(Parser, Debug)]
#[command(version, verbatim_doc_comment)]
pub struct Args {
    /// Collective to run: all_reduce, all_gather, reduce_scatter or broadcast; repeatable
    /// [default: all four].
    #[arg(long = "collective", value_parser = parse_collective)]
    pub collectives: Vec<Collective>,
    /// Element type: f32 or bf16; repeatable [default: both].
    #[arg(long = "dtype", value_parser = parse_dtype)]
    pub dtypes: Vec<Dtype>,
    /// Smallest message, bytes or with K, M, G (binary) [default: 8].
    #[arg(long, value_parser = parse_bytes)]
    pub min_bytes: Option<u64>,
    /// Largest message [default: 4G]. Each rank holds two buffers of this size on its GPU and
    /// on the host, and checks every element.
    #[arg(long, value_parser = parse_bytes)]
    pub max_bytes: Option<u64>,
    /// Untimed collectives before each point's samples.
    #[arg(
        long,
        default_value_t = 5,
        allow_negative_numbers = true,
        value_parser = crate::cli::count
    )]
    pub warmup: usize,
    /// Collectives per sample are chosen so that one sample lasts at least this long. The ranks
    /// start a sample a few tens of microseconds apart (rank 0 tells each over TCP), and that
    /// skew lands in the sample once: at 1 ms it is a few percent of one small collective,
    /// at 50 us it doubled NCCL's 8-byte all-reduce time.
    #[arg(
        long,
        default_value_t = 1000.0,
        value_name = "US",
        allow_negative_numbers = true,
        value_parser = crate::cli::positive_f64
    )]
    pub min_sample_us: f64,
    #[command(flatten)]
    pub sampling: crate::harness::SamplingArgs,
    /// Seed of the random inputs [default: drawn by rank 0, recorded in the artifact].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::count_u64)]
    pub seed: Option<u64>,
    /// Also time our one-shot all-reduce (kernels/comm_oneshot.cu) at every all_reduce point
    /// up to this size, checked like NCCL's; 0 leaves it out. Experimental: it spins on flags
    /// in peer memory, so a bug there hangs every rank.
    #[arg(long, default_value = "0", value_parser = parse_bytes)]
    pub ours_max_bytes: u64,
    /// Which of our kernels --ours-max-bytes times: push (implementation "opbench", our
    /// all-reduce: each rank stores flagged lines into the others' memory and polls its own;
    /// one-shot, or two-shot from --ours-twoshot-from on 3 ranks and more), oneshot
    /// ("opbench-oneshot") or twoshot ("opbench-twoshot"): one of push's two kernels at every
    /// size, or pull ("opbench-pull": a flag per block, then loads from the others' memory);
    /// repeatable, to time several in one process [default: push].
    #[arg(long = "ours-kernel", value_parser = Kernel::parse)]
    pub ours_kernels: Vec<Kernel>,
    /// Message size from which our all-reduce (--ours-kernel push) runs its two-shot kernel on
    /// 3 ranks and more. The two-shot kernel sends 2(n-1)/n of the message from each rank
    /// instead of n-1 copies (half on 4 ranks), for one more trip over NVLink; on 2 ranks it
    /// sends as much as the one-shot kernel, so 2 ranks stay one-shot.
    #[arg(long, default_value = "128K", value_parser = parse_bytes)]
    pub ours_twoshot_from: u64,
    /// Also time NCCL's in-place all-reduce (implementation "nccl-inplace") at every
    /// all_reduce point: the call torch.distributed.all_reduce makes (the default NCCL rows are
    /// out of place, as nccl-tests' first column). Checked on the seeded inputs like the
    /// others; its timed calls run on zeros, as the torch peer's do, so that repeated sums of
    /// one buffer stay finite.
    #[arg(long)]
    pub nccl_in_place: bool,
    /// Skip the ceilings (peer copies, the 8-byte all-reduce).
    #[arg(long)]
    pub no_ceilings: bool,
    /// How long a rank keeps trying to reach rank 0, and rank 0 waits for the others.
    #[arg(
        long,
        default_value_t = DEFAULT_RENDEZVOUS_TIMEOUT.as_secs_f64(),
        value_name = "S",
        allow_negative_numbers = true,
        value_parser = crate::cli::positive_f64
    )]
    pub rendezvous_timeout_s: f64,
    /// Artifact rank 0 writes.
    #[arg(long, default_value = "artifacts/comm.json")]
    pub out: PathBuf,
    /// Replace --out even when it holds another benchmark's artifact or a run from another GPU.
    #[arg(long)]
    pub overwrite: bool,
    /// Merge mode (no benchmark, no launcher): add the rows of a file written by
    /// bench/peers/comm_peers.py to the comm artifact at --out, which must be of the same GPU
    /// and hold every point the file names; repeatable.
    #[arg(long = "merge", value_name = "PEERS.json")]
    pub merge: Vec<PathBuf>,
}

/// Longest `--rendezvous-timeout-s`: a day. Beyond it no rank is coming (and 1e300 s is more
/// than a `Duration` holds, a panic rather than an error).
pub const RENDEZVOUS_TIMEOUT_MAX_S: f64 = 86_400.0;

fn rendezvous_timeout(s: f64) -> Result<Duration> {
    if s > RENDEZVOUS_TIMEOUT_MAX_S {
        anyhow::bail!(
            "--rendezvous-timeout-s {s}: at most {RENDEZVOUS_TIMEOUT_MAX_S} (a day); give e.g. \
             --rendezvous-timeout-s 120"
        );
    }
    Ok(Duration::from_secs_f64(s))
}

fn parse_collective(s: &str) -> Result<Collective, String> {
    Collective::parse(s).map_err(|e| e.to_string())
}

fn parse_dtype(s: &str) -> Result<Dtype, String> {
    Dtype::parse_among(s, &DTYPES)
}

/// The sweep every rank runs, from its arguments.
#[derive(Debug, Clone)]
pub struct Config {
    pub collectives: Vec<Collective>,
    pub dtypes: Vec<Dtype>,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub warmup: usize,
    pub min_sample_us: f64,
    pub sampling: Sampling,
    pub seed: Option<u64>,
    /// Our one-shot all-reduce beside NCCL up to this many bytes (0: off).
    pub ours_max_bytes: u64,
    /// Our kernels timed there, in order.
    pub ours_kernels: Vec<Kernel>,
    /// Where `Kernel::Push` turns two-shot on 3 ranks and more.
    pub ours_twoshot_from: u64,
    /// NCCL's in-place all-reduce beside the out-of-place one.
    pub nccl_in_place: bool,
    pub ceilings: bool,
    pub rendezvous_timeout: Duration,
    pub out: PathBuf,
    pub overwrite: bool,
}

impl Config {
    pub fn from_args(mut a: Args) -> Result<Config> {
        crate::cli::dedup_warn("--collective", &mut a.collectives);
        crate::cli::dedup_warn_by("--dtype", &mut a.dtypes, |d| d.name().to_string());
        crate::cli::dedup_warn_by("--ours-kernel", &mut a.ours_kernels, |k| {
            k.name().to_string()
        });
        let sampling = a.sampling.sampling();
        sampling.check()?;
        let cfg = Config {
            collectives: if a.collectives.is_empty() {
                Collective::ALL.to_vec()
            } else {
                a.collectives
            },
            dtypes: if a.dtypes.is_empty() {
                DTYPES.to_vec()
            } else {
                a.dtypes
            },
            min_bytes: a.min_bytes.unwrap_or(DEFAULT_MIN_BYTES),
            max_bytes: a.max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
            warmup: a.warmup,
            min_sample_us: a.min_sample_us,
            sampling,
            seed: a.seed,
            ours_max_bytes: a.ours_max_bytes,
            ours_kernels: if a.ours_kernels.is_empty() {
                vec![Kernel::Push]
            } else {
                a.ours_kernels
            },
            ours_twoshot_from: a.ours_twoshot_from,
            nccl_in_place: a.nccl_in_place,
            ceilings: !a.no_ceilings,
            rendezvous_timeout: rendezvous_timeout(a.rendezvous_timeout_s)?,
            out: a.out,
            overwrite: a.overwrite,
        };
        // Refuse a bad size range before any rank starts waiting for the others.
        super::size_plan(cfg.collectives[0], 2, 1, cfg.min_bytes, cfg.max_bytes)?;
        Ok(cfg)
    }

    /// The names of our all-reduce kernels this run times, comma-separated.
    pub fn ours_kernel_names(&self) -> String {
        self.ours_kernels
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// What every rank must agree on, compared by rank 0 at the rendezvous.
    pub fn plan_text(&self) -> String {
        format!(
            "collectives {}; dtypes {}; bytes {}..{}; warmup {}; min sample {} us; ceilings {}; \
             ours up to {} B ({}, two-shot from {} B); nccl in place {}; {}; seed {}",
            self.collectives
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(","),
            self.dtypes
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(","),
            self.min_bytes,
            self.max_bytes,
            self.warmup,
            self.min_sample_us,
            self.ceilings,
            self.ours_max_bytes,
            self.ours_kernel_names(),
            self.ours_twoshot_from,
            self.nccl_in_place,
            self.sampling.describe(),
            self.seed
                .map_or("drawn by rank 0".to_string(), |s| s.to_string()),
        )
    }
}

/// Runs `comm_bench` with its parsed arguments.
pub fn run(args: Args) -> Result<()> {
    if !args.merge.is_empty() {
        let mut files = args.merge.clone();
        crate::cli::dedup_warn_by("--merge", &mut files, |p| p.display().to_string());
        for line in super::merge::merge(&args.out, &files)? {
            println!("{line}");
        }
        return Ok(());
    }
    // NVLink multicast stays off: the lab measures the transports every host has.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    // The flags first: a bad one is named before the launcher environment is looked at.
    let cfg = Config::from_args(args)?;
    let env = RankEnv::from_env()?;
    run_cuda(&cfg, &env)
}

#[cfg(feature = "cuda")]
fn run_cuda(cfg: &Config, env: &RankEnv) -> Result<()> {
    if let Some(path) = super::gpu::run(cfg, env)? {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn run_cuda(_cfg: &Config, env: &RankEnv) -> Result<()> {
    anyhow::bail!(
        "rank {}: this comm_bench was built without GPU support, so it cannot run collectives: \
         rebuild with `cargo build --release --features cuda --bin comm_bench` on a CUDA setup",
        env.rank
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(args: &[&str]) -> Result<Config> {
        let mut v = vec!["comm_bench"];
        v.extend_from_slice(args);
        Config::from_args(Args::try_parse_from(v)?)
    }

    #[test]
    fn defaults_are_the_whole_sweep() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.collectives, Collective::ALL.to_vec());
        assert_eq!(c.dtypes, vec![Dtype::F32, Dtype::Bf16]);
        assert_eq!((c.min_bytes, c.max_bytes), (8, 4 << 30));
        assert!(c.ceilings);
        assert_eq!(c.ours_max_bytes, 0);
        assert_eq!(
            cfg(&["--ours-max-bytes", "256K"]).unwrap().ours_max_bytes,
            256 << 10
        );
        assert_eq!(c.ours_kernels, vec![Kernel::Push]);
        let both = cfg(&["--ours-kernel", "pull", "--ours-kernel", "push"]).unwrap();
        assert_eq!(both.ours_kernels, vec![Kernel::Pull, Kernel::Push]);
        assert_ne!(both.plan_text(), c.plan_text());
        assert_eq!(
            c.ours_twoshot_from,
            crate::comm::ours::DEFAULT_TWOSHOT_FROM_BYTES
        );
        let from = cfg(&["--ours-twoshot-from", "64K"]).unwrap();
        assert_eq!(from.ours_twoshot_from, 64 << 10);
        assert_ne!(from.plan_text(), c.plan_text());
        assert!(!c.nccl_in_place);
        let in_place = cfg(&["--nccl-in-place"]).unwrap();
        assert!(in_place.nccl_in_place);
        assert_ne!(in_place.plan_text(), c.plan_text());
        let e = cfg(&["--ours-kernel", "ll"]).unwrap_err().to_string();
        assert!(
            e.contains("--ours-kernel") && e.contains("push, oneshot, twoshot or pull"),
            "{e}"
        );
    }

    #[test]
    fn the_plan_text_differs_when_the_run_does() {
        let a = cfg(&["--collective", "all-reduce", "--max-bytes", "1M"]).unwrap();
        let b = cfg(&["--collective", "all_reduce", "--max-bytes", "2M"]).unwrap();
        assert_eq!(a.collectives, vec![Collective::AllReduce]);
        assert_ne!(a.plan_text(), b.plan_text());
        assert_eq!(
            a.plan_text(),
            cfg(&["--collective", "all_reduce", "--max-bytes", "1M"])
                .unwrap()
                .plan_text()
        );
        assert!(a.plan_text().contains("drawn by rank 0"));
        let no_ceilings = cfg(&[
            "--collective",
            "all_reduce",
            "--max-bytes",
            "1M",
            "--no-ceilings",
        ]);
        assert_ne!(a.plan_text(), no_ceilings.unwrap().plan_text());
    }

    #[test]
    fn bad_flags_name_themselves() {
        let e = cfg(&["--dtype", "f16"]).unwrap_err().to_string();
        assert!(e.contains("--dtype") && e.contains("bf16"), "{e}");
        let e = cfg(&["--collective", "allreduce"]).unwrap_err().to_string();
        assert!(e.contains("all_reduce"), "{e}");
        let e = cfg(&["--min-bytes", "1M", "--max-bytes", "1K"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--min-bytes 1048576 and --max-bytes 1024"),
            "{e}"
        );
        // Above 2^63 the doubling used to wrap to 0 and loop forever.
        for max in ["18446744073709551615", "9223372036854775809", "2000G"] {
            let e = cfg(&["--max-bytes", max]).unwrap_err().to_string();
            assert!(e.contains("--max-bytes") && e.contains("at most"), "{e}");
        }
        assert!(cfg(&["--max-bytes", "1024G"]).is_ok());
        let e = cfg(&["--rendezvous-timeout-s", "1e300"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--rendezvous-timeout-s") && e.contains("at most"),
            "{e}"
        );
    }
}
