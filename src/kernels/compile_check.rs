//! What `--device cpu` says about the source: compiled (NVRTC when a `cuda` build finds the real
//! library, nvcc when one is installed; neither needs a GPU) with each kernel's symbol, or
//! scanned for kernel signatures only, and why.

use super::args::{Args, CompilerChoice};
use super::compile::{compile, nvcc, nvrtc_status, Target};
use super::source::Source;
use anyhow::{Context, Result};

/// The GPU target `--device cpu` compiles for when `--arch` is not given (no GPU to ask).
pub const DEFAULT_CPU_ARCH: &str = "compute_90";

/// Whether the source was compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileCheck {
    /// Compiled without an error.
    Compiled {
        /// "nvcc 13.0.88" or "nvrtc 13.0".
        compiler: String,
        /// "sm_90" or "compute_90".
        target: String,
        /// (kernel as named, its symbol in the compiled module).
        symbols: Vec<(String, String)>,
    },
    /// Only the kernel declarations were read; the reason says why it was not compiled.
    NotCompiled { why: String },
}

impl CompileCheck {
    /// The lines `--device cpu` prints about the source.
    pub fn line(&self, path: &str) -> String {
        match self {
            CompileCheck::Compiled {
                compiler,
                target,
                symbols,
            } => {
                let mut s =
                    format!("source: {path} compiled with {compiler} for {target} without errors");
                for (name, sym) in symbols {
                    if name != sym {
                        s.push_str(&format!("\n  kernel {name} -> symbol {sym}"));
                    }
                }
                s
            }
            CompileCheck::NotCompiled { why } => format!(
                "source: {path} NOT compiled ({why}): only its kernel signatures were checked, \
                 so errors inside kernel bodies show up only when it is compiled (nvcc on PATH or \
                 a `--features cuda` build with NVRTC compiles it here, no GPU needed; or on the \
                 GPU with --device cuda)"
            ),
        }
    }
}

/// Compiles the source with the chosen compiler when it is here; a compile error is an error
/// (with the compiler's log naming file and line), a missing compiler is `NotCompiled`.
pub fn check(args: &Args, source: &Source, kernels: &[String]) -> Result<CompileCheck> {
    let nvrtc = nvrtc_status().map_err(|why| format!("NVRTC could not be loaded: {why}"));
    let nvcc = nvcc::find();
    let missing = match (args.compiler, &nvrtc, &nvcc) {
        (CompilerChoice::Nvrtc, Err(why), _) => Some(why.clone()),
        (CompilerChoice::Nvcc, _, Err(why)) => Some(format!("--compiler nvcc: {why}")),
        (CompilerChoice::Auto, Err(a), Err(b)) => Some(format!("{a}; and {b}")),
        _ => None,
    };
    if let Some(why) = missing {
        return Ok(CompileCheck::NotCompiled { why });
    }
    let arch = args.arch.as_deref().unwrap_or(DEFAULT_CPU_ARCH);
    let target = Target::from_arch(arch)?;
    let names = source.qualified_names(kernels)?;
    let c = compile(args.compiler, source, &names, &target).with_context(|| {
        format!(
            "--device cpu compiles the source (--compiler {:?}; pass --arch for another target)",
            args.compiler
        )
    })?;
    for n in &c.notes {
        eprintln!("{n}");
    }
    Ok(CompileCheck::Compiled {
        compiler: format!("{} {}", c.info.name, c.info.version),
        target: c.info.target,
        symbols: kernels.iter().cloned().zip(c.symbols).collect(),
    })
}
