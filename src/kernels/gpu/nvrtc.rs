//! In-process compilation with NVRTC (through cudarc) for the GPU's architecture.

use crate::kernels::source::Source;
use anyhow::{bail, Result};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};
use std::path::{Path, PathBuf};

/// The NVRTC target for a compute capability: (9, 0) -> "compute_90".
pub fn arch_for(cc: (i32, i32)) -> String {
    format!("compute_{}{}", cc.0, cc.1)
}

/// Folders searched for `#include`: the source's own, then the CUDA toolkit's headers if present.
fn include_dirs(source: &Path) -> Vec<String> {
    let mut dirs = vec![source
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .display()
        .to_string()];
    let roots = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .chain([PathBuf::from("/usr/local/cuda")]);
    for r in roots {
        let inc = r.join("include");
        if inc.join("cuda_runtime.h").exists() || inc.join("cuda_fp16.h").exists() {
            dirs.push(inc.display().to_string());
            break;
        }
    }
    dirs
}

/// Compiles `source` to PTX for `arch` (e.g. "compute_90"), with line info for the profiler.
/// A compile error carries NVRTC's log, whose lines read `FILE(LINE): error: ...`.
pub fn compile(source: &Source, arch: &str) -> Result<Ptx> {
    if source.text.contains('\0') {
        bail!(
            "{} contains a NUL byte: not a CUDA source file",
            source.path
        );
    }
    let opts = CompileOptions {
        options: vec![format!("--gpu-architecture={arch}"), "-lineinfo".into()],
        include_paths: include_dirs(Path::new(&source.path)),
        name: Some(source.path.clone()),
        ..Default::default()
    };
    compile_ptx_with_opts(&source.text, opts).map_err(|e| match e {
        CompileError::CompileError { log, options, .. } => anyhow::anyhow!(
            "NVRTC could not compile {} for {arch}:\n{}\n(NVRTC options: {})",
            source.path,
            log.to_string_lossy().trim_end(),
            options.join(" ")
        ),
        other => anyhow::anyhow!(
            "NVRTC failed on {} ({other:?}): is the real libnvrtc.so.13 on LD_LIBRARY_PATH \
             (e.g. /usr/local/cuda/lib64)?",
            source.path
        ),
    })
}

/// The libnvrtc this process loaded and its size in bytes (Linux: read off /proc/self/maps).
/// The link-time stub is a few KiB; the real library is tens of MiB.
pub fn loaded_library() -> Option<(PathBuf, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let path = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            Path::new(p)
                .file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with("libnvrtc.so"))
        })?;
    let size = std::fs::metadata(path).ok()?.len();
    Some((PathBuf::from(path), size))
}

/// Whether a real NVRTC (not the build stub) is loaded: Ok(path) or Err(why not).
pub fn real_library() -> std::result::Result<PathBuf, String> {
    match loaded_library() {
        None => Err("no libnvrtc.so is mapped into this process".into()),
        Some((p, size)) if size < 1 << 20 => Err(format!(
            "{} is {size} bytes: the link-time stub, not NVRTC (put the real libnvrtc.so.13 \
             first on LD_LIBRARY_PATH)",
            p.display()
        )),
        Some((p, _)) => Ok(p),
    }
}
