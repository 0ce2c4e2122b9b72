//! What `--device cpu` says about the source: compiled with NVRTC (a `cuda` build finds it
//! without a GPU), or scanned for kernel signatures only, and why.

use super::args::Args;
use super::source::Source;
use anyhow::Result;

/// The NVRTC target `--device cpu` compiles for when `--arch` is not given (no GPU to ask).
pub const DEFAULT_CPU_ARCH: &str = "compute_90";

/// Whether the source was compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileCheck {
    /// NVRTC compiled it for this target without an error.
    Compiled { arch: String },
    /// Only the kernel declarations were read; the reason says why it was not compiled.
    NotCompiled { why: String },
}

impl CompileCheck {
    /// The line `--device cpu` prints about the source.
    pub fn line(&self, path: &str) -> String {
        match self {
            CompileCheck::Compiled { arch } => {
                format!("source: {path} compiled with NVRTC for {arch} without errors")
            }
            CompileCheck::NotCompiled { why } => format!(
                "source: {path} NOT compiled ({why}): only its kernel signatures were checked, \
                 so errors inside kernel bodies show up only when it is compiled (a `--features \
                 cuda` build compiles it here with NVRTC, no GPU needed, or on the GPU with \
                 --device cuda)"
            ),
        }
    }
}

/// Compiles the source with NVRTC when this build has it and the real library is loaded; a
/// compile error is an error (with NVRTC's log naming file and line).
#[cfg(feature = "cuda")]
pub fn check(args: &Args, source: &Source) -> Result<CompileCheck> {
    use super::gpu::nvrtc;
    use anyhow::Context;
    match nvrtc::real_library() {
        Ok(_) => {
            let arch = args
                .arch
                .clone()
                .unwrap_or_else(|| DEFAULT_CPU_ARCH.to_string());
            // The PTX is not needed here: only whether NVRTC accepts the source.
            let _ptx = nvrtc::compile(source, &arch).context(
                "--device cpu compiles the source with NVRTC (pass --arch for another target)",
            )?;
            Ok(CompileCheck::Compiled { arch })
        }
        Err(why) => Ok(CompileCheck::NotCompiled {
            why: format!("NVRTC could not be loaded: {why}"),
        }),
    }
}

/// Without the `cuda` feature there is no NVRTC to compile with.
#[cfg(not(feature = "cuda"))]
pub fn check(_args: &Args, _source: &Source) -> Result<CompileCheck> {
    Ok(CompileCheck::NotCompiled {
        why: "this kernel_bench was built without the `cuda` feature, so it has no NVRTC".into(),
    })
}
