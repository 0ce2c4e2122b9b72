//! A point's identity, the one definition every module uses: kind, benchmark, implementation
//! and the *problem* parameters. Run settings and launch configuration are recorded with the
//! point but do not make it another point.
//!
//! Each benchmark kind declares its parameters in [`DECLARED`]: problem parameters (the shape,
//! dtype, model, batch, ... a reader compares across runs) and settings (how the run was made:
//! harness, event tracking, memory sampling, block sizes, kernel variant, grid, ...). A
//! parameter a kind does not declare counts as problem, so a new parameter keeps points apart
//! until it is declared. When a run holds several rows of one identity (the same decode timed
//! with event tracking on and off), their settings tell them apart: `compare` pairs each with
//! the row on the other side whose settings agree most, and the history follows the first.

use crate::artifact::Param;
use serde::Serialize;
use std::collections::BTreeMap;

/// Implementations that are library code this project measures against and never changes
/// (cuBLAS, candle, NCCL, PyTorch and its compiler, transformers, Triton's own kernels):
/// between two runs they move only with the machine, so `compare` reads their moves as its
/// drift.
pub fn is_library(implementation: &str) -> bool {
    const EXACT: &[&str] = &["cublas", "candle", "reference", "cpu_f64"];
    const PREFIXES: &[&str] = &["nccl", "torch", "pytorch", "transformers", "hf", "triton"];
    let i = implementation.to_ascii_lowercase();
    EXACT.contains(&i.as_str()) || PREFIXES.iter().any(|p| i.starts_with(p))
}

/// The parameters of one benchmark kind, by role.
pub struct Declared {
    pub kind: &'static str,
    /// Parameters that define the problem: part of the identity.
    pub problem: &'static [&'static str],
    /// Run settings and launch configuration: recorded, shown when they differ, not identity.
    pub settings: &'static [&'static str],
}

/// Every benchmark kind's parameters (the keys of the committed artifacts under `artifacts/`).
pub const DECLARED: &[Declared] = &[
    Declared {
        kind: "layernorm",
        problem: &["rows", "cols", "shape", "dtype", "mode", "eps"],
        settings: &[
            "device",
            "kernel",
            "variant",
            "block_threads",
            "grid",
            "grid_blocks",
            "rows_per_block",
            "threads_per_row",
            "vec_width",
            "vectors_per_thread",
            "smem_bytes",
            "stages",
            "code",
        ],
    },
    Declared {
        kind: "gemm",
        // A model layer's shape is its own point even where m, n, k equal a square one.
        problem: &[
            "m",
            "n",
            "k",
            "dtype",
            "shape_set",
            "model",
            "layer_op",
            "tokens",
            "b_layout",
        ],
        settings: &[
            "impl_kind",
            "ladder_step",
            "block_tile",
            "k_splits",
            "split_reduction",
            "code",
        ],
    },
    Declared {
        kind: "comm",
        // `count` follows from `bytes` and `dtype`.
        problem: &["collective", "dtype", "bytes", "world_size"],
        settings: &["count"],
    },
    Declared {
        kind: "kernels",
        // The kernel sweep measures each block shape of a kernel as a point of its own.
        problem: &["M", "N", "K", "block"],
        settings: &["code"],
    },
    Declared {
        kind: "llm",
        problem: &[
            "model",
            "dtype",
            "batch",
            "prompt_len",
            "new_tokens",
            "weights",
            // Parity rows: the decode steps checked after the prompt (absent: the prompt only).
            "decode_steps",
        ],
        settings: &[
            "pdl",
            "device",
            "harness",
            "event_tracking",
            "mem_sampled",
            "chat_template",
            "source",
            "profiler",
            // Facts of the model, which `model` already names.
            "hidden_size",
            "layers",
            "param_count",
            // What ran (crate::code_id), on every kind that records it.
            "code",
        ],
    },
    Declared {
        kind: "llm_trace",
        problem: &[
            "model",
            "dtype",
            "batch",
            "prompt_len",
            "weights",
            "phase",
            "step",
            "scope",
            "tokens",
            "context_len",
            "class",
            "layer",
        ],
        settings: &["layers", "layers_assigned"],
    },
    Declared {
        kind: "trace",
        // A traced workload's rows: per process (by pid order), GPU, stream, kernel name and
        // NVTX range; the pid and a row's rank by time change from run to run.
        problem: &[
            "process", "device", "stream", "kernel", "graph", "class", "range",
        ],
        settings: &["pid", "rank"],
    },
];

/// Whether `param` is a run setting of `kind` (not part of a point's identity).
pub fn is_setting(kind: &str, param: &str) -> bool {
    DECLARED
        .iter()
        .any(|d| d.kind == kind && d.settings.contains(&param))
}

/// Whether `kind` declares `param` at all (as problem or setting).
pub fn is_declared(kind: &str, param: &str) -> bool {
    DECLARED
        .iter()
        .any(|d| d.kind == kind && (d.problem.contains(&param) || d.settings.contains(&param)))
}

/// A point's identity: kind, benchmark, implementation and problem parameters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Identity {
    pub kind: String,
    pub benchmark: String,
    pub implementation: String,
    /// Problem parameters as `k=v` joined by ", ", keys sorted.
    pub params: String,
}

impl Identity {
    pub fn of(kind: &str, benchmark: &str, implementation: &str, params: &Params) -> Self {
        Self::ignoring(kind, benchmark, implementation, params, &[])
    }

    /// The identity without the problem parameters named in `ignore` as well
    /// (`compare --ignore-params`).
    pub fn ignoring(
        kind: &str,
        benchmark: &str,
        implementation: &str,
        params: &Params,
        ignore: &[String],
    ) -> Self {
        Identity {
            kind: kind.to_string(),
            benchmark: benchmark.to_string(),
            implementation: implementation.to_string(),
            params: join(
                params
                    .iter()
                    .filter(|(k, _)| !is_setting(kind, k) && !ignore.contains(k)),
            ),
        }
    }

    /// The problem this point measures, whoever implements it: kind, benchmark and problem
    /// parameters. Two implementations of one problem are peers.
    pub fn problem(&self) -> String {
        format!("{}\u{1f}{}\u{1f}{}", self.kind, self.benchmark, self.params)
    }
}

/// A row's parameters.
pub type Params = BTreeMap<String, Param>;

fn join<'a>(kv: impl Iterator<Item = (&'a String, &'a Param)>) -> String {
    kv.map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The problem of a row (see [`Identity::problem`]).
pub fn problem_of(kind: &str, benchmark: &str, params: &Params) -> String {
    Identity::of(kind, benchmark, "", params).problem()
}

/// A row's settings (the parameters that are not identity), `k=v` joined by ", ".
pub fn settings_text(kind: &str, params: &Params) -> String {
    join(params.iter().filter(|(k, _)| is_setting(kind, k)))
}

/// The settings that differ between two rows of one identity, as `k: base -> head` ("-" where
/// a side lacks the parameter); empty when they agree.
pub fn settings_diff(kind: &str, base: &Params, head: &Params) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> = base
        .keys()
        .chain(head.keys())
        .filter(|k| is_setting(kind, k))
        .collect();
    keys.into_iter()
        .filter_map(|k| {
            let (b, h) = (base.get(k), head.get(k));
            (b != h).then(|| {
                let show = |p: Option<&Param>| p.map_or("-".to_string(), |p| p.to_string());
                format!("{k}: {} -> {}", show(b), show(h))
            })
        })
        .collect()
}

/// How many settings two rows share with equal values (for pairing rows of one identity).
pub fn settings_agreement(kind: &str, a: &Params, b: &Params) -> usize {
    a.iter()
        .filter(|(k, v)| is_setting(kind, k) && b.get(*k) == Some(*v))
        .count()
}

/// Pairs the rows of one identity on two sides: exact settings first, then the pairs whose
/// settings agree most (earlier rows first among equals). Returns (base index, head index)
/// pairs; rows left out have no partner.
pub fn pair_rows(kind: &str, base: &[&Params], head: &[&Params]) -> Vec<(usize, usize)> {
    let mut cand: Vec<(usize, usize, usize, bool)> = Vec::new();
    for (i, b) in base.iter().enumerate() {
        for (j, h) in head.iter().enumerate() {
            let exact = settings_diff(kind, b, h).is_empty();
            cand.push((i, j, settings_agreement(kind, b, h), exact));
        }
    }
    cand.sort_by(|x, y| {
        (y.3, y.2)
            .cmp(&(x.3, x.2))
            .then((x.0, x.1).cmp(&(y.0, y.1)))
    });
    let (mut used_b, mut used_h) = (vec![false; base.len()], vec![false; head.len()]);
    let mut out = Vec::new();
    for (i, j, _, _) in cand {
        if !used_b[i] && !used_h[j] {
            used_b[i] = true;
            used_h[j] = true;
            out.push((i, j));
        }
    }
    out.sort();
    out
}
