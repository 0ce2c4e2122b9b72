//! The `opbench` launcher of the wheel: finds the CUDA 13 libraries of the Python environment
//! it is installed in (pip's nvidia-* wheels, as torch uses them) or of a CUDA toolkit, puts
//! them on LD_LIBRARY_PATH and runs `opbench-cpu` or `opbench-gpu` beside it.
//!
//! Standard library only: the launcher binary includes this file by path and links nothing
//! else, so it starts on any Linux machine and can say what is missing. The two big binaries
//! cannot: they need libcudart (and the GPU one libcuda, cuBLAS, ...) before `main` runs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The tools in `opbench-cpu`, with their line in `--help`.
pub const CPU_TOOLS: &[(&str, &str)] = &[
    (
        "trace",
        "profile any CUDA command (PyTorch, JAX, your binary) through CUPTI",
    ),
    (
        "compare",
        "per-point verdicts (SAME/FASTER/SLOWER/UNCERTAIN) between two sets of runs",
    ),
    (
        "summarize",
        "one table of every artifact in a folder (summary.json, summary.csv)",
    ),
    (
        "dashboard",
        "render artifacts into the static site (open index.html, no server)",
    ),
    (
        "history",
        "the per-commit history store: ingest, trend, calibrate",
    ),
];

/// The tools in `opbench-gpu`, which also runs every CPU tool.
pub const GPU_TOOLS: &[(&str, &str)] = &[
    (
        "kernel_bench",
        "time your own .cu kernels against a float64 reference",
    ),
    (
        "layernorm_bench",
        "LayerNorm: ours against candle and the copy ceiling",
    ),
    (
        "gemm_bench",
        "GEMM: ours against cuBLAS and the matrix peak",
    ),
    (
        "llm_bench",
        "LLM decode and prefill against the bandwidth bound and peers",
    ),
    (
        "comm_bench",
        "collectives (all-reduce, ...) against NCCL, nccl-tests style",
    ),
    (
        "opbench_env",
        "print this machine's environment block (GPU, driver, clocks) as JSON",
    ),
];

/// The shared libraries each big binary needs before it starts (its ELF NEEDED entries beyond
/// glibc and libstdc++), with the pip package that has each. A build without the `cuda`
/// feature needs none of them.
pub const CPU_LIBS: &[&str] = if cfg!(feature = "cuda") {
    &["libcudart.so.13"]
} else {
    &[]
};
pub const GPU_LIBS: &[&str] = if cfg!(feature = "cuda") {
    &[
        "libcudart.so.13",
        "libcuda.so.1",
        "libcublas.so.13",
        "libcurand.so.10",
        "libcupti.so.13",
        "libnvrtc.so.13",
        "libnccl.so.2",
    ]
} else {
    &[]
};
const PACKAGES: &[(&str, &str)] = &[
    ("libcudart.so.13", "nvidia-cuda-runtime"),
    ("libcublas.so.13", "nvidia-cublas"),
    ("libcurand.so.10", "nvidia-curand"),
    ("libcupti.so.13", "nvidia-cuda-cupti"),
    ("libnvrtc.so.13", "nvidia-cuda-nvrtc"),
    ("libnccl.so.2", "nvidia-nccl-cu13"),
];

/// Set for the big binary: the folders the launcher added, so that `trace` can give the traced
/// command the LD_LIBRARY_PATH the user had, and look for libcupti in them.
pub const LIB_DIRS_ENV: &str = "OPBENCH_LAUNCHER_LIB_DIRS";
/// The user's own LD_LIBRARY_PATH (absent when it was unset), beside `LIB_DIRS_ENV`.
pub const USER_LD_PATH_ENV: &str = "OPBENCH_USER_LD_LIBRARY_PATH";

/// `opbench --help`.
pub fn help() -> String {
    let mut s = format!(
        "opbench {}: GPU operator benchmarks, `trace` for any CUDA job, and a static dashboard.\n\n\
         Usage: opbench <command> [args...]   (`opbench <command> --help` for its flags)\n\n\
         Commands that run anywhere:\n",
        env!("CARGO_PKG_VERSION")
    );
    for (name, about) in CPU_TOOLS {
        s.push_str(&format!("  {name:<16} {about}\n"));
    }
    s.push_str("\nCommands that need an NVIDIA GPU (and opbench[gpu] or a CUDA 13 toolkit):\n");
    for (name, about) in GPU_TOOLS {
        s.push_str(&format!("  {name:<16} {about}\n"));
    }
    s.push_str(
        "\nExample:\n  opbench trace --out traces/my-job -- python train.py\n  \
         opbench dashboard --artifacts traces --out site    # then open site/index.html\n",
    );
    s
}

/// Which big binary runs `tool`, and the libraries it needs; None for a name in neither list.
pub fn binary_for(tool: &str) -> Option<(&'static str, &'static [&'static str])> {
    if CPU_TOOLS.iter().any(|(n, _)| *n == tool) {
        Some(("opbench-cpu", CPU_LIBS))
    } else if GPU_TOOLS.iter().any(|(n, _)| *n == tool) {
        Some(("opbench-gpu", GPU_LIBS))
    } else {
        None
    }
}

/// The Python library folders (site-packages, Debian's dist-packages) of the environment whose
/// scripts folder is `bin_dir`, then of the base interpreter when that environment is a venv
/// made with --system-site-packages (for /usr/bin/python3, /usr/local first), then the user's
/// site folder.
pub fn site_dirs(bin_dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut prefixes = vec![bin_dir.join("..")];
    if let Some(base) = system_site_base(bin_dir) {
        // Debian's /usr/bin/python3 keeps what pip installs in /usr/local/lib/python3.X/.
        if base.canonicalize().is_ok_and(|b| b == Path::new("/usr")) {
            prefixes.push(PathBuf::from("/usr/local"));
        }
        prefixes.push(base);
    }
    let mut out = Vec::new();
    for prefix in &prefixes {
        out.extend(python_lib_dirs(&prefix.join("lib")));
        out.push(prefix.join("lib/python3/dist-packages"));
    }
    if let Some(home) = home {
        out.extend(python_lib_dirs(&home.join(".local/lib")));
    }
    let found: Vec<PathBuf> = out.into_iter().filter(|d| d.is_dir()).collect();
    let mut with_pth = Vec::new();
    for dir in found {
        let extra = pth_dirs(&dir);
        with_pth.push(dir);
        with_pth.extend(extra);
    }
    with_pth
}

/// The folders that the `*.pth` files of a site folder add to `sys.path` (as Python's `site`
/// reads them: one path a line, relative to the site folder; `import` lines and comments are
/// skipped), so an environment pointed at another one (torch's) by a .pth file is searched too.
fn pth_dirs(site: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(site)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pth"))
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .map(str::trim)
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with('#')
                        && !l.starts_with("import ")
                        && !l.starts_with("import\t")
                })
                .map(|l| site.join(l))
                .collect::<Vec<_>>()
        })
        .filter(|d| d.is_dir())
        .collect()
}

/// `<lib>/python3.*/{site,dist}-packages`, newest version first.
fn python_lib_dirs(lib: &Path) -> Vec<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(lib)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let minor = name.strip_prefix("python3.")?.parse::<u32>().ok()?;
            Some((minor, e.path()))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions
        .into_iter()
        .flat_map(|(_, d)| [d.join("site-packages"), d.join("dist-packages")])
        .collect()
}

/// The prefix of the base interpreter when `bin_dir/../pyvenv.cfg` says
/// `include-system-site-packages = true` (its `home` is the base's bin folder).
fn system_site_base(bin_dir: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(bin_dir.join("../pyvenv.cfg")).ok()?;
    let value = |key: &str| {
        cfg.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    if !value("include-system-site-packages")?.eq_ignore_ascii_case("true") {
        return None;
    }
    Some(PathBuf::from(value("home")?).join(".."))
}

/// The folders to put on LD_LIBRARY_PATH: pip's CUDA 13 and NCCL library folders in `sites`,
/// then each CUDA toolkit's lib64 (`cuda_roots`) that holds a CUDA 13 runtime.
pub fn cuda_lib_dirs(sites: &[PathBuf], cuda_roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for site in sites {
        for sub in ["nvidia/cu13/lib", "nvidia/nccl/lib"] {
            out.push(site.join(sub));
        }
    }
    for root in cuda_roots {
        out.push(root.join("lib64"));
    }
    let mut seen = Vec::new();
    out.into_iter()
        .filter(|d| d.is_dir() && std::fs::read_dir(d).is_ok_and(|mut r| r.next().is_some()))
        .filter(|d| {
            let key = d.canonicalize().unwrap_or_else(|_| d.clone());
            let new = !seen.contains(&key);
            seen.push(key);
            new
        })
        .collect()
}

/// The folders the dynamic loader searches without LD_LIBRARY_PATH that a check can read
/// cheaply: the multiarch and lib64 folders and those named in /etc/ld.so.conf.d/*.conf.
pub fn system_lib_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/usr/lib",
        "/usr/lib/wsl/lib",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for conf in std::fs::read_dir("/etc/ld.so.conf.d")
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(text) = std::fs::read_to_string(conf.path()) {
            out.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| l.starts_with('/'))
                    .map(PathBuf::from),
            );
        }
    }
    out
}

/// The names in `needed` that are in none of `dirs`.
pub fn missing<'a>(needed: &[&'a str], dirs: &[PathBuf]) -> Vec<&'a str> {
    needed
        .iter()
        .copied()
        .filter(|lib| !dirs.iter().any(|d| d.join(lib).exists()))
        .collect()
}

/// `first` (in order) then `rest` as one colon-separated list.
pub fn join_path_list(first: &[PathBuf], rest: Option<&OsStr>) -> OsString {
    let mut parts: Vec<OsString> = Vec::new();
    if let Some(rest) = rest.filter(|r| !r.is_empty()) {
        parts.push(rest.to_os_string());
    }
    parts.extend(first.iter().map(|d| d.as_os_str().to_os_string()));
    let mut out = OsString::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(":");
        }
        out.push(p);
    }
    out
}

/// The launcher's body: `opbench <tool> [args...]`.
pub fn main() -> ! {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let first = argv
        .get(1)
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    match first.as_str() {
        "" => {
            eprint!("{}", help());
            std::process::exit(2);
        }
        "--help" | "-h" | "help" => {
            print!("{}", help());
            std::process::exit(0);
        }
        "--version" | "-V" => {
            println!("opbench {}", env!("CARGO_PKG_VERSION"));
            std::process::exit(0);
        }
        _ => {}
    }
    let Some((binary, needed)) = binary_for(&first) else {
        let names: Vec<&str> = CPU_TOOLS.iter().chain(GPU_TOOLS).map(|(n, _)| *n).collect();
        fail(
            2,
            &format!(
                "`{first}` is not an opbench command; the commands are: {}. `opbench --help` \
                 lists them with an example.",
                names.join(", ")
            ),
        );
    };
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from(&argv[0]));
    let bin_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let path = bin_dir.join(binary);
    if !path.is_file() {
        fail(
            1,
            &format!(
                "{} is not there: `{first}` runs it; reinstall the opbench wheel, which has both \
                 binaries beside `opbench`",
                path.display()
            ),
        );
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")])
        .collect();
    let added = cuda_lib_dirs(&site_dirs(&bin_dir, home.as_deref()), &roots);
    let user = std::env::var_os("LD_LIBRARY_PATH");
    let mut searched: Vec<PathBuf> = user
        .as_deref()
        .map(|u| std::env::split_paths(u).collect())
        .unwrap_or_default();
    searched.extend(added.iter().cloned());
    searched.extend(system_lib_dirs());
    let absent = missing(needed, &searched);
    if !absent.is_empty() {
        fail(1, &missing_message(&first, &absent));
    }
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(&path);
    cmd.arg(&first)
        .args(&argv[2..])
        .env("LD_LIBRARY_PATH", join_path_list(&added, user.as_deref()))
        .env(
            LIB_DIRS_ENV,
            std::env::join_paths(&added).unwrap_or_default(),
        );
    match &user {
        Some(u) => cmd.env(USER_LD_PATH_ENV, u),
        None => cmd.env_remove(USER_LD_PATH_ENV),
    };
    let err = cmd.exec();
    fail(1, &format!("could not run {}: {err}", path.display()));
}

/// What to do about libraries that are not there: the pip package of each, and the driver.
pub fn missing_message(tool: &str, absent: &[&str]) -> String {
    let packages: Vec<&str> = PACKAGES
        .iter()
        .filter(|(lib, _)| absent.contains(lib))
        .map(|(_, pkg)| *pkg)
        .collect();
    let mut s = format!(
        "`opbench {tool}` needs {} and found none in LD_LIBRARY_PATH, this Python environment's \
         nvidia-* packages, a CUDA toolkit (CUDA_HOME, /usr/local/cuda) or the system library \
         folders.",
        absent.join(", ")
    );
    if !packages.is_empty() {
        s.push_str(&format!(
            " Install {} with pip (`pip install 'opbench[gpu]'` has them all; torch for CUDA 13 \
             brings them too), or put their folder on LD_LIBRARY_PATH.",
            packages.join(" ")
        ));
    }
    if absent.contains(&"libcuda.so.1") {
        s.push_str(" libcuda.so.1 comes with the NVIDIA driver: this command needs a GPU machine.");
    }
    s
}

fn fail(code: i32, message: &str) -> ! {
    eprintln!("opbench: error: {message}");
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }

    #[test]
    fn a_venv_finds_its_own_nvidia_libraries_then_the_base_ones_then_a_toolkit() {
        let t = tempfile::tempdir().unwrap();
        let venv = t.path().join("venv");
        let base = t.path().join("base");
        touch(&venv.join("lib/python3.11/site-packages/nvidia/cu13/lib/libcudart.so.13"));
        touch(&base.join("lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2"));
        touch(&t.path().join("cuda/lib64/libcublas.so.13"));
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::create_dir_all(base.join("bin")).unwrap();
        let cfg = format!(
            "home = {}\ninclude-system-site-packages = true\n",
            base.join("bin").display()
        );
        std::fs::write(venv.join("pyvenv.cfg"), cfg).unwrap();
        let sites = site_dirs(&venv.join("bin"), None);
        let dirs = cuda_lib_dirs(&sites, &[t.path().join("cuda"), t.path().join("none")]);
        let names: Vec<String> = dirs
            .iter()
            .map(|d| d.strip_prefix(t.path()).unwrap_or(d).display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "venv/bin/../lib/python3.11/site-packages/nvidia/cu13/lib",
                "base/bin/../lib/python3.12/dist-packages/nvidia/nccl/lib",
                "cuda/lib64",
            ]
        );
        let needed = [
            "libcudart.so.13",
            "libcuda.so.1",
            "libcublas.so.13",
            "libnccl.so.2",
            "libnvrtc.so.13",
        ];
        let absent = missing(&needed, &dirs);
        assert_eq!(absent, ["libcuda.so.1", "libnvrtc.so.13"]);
        let msg = missing_message("kernel_bench", &absent);
        assert!(msg.contains("needs libcuda.so.1, libnvrtc.so.13 and found none"));
        assert!(msg.contains("Install nvidia-cuda-nvrtc with pip"));
        assert!(msg.contains("comes with the NVIDIA driver"));
        assert_eq!(CPU_LIBS.is_empty(), !cfg!(feature = "cuda"));
    }

    #[test]
    fn a_pth_file_that_points_at_another_environment_is_followed() {
        let t = tempfile::tempdir().unwrap();
        let venv = t.path().join("venv");
        let site = venv.join("lib/python3.12/site-packages");
        let torch_site = t.path().join("torch-env/lib/python3.12/site-packages");
        touch(&torch_site.join("nvidia/cu13/lib/libcublas.so.13"));
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::create_dir_all(&site).unwrap();
        let pth = format!(
            "# torch's environment\nimport os\n{}\nmissing\n",
            torch_site.display()
        );
        std::fs::write(site.join("torch-env.pth"), pth).unwrap();
        let dirs = cuda_lib_dirs(&site_dirs(&venv.join("bin"), None), &[]);
        assert_eq!(dirs, [torch_site.join("nvidia/cu13/lib")]);
    }

    #[test]
    fn without_system_site_packages_the_base_is_not_searched() {
        let t = tempfile::tempdir().unwrap();
        let venv = t.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        touch(
            &t.path()
                .join("base/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"),
        );
        let cfg = format!(
            "home = {}\ninclude-system-site-packages = false\n",
            t.path().join("base/bin").display()
        );
        std::fs::write(venv.join("pyvenv.cfg"), cfg).unwrap();
        assert!(cuda_lib_dirs(&site_dirs(&venv.join("bin"), None), &[]).is_empty());
    }

    #[test]
    fn the_users_path_stays_first_and_tools_go_to_their_binary() {
        let dirs = [PathBuf::from("/a"), PathBuf::from("/b")];
        assert_eq!(join_path_list(&dirs, Some(OsStr::new("/u"))), "/u:/a:/b");
        assert_eq!(join_path_list(&dirs, None), "/a:/b");
        assert_eq!(join_path_list(&dirs, Some(OsStr::new(""))), "/a:/b");
        assert_eq!(binary_for("trace").unwrap().0, "opbench-cpu");
        assert_eq!(binary_for("kernel_bench").unwrap().0, "opbench-gpu");
        assert!(binary_for("rm").is_none());
        let help = help();
        for (name, about) in CPU_TOOLS.iter().chain(GPU_TOOLS) {
            assert!(help.contains(&format!("  {name:<16} {about}\n")), "{name}");
        }
        assert!(help.contains("Example:\n  opbench trace --out"));
    }
}
