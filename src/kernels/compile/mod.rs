//! Compiling a kernel source: nvcc to a cubin (whole files: host code, host headers, `main()`)
//! or NVRTC to PTX in-process (device-only files), and each manifest kernel's symbol in the
//! result, found by its name as written.

pub mod cubin;
pub mod nvcc;
mod nvrtc_help;

use crate::artifact::CompilerInfo;
use crate::kernels::args::CompilerChoice;
use crate::kernels::kernel_name::{Demangled, KernelName};
use crate::kernels::source::Source;
use anyhow::{bail, Result};

pub use nvrtc_help::explain_nvrtc_failure;

/// A GPU architecture: "90" for sm_90 / compute_90, "90a" for the arch-specific target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub sm: String,
}

impl Target {
    /// From `--arch`: `compute_90a`, `sm_90` or `90`.
    pub fn from_arch(arch: &str) -> Result<Target> {
        let sm = arch
            .trim()
            .trim_start_matches("compute_")
            .trim_start_matches("sm_");
        let digits = sm.trim_end_matches(['a', 'f']);
        if digits.len() < 2
            || !digits.chars().all(|c| c.is_ascii_digit())
            || sm.len() > digits.len() + 1
        {
            bail!("--arch {arch}: write a GPU target such as compute_90, sm_90a or 90");
        }
        Ok(Target { sm: sm.to_string() })
    }

    /// From a compute capability: (9, 0) -> "90".
    pub fn from_cc(cc: (i32, i32)) -> Target {
        Target {
            sm: format!("{}{}", cc.0, cc.1),
        }
    }

    /// NVRTC's `--gpu-architecture` value (PTX for the driver to finish): "compute_90".
    pub fn nvrtc_arch(&self) -> String {
        format!("compute_{}", self.sm)
    }
}

/// A compiled module.
#[derive(Debug, Clone)]
pub enum Image {
    Ptx(String),
    Cubin(Vec<u8>),
}

/// A compiled source with the symbol of each kernel asked for.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub image: Image,
    /// One per kernel name given to `compile`, in that order.
    pub symbols: Vec<String>,
    pub info: CompilerInfo,
    /// What a reader of the artifact should know (a fallback from NVRTC to nvcc, an
    /// instantiation file).
    pub notes: Vec<String>,
}

/// Whether an in-process NVRTC can be used here: Ok, or why not.
pub fn nvrtc_status() -> std::result::Result<(), String> {
    #[cfg(feature = "cuda")]
    {
        crate::kernels::gpu::nvrtc::real_library().map(|_| ())
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err("this kernel_bench was built without the `cuda` feature, so it has no NVRTC".into())
    }
}

/// Compiles `source` with the chosen compiler for `target`. `auto` tries NVRTC first and,
/// when it fails or cannot be loaded, nvcc.
pub fn compile(
    choice: CompilerChoice,
    source: &Source,
    names: &[KernelName],
    target: &Target,
) -> Result<Compiled> {
    match choice {
        CompilerChoice::Nvrtc => {
            nvrtc_status().map_err(|why| anyhow::anyhow!("--compiler nvrtc: {why}"))?;
            with_nvrtc(source, names, target).map_err(|e| {
                let found =
                    nvcc::find().map(|n| format!("nvcc {} at {}", n.version, n.path.display()));
                explain_nvrtc_failure(e, &source.path, found)
            })
        }
        CompilerChoice::Nvcc => {
            let n = nvcc::find().map_err(|why| {
                anyhow::anyhow!(
                    "--compiler nvcc: {why}. Install the CUDA toolkit and put its bin/ on PATH \
                     or set CUDA_HOME (see `kernel_bench --help`), or use --compiler nvrtc for \
                     device-only files"
                )
            })?;
            with_nvcc(&n, source, names, target)
        }
        CompilerChoice::Auto => {
            let first = match nvrtc_status() {
                Ok(()) => with_nvrtc(source, names, target),
                Err(why) => Err(anyhow::anyhow!("NVRTC cannot be used: {why}")),
            };
            let nvrtc_error = match first {
                Ok(c) => return Ok(c),
                Err(e) => e,
            };
            match nvcc::find() {
                Ok(n) => {
                    let mut c = with_nvcc(&n, source, names, target).map_err(|e| {
                        e.context(format!(
                            "NVRTC failed first ({}), then nvcc",
                            first_line(&format!("{nvrtc_error:#}"))
                        ))
                    })?;
                    c.notes.insert(
                        0,
                        format!(
                            "--compiler auto: NVRTC could not compile {} ({}), so nvcc did",
                            source.path,
                            first_line(&format!("{nvrtc_error:#}"))
                        ),
                    );
                    Ok(c)
                }
                Err(why) => Err(explain_nvrtc_failure(nvrtc_error, &source.path, Err(why))),
            }
        }
    }
}

fn first_line(s: &str) -> String {
    let line = s
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| s.lines().next())
        .unwrap_or("");
    line.trim().chars().take(300).collect()
}

fn with_nvcc(
    n: &nvcc::Nvcc,
    source: &Source,
    names: &[KernelName],
    target: &Target,
) -> Result<Compiled> {
    let out = nvcc::compile(n, source, names, target)?;
    let found = cubin::kernel_symbols(&out.cubin).map_err(|e| {
        e.context(format!(
            "reading the kernels of nvcc's cubin of {}",
            source.path
        ))
    })?;
    let symbols = resolve(names, &found, &source.path)?;
    let mut notes = Vec::new();
    if !out.instances.is_empty() {
        notes.push(format!(
            "nvcc compiled an instantiation file that includes {} and takes the address of {}, \
             so those template instances are in the cubin",
            source.path,
            out.instances.join(", ")
        ));
    }
    Ok(Compiled {
        image: Image::Cubin(out.cubin),
        symbols,
        info: CompilerInfo {
            name: "nvcc".into(),
            version: n.version.clone(),
            path: Some(n.path.display().to_string()),
            flags: out.flags,
            target: format!("sm_{}", target.sm),
        },
        notes,
    })
}

#[cfg(feature = "cuda")]
fn with_nvrtc(source: &Source, names: &[KernelName], target: &Target) -> Result<Compiled> {
    let out = crate::kernels::gpu::nvrtc::compile_named(source, names, &target.nvrtc_arch())?;
    Ok(Compiled {
        image: Image::Ptx(out.ptx),
        symbols: out.lowered,
        info: CompilerInfo {
            name: "nvrtc".into(),
            version: out.version,
            path: out.library,
            flags: out.flags,
            target: target.nvrtc_arch(),
        },
        notes: Vec::new(),
    })
}

#[cfg(not(feature = "cuda"))]
fn with_nvrtc(_source: &Source, _names: &[KernelName], _target: &Target) -> Result<Compiled> {
    bail!("this kernel_bench was built without the `cuda` feature, so it has no NVRTC")
}

/// The symbol of each name among a module's kernel symbols. A name matching none lists the
/// kernels the module has (demangled); a name matching several lists each candidate.
pub fn resolve(names: &[KernelName], symbols: &[String], file: &str) -> Result<Vec<String>> {
    let all: Vec<Demangled> = symbols.iter().map(|s| Demangled::new(s)).collect();
    let listing = |list: &[&Demangled]| -> String {
        list.iter()
            .map(|d| {
                if d.text == d.symbol {
                    format!("  {}", d.text)
                } else {
                    format!("  {}  [{}]", d.text, d.symbol)
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    names
        .iter()
        .map(|n| {
            let found: Vec<&Demangled> = all.iter().filter(|d| n.matches(d)).collect();
            match found.as_slice() {
                [one] => Ok(one.symbol.clone()),
                [] => bail!(
                    "kernel `{}` is not among the kernels compiled from {}; they are\n{}",
                    n.text,
                    file,
                    listing(&all.iter().collect::<Vec<_>>())
                ),
                many => bail!(
                    "kernel `{}` is ambiguous in the module compiled from {}: it matches\n{}\n\
                     name one with its parameter types, e.g. `{}({})`",
                    n.text,
                    file,
                    listing(many),
                    n.qualified(),
                    many[0].param_types.clone().unwrap_or_default().join(", ")
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_from_arch_and_capability() {
        assert_eq!(Target::from_arch("compute_90a").unwrap().sm, "90a");
        assert_eq!(Target::from_arch("sm_90").unwrap().sm, "90");
        assert_eq!(Target::from_arch("100").unwrap().sm, "100");
        assert!(Target::from_arch("hopper").is_err());
        assert!(Target::from_arch("compute_9").is_err());
        assert_eq!(Target::from_cc((9, 0)).nvrtc_arch(), "compute_90");
    }

    #[test]
    fn symbols_resolve_by_name_as_written() {
        let syms: Vec<String> = [
            "_Z25layernorm_forward_kernel1PfS_S_PKfS1_S1_ii",
            "_Z14softmax_kernelILi256EfEvPT0_PKS0_i",
            "_Z5scalePfi",
            "_Z5scalePdi",
            "plain_c",
        ]
        .map(String::from)
        .to_vec();
        let names: Vec<KernelName> = [
            "layernorm_forward_kernel1",
            "softmax_kernel<256, float>",
            "scale(double*, int)",
            "plain_c",
        ]
        .iter()
        .map(|n| KernelName::parse(n).unwrap())
        .collect();
        let got = resolve(&names, &syms, "f.cu").unwrap();
        assert_eq!(
            got,
            [
                syms[0].clone(),
                syms[1].clone(),
                syms[3].clone(),
                syms[4].clone()
            ]
        );
        let e = resolve(&[KernelName::parse("scale").unwrap()], &syms, "f.cu").unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("ambiguous") && e.contains("scale(float*, int)"),
            "{e}"
        );
        assert!(e.contains("scale(double*, int)  [_Z5scalePdi]"), "{e}");
        let e = resolve(&[KernelName::parse("nope").unwrap()], &syms, "f.cu").unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("not among the kernels compiled from f.cu"),
            "{e}"
        );
        assert!(
            e.contains("void softmax_kernel<256, float>(float*, float const*, int)"),
            "{e}"
        );
    }
}
