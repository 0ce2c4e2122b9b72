//! Building candle's Llama: from safetensors files (checked tensor by tensor first) or from
//! random weights generated on the device; saving random weights for the transformers peer.

use super::backend::Backend;
use super::configs::Arch;
use anyhow::{bail, Context, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::llama::{Cache, Llama};
use rand::SeedableRng;
use rand_distr::Distribution;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Standard deviation of random weights (Hugging Face's `initializer_range` for Llama).
pub const RANDOM_STD: f64 = 0.02;

/// A loaded model, ready to generate.
pub struct Model {
    pub arch: Arch,
    pub llama: Llama,
    /// An empty KV cache with the rotary tables; cloned for each generation.
    pub cache: Cache,
    pub dtype: DType,
    /// "random" or "real".
    pub weights: &'static str,
    /// The weight tensors by Hugging Face name (kept for random weights, to save them).
    pub tensors: Option<HashMap<String, Tensor>>,
    /// The safetensors files real weights came from (empty for random weights).
    pub files: Vec<PathBuf>,
}

/// `--dtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DtypeChoice {
    /// f16 on the GPU, f32 on the CPU.
    Auto,
    F16,
    Bf16,
    F32,
}

impl DtypeChoice {
    pub fn resolve(self, cuda: bool) -> DType {
        match self {
            DtypeChoice::Auto if cuda => DType::F16,
            DtypeChoice::Auto => DType::F32,
            DtypeChoice::F16 => DType::F16,
            DtypeChoice::Bf16 => DType::BF16,
            DtypeChoice::F32 => DType::F32,
        }
    }
}

/// "f16", "bf16", "f32".
pub fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        DType::F32 => "f32",
        _ => "other",
    }
}

fn is_norm(name: &str) -> bool {
    name.ends_with("norm.weight")
}

/// One random tensor: N(0, RANDOM_STD) for matrices, ones for norm weights. On CUDA it is
/// drawn on the device (curand, seeded through the backend); on the CPU from a seeded host RNG.
fn random_tensor(
    name: &str,
    shape: &[usize],
    dtype: DType,
    dev: &Device,
    rng: &mut rand::rngs::StdRng,
) -> Result<Tensor> {
    if is_norm(name) {
        return Ok(Tensor::ones(shape, dtype, dev)?);
    }
    let t = if dev.is_cpu() {
        let n: usize = shape.iter().product();
        let normal = rand_distr::Normal::new(0f32, RANDOM_STD as f32)?;
        let v: Vec<f32> = (0..n).map(|_| normal.sample(rng)).collect();
        Tensor::from_vec(v, shape, dev)?
    } else {
        Tensor::randn(0f32, RANDOM_STD as f32, shape, dev)?
    };
    Ok(t.to_dtype(dtype)?)
}

fn build(arch: &Arch, vb: VarBuilder, dtype: DType, dev: &Device) -> Result<(Llama, Cache)> {
    let cfg = arch.candle_config();
    let llama = Llama::load(vb, &cfg).context("building candle's Llama")?;
    let cache = Cache::new(true, dtype, &cfg, dev).context("building the KV cache")?;
    Ok((llama, cache))
}

impl Model {
    /// The architecture with random weights, generated on the backend's device.
    pub fn random(arch: &Arch, dtype: DType, backend: &Backend, seed: u64) -> Result<Model> {
        arch.check()
            .with_context(|| format!("config {}: candle's Llama cannot take it", arch.name))?;
        let dev = backend.device();
        backend.seed(seed)?;
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut map = HashMap::new();
        for (name, shape) in arch.tensors() {
            let t = random_tensor(&name, &shape, dtype, &dev, &mut rng)
                .with_context(|| format!("generating random weight {name} {shape:?}"))?;
            map.insert(name, t);
        }
        let vb = VarBuilder::from_tensors(map.clone(), dtype, &dev);
        let (llama, cache) = build(arch, vb, dtype, &dev)?;
        Ok(Model {
            arch: arch.clone(),
            llama,
            cache,
            dtype,
            weights: "random",
            tensors: Some(map),
            files: Vec::new(),
        })
    }

    /// Loads safetensors files after checking that every tensor the architecture needs is
    /// there with the right shape (candle's loader would panic otherwise).
    pub fn from_files(arch: &Arch, files: &[PathBuf], dtype: DType, dev: &Device) -> Result<Model> {
        arch.check()
            .with_context(|| format!("config {}: candle's Llama cannot take it", arch.name))?;
        check_tensors(arch, files)?;
        // SAFETY: the files are memory-mapped read-only; nothing else writes them meanwhile.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(files, dtype, dev) }
            .with_context(|| format!("memory-mapping {}", list(files)))?;
        let (llama, cache) = build(arch, vb, dtype, dev)?;
        Ok(Model {
            arch: arch.clone(),
            llama,
            cache,
            dtype,
            weights: "real",
            tensors: None,
            files: files.to_vec(),
        })
    }

    /// Bytes of all weights in the model's dtype.
    pub fn weight_bytes(&self) -> u64 {
        self.arch.param_count() * self.dtype.size_in_bytes() as u64
    }

    /// Writes the random weights as `model.safetensors` (Hugging Face names) and a
    /// transformers `config.json` into `dir`.
    pub fn save_hf(&self, dir: &Path) -> Result<()> {
        let Some(map) = &self.tensors else {
            bail!("only random weights are saved (real weights already live in their files)");
        };
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating --save-weights folder {}", dir.display()))?;
        let st = dir.join("model.safetensors");
        candle_core::safetensors::save(map, &st)
            .with_context(|| format!("writing {}", st.display()))?;
        let torch_dtype = match self.dtype {
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            _ => "float32",
        };
        let cfg = dir.join("config.json");
        crate::artifact::write_json_atomic(&cfg, &self.arch.hf_config_json(torch_dtype))?;
        Ok(())
    }
}

fn list(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Names every missing or misshapen tensor (up to 20) and the files searched.
pub fn check_tensors(arch: &Arch, files: &[PathBuf]) -> Result<()> {
    // SAFETY: read-only memory map of files nobody writes meanwhile.
    let st = unsafe { candle_core::safetensors::MmapedSafetensors::multi(files) }
        .with_context(|| format!("reading safetensors headers of {}", list(files)))?;
    let have: HashMap<String, Vec<usize>> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n, v.shape().to_vec()))
        .collect();
    let mut problems = Vec::new();
    for (name, shape) in arch.tensors() {
        match have.get(&name) {
            None => problems.push(format!("{name}: missing (expected shape {shape:?})")),
            Some(s) if *s != shape => problems.push(format!(
                "{name}: shape {s:?}, config.json implies {shape:?}"
            )),
            Some(_) => {}
        }
    }
    if !problems.is_empty() {
        let n = problems.len();
        problems.truncate(20);
        bail!(
            "the weights in {} do not fit config.json ({n} problem(s)):\n  {}",
            list(files),
            problems.join("\n  ")
        );
    }
    Ok(())
}
