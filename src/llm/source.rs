//! Where a model comes from: the Hugging Face cache / Hub (hf-hub), a local folder, or random
//! weights. Resolves to files on disk and checks them, naming every missing file.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The model files a real (non-random) model needs.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    /// A label for the artifact: the Hub id or the folder.
    pub label: String,
    pub config: PathBuf,
    pub tokenizer: PathBuf,
    /// One file, or the shards listed in model.safetensors.index.json.
    pub weights: Vec<PathBuf>,
    /// tokenizer_config.json when present (holds the chat template).
    pub tokenizer_config: Option<PathBuf>,
}

/// The weight file names of a folder: model.safetensors, or the shards of the index.
fn shard_names(index: &Path) -> Result<Vec<String>> {
    let text = crate::input::read_text(index, "shard index", crate::input::SOURCE_MAX_BYTES)?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", index.display()))?;
    let map = v
        .get("weight_map")
        .and_then(|m| m.as_object())
        .with_context(|| format!("{}: no `weight_map` object", index.display()))?;
    let mut names: Vec<String> = map
        .values()
        .filter_map(|f| f.as_str().map(String::from))
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        bail!("{}: `weight_map` lists no files", index.display());
    }
    Ok(names)
}

/// Checks a `--model-dir` folder; the error lists every missing file at once.
pub fn from_dir(dir: &Path) -> Result<ModelFiles> {
    let need = "it must hold config.json, tokenizer.json and model.safetensors or \
                model.safetensors.index.json with its shards";
    if dir.exists() && !dir.is_dir() {
        bail!(
            "--model-dir {}: a file, not a folder ({need}); give the folder the model's files are in",
            dir.display()
        );
    }
    if !dir.is_dir() {
        bail!(
            "--model-dir {}: no such folder (it must hold config.json, tokenizer.json and \
             model.safetensors or model.safetensors.index.json with its shards)",
            dir.display()
        );
    }
    let mut missing = Vec::new();
    let config = dir.join("config.json");
    let tokenizer = dir.join("tokenizer.json");
    for f in [&config, &tokenizer] {
        if !f.is_file() {
            missing.push(f.display().to_string());
        }
    }
    let single = dir.join("model.safetensors");
    let index = dir.join("model.safetensors.index.json");
    let weights = if single.is_file() {
        vec![single]
    } else if index.is_file() {
        let shards: Vec<PathBuf> = shard_names(&index)?
            .into_iter()
            .map(|n| dir.join(n))
            .collect();
        for s in &shards {
            if !s.is_file() {
                missing.push(format!("{} (listed in {})", s.display(), index.display()));
            }
        }
        shards
    } else {
        missing.push(format!(
            "{} (or {} with its shards)",
            single.display(),
            index.display()
        ));
        Vec::new()
    };
    if !missing.is_empty() {
        bail!(
            "--model-dir {} is missing {} file(s):\n  {}",
            dir.display(),
            missing.len(),
            missing.join("\n  ")
        );
    }
    let tc = dir.join("tokenizer_config.json");
    Ok(ModelFiles {
        label: dir.display().to_string(),
        config,
        tokenizer,
        weights,
        tokenizer_config: tc.is_file().then_some(tc),
    })
}

fn offline() -> bool {
    std::env::var("HF_HUB_OFFLINE")
        .map(|v| matches!(v.trim(), "1" | "true" | "TRUE" | "True" | "yes"))
        .unwrap_or(false)
}

/// What to say when the Hub cannot be used.
fn other_sources() -> &'static str {
    "use --model-dir DIR (a folder with config.json, tokenizer.json and model.safetensors) or \
     --weights random (the architecture of --config with random weights, no download)"
}

/// Fetches one file of `model_id`: from the cache, else (unless offline) from the Hub.
fn hub_file(model_id: &str, file: &str) -> Result<PathBuf> {
    let cache = hf_hub::Cache::from_env();
    if let Some(p) = cache.model(model_id.to_string()).get(file) {
        return Ok(p);
    }
    if offline() {
        bail!(
            "offline (HF_HUB_OFFLINE is set) and the Hugging Face cache at {} has no {file} for \
             {model_id}: {}",
            cache.path().display(),
            other_sources()
        );
    }
    let api = hf_hub::api::sync::ApiBuilder::from_env()
        .with_progress(true)
        .build()
        .context("setting up the Hugging Face Hub client")?;
    api.model(model_id.to_string()).get(file).with_context(|| {
        format!(
            "downloading {file} of {model_id} from the Hugging Face Hub failed (no network, a \
             wrong model id, or a gated model?); the cache at {} does not have it either: {}",
            cache.path().display(),
            other_sources()
        )
    })
}

/// Resolves `--model ID` through the Hugging Face cache, downloading what is missing.
pub fn from_hub(model_id: &str) -> Result<ModelFiles> {
    let config = hub_file(model_id, "config.json")?;
    let tokenizer = hub_file(model_id, "tokenizer.json")?;
    let weights = match hub_file(model_id, "model.safetensors") {
        Ok(p) => vec![p],
        Err(single_err) => match hub_file(model_id, "model.safetensors.index.json") {
            Ok(index) => {
                let mut v = Vec::new();
                for n in shard_names(&index)? {
                    v.push(hub_file(model_id, &n)?);
                }
                v
            }
            Err(_) => return Err(single_err),
        },
    };
    let tokenizer_config = hub_file(model_id, "tokenizer_config.json").ok();
    Ok(ModelFiles {
        label: model_id.to_string(),
        config,
        tokenizer,
        weights,
        tokenizer_config,
    })
}

#[cfg(test)]
mod dir_tests {
    use super::*;

    #[test]
    fn a_file_given_as_model_dir_is_called_a_file() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = format!("{:#}", from_dir(f.path()).unwrap_err());
        assert!(
            e.contains("a file, not a folder") && !e.contains("no such"),
            "{e}"
        );
        let e = format!("{:#}", from_dir(Path::new("/no/such/dir")).unwrap_err());
        assert!(e.contains("no such folder"), "{e}");
    }
}
