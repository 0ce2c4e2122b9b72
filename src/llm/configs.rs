//! Llama architectures: the named configs (TinyLlama-1.1B and a ladder of smaller ones), checks
//! that candle's Llama can take a config, and parameter / weight-byte accounting.

use anyhow::{bail, Context, Result};
use candle_transformers::models::llama::{Config, LlamaConfig, LlamaEosToks};
use serde_json::json;
use std::path::Path;

/// The architecture numbers of a Llama model (a subset of Hugging Face's config.json).
#[derive(Debug, Clone, PartialEq)]
pub struct Arch {
    /// A short name for tables: "tinyllama-1.1b", "llama-24m", or the model id / folder.
    pub name: String,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub vocab_size: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: f32,
    pub max_position_embeddings: usize,
    pub tie_word_embeddings: bool,
}

/// (name, hidden, intermediate, layers, heads, kv heads). Vocabulary 32000 (the Llama-2 /
/// TinyLlama tokenizer) for all, so the ladder differs only in the transformer's size.
const NAMED: [(&str, usize, usize, usize, usize, usize); 6] = [
    ("llama-9m", 128, 384, 4, 4, 4),
    ("llama-24m", 288, 768, 6, 6, 6),
    ("llama-58m", 512, 1376, 8, 8, 8),
    ("llama-134m", 768, 2048, 12, 12, 12),
    ("llama-336m", 1024, 2816, 24, 16, 4),
    ("tinyllama-1.1b", 2048, 5632, 22, 32, 4),
];

/// Names accepted by `--config`, smallest first. "ladder" expands to all of them.
pub fn named_config_names() -> Vec<&'static str> {
    NAMED.iter().map(|n| n.0).collect()
}

/// A named config ("tinyllama-1.1b", "llama-25m", ...).
pub fn named(name: &str) -> Result<Arch> {
    let Some(&(n, h, i, l, heads, kv)) = NAMED.iter().find(|c| c.0 == name) else {
        bail!(
            "unknown --config {name:?}: use one of {} or `ladder` (all of them), or a path to a \
             Hugging Face config.json",
            named_config_names().join(", ")
        );
    };
    Ok(Arch {
        name: n.to_string(),
        hidden_size: h,
        intermediate_size: i,
        num_hidden_layers: l,
        num_attention_heads: heads,
        num_key_value_heads: kv,
        vocab_size: 32000,
        rms_norm_eps: 1e-5,
        rope_theta: 10_000.0,
        max_position_embeddings: 2048,
        tie_word_embeddings: false,
    })
}

/// Expands a `--config` list: names, `ladder`, or paths to config.json files. A config named
/// twice (after `ladder` is expanded) runs once, with a warning.
pub fn resolve_configs(list: &[String]) -> Result<Vec<Arch>> {
    let mut out = Vec::new();
    for item in list {
        if item == "ladder" {
            for n in named_config_names() {
                out.push(named(n)?);
            }
        } else if item.ends_with(".json") || Path::new(item).is_file() {
            out.push(read_config_json(Path::new(item), None)?);
        } else {
            out.push(named(item)?);
        }
    }
    // `ladder,llama-9m` names llama-9m twice: each config runs once.
    let mut names: Vec<String> = out.iter().map(|a| a.name.clone()).collect();
    crate::cli::dedup_warn("--config", &mut names);
    let mut kept: Vec<Arch> = Vec::with_capacity(names.len());
    for a in out {
        if !kept.iter().any(|k| k.name == a.name) {
            kept.push(a);
        }
    }
    Ok(kept)
}

/// Reads a Hugging Face config.json, names the file in every error, and checks it.
pub fn read_config_json(path: &Path, name: Option<&str>) -> Result<Arch> {
    let text = crate::input::read_text(path, "model config", crate::input::SOURCE_MAX_BYTES)?;
    let c: LlamaConfig = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a Llama config.json (needs hidden_size, intermediate_size, vocab_size, \
             num_hidden_layers, num_attention_heads, rms_norm_eps, max_position_embeddings)",
            path.display()
        )
    })?;
    if c.rope_scaling.is_some() {
        // Llama-3 style scaling works in candle; we record it only through the name.
    }
    let arch = Arch {
        name: name
            .map(String::from)
            .unwrap_or_else(|| config_name_from_path(path)),
        hidden_size: c.hidden_size,
        intermediate_size: c.intermediate_size,
        num_hidden_layers: c.num_hidden_layers,
        num_attention_heads: c.num_attention_heads,
        num_key_value_heads: c.num_key_value_heads(),
        vocab_size: c.vocab_size,
        rms_norm_eps: c.rms_norm_eps,
        rope_theta: c.rope_theta,
        max_position_embeddings: c.max_position_embeddings,
        tie_word_embeddings: c.tie_word_embeddings.unwrap_or(false),
    };
    arch.check()
        .with_context(|| format!("{}: candle's Llama cannot take this config", path.display()))?;
    Ok(arch)
}

fn config_name_from_path(path: &Path) -> String {
    let parent = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|s| s.to_string_lossy().to_string());
    match parent {
        Some(p) if !p.is_empty() => p,
        _ => path.display().to_string(),
    }
}

impl Arch {
    /// Per-head width.
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads.max(1)
    }

    /// The shapes candle's Llama needs; errors say which field breaks which rule.
    pub fn check(&self) -> Result<()> {
        let fields = [
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("vocab_size", self.vocab_size),
            ("max_position_embeddings", self.max_position_embeddings),
        ];
        for (f, v) in fields {
            if v == 0 {
                bail!("config field `{f}` is 0: it must be positive");
            }
        }
        if !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            bail!(
                "config field `hidden_size` ({}) is not divisible by `num_attention_heads` ({}): \
                 every head must get the same width",
                self.hidden_size,
                self.num_attention_heads
            );
        }
        if !self
            .num_attention_heads
            .is_multiple_of(self.num_key_value_heads)
        {
            bail!(
                "config field `num_attention_heads` ({}) is not a multiple of \
                 `num_key_value_heads` ({}): grouped-query attention shares each KV head among \
                 a whole number of query heads",
                self.num_attention_heads,
                self.num_key_value_heads
            );
        }
        if !self.head_dim().is_multiple_of(2) {
            bail!(
                "head width hidden_size / num_attention_heads = {} is odd: rotary embeddings \
                 rotate pairs of channels",
                self.head_dim()
            );
        }
        if !(self.rms_norm_eps.is_finite() && self.rms_norm_eps > 0.0) {
            bail!(
                "config field `rms_norm_eps` is {}: it must be a positive number",
                self.rms_norm_eps
            );
        }
        Ok(())
    }

    /// candle's config (no flash attention: the plain candle path is what we measure).
    pub fn candle_config(&self) -> Config {
        Config {
            hidden_size: self.hidden_size,
            intermediate_size: self.intermediate_size,
            vocab_size: self.vocab_size,
            num_hidden_layers: self.num_hidden_layers,
            num_attention_heads: self.num_attention_heads,
            num_key_value_heads: self.num_key_value_heads,
            use_flash_attn: false,
            rms_norm_eps: self.rms_norm_eps,
            rope_theta: self.rope_theta,
            bos_token_id: Some(1),
            eos_token_id: Some(LlamaEosToks::Single(2)),
            rope_scaling: None,
            max_position_embeddings: self.max_position_embeddings,
            tie_word_embeddings: self.tie_word_embeddings,
        }
    }

    /// Every weight tensor with its Hugging Face name and shape, in a stable order.
    pub fn tensors(&self) -> Vec<(String, Vec<usize>)> {
        let (h, i, v) = (self.hidden_size, self.intermediate_size, self.vocab_size);
        let kv = self.head_dim() * self.num_key_value_heads;
        let q = self.head_dim() * self.num_attention_heads;
        let mut t = vec![("model.embed_tokens.weight".to_string(), vec![v, h])];
        for l in 0..self.num_hidden_layers {
            let p = format!("model.layers.{l}");
            t.push((format!("{p}.input_layernorm.weight"), vec![h]));
            t.push((format!("{p}.self_attn.q_proj.weight"), vec![q, h]));
            t.push((format!("{p}.self_attn.k_proj.weight"), vec![kv, h]));
            t.push((format!("{p}.self_attn.v_proj.weight"), vec![kv, h]));
            t.push((format!("{p}.self_attn.o_proj.weight"), vec![h, q]));
            t.push((format!("{p}.post_attention_layernorm.weight"), vec![h]));
            t.push((format!("{p}.mlp.gate_proj.weight"), vec![i, h]));
            t.push((format!("{p}.mlp.up_proj.weight"), vec![i, h]));
            t.push((format!("{p}.mlp.down_proj.weight"), vec![h, i]));
        }
        t.push(("model.norm.weight".to_string(), vec![h]));
        if !self.tie_word_embeddings {
            t.push(("lm_head.weight".to_string(), vec![v, h]));
        }
        t
    }

    /// Number of parameters (tied embeddings counted once).
    pub fn param_count(&self) -> u64 {
        self.tensors()
            .iter()
            .map(|(_, s)| s.iter().product::<usize>() as u64)
            .sum()
    }

    /// Parameters one decode step must read: everything but the embedding table, of which it
    /// reads only one row per sequence (with tied embeddings the table is the LM head: read).
    pub fn params_read_per_step(&self) -> u64 {
        let emb = (self.vocab_size * self.hidden_size) as u64;
        if self.tie_word_embeddings {
            self.param_count()
        } else {
            self.param_count() - emb
        }
    }

    /// KV-cache bytes per sequence position (all layers, K and V).
    pub fn kv_bytes_per_position(&self, dtype_bytes: usize) -> u64 {
        (self.num_hidden_layers * 2 * self.num_key_value_heads * self.head_dim() * dtype_bytes)
            as u64
    }

    /// A Hugging Face config.json for this architecture (read by transformers' LlamaForCausalLM).
    pub fn hf_config_json(&self, torch_dtype: &str) -> serde_json::Value {
        json!({
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim(),
            "vocab_size": self.vocab_size,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "max_position_embeddings": self.max_position_embeddings,
            "tie_word_embeddings": self.tie_word_embeddings,
            "hidden_act": "silu",
            "attention_bias": false,
            "mlp_bias": false,
            "bos_token_id": 1,
            "eos_token_id": 2,
            "torch_dtype": torch_dtype,
            "opbench_config_name": self.name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tinyllama_has_1_1b_params_and_2_07_gb_read_per_token_in_f16() {
        let a = named("tinyllama-1.1b").unwrap();
        assert_eq!(a.param_count(), 1_100_048_384);
        let read = a.params_read_per_step() * 2;
        assert!((read as f64 / 1e9 - 2.07).abs() < 0.01, "{read}");
        assert_eq!(a.kv_bytes_per_position(2), 22 * 2 * 256 * 2);
    }

    #[test]
    fn ladder_names_match_their_parameter_counts() {
        for n in named_config_names() {
            let a = named(n).unwrap();
            a.check().unwrap();
            let millions = a.param_count() as f64 / 1e6;
            let label: f64 = n
                .rsplit('-')
                .next()
                .unwrap()
                .trim_end_matches('m')
                .trim_end_matches('b')
                .parse()
                .unwrap();
            let label_m = if n.ends_with('b') { label * 1e3 } else { label };
            assert!(
                (millions / label_m - 1.0).abs() < 0.05,
                "{n}: {millions:.1} M parameters"
            );
        }
    }

    #[test]
    fn configs_candle_cannot_take_are_refused_with_the_field_named() {
        let mut a = named("llama-9m").unwrap();
        a.num_attention_heads = 3;
        let e = a.check().unwrap_err().to_string();
        assert!(
            e.contains("hidden_size") && e.contains("num_attention_heads"),
            "{e}"
        );
        let mut a = named("llama-9m").unwrap();
        a.num_key_value_heads = 3;
        assert!(a
            .check()
            .unwrap_err()
            .to_string()
            .contains("num_key_value_heads"));
        let mut a = named("llama-9m").unwrap();
        a.vocab_size = 0;
        assert!(a.check().unwrap_err().to_string().contains("vocab_size"));
        assert!(named("llama-7b")
            .unwrap_err()
            .to_string()
            .contains("ladder"));
    }

    #[test]
    fn ladder_expands_smallest_first() {
        let v = resolve_configs(&["ladder".to_string()]).unwrap();
        assert_eq!(v.len(), 6);
        assert!(v
            .windows(2)
            .all(|w| w[0].param_count() < w[1].param_count()));
    }
}
