//! nvcc as a subprocess: the whole file (host code, host headers and `main()` included) to a
//! cubin for one GPU architecture, template instances named in the manifest included.

use super::Target;
use crate::kernels::kernel_name::KernelName;
use crate::kernels::source::Source;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// An nvcc that answered `--version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nvcc {
    pub path: PathBuf,
    /// "13.0.88", from `nvcc --version`.
    pub version: String,
}

/// Where nvcc is looked for, in order: `$NVCC`, `$CUDA_HOME/bin`, `$CUDA_ROOT/bin`,
/// `$CUDA_PATH/bin`, each folder of `$PATH`, `/usr/local/cuda/bin`.
pub fn candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var_os("NVCC")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    for var in ["CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            out.push(PathBuf::from(root).join("bin").join("nvcc"));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&path).map(|d| d.join("nvcc")));
    }
    out.push(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    out
}

/// The first nvcc that runs, or why none was found (the places looked at).
pub fn find() -> std::result::Result<Nvcc, String> {
    let places = candidates();
    for p in places.iter().filter(|p| p.is_file()) {
        if let Ok(o) = Command::new(p).arg("--version").output() {
            if o.status.success() {
                let text = String::from_utf8_lossy(&o.stdout);
                return Ok(Nvcc {
                    path: p.clone(),
                    version: parse_version(&text).unwrap_or_else(|| "unknown".into()),
                });
            }
        }
    }
    Err(format!(
        "no nvcc found (looked at $NVCC, $CUDA_HOME/bin, $CUDA_ROOT/bin, $CUDA_PATH/bin, $PATH and \
         /usr/local/cuda/bin: {} places)",
        places.len()
    ))
}

/// "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0.88".
pub fn parse_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("release"))?;
    match line.rsplit_once(", V") {
        Some((_, v)) => Some(v.trim().to_string()),
        None => line
            .split("release")
            .nth(1)
            .map(|v| v.trim().trim_end_matches(',').to_string()),
    }
}

/// The flags nvcc gets for `target`, with each include folder (output and input left out).
pub fn flags(target: &Target, include_dirs: &[PathBuf]) -> Vec<String> {
    let mut f = vec![
        "-cubin".to_string(),
        "-lineinfo".to_string(),
        format!("-gencode=arch=compute_{0},code=sm_{0}", target.sm),
    ];
    f.extend(include_dirs.iter().map(|d| format!("-I{}", d.display())));
    f
}

/// The file nvcc compiles when template instances are named: it includes the source and takes
/// each instance's address, which makes nvcc compile that instance.
pub fn instantiation_file(source: &Path, names: &[KernelName]) -> String {
    let mut s = format!(
        "// Written by kernel_bench: the source, plus the template instances the manifest names.\n\
         #include \"{}\"\n",
        source.display()
    );
    for (i, n) in names.iter().enumerate() {
        s.push_str(&format!(
            "void* opbench_kernel_instance_{i} = (void*)({});\n",
            n.expression()
        ));
    }
    s
}

/// What nvcc produced.
pub struct NvccOutput {
    pub cubin: Vec<u8>,
    /// The flags it was run with (output and input file left out).
    pub flags: Vec<String>,
    /// The template instances an instantiation file asked for (empty: the source itself).
    pub instances: Vec<String>,
}

/// Compiles `source` to a cubin for `target`.
pub fn compile(
    nvcc: &Nvcc,
    source: &Source,
    names: &[KernelName],
    target: &Target,
) -> Result<NvccOutput> {
    let dir = tempfile::tempdir().context("a temporary folder for nvcc's output")?;
    let src_path =
        std::fs::canonicalize(&source.path).with_context(|| format!("locating {}", source.path))?;
    let own_dir = src_path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut includes = vec![own_dir];
    includes.extend(source.include_dirs.iter().cloned());
    let flags = flags(target, &includes);
    let instances: Vec<KernelName> = names
        .iter()
        .filter(|n| n.template_args.is_some())
        .cloned()
        .collect();
    let input = if instances.is_empty() {
        src_path.clone()
    } else {
        let w = dir.path().join("opbench_instances.cu");
        std::fs::write(&w, instantiation_file(&src_path, &instances))
            .context("writing the template instantiation file for nvcc")?;
        w
    };
    let out = dir.path().join("kernels.cubin");
    let o = Command::new(&nvcc.path)
        .args(&flags)
        .arg("-o")
        .arg(&out)
        .arg(&input)
        .output()
        .with_context(|| format!("running {}", nvcc.path.display()))?;
    if !o.status.success() {
        bail!(
            "nvcc could not compile {} for sm_{}:\n{}{}\n(command: {} {} -o {} {})",
            source.path,
            target.sm,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr).trim_end(),
            nvcc.path.display(),
            flags.join(" "),
            out.display(),
            input.display()
        );
    }
    let cubin = std::fs::read(&out).with_context(|| format!("reading {}", out.display()))?;
    Ok(NvccOutput {
        cubin,
        flags,
        instances: instances.iter().map(|n| n.qualified()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_and_flags() {
        let v = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n";
        assert_eq!(parse_version(v).as_deref(), Some("13.0.88"));
        assert_eq!(parse_version("release 12.4,").as_deref(), Some("12.4"));
        let f = flags(&Target { sm: "90a".into() }, &[PathBuf::from("/inc")]);
        assert_eq!(
            f,
            [
                "-cubin",
                "-lineinfo",
                "-gencode=arch=compute_90a,code=sm_90a",
                "-I/inc"
            ]
        );
    }

    #[test]
    fn instantiation_file_takes_each_instance_address() {
        let names = [KernelName::parse("softmax<256, float>").unwrap()];
        let text = instantiation_file(Path::new("/src/a.cu"), &names);
        assert!(text.contains("#include \"/src/a.cu\""));
        assert!(text.contains("(void*)(&softmax<256, float>)"), "{text}");
    }
}
