//! The injection library against NVIDIA's real libcupti 13.0 (the `nvidia-cuda-cupti` wheel
//! that scripts/cuda-toolchain.sh installs; `OPBENCH_CUPTI_DIR` names its folder): every CUPTI
//! function the library calls resolves, the version it reads is a 13.x one, and NVTX ranges get
//! CUPTI's own timestamps. Without a GPU driver CUPTI refuses to enable activity kinds; the
//! library must say so in `W` lines and still close its file. With a driver (a GPU CI machine)
//! the kinds are enabled and no such line appears.

mod common;

use std::path::PathBuf;

/// libcupti's folder: `OPBENCH_CUPTI_DIR`, else a CUDA toolkit's.
fn cupti_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("OPBENCH_CUPTI_DIR").map(PathBuf::from),
        std::env::var_os("CUDA_ROOT").map(|r| PathBuf::from(r).join("extras/CUPTI/lib64")),
        Some(PathBuf::from("/usr/local/cuda/extras/CUPTI/lib64")),
        Some(PathBuf::from("/usr/local/cuda/lib64")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("libcupti.so.13").is_file())
        .expect(
            "no libcupti.so.13: source the env file of scripts/cuda-toolchain.sh (it sets \
             OPBENCH_CUPTI_DIR) or set OPBENCH_CUPTI_DIR to a folder holding libcupti.so.13",
        )
}

#[test]
fn the_real_libcupti_resolves_and_times_nvtx_ranges() {
    const NAME: &str = "the_real_libcupti_resolves_and_times_nvtx_ranges";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        common::exercise_nvtx();
        return;
    }
    let text = common::run_child(NAME, &cupti_dir());
    let raw = common::Raw::new(&text);
    let h = &raw.lines[0];
    assert_eq!(h[0], "H");
    let version: u32 = h[3].parse().unwrap();
    assert!((130000..140000).contains(&version), "{text}");
    // No CUPTI symbol was missing (cudarc panics on one; the library turns that into a `W`).
    let w = raw.tagged("W");
    assert!(w.iter().all(|l| !l[1].contains("panicked")), "{text}");
    let driver = std::path::Path::new("/dev/nvidiactl").exists();
    if !driver {
        // Every kind refused, each named.
        for kind in ["CONCURRENT_KERNEL", "MEMCPY", "RUNTIME", "DRIVER"] {
            assert!(w.iter().any(|l| l[1].contains(kind)), "{kind}: {text}");
        }
    }
    // CUPTI's clock: ns since the Unix epoch, as activity records use it.
    let p = raw.tagged("P");
    let start: u64 = p[0][1].parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    assert!(start.abs_diff(now) < 3_600_000_000_000, "{start} vs {now}");
    raw.check_nvtx_and_end();
}

#[test]
fn the_real_libcupti_loads_by_path_without_the_library_path() {
    const NAME: &str = "the_real_libcupti_loads_by_path_without_the_library_path";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let lib = cupti_dir().join("libcupti.so.13");
    let text = common::run_child_with(
        NAME,
        empty.path(),
        &[("OPBENCH_CUPTI_LIB", lib.to_str().unwrap())],
    );
    let raw = common::Raw::new(&text);
    let version: u32 = raw.lines[0][3].parse().unwrap();
    assert!((130000..140000).contains(&version), "{text}");
    assert!(
        !text.contains("panicked") && !text.contains("cannot load"),
        "{text}"
    );
}
