//! One libcupti per traced process: a private folder that names the chosen libcupti by the
//! names libraries look it up by, put first on the command's `LD_LIBRARY_PATH`.
//!
//! The injection library preloads the `--cupti` file so that a lookup by soname
//! (`libcupti.so.13`) finds it loaded, but cudarc asks for `libcupti.so` first: on a machine
//! whose library path holds a CUDA toolkit's `libcupti.so`, the tracer then recorded through
//! that second copy, whatever `--cupti` said. With both names in this folder, first on the path,
//! every lookup by name maps the chosen file, once. A traced process that loaded its own
//! libcupti first (PyTorch) has the injection library point these links at that one
//! (trace-inject/src/cupti_lib.rs).

use super::rawfmt::CUPTI_NAMES;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Creates `under/.cupti/` with the lookup names linked to `lib` (made absolute) and returns
/// the folder. Links left from an earlier run are replaced.
pub fn alias_dir(under: &Path, lib: &Path) -> Result<PathBuf> {
    let target = lib
        .canonicalize()
        .with_context(|| format!("resolving the libcupti {}", lib.display()))?;
    let dir = under.join(".cupti");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for name in CUPTI_NAMES {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link)
            .with_context(|| format!("linking {} to {}", link.display(), target.display()))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tool::path_list_with;
    use std::ffi::OsString;
    use std::process::Command;

    /// Builds `dir/file`, a shared library whose `which()` returns `n`.
    fn build(dir: &Path, file: &str, n: i32) -> PathBuf {
        let src = dir.join(format!("which{n}.c"));
        std::fs::write(&src, format!("int which(void) {{ return {n}; }}\n")).unwrap();
        let out = dir.join(file);
        let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-shared", "-fPIC", "-o"])
            .arg(&out)
            .arg(&src)
            .arg(format!("-Wl,-soname,{file}"))
            .status()
            .expect("a C compiler (cc)");
        assert!(st.success());
        out
    }

    /// What `dlopen("libcupti.so")` maps in a process started with `library_path`.
    fn loaded(library_path: &OsString) -> String {
        let out = Command::new("python3")
            .args([
                "-c",
                "import ctypes; print(ctypes.CDLL('libcupti.so').which())",
            ])
            .env("LD_LIBRARY_PATH", library_path)
            .output()
            .expect("python3");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_lookup_by_name_finds_the_chosen_libcupti_before_a_toolkits_on_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let toolkit = tmp.path().join("toolkit");
        let chosen = tmp.path().join("chosen");
        std::fs::create_dir_all(&toolkit).unwrap();
        std::fs::create_dir_all(&chosen).unwrap();
        build(&toolkit, "libcupti.so", 1);
        let lib = build(&chosen, "libcupti.so.13", 2);
        let earlier = OsString::from(&toolkit);
        // Without the folder, the toolkit's copy is what a lookup by name gets.
        assert_eq!(loaded(&earlier), "1");
        let dir = alias_dir(tmp.path(), &lib).unwrap();
        assert_eq!(loaded(&path_list_with(&dir, Some(earlier))), "2");
        // A second run replaces the links.
        alias_dir(tmp.path(), &lib).unwrap();
        assert_eq!(
            std::fs::read_link(dir.join("libcupti.so")).unwrap(),
            lib.canonicalize().unwrap()
        );
    }
}
