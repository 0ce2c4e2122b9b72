//! The trace outputs of a run: one `llm_trace` artifact with the rows of every traced
//! implementation, the compact kernel list and the Chrome trace.

use super::TraceRun;
use crate::artifact::{write_json_atomic, ArtifactWriter, Param};
use crate::llm::backend::Backend;
use crate::llm::configs::Arch;
use crate::llm::model::Model;
use crate::trace::rows::{add_untraced, trace_rows, ModelBytes};
use crate::trace::ImplSteps;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// The bytes each class must move, from the architecture.
pub fn model_bytes(arch: &Arch, dtype_bytes: usize, batch: usize) -> ModelBytes {
    let size = |name: &str| -> u64 {
        arch.tensors()
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, s)| s.iter().product::<usize>() as u64)
            .sum()
    };
    let layer: u64 = arch
        .tensors()
        .iter()
        .filter(|(n, _)| n.starts_with("model.layers.0.") && !n.ends_with("norm.weight"))
        .map(|(_, s)| s.iter().product::<usize>() as u64)
        .sum();
    let head = if arch.tie_word_embeddings {
        size("model.embed_tokens.weight")
    } else {
        size("lm_head.weight")
    };
    ModelBytes {
        layers: arch.num_hidden_layers,
        layer_weight_bytes: layer * dtype_bytes as u64,
        head_weight_bytes: head * dtype_bytes as u64,
        kv_bytes_per_position_layer: (2 * arch.num_key_value_heads * arch.head_dim() * dtype_bytes)
            as u64,
        dtype_bytes,
        batch,
    }
}

/// Writes the artifact, the compact trace and the Chrome trace of every implementation `run`
/// traced, all at the same point of `model` (the run's first). Returns the console lines.
pub fn write_outputs(
    run: &TraceRun,
    model: &Model,
    backend: &mut Backend,
    copy_gbps: f64,
) -> Result<Vec<String>> {
    let (Some(pt), traced) = (run.point(), run.done()) else {
        return Ok(Vec::new());
    };
    if traced.is_empty() {
        return Ok(Vec::new());
    }
    let t = &run.opts;
    let (label, b, p) = (pt.model.as_str(), pt.batch, pt.prompt_len);
    let layers = model.arch.num_hidden_layers;
    let mb = model_bytes(&model.arch, model.dtype.size_in_bytes(), b);
    let params: Vec<(&str, Param)> = vec![
        ("model", label.into()),
        ("dtype", crate::llm::model::dtype_name(model.dtype).into()),
        ("weights", model.weights.into()),
        ("batch", b.into()),
        ("prompt_len", p.into()),
        ("layers", layers.into()),
    ];
    let impls: Vec<&str> = traced
        .iter()
        .map(|i| i.steps.implementation.as_str())
        .collect();
    let env = backend.env();
    let meta = serde_json::json!({
        "model": label, "batch": b, "prompt_len": p, "layers": layers,
        "implementations": impls,
        "gpu": env.gpu.as_ref().map(|g| g.name.clone()),
        "command_line": std::env::args().collect::<Vec<_>>(),
        "source": "CUPTI activity API (concurrent kernel, memcpy, memset), in-process",
    });
    let mut w =
        ArtifactWriter::start("llm_trace", &t.out, env, t.overwrite).context("--trace-out")?;
    w.artifact.ceilings.copy_gbps = Some(copy_gbps);
    w.artifact.ceilings.method.push(
        "copy_gbps: cuMemcpyDtoD of 1 GiB, (read + write bytes) / median time, same process".into(),
    );
    let n = &mut w.artifact.notes;
    n.push(format!(
        "one extra, untimed generation of {label} (batch {b}, prompt {p}) per implementation \
         ({}) after its timed repeats, recorded with CUPTI's activity API in-process (kernels, \
         memcpy, memset; device timestamps); CUPTI is enabled only inside the traced steps: \
         prefill and decode steps {:?}; rows carry the implementation in `implementation`",
        impls.join(", "),
        t.decode_steps
    ));
    n.push(
        "wall = host window from before the step's first operation is issued to after the \
         device synchronize (token upload, forward, argmax, token download); busy = union of \
         activity intervals; idle = wall - busy; gap = idle time between the first and last \
         activity (span - busy); lead = window start to first activity; tail = last activity \
         to window end. Kernels that overlap (opbench launches with programmatic dependent \
         launch) count once in busy and fully in their class, so class times can add up to \
         more than busy"
            .into(),
    );
    for it in traced {
        n.push(format!(
            "attribution ({}): {}",
            it.steps.implementation, it.method
        ));
    }
    n.push(
        "floor_bytes: matmul = every weight matrix read once (decoder layers + lm_head); \
         attention = the KV cache read once at the step's context; floor_gbps = floor_bytes / \
         the class's busy time (busy_us), floor_pct_of_copy_bw against copy_gbps"
            .into(),
    );
    for it in traced {
        let imp = &it.steps.implementation;
        if let Some(s) = it.untraced_step_p50_ms {
            n.push(format!(
                "{imp}: untraced decode step p50 in the same process (timed repeats): {s:.3} ms; \
                 untraced TTFT p50: {} ms (CUPTI's per-launch cost inflates the traced walls)",
                it.untraced_ttft_p50_ms
                    .map_or("n/a".into(), |t| format!("{t:.3}"))
            ));
        }
        if it.dropped_records > 0 {
            n.push(format!(
                "{imp}: CUPTI dropped {} records: the trace is incomplete",
                it.dropped_records
            ));
        }
    }
    n.push(format!(
        "raw trace: {} (compact, one row per activity) and {} (Chrome trace events, Perfetto)",
        t.compact.display(),
        t.chrome.display()
    ));
    for it in traced {
        let mut rows = trace_rows(&it.steps, &mb, Some(copy_gbps), &params);
        add_untraced(&mut rows, it.untraced_step_p50_ms, it.untraced_ttft_p50_ms);
        for r in rows {
            w.push(r)?;
        }
    }
    w.finish()?;
    let steps: Vec<ImplSteps> = traced.iter().map(|i| i.steps.clone()).collect();
    let attribution: serde_json::Map<String, serde_json::Value> = traced
        .iter()
        .map(|i| (i.steps.implementation.clone(), i.method.clone().into()))
        .collect();
    write_json_atomic(
        &t.compact,
        &crate::trace::compact::compact_json(&steps, attribution.into(), meta.clone()),
    )?;
    write_json_atomic(&t.chrome, &crate::trace::chrome::chrome_trace(&steps, meta))?;
    let mut lines: Vec<String> = traced.iter().flat_map(|i| i.lines.clone()).collect();
    let written: Vec<&PathBuf> = vec![&t.out, &t.compact, &t.chrome];
    lines.push(format!(
        "wrote {}",
        written
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(lines)
}
