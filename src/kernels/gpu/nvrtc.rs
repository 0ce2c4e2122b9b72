//! In-process compilation with NVRTC (cudarc's raw calls: name expressions give C++ kernels'
//! lowered symbols) for the GPU's architecture.

use crate::kernels::kernel_name::KernelName;
use crate::kernels::source::Source;
use anyhow::{bail, Context, Result};
use cudarc::nvrtc::{result, sys};
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

/// Folders searched for `#include`: the source's own, the include folders (--include and the
/// manifest's `include`), then the CUDA toolkit's headers (and their `cccl` folder) if present.
fn include_dirs(source: &Source) -> Vec<String> {
    let own = Path::new(&source.path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let mut dirs: Vec<String> = std::iter::once(&own)
        .chain(&source.include_dirs)
        .map(|d| d.display().to_string())
        .collect();
    let roots = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .chain([PathBuf::from("/usr/local/cuda")]);
    for r in roots {
        let inc = r.join("include");
        if inc.join("cuda_runtime.h").exists() || inc.join("cuda_fp16.h").exists() {
            dirs.push(inc.display().to_string());
            // CUDA 13 keeps libcu++ (`<cuda/std/...>`, which cooperative groups include) in
            // include/cccl; nvcc adds it by itself, NVRTC needs it named.
            let cccl = inc.join("cccl");
            if cccl.is_dir() {
                dirs.push(cccl.display().to_string());
            }
            break;
        }
    }
    dirs
}

/// NVRTC's output for one source.
#[derive(Debug)]
pub struct NvrtcOutput {
    pub ptx: String,
    /// The lowered (mangled) symbol of each name expression, in the order given.
    pub lowered: Vec<String>,
    /// Every option NVRTC got.
    pub flags: Vec<String>,
    /// "13.0", from nvrtcVersion.
    pub version: String,
    /// The loaded libnvrtc, when it can be found.
    pub library: Option<String>,
}

/// A program handle destroyed on drop.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by create_program and destroyed only here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

/// The NVRTC library's version, "13.0".
pub fn version() -> Result<String> {
    let (mut major, mut minor) = (0i32, 0i32);
    // SAFETY: two out-parameters of the right type.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| anyhow::anyhow!("nvrtcVersion failed: {e:?}"))?;
    Ok(format!("{major}.{minor}"))
}

/// Compiles `source` to PTX for `arch` (e.g. "compute_90") with line info for the profiler,
/// registering each kernel name as a name expression so that C++ kernels (templates
/// instantiated by it) get their lowered symbol. A compile error carries NVRTC's log, whose
/// lines read `FILE(LINE): error: ...`.
pub fn compile_named(source: &Source, names: &[KernelName], arch: &str) -> Result<NvrtcOutput> {
    if source.text.contains('\0') {
        bail!(
            "{} contains a NUL byte: not a CUDA source file",
            source.path
        );
    }
    let mut flags = vec![
        format!("--gpu-architecture={arch}"),
        "-lineinfo".to_string(),
    ];
    flags.extend(
        include_dirs(source)
            .iter()
            .map(|d| format!("--include-path={d}")),
    );
    let src = CString::new(source.text.as_bytes()).expect("no NUL, checked above");
    let name = CString::new(source.path.as_bytes()).context("the source path has a NUL byte")?;
    let prog = Program(
        result::create_program(&src, Some(&name))
            .map_err(|e| anyhow::anyhow!("{}", loading_hint(&source.path, &format!("{e:?}"))))?,
    );
    let exprs: Vec<CString> = names
        .iter()
        .map(|n| CString::new(n.expression()).context("a kernel name with a NUL byte"))
        .collect::<Result<_>>()?;
    for (e, n) in exprs.iter().zip(names) {
        // SAFETY: a live program and a NUL-terminated expression kept alive until the end.
        unsafe { sys::nvrtcAddNameExpression(prog.0, e.as_ptr()) }
            .result()
            .map_err(|err| {
                anyhow::anyhow!("NVRTC refused the name expression of `{}`: {err:?}", n.text)
            })?;
    }
    // SAFETY: a live program; the options are copied into C strings by compile_program.
    if let Err(e) = unsafe { result::compile_program(prog.0, &flags) } {
        // SAFETY: a live program.
        let log = unsafe { result::get_program_log(prog.0) }.unwrap_or_default();
        let log: Vec<u8> = log
            .iter()
            .map(|c| *c as u8)
            .take_while(|c| *c != 0)
            .collect();
        bail!(
            "NVRTC could not compile {} for {arch} ({e:?}):\n{}\n(NVRTC options: {})",
            source.path,
            String::from_utf8_lossy(&log).trim_end(),
            flags.join(" ")
        );
    }
    let mut lowered = Vec::new();
    for (e, n) in exprs.iter().zip(names) {
        let mut out: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: the expression was added before compiling; NVRTC owns the returned string,
        // which lives as long as the program, and it is copied before the program is dropped.
        unsafe { sys::nvrtcGetLoweredName(prog.0, e.as_ptr(), &mut out) }
            .result()
            .map_err(|err| anyhow::anyhow!("NVRTC has no symbol for `{}`: {err:?}", n.text))?;
        if out.is_null() {
            bail!("NVRTC returned no symbol for `{}`", n.text);
        }
        // SAFETY: non-null, NUL-terminated, owned by the live program.
        lowered.push(
            unsafe { CStr::from_ptr(out) }
                .to_string_lossy()
                .into_owned(),
        );
    }
    // SAFETY: a live, compiled program.
    let ptx = unsafe { result::get_ptx(prog.0) }
        .map_err(|e| anyhow::anyhow!("reading NVRTC's PTX: {e:?}"))?;
    let ptx: Vec<u8> = ptx
        .iter()
        .map(|c| *c as u8)
        .take_while(|c| *c != 0)
        .collect();
    Ok(NvrtcOutput {
        ptx: String::from_utf8_lossy(&ptx).into_owned(),
        lowered,
        flags,
        version: version()?,
        library: loaded_library().map(|(p, _)| p.display().to_string()),
    })
}

fn loading_hint(path: &str, what: &str) -> String {
    format!(
        "NVRTC failed on {path} ({what}): is the real libnvrtc.so.13 on LD_LIBRARY_PATH \
         (e.g. /usr/local/cuda/lib64)?"
    )
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
