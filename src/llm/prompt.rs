//! Prompts of an exact token length: the chat template for real models, random ids otherwise.

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use std::path::Path;
use tokenizers::Tokenizer;

/// `--chat-template`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChatTemplate {
    /// Zephyr when the model's tokenizer_config.json template uses `<|user|>`, else none.
    Auto,
    /// `<|user|>\n{prompt}</s>\n<|assistant|>\n` (TinyLlama-Chat, Zephyr).
    Zephyr,
    /// The prompt text as it is.
    None,
}

impl ChatTemplate {
    /// Resolves `Auto` from tokenizer_config.json's `chat_template`.
    pub fn resolve(self, tokenizer_config: Option<&Path>) -> ChatTemplate {
        if self != ChatTemplate::Auto {
            return self;
        }
        let template = tokenizer_config
            .and_then(|p| {
                crate::input::read_text(p, "tokenizer config", crate::input::SOURCE_MAX_BYTES).ok()
            })
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| {
                v.get("chat_template")
                    .and_then(|c| c.as_str())
                    .map(String::from)
            });
        match template {
            Some(t) if t.contains("<|user|>") && t.contains("<|assistant|>") => {
                ChatTemplate::Zephyr
            }
            _ => ChatTemplate::None,
        }
    }

    /// (text before the user's message, text after it).
    fn parts(self) -> (&'static str, &'static str) {
        match self {
            ChatTemplate::Zephyr => ("<|user|>\n", "</s>\n<|assistant|>\n"),
            ChatTemplate::None | ChatTemplate::Auto => ("", ""),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ChatTemplate::Auto => "auto",
            ChatTemplate::Zephyr => "zephyr",
            ChatTemplate::None => "none",
        }
    }
}

/// Exactly `len` tokens: BOS and the template's head, the prompt text repeated or cut to fit,
/// the template's tail (so the model is asked to answer).
pub fn templated_tokens(
    tok: &Tokenizer,
    template: ChatTemplate,
    text: &str,
    len: usize,
) -> Result<Vec<u32>> {
    let enc = |s: &str, special: bool| -> Result<Vec<u32>> {
        Ok(tok
            .encode(s, special)
            .map_err(|e| anyhow::anyhow!("tokenizing {s:?}: {e}"))?
            .get_ids()
            .to_vec())
    };
    let (head, tail) = template.parts();
    let head_ids = enc(head, true)?; // add_special_tokens: BOS where the tokenizer adds one
    let tail_ids = if tail.is_empty() {
        Vec::new()
    } else {
        enc(tail, false)?
    };
    let fixed = head_ids.len() + tail_ids.len();
    if len <= fixed {
        bail!(
            "--prompt-len {len} is too short: the {} chat template alone takes {fixed} tokens",
            template.label()
        );
    }
    let body = enc(text, false)?;
    if body.is_empty() {
        bail!("--prompt {text:?} tokenizes to nothing: give some text");
    }
    let need = len - fixed;
    let mut ids = head_ids;
    ids.extend(body.iter().cycle().take(need));
    ids.extend(tail_ids);
    debug_assert_eq!(ids.len(), len);
    Ok(ids)
}

/// `batch` rows of `len` random token ids in [3, vocab) (0-2 are unk/bos/eos in Llama
/// vocabularies), reproducible from `seed`.
pub fn random_tokens(vocab: usize, batch: usize, len: usize, seed: u64) -> Result<Vec<Vec<u32>>> {
    if vocab <= 3 {
        bail!("vocab_size {vocab} is too small for random prompts (needs > 3)");
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    Ok((0..batch)
        .map(|_| {
            (0..len)
                .map(|_| rng.random_range(3..vocab as u32))
                .collect()
        })
        .collect())
}

/// Loads a tokenizer.json, naming the file on error.
pub fn load_tokenizer(path: &Path) -> Result<Tokenizer> {
    Tokenizer::from_file(path)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("{}: not a valid tokenizer.json", path.display()))
}
