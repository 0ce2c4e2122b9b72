//! The llm_bench sweep: for each model, prompt length and batch, warm-up then timed repeats;
//! one artifact row per point, written as it finishes.

use super::backend::{Backend, DeviceChoice};
use super::configs::{read_config_json, Arch};
use super::fast::Impl;
use super::generate::{generate, prompt_logits, Generation};
use super::model::{dtype_name, DtypeChoice, Model};
use super::prompt::{load_tokenizer, random_tokens, templated_tokens, ChatTemplate};
use super::rows::{add_bound, decode_bound, fill_measured, host_timing};
use super::source::{from_dir, from_hub, ModelFiles};
use crate::artifact::{ResultRow, Status};
use crate::progress::Progress;
use anyhow::{bail, Context, Result};
use candle_core::{DType, Tensor};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tokenizers::Tokenizer;

/// Where the weights come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A Hugging Face model id (cache, then download).
    Hub(String),
    /// A local folder.
    Dir(PathBuf),
    /// These architectures with random weights.
    Random(Vec<Arch>),
}

/// Everything a run needs (the CLI fills it).
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub source: Source,
    pub prompt_lens: Vec<usize>,
    pub batches: Vec<usize>,
    pub new_tokens: usize,
    pub repeats: usize,
    pub warmup: usize,
    pub dtype: DtypeChoice,
    pub device: DeviceChoice,
    pub prompt: String,
    pub template: ChatTemplate,
    pub seed: u64,
    pub out: PathBuf,
    /// Replace `out` even when it holds a run from another device (`--overwrite`).
    pub overwrite: bool,
    /// Random weights only: save each model (HF names) + parity logits under DIR/<config>/.
    pub save_weights: Option<PathBuf>,
    /// Keep cudarc's per-buffer event tracking on (candle's default).
    pub event_tracking: bool,
    pub verbose: bool,
    /// Wrap this decode step of the first timed repeat of the first point in cuProfilerStart/Stop.
    pub profile_decode_step: Option<usize>,
    /// Sample device memory (cuMemGetInfo) once per step, for peak_device_mem_bytes.
    pub mem_sample: bool,
    pub progress: bool,
    /// `--trace`: record one extra generation of the first point with CUPTI.
    pub trace: Option<super::trace::TraceOptions>,
    /// `--impl`: the implementations measured at every point, in this order.
    pub impls: Vec<super::fast::Impl>,
    /// opbench: launch the captured step's kernels with programmatic dependent launch.
    pub pdl: bool,
    /// opbench: warps per weight-row pair for qkv, o, gate/up, down, lm_head (None: plan.rs).
    pub ksplit: Option<[usize; 5]>,
    /// opbench: after the repeats, time the step without each kernel class (notes + metrics).
    pub ablation: bool,
    /// opbench: positions per attention split in the decode step (None: plan.rs).
    pub attn_split: Option<usize>,
    /// opbench: warps per query head in the decode step's attention blocks (None: plan.rs).
    pub attn_warps: Option<usize>,
    /// opbench: warps per tensor-core attention block (None: plan.rs; 0: the CUDA-core kernel).
    pub attn_tc_warps: Option<usize>,
    /// opbench: preferred shared-memory carveout of the decode kernels, percent (None: plan.rs).
    pub carveout: Option<i32>,
    /// opbench: blocks per SM the products' grids are sized to (None: plan.rs; 0: none).
    pub gemv_blocks_per_sm: Option<usize>,
}

/// The opbench engine's launch choices from the run's flags.
#[cfg(feature = "cuda")]
fn engine_options(o: &BenchOptions) -> super::fast::engine::EngineOptions {
    super::fast::engine::EngineOptions {
        pdl: o.pdl,
        ksplit: o.ksplit,
        attn_split: o.attn_split,
        attn_warps: o.attn_warps,
        attn_tc_warps: o.attn_tc_warps,
        carveout: o.carveout,
        gemv_blocks_per_sm: o.gemv_blocks_per_sm,
    }
}

/// A model ready to measure and what the rows say about it.
struct Loaded {
    model: Model,
    label: String,
    source: &'static str,
    tokenizer: Option<Tokenizer>,
    template: ChatTemplate,
}

fn load_real(
    files: &ModelFiles,
    source: &'static str,
    o: &BenchOptions,
    b: &Backend,
) -> Result<Loaded> {
    let arch = read_config_json(&files.config, Some(&files.label))?;
    let tokenizer = load_tokenizer(&files.tokenizer)?;
    let dtype = o.dtype.resolve(b.is_cuda());
    let model = Model::from_files(&arch, &files.weights, dtype, &b.device())?;
    Ok(Loaded {
        model,
        label: files.label.clone(),
        source,
        tokenizer: Some(tokenizer),
        template: o.template.resolve(files.tokenizer_config.as_deref()),
    })
}

/// Estimated device bytes one point needs beyond the weights (KV cache with candle's copies,
/// the largest prefill transients, f32 attention scores and logits), conservative.
pub fn point_bytes_estimate(arch: &Arch, dtype: DType, b: usize, p: usize, t: usize) -> u64 {
    let d = dtype.size_in_bytes() as u64;
    let (b, p, t) = (b as u64, p as u64, t as u64);
    let kv = b * (p + t) * arch.kv_bytes_per_position(d as usize) * 3;
    let heads = arch.num_attention_heads as u64;
    let act = b * p * (3 * arch.intermediate_size as u64 + 8 * arch.hidden_size as u64) * d;
    let att =
        b * heads * p * (p + t) * 4 * 3 + b * heads * (p + t) * arch.head_dim() as u64 * 4 * 2;
    let logits = b * arch.vocab_size as u64 * 4 * 2;
    kv + act + att + logits
}

fn is_oom(e: &anyhow::Error) -> bool {
    let s = format!("{e:#}").to_lowercase();
    s.contains("out_of_memory") || s.contains("out of memory")
}

fn base_row(
    l: &Loaded,
    o: &BenchOptions,
    backend: &Backend,
    imp: Impl,
    b: usize,
    p: usize,
) -> ResultRow {
    let a = &l.model.arch;
    let row = ResultRow::new("generate", imp.label());
    let row = if imp == Impl::Opbench {
        row.param("pdl", if o.pdl { "on" } else { "off" })
    } else {
        row
    };
    row.param("model", l.label.as_str())
        .param("weights", l.model.weights)
        .param("source", l.source)
        .param("dtype", dtype_name(l.model.dtype))
        .param("device", backend.name())
        .param("batch", b)
        .param("prompt_len", p)
        .param("new_tokens", o.new_tokens)
        .param("param_count", a.param_count() as usize)
        .param("layers", a.num_hidden_layers)
        .param("hidden_size", a.hidden_size)
        .param("chat_template", l.template.label())
        .param("mem_sampled", o.mem_sample && backend.is_cuda())
        .param(
            "event_tracking",
            if !backend.is_cuda() {
                "n/a"
            } else if o.event_tracking {
                "on"
            } else {
                "off"
            },
        )
}

/// The prompt of a point: templated text for real models, seeded random ids otherwise.
fn prompt_for(l: &Loaded, o: &BenchOptions, b: usize, p: usize) -> Result<Vec<Vec<u32>>> {
    match &l.tokenizer {
        Some(tok) => {
            let ids = templated_tokens(tok, l.template, &o.prompt, p)?;
            Ok(vec![ids; b])
        }
        None => random_tokens(l.model.arch.vocab_size, b, p, o.seed ^ ((p as u64) << 8)),
    }
}

/// The file beside parity.safetensors holding `imp`'s logits of the same prompt run at batch
/// `batch` (the prompt in every row; row 0 kept): `logits` [rows][vocab] (the last prompt
/// position, then any decode steps, whose input tokens follow the prompt in `input_ids` when
/// there are steps), checked against the transformers peer's (peer_<this file name>, or
/// peer_logits.safetensors for the prompt alone) by `llm_bench --merge --parity-dir`.
pub fn impl_logits_file(imp: &str, batch: usize) -> String {
    if batch == 1 {
        format!("logits-{imp}.safetensors")
    } else {
        format!("logits-{imp}@b{batch}.safetensors")
    }
}

/// The batches opbench's transformers parity runs at: 1 (CUDA-core products) and 2 (the
/// tensor-core products, RMSNorm folded into the weights).
pub const PARITY_BATCHES: [usize; 2] = [1, 2];

/// Saves random weights, config.json and the parity prompt's logits under `dir/<config>/`
/// (candle's in parity.safetensors; opbench's beside it when `--impl` lists it).
fn save_for_peer(
    l: &Loaded,
    o: &BenchOptions,
    backend: &Backend,
    dir: &Path,
    p: usize,
    seed: u64,
) -> Result<PathBuf> {
    let sub = dir.join(&l.model.arch.name);
    l.model.save_hf(&sub)?;
    let ids = random_tokens(l.model.arch.vocab_size, 1, p, seed ^ 0x9a11)?.remove(0);
    let logits = prompt_logits(&l.model, backend, &ids)?;
    let ids_t = Tensor::new(
        ids.iter().map(|&i| i as i64).collect::<Vec<_>>(),
        &candle_core::Device::Cpu,
    )?
    .unsqueeze(0)?;
    let mut m = HashMap::new();
    m.insert("input_ids".to_string(), ids_t);
    m.insert("logits".to_string(), logits.to_dtype(DType::F32)?);
    let f = sub.join("parity.safetensors");
    candle_core::safetensors::save(&m, &f).with_context(|| format!("writing {}", f.display()))?;
    if o.impls.contains(&Impl::Opbench) {
        // Without these logits the merge says "not checked"; opbench's own rows still run.
        // Batch 1 runs the CUDA-core products, batch 2 (the same prompt twice, row 0 kept) the
        // tensor-core ones with the norm weights folded into their matrices.
        let steps = PARITY_STEPS.min(o.new_tokens.saturating_sub(1));
        for batch in PARITY_BATCHES {
            match opbench_parity_logits(l, o, backend, &ids, steps, batch) {
                Ok(Some((logits, fed))) => {
                    let vocab = l.model.arch.vocab_size;
                    let cpu = &candle_core::Device::Cpu;
                    let rows = logits.len() / vocab;
                    let seq: Vec<i64> = ids.iter().chain(&fed).map(|&i| i as i64).collect();
                    let n = seq.len();
                    let m = HashMap::from([
                        (
                            "logits".to_string(),
                            Tensor::from_vec(logits, (rows, vocab), cpu)?,
                        ),
                        ("input_ids".to_string(), Tensor::from_vec(seq, (1, n), cpu)?),
                    ]);
                    let f = sub.join(impl_logits_file(Impl::Opbench.label(), batch));
                    candle_core::safetensors::save(&m, &f)
                        .with_context(|| format!("writing {}", f.display()))?;
                }
                Ok(None) => {}
                Err(e) => eprintln!(
                    "warning: {}: opbench's batch-{batch} parity logits not saved, its \
                     transformers parity will not be checked: {e:#}",
                    l.label
                ),
            }
        }
    }
    Ok(sub)
}

/// opbench's logits of one prompt at its last position and at `steps` greedy decode steps
/// after it ([1 + steps][vocab], row-major), and the tokens it fed to those steps (its own
/// greedy tokens), so the transformers peer can run the same sequence; run at `batch` with the
/// prompt in every row, row 0 kept. None off the GPU.
#[cfg(feature = "cuda")]
fn opbench_parity_logits(
    l: &Loaded,
    o: &BenchOptions,
    backend: &Backend,
    ids: &[u32],
    steps: usize,
    batch: usize,
) -> Result<Option<(Vec<f32>, Vec<u32>)>> {
    let Backend::Cuda(gpu) = backend else {
        return Ok(None);
    };
    let opts = engine_options(o);
    let (p, vocab) = (ids.len(), l.model.arch.vocab_size);
    let mut e = super::fast::engine::Engine::new(gpu, &l.model, batch, p, p + steps + 1, opts)?;
    let mut next = e.prefill(&vec![ids.to_vec(); batch])?;
    let mut logits = e.logits()?[..vocab].to_vec();
    let mut fed = Vec::with_capacity(steps);
    for _ in 0..steps {
        fed.push(next[0]);
        next = e.step()?;
        logits.extend_from_slice(&e.logits()?[..vocab]);
    }
    Ok(Some((logits, fed)))
}

#[cfg(not(feature = "cuda"))]
fn opbench_parity_logits(
    _l: &Loaded,
    _o: &BenchOptions,
    _backend: &Backend,
    _ids: &[u32],
    _steps: usize,
    _batch: usize,
) -> Result<Option<(Vec<f32>, Vec<u32>)>> {
    Ok(None)
}

fn show_text(l: &Loaded, prompt: &[u32], g: &Generation) {
    let first = &g.tokens[0];
    match &l.tokenizer {
        Some(t) => {
            let p = t
                .decode(prompt, false)
                .unwrap_or_else(|e| format!("<decode error: {e}>"));
            let s = t
                .decode(first, true)
                .unwrap_or_else(|e| format!("<decode error: {e}>"));
            eprintln!(
                "--- prompt ({} tokens):\n{p}\n--- generated ({} tokens):\n{s}\n---",
                prompt.len(),
                first.len()
            );
        }
        None => eprintln!(
            "--- generated token ids (random weights, no tokenizer), sequence 0: {first:?}"
        ),
    }
}

/// Runs the whole sweep and writes the artifact. Returns its rows.
pub fn run(o: &BenchOptions) -> Result<Vec<ResultRow>> {
    if o.repeats == 0 || o.new_tokens == 0 {
        bail!("--repeats and --new-tokens must be at least 1");
    }
    if o.batches.is_empty()
        || o.prompt_lens.is_empty()
        || o.batches.contains(&0)
        || o.prompt_lens.contains(&0)
    {
        bail!("--batch and --prompt-len need positive values");
    }
    if o.save_weights.is_some() && !matches!(o.source, Source::Random(_)) {
        bail!("--save-weights saves random weights only: add --weights random");
    }
    let mut backend = Backend::open(o.device)?;
    let tracking_off = !o.event_tracking && backend.disable_event_tracking();
    let (copy_gbps, copy_method) = backend.copy_bandwidth_gbps()?;
    let env = backend.env();
    let mut w = crate::harness::start_artifact(
        "llm",
        &o.out,
        env,
        o.overwrite,
        Some((copy_gbps, copy_method)),
        backend.nvml_note(),
    )?;
    let notes = &mut w.artifact.notes;
    notes.push(
        "generate rows: warm-up runs, then repeats of prefill (prompt upload, forward, argmax, \
         first tokens on the host = TTFT) and greedy decode steps (upload, forward, argmax, tokens \
         on the host); the device is synchronized before every clock read"
            .into(),
    );
    notes.push(
        "decode_bound_tokens_per_s = batch x copy_gbps / decode_bytes_per_step, where a step \
         reads every weight but the embedding table once plus each sequence's KV cache at the \
         mean context (prompt_len + new_tokens/2); pct_of_bandwidth_bound = achieved / bound"
            .into(),
    );
    if backend.is_cuda() && o.mem_sample {
        notes.push(
            "peak_device_mem_bytes: cuMemGetInfo (total - free, whole device, CUDA context and \
             candle's pool included) sampled before the synchronize after prefill and after each \
             decode step; a transient peak between samples can be missed"
                .into(),
        );
        notes.push(if tracking_off {
            "cudarc event tracking disabled (CudaDevice::disable_event_tracking) before any \
             weight was created: safe here because every operation, copy and free runs on \
             candle's single stream; it saves a cuEventRecord per buffer use"
                .to_string()
        } else {
            "cudarc event tracking left on (candle's default): each buffer use records a CUDA event"
                .to_string()
        });
    }
    if let Some(m) = backend.mem_used_bytes() {
        notes.push(format!(
            "device memory in use before any model was loaded (CUDA context, L2-flush buffer): {m} bytes"
        ));
    }
    w.flush()?;

    type LoadFn<'a> = Box<dyn FnMut(&Backend) -> Result<Loaded> + 'a>;
    let mut models: Vec<LoadFn> = Vec::new();
    match &o.source {
        Source::Hub(id) => {
            let id = id.clone();
            models.push(Box::new(move |b| load_real(&from_hub(&id)?, "hub", o, b)));
        }
        Source::Dir(d) => {
            let d = d.clone();
            models.push(Box::new(move |b| load_real(&from_dir(&d)?, "dir", o, b)));
        }
        Source::Random(archs) => {
            for a in archs.clone() {
                models.push(Box::new(move |b| {
                    let dtype = o.dtype.resolve(b.is_cuda());
                    Ok(Loaded {
                        model: Model::random(&a, dtype, b, o.seed)?,
                        label: a.name.clone(),
                        source: "random",
                        tokenizer: None,
                        template: ChatTemplate::None,
                    })
                }));
            }
        }
    }
    if o.impls.is_empty() {
        bail!("--impl needs at least one implementation");
    }
    let points = o.prompt_lens.len() * o.batches.len() * o.impls.len();
    let steps = (models.len() * points * (o.warmup + o.repeats)) as u64;
    let pb = if o.progress {
        Progress::new(steps)
    } else {
        Progress::quiet(steps)
    };
    let mut profile_pending = o.profile_decode_step;
    let mut traces = o
        .trace
        .clone()
        .map(|t| super::trace::TraceRun::new(t, &o.impls));
    let mut rows = Vec::new();
    for load in models.iter_mut() {
        let l = load(&backend)?;
        if let Some(dir) = &o.save_weights {
            let p = o.prompt_lens[0];
            let sub = save_for_peer(&l, o, &backend, dir, p, o.seed)?;
            pb.note(&format!(
                "saved {} ({} parameters) to {}",
                l.label,
                l.model.arch.param_count(),
                sub.display()
            ));
        }
        for &p in &o.prompt_lens {
            for (&b, &imp) in o
                .batches
                .iter()
                .flat_map(|b| o.impls.iter().map(move |i| (b, i)))
            {
                pb.start(format!("{} P={p} batch={b}", l.label));
                let mut row = base_row(&l, o, &backend, imp, b, p);
                row.metrics
                    .insert("weight_bytes".into(), l.model.weight_bytes() as f64);
                let point = super::trace::TracedPoint {
                    model: l.label.clone(),
                    batch: b,
                    prompt_len: p,
                };
                let want = traces.as_mut().is_some_and(|t| t.wants(imp, &point));
                let mut tracing = traces.as_mut().filter(|_| want);
                let res = match imp {
                    Impl::Candle => {
                        measure_point(&l, o, &backend, b, p, &pb, &mut profile_pending, &mut row)
                    }
                    Impl::Opbench => measure_opbench(
                        &l,
                        o,
                        &backend,
                        (b, p),
                        &pb,
                        &mut row,
                        tracing.as_deref_mut().map(|t| (t, &point)),
                    ),
                };
                match res {
                    Ok(()) => {
                        if imp == Impl::Opbench {
                            crate::code_id::tag(&mut row, &["decode_"]);
                        }
                        let dt = l.model.dtype.size_in_bytes();
                        add_bound(
                            &mut row,
                            decode_bound(&l.model.arch, dt, b, p, o.new_tokens, copy_gbps),
                        );
                        if let Some(t) = tracing.filter(|_| imp == Impl::Candle) {
                            let prompt = prompt_for(&l, o, b, p)?;
                            let r = super::trace::trace_candle(
                                &l.model,
                                &backend,
                                &prompt,
                                &t.opts,
                                untraced_p50(&row),
                            );
                            t.finish_impl(imp, &point, r);
                        }
                    }
                    Err(e) => {
                        let skipped = is_oom(&e) || e.to_string().starts_with("skip:");
                        row.status = if skipped {
                            Status::Skipped
                        } else {
                            Status::Failed
                        };
                        row.stats.clear();
                        row.metrics.retain(|k, _| k == "weight_bytes");
                        row.notes
                            .push(format!("{e:#}").trim_start_matches("skip: ").to_string());
                    }
                }
                for note in traces.as_mut().map(|t| t.take_notes()).unwrap_or_default() {
                    pb.note(&note);
                    w.artifact.notes.push(note);
                }
                pb.row(&row);
                backend.sample_clocks();
                w.push(row.clone())?;
                rows.push(row);
            }
        }
        // Every trace is made at the run's first point, so of this model.
        if let Some(t) = traces.take() {
            for note in t.missing() {
                pb.note(&note);
                w.artifact.notes.push(note);
            }
            match super::trace::write_outputs(&t, &l.model, &mut backend, copy_gbps) {
                Ok(lines) => pb.suspend(|| lines.iter().for_each(|l| eprintln!("{l}"))),
                Err(e) => {
                    let note = format!("--trace: the trace outputs were not written: {e:#}");
                    pb.note(&note);
                    w.artifact.notes.push(note);
                }
            }
        }
    }
    pb.finish();
    w.artifact.env = backend.env();
    w.finish()?;
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn measure_point(
    l: &Loaded,
    o: &BenchOptions,
    backend: &Backend,
    b: usize,
    p: usize,
    pb: &Progress,
    profile_pending: &mut Option<usize>,
    row: &mut ResultRow,
) -> Result<()> {
    let a = &l.model.arch;
    if p + o.new_tokens - 1 > a.max_position_embeddings {
        bail!(
            "skip: prompt {p} + {} new tokens exceeds max_position_embeddings {}",
            o.new_tokens,
            a.max_position_embeddings
        );
    }
    if let Some(used) = backend.mem_used_bytes() {
        let total = backend_total(backend).unwrap_or(u64::MAX);
        let free = total.saturating_sub(used);
        let need = point_bytes_estimate(a, l.model.dtype, b, p, o.new_tokens);
        if need as f64 > 0.9 * free as f64 {
            bail!(
                "skip: estimated {:.1} GB of activations and KV cache, {:.1} GB free on the device",
                need as f64 / 1e9,
                free as f64 / 1e9
            );
        }
    }
    let prompt = prompt_for(l, o, b, p)?;
    for _ in 0..o.warmup {
        generate(
            &l.model,
            backend,
            &prompt,
            o.new_tokens,
            None,
            o.mem_sample,
            None,
        )?;
        pb.step();
    }
    let mut repeats = Vec::with_capacity(o.repeats);
    let mut last = None;
    for _ in 0..o.repeats {
        let profile = profile_pending.take();
        let g = generate(
            &l.model,
            backend,
            &prompt,
            o.new_tokens,
            profile,
            o.mem_sample,
            None,
        )?;
        if g.tokens.iter().any(|t| t.len() != o.new_tokens) {
            bail!("generation returned the wrong number of tokens");
        }
        repeats.push(g.times.clone());
        last = Some(g);
        pb.step();
    }
    if let (true, Some(g)) = (o.verbose, &last) {
        pb.suspend(|| show_text(l, &prompt[0], g));
    }
    fill_measured(row, b, p, &repeats)?;
    row.timing = Some(host_timing(o.warmup));
    Ok(())
}

fn backend_total(backend: &Backend) -> Option<u64> {
    match backend {
        Backend::Cpu(_) => None,
        #[cfg(feature = "cuda")]
        Backend::Cuda(g) => g.mem_info().ok().map(|(_, t)| t as u64),
    }
}

/// Decode steps whose logits and tokens are compared with candle's before an opbench point is
/// timed.
pub const PARITY_STEPS: usize = 32;

/// The point's untraced decode step and TTFT p50 (ms), from its timed repeats.
fn untraced_p50(row: &ResultRow) -> (Option<f64>, Option<f64>) {
    let p50 = |k: &str| row.stats.get(k).map(|s| s.p50);
    (p50("decode_step_ms"), p50("ttft_ms"))
}

/// One opbench point: engine (weights laid out, buffers, captured step), parity against
/// candle on the point's own prompt, then warm-up and timed repeats like candle's; `trace`:
/// then one traced generation of the point (`--trace`).
#[cfg(feature = "cuda")]
fn measure_opbench(
    l: &Loaded,
    o: &BenchOptions,
    backend: &Backend,
    (b, p): (usize, usize),
    pb: &Progress,
    row: &mut ResultRow,
    trace: Option<(&mut super::trace::TraceRun, &super::trace::TracedPoint)>,
) -> Result<()> {
    use super::fast::{
        engine::Engine, generate as fgen, kernels::AttnMerge, parity::LOGITS_TOLERANCE,
    };
    let Backend::Cuda(gpu) = backend else {
        bail!("skip: opbench runs on a CUDA GPU only (this run is on the CPU)");
    };
    let prompt = prompt_for(l, o, b, p)?;
    let max_ctx = p + o.new_tokens;
    if max_ctx > l.model.arch.max_position_embeddings + 1 {
        bail!(
            "skip: prompt {p} + {} new tokens exceeds max_position_embeddings {}",
            o.new_tokens,
            l.model.arch.max_position_embeddings
        );
    }
    let opts = engine_options(o);
    let mut e = Engine::new(gpu, &l.model, b, p, max_ctx, opts)?;
    let ks = e.ksplits();
    row.notes.push(format!(
        "opbench: {} decode kernels per step in one CUDA graph (programmatic dependent launch \
         {}); products on the {}, ksplit qkv/o/gate_up/down/lm_head = {ks:?}; attention: {} \
         splits over the {max_ctx} cached positions, {}, {}; shared-memory carveout {}; {}",
        super::fast::plan::step_plan(e.dims(), b, max_ctx).len(),
        if o.pdl { "on" } else { "off" },
        if e.tensor_cores() {
            "tensor cores (mma.sync m16n8k16)"
        } else {
            "CUDA cores (f32 FMA)"
        },
        e.decode_splits(),
        match e.decode_attn_tc_warps() {
            Some(w) => format!("on the tensor cores (mma.sync m16n8k16) in blocks of {w} warps"),
            None => format!("{} warps per query head", e.decode_attn_warps()),
        },
        match e.decode_attn_merge() {
            _ if e.decode_splits() == 1 => "nothing to merge",
            AttnMerge::Partials => "merged by o_proj while it stages its input",
            AttnMerge::LastBlock => "merged by the attention kernel's last block",
            AttnMerge::Cluster =>
                "merged in one thread-block cluster through distributed shared memory",
        },
        match e.carveout() {
            Some(p) => match super::fast::plan::carveout_config_kib(p, gpu.smem_per_sm) {
                Some(kib) => format!("{p}% (the {kib} KiB configuration) for every decode kernel"),
                None => format!("{p}% for every decode kernel"),
            },
            None => "the driver's choice per kernel".into(),
        },
        match (e.tensor_cores(), e.gemv_cap()) {
            (false, Some(c)) => format!(
                "CUDA-core products at ksplit 1 capped at {c} blocks (each warp walks several \
                 pairs of rows where a matrix has more)"
            ),
            (true, Some(c)) => format!(
                "weights in 16-row tiles of 4 KiB per 128 columns, the tiles dealt round at \
                 least {c} blocks where a matrix has that many"
            ),
            (false, None) => "one block per 8 pairs of rows".into(),
            (true, None) => "weights in 16-row tiles of 4 KiB per 128 columns, one block per \
                             8 / ksplit tiles"
                .into(),
        }
    ));
    let steps = PARITY_STEPS.min(o.new_tokens - 1);
    let rep = fgen::parity(&l.model, backend, &mut e, &prompt, steps)?;
    row.correctness = Some(crate::artifact::Correctness {
        reference: "candle".into(),
        max_abs_err: rep.worst_max_abs(),
        rel_err: rep.worst_rel_l2(),
        tolerance: LOGITS_TOLERANCE,
        passed: rep.passed(),
        non_finite: 0,
    });
    row.notes.push(format!(
        "parity vs candle (same weights, candle's tokens fed to both): logits rel L2 error \
         prefill {:.2e}, decode steps 1..{steps} max {:.2e}",
        rep.prefill.rel_l2,
        rep.decode.iter().map(|e| e.rel_l2).fold(0.0, f64::max)
    ));
    row.notes.push(match rep.first_token_diff {
        None => format!("greedy tokens identical to candle's for prefill + {steps} steps"),
        Some(d) => format!(
            "greedy tokens first differ at step {} (sequence {}): opbench {} vs candle {}, \
             candle's top-2 logit margin there {:.4}",
            d.step, d.row, d.ours, d.reference, d.ref_top2_margin
        ),
    });
    if !rep.passed() {
        bail!(
            "parity failed: logits rel L2 error {:.3e} >= {LOGITS_TOLERANCE} (no throughput reported)",
            rep.worst_rel_l2()
        );
    }
    for _ in 0..o.warmup {
        fgen::generate(&mut e, &prompt, o.new_tokens)?;
        pb.step();
    }
    let mut repeats = Vec::with_capacity(o.repeats);
    for _ in 0..o.repeats {
        let g = fgen::generate(&mut e, &prompt, o.new_tokens)?;
        if g.tokens.iter().any(|t| t.len() != o.new_tokens) {
            bail!("opbench generation returned the wrong number of tokens");
        }
        repeats.push(g.times);
        pb.step();
    }
    if let Some(used) = backend.mem_used_bytes() {
        row.metrics
            .insert("peak_device_mem_bytes".into(), used as f64);
    }
    if o.ablation {
        let ab = e.ablation_us(50)?;
        let full = ab.first().map(|x| x.1).unwrap_or(f64::NAN);
        let mut parts = Vec::new();
        let mut swapped = String::new();
        for (name, us) in &ab {
            if name.starts_with("products_on_") {
                row.metrics.insert(format!("ablation_{name}_us"), *us);
                swapped = format!("; whole step with the {name}: {us:.1}");
                continue;
            }
            row.metrics
                .insert(format!("ablation_without_{name}_us"), *us);
            if name != "none" {
                parts.push(format!("{name} {:.1}", full - us));
            }
        }
        row.notes.push(format!(
            "ablation (graph replays back to back, us per step): full step {full:.1}; cost of \
             each class inside the graph (full minus the step without it): {}{swapped}",
            parts.join(", ")
        ));
    }
    fill_measured(row, b, p, &repeats)?;
    row.timing = Some(host_timing(o.warmup));
    if let Some((t, point)) = trace {
        let r = super::trace::trace_opbench(&mut e, &prompt, &t.opts, untraced_p50(row));
        t.finish_impl(Impl::Opbench, point, r);
    }
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn measure_opbench(
    _l: &Loaded,
    _o: &BenchOptions,
    _backend: &Backend,
    _point: (usize, usize),
    _pb: &Progress,
    _row: &mut ResultRow,
    _trace: Option<(&mut super::trace::TraceRun, &super::trace::TracedPoint)>,
) -> Result<()> {
    bail!("skip: opbench needs a build with the `cuda` feature and a GPU")
}
