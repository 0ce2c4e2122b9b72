//! `llm_bench`'s command line: its arguments, and the run, merge or self-test they ask for.

use super::{BenchOptions, ChatTemplate, DeviceChoice, DtypeChoice, Source};
use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;

/// Where the weights come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Weights {
    /// From --model-dir, or from the Hugging Face cache / Hub (--model).
    Real,
    /// The architecture of each --config with random weights made on the device (no download).
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// Measures Llama inference like a serving benchmark, with candle's Llama (candle-transformers
/// 0.11.1) and, with --impl opbench, our own decode path (one CUDA graph per step): warm-up, then
/// repeats of prefill of a P-token prompt and greedy decode of T new tokens, synchronized
/// before every clock read. Reports TTFT, prefill and decode tokens/s, the per-token decode
/// latency distribution, end-to-end latency, peak device memory, and decode speed as a
/// fraction of its bandwidth bound (weights + KV cache read per step / copy bandwidth measured
/// in the same process).
///
/// Model sources: --model ID (Hugging Face cache, downloading when missing), --model-dir DIR,
/// or --weights random with --config NAME[,NAME...] (tinyllama-1.1b and a ladder of smaller
/// Llama configs; `ladder` runs them all).
///
/// Merge mode (no benchmark): --merge FILE and/or --parity-dir DIR add the peers' rows
/// (bench/peers/transformers_llm.py, torch_graph_llm.py) and the logits parity checks to the
/// artifact at --out.
#[derive(Debug, Parser)]
#[command(
    version,
    about,
    long_about,
    after_help = "Examples:\n  llm_bench --out artifacts/llm.json   (TinyLlama from the Hugging \
                  Face cache)\n  llm_bench --weights random --out /tmp/llm.json   (no download)"
)]
pub struct Args {
    /// Hugging Face model id (used with --weights real and no --model-dir).
    #[arg(long, default_value = "TinyLlama/TinyLlama-1.1B-Chat-v1.0")]
    model: String,
    /// A folder with config.json, tokenizer.json and model.safetensors (or a sharded index).
    #[arg(long, conflicts_with = "config")]
    model_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Weights::Real)]
    weights: Weights,
    /// With --weights random: named configs (comma list; `ladder` = all, smallest first) or
    /// paths to config.json files.
    #[arg(long, value_delimiter = ',', default_value = "tinyllama-1.1b")]
    config: Vec<String>,
    /// Prompt lengths in tokens (comma list).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "128",
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    prompt_len: Vec<usize>,
    /// Batch sizes (comma list).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1",
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    batch: Vec<usize>,
    /// New tokens per sequence (the first comes from prefill, the rest from decode steps).
    #[arg(
        long,
        default_value_t = 128,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    new_tokens: usize,
    /// Timed repeats per point.
    #[arg(
        long,
        default_value_t = 5,
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    repeats: usize,
    /// Untimed runs per point before the repeats.
    #[arg(
        long,
        default_value_t = 1,
        allow_negative_numbers = true,
        value_parser = crate::cli::count
    )]
    warmup: usize,
    /// Weight and activation dtype (auto: f16 on the GPU, f32 on the CPU).
    #[arg(long, value_enum, default_value_t = DtypeChoice::Auto)]
    dtype: DtypeChoice,
    /// auto: the GPU when this build has CUDA and one answers, else the CPU.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    device: DeviceChoice,
    /// Prompt text for real models (repeated or cut to --prompt-len tokens inside the template).
    #[arg(
        long,
        default_value = "Explain in detail how a GPU executes a matrix multiplication, from the memory hierarchy to the tensor cores."
    )]
    prompt: String,
    #[arg(long, value_enum, default_value_t = ChatTemplate::Auto)]
    chat_template: ChatTemplate,
    /// Seed of random weights and random prompts.
    #[arg(
        long,
        default_value_t = 1234,
        allow_negative_numbers = true,
        value_parser = crate::cli::count_u64
    )]
    seed: u64,
    /// The artifact to write (or to merge into).
    #[arg(long, default_value = "artifacts/llm.json")]
    out: PathBuf,
    /// Replace --out (and --trace-out) even when it holds a run from another device or GPU
    /// (without this flag such a file is left alone and the run stops).
    #[arg(long)]
    overwrite: bool,
    /// With --weights random: save each model (safetensors with Hugging Face names, config.json)
    /// and candle's logits of a parity prompt under DIR/<config>/ for the transformers peer.
    #[arg(long)]
    save_weights: Option<PathBuf>,
    /// cudarc's per-buffer CUDA-event tracking (candle's default: on). Off is safe here: one stream.
    #[arg(long, value_enum, default_value_t = OnOff::Off)]
    event_tracking: OnOff,
    /// Print the prompt and the generated text (token ids for random weights).
    #[arg(long)]
    verbose: bool,
    /// Wrap this decode step (1-based) of the first timed repeat in cuProfilerStart/Stop, for
    /// `ncu --profile-from-start off`.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::positive)]
    profile_decode_step: Option<usize>,
    /// Sample device memory (cuMemGetInfo) before each synchronize, for peak_device_mem_bytes.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    mem_sample: OnOff,
    /// Record one extra generation of the first point of each --impl kernel by kernel with
    /// CUPTI (prefill and --trace-decode-steps; same model, batch and prompt for every
    /// implementation), attribute kernels to operation classes and layers, and write them all
    /// into --trace-out (an llm_trace artifact), --trace-compact and --trace-chrome. Without a
    /// GPU or when CUPTI refuses, says so and runs without the trace.
    #[arg(long)]
    trace: bool,
    /// 1-based decode steps to trace (comma list).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,65,66",
        allow_negative_numbers = true,
        value_parser = crate::cli::positive
    )]
    trace_decode_steps: Vec<usize>,
    #[arg(long, default_value = "artifacts/llm_trace.json")]
    trace_out: PathBuf,
    /// Chrome trace-event JSON of the traced steps (open in ui.perfetto.dev).
    #[arg(long, default_value = "artifacts/llm_decode.trace.json")]
    trace_chrome: PathBuf,
    /// Compact kernel list of the traced steps (one row per activity, names interned).
    #[arg(long, default_value = "artifacts/llm_kernels.trace.json")]
    trace_compact: PathBuf,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Implementations to measure at every point (comma list): candle, and opbench (our own
    /// decode path: kernels/decode_*.cu, one CUDA graph per step; CUDA only).
    #[arg(
        long = "impl",
        value_enum,
        value_delimiter = ',',
        default_value = "candle"
    )]
    impls: Vec<super::fast::Impl>,
    /// opbench: launch the captured decode step's kernels with programmatic dependent launch
    /// (each kernel fetches its first weights while its predecessor finishes).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pdl: OnOff,
    /// opbench: warps sharing each pair of weight rows for qkv, o, gate/up, down and lm_head
    /// (five values from 1, 2, 4, 8); default: the rule in src/llm/fast/plan.rs.
    #[arg(long, value_delimiter = ',')]
    opbench_ksplit: Option<Vec<usize>>,
    /// opbench: after each point's repeats, time the captured step without each kernel class
    /// (embed, qkv, attention, o_proj, gate_up, down, head) and note what each costs.
    #[arg(long)]
    opbench_ablation: bool,
    /// opbench: cached positions per attention block in the decode step (a multiple of 32 up
    /// to 256); default: the whole context up to 256 for the tensor-core attention (batch 2
    /// up), else the rule in src/llm/fast/plan.rs (32 at batch 1-2, 64 at batch 3-8, the whole
    /// context up to 256 above).
    #[arg(long)]
    opbench_attn_split: Option<usize>,
    /// opbench: warps per query head in the decode step's attention blocks on the CUDA cores (1
    /// to 4, each taking every W-th chunk of 32 positions); default: the rule in
    /// src/llm/fast/plan.rs.
    #[arg(long)]
    opbench_attn_warps: Option<usize>,
    /// opbench: warps per block of the decode step's attention on the tensor cores (1 to 16,
    /// each taking every W-th chunk of 16 positions; needs the whole context in one split; 0:
    /// the CUDA-core kernel); default: the rule in src/llm/fast/plan.rs (8 from batch 2 up where
    /// the context fits one block, the CUDA-core kernel at batch 1).
    #[arg(long)]
    opbench_attn_tc_warps: Option<usize>,
    /// opbench: preferred shared-memory carveout of every decode kernel, percent of the most an
    /// SM holds (0-100; the driver rounds it up to the next configuration, on compute capability
    /// 9.0 0, 8, 16, 32, 64, 100, 132, 164, 196 or 228 KiB); default: the rule in
    /// src/llm/fast/plan.rs (smem_carveout_pct: on compute capability 9.0, 71% = 164 KiB at batch
    /// 2-16 for TinyLlama; the driver's choice at batch 1).
    #[arg(long, value_parser = clap::value_parser!(i32).range(0..=100))]
    opbench_smem_carveout: Option<i32>,
    /// opbench: blocks per SM the products' grids are sized to. Batch 1 (CUDA cores, one warp
    /// per pair of weight rows): a matrix with more pairs than those warps has each warp walk
    /// several (gate/up, lm_head). Batch 2-16 (tensor cores): a matrix with more 16-row tiles
    /// than those blocks deals them round that many blocks, evenly over the SMs. 0: one block
    /// per 8 pairs (batch 1) or per 8 / ksplit tiles, in waves. Default: the rule in
    /// src/llm/fast/plan.rs (gemv_grid_cap: 2, the blocks resident at once).
    #[arg(long)]
    opbench_gemv_blocks_per_sm: Option<usize>,
    /// Check every opbench decode kernel on the GPU against float64 CPU references, print the
    /// results and exit (non-zero status when one fails).
    #[arg(long)]
    self_test: bool,
    /// Merge mode: add rows from this peer rows file or llm artifact to --out (repeatable).
    #[arg(long)]
    merge: Vec<PathBuf>,
    /// Merge mode: add parity rows per DIR/<config>/ holding parity.safetensors (candle's
    /// logits) and peer_logits.safetensors (transformers'): one for candle and one for each
    /// logits-<implementation>.safetensors beside them.
    #[arg(long)]
    parity_dir: Option<PathBuf>,
}

/// Runs `llm_bench` with its parsed arguments.
pub fn run(mut a: Args) -> Result<()> {
    crate::cli::dedup_warn("--config", &mut a.config);
    crate::cli::dedup_warn("--prompt-len", &mut a.prompt_len);
    crate::cli::dedup_warn("--batch", &mut a.batch);
    crate::cli::dedup_warn("--trace-decode-steps", &mut a.trace_decode_steps);
    crate::cli::dedup_warn_by("--merge", &mut a.merge, |p| p.display().to_string());
    if a.self_test {
        for line in super::fast::self_test()? {
            println!("{line}");
        }
        return Ok(());
    }
    if !a.merge.is_empty() || a.parity_dir.is_some() {
        for line in super::merge::merge(&a.out, &a.merge, a.parity_dir.as_deref())? {
            println!("{line}");
        }
        let merged = crate::artifact::read_artifact(&a.out)?;
        println!("{}", super::report::table(&merged.results));
        println!("updated {}", a.out.display());
        return Ok(());
    }
    if a.trace {
        use crate::cli::output::{check_outputs, json_object_with, Output};
        let outs = [
            Output {
                flag: "--trace-chrome",
                path: &a.trace_chrome,
                what: "a Chrome trace (JSON with traceEvents)",
                ours: |b| json_object_with(b, "traceEvents"),
            },
            Output {
                flag: "--trace-compact",
                path: &a.trace_compact,
                what: "an opbench kernel trace (JSON)",
                ours: |b| json_object_with(b, "format"),
            },
        ];
        check_outputs(&outs, &[&a.out, &a.trace_out], a.overwrite)?;
    }
    if let Some(dir) = &a.save_weights {
        use crate::cli::output::{check_output_dir, OutputDir};
        // The files go in one sub-folder per config; the guard checks the folder itself.
        let o = OutputDir {
            flag: "--save-weights",
            path: dir,
            files: &[],
        };
        check_output_dir(&o, &[&a.out, &a.trace_out], a.overwrite)?;
    }
    let source = match (a.weights, &a.model_dir) {
        (Weights::Random, Some(_)) => {
            bail!("--weights random takes its architecture from --config, not --model-dir")
        }
        (Weights::Random, None) => Source::Random(super::resolve_configs(&a.config)?),
        (Weights::Real, Some(d)) => Source::Dir(d.clone()),
        (Weights::Real, None) => Source::Hub(a.model.clone()),
    };
    let o = BenchOptions {
        source,
        prompt_lens: a.prompt_len,
        batches: a.batch,
        new_tokens: a.new_tokens,
        repeats: a.repeats,
        warmup: a.warmup,
        dtype: a.dtype,
        device: a.device,
        prompt: a.prompt,
        template: a.chat_template,
        seed: a.seed,
        out: a.out.clone(),
        overwrite: a.overwrite,
        save_weights: a.save_weights,
        event_tracking: a.event_tracking == OnOff::On,
        verbose: a.verbose,
        profile_decode_step: a.profile_decode_step,
        mem_sample: a.mem_sample == OnOff::On,
        progress: !a.quiet,
        trace: a.trace.then(|| super::trace::TraceOptions {
            decode_steps: a.trace_decode_steps.clone(),
            out: a.trace_out.clone(),
            chrome: a.trace_chrome.clone(),
            compact: a.trace_compact.clone(),
            overwrite: a.overwrite,
        }),
        impls: a.impls.clone(),
        pdl: a.pdl == OnOff::On,
        ablation: a.opbench_ablation,
        attn_split: a.opbench_attn_split,
        attn_warps: a.opbench_attn_warps,
        attn_tc_warps: a.opbench_attn_tc_warps,
        carveout: a.opbench_smem_carveout,
        gemv_blocks_per_sm: a.opbench_gemv_blocks_per_sm,
        ksplit: match &a.opbench_ksplit {
            None => None,
            Some(v) => Some(
                <[usize; 5]>::try_from(v.as_slice())
                    .map_err(|_| anyhow::anyhow!("--opbench-ksplit takes five values"))?,
            ),
        },
    };
    let rows = super::run(&o)?;
    println!("{}", super::report::table(&rows));
    println!("wrote {}", a.out.display());
    Ok(())
}
