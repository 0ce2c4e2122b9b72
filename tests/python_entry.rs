//! The Python entry point (bench/opbench_kernels.py) against this build's kernel_bench, on the
//! CPU path: runs tests/python/test_opbench_kernels.py with python3 when one is installed; and
//! the LayerNorm peer script's GPU-free parts (tests/python/test_layernorm_peers.py); and the
//! module-path NVTX helper of `trace` (tests/python/test_trace_modules.py); and the comm peer
//! script's GPU-free parts and its summary script (tests/python/test_comm_peers.py).

use std::process::Command;

#[test]
fn python_module_drives_kernel_bench_on_the_cpu() {
    let Ok(version) = Command::new("python3").arg("--version").output() else {
        eprintln!("SKIPPED python_module_drives_kernel_bench_on_the_cpu: no python3 on PATH");
        return;
    };
    assert!(version.status.success(), "python3 --version failed");
    let out = Command::new("python3")
        .args([
            "-m",
            "unittest",
            "-v",
            "tests/python/test_opbench_kernels.py",
        ])
        .env("OPBENCH_KERNEL_BENCH", env!("CARGO_BIN_EXE_kernel_bench"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("running python3");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the Python tests failed:\n{log}");
    assert!(log.contains("Ran 4 tests"), "{log}");
}

#[test]
fn layernorm_peer_script_writes_the_file_the_merge_reads() {
    let Ok(version) = Command::new("python3").arg("--version").output() else {
        eprintln!(
            "SKIPPED layernorm_peer_script_writes_the_file_the_merge_reads: no python3 on PATH"
        );
        return;
    };
    assert!(version.status.success(), "python3 --version failed");
    let out = Command::new("python3")
        .args([
            "-m",
            "unittest",
            "-v",
            "tests/python/test_layernorm_peers.py",
        ])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("running python3");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the Python tests failed:\n{log}");
    assert!(log.contains("Ran 4 tests"), "{log}");
}

#[test]
fn trace_module_ranges_nest_like_the_forward_calls() {
    let Ok(version) = Command::new("python3").arg("--version").output() else {
        eprintln!("SKIPPED trace_module_ranges_nest_like_the_forward_calls: no python3 on PATH");
        return;
    };
    assert!(version.status.success(), "python3 --version failed");
    let out = Command::new("python3")
        .args(["-m", "unittest", "-v", "tests/python/test_trace_modules.py"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("running python3");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the Python tests failed:\n{log}");
    assert!(log.contains("Ran 3 tests"), "{log}");
}

#[test]
fn comm_peer_script_reads_the_plan_and_writes_merge_rows() {
    let Ok(version) = Command::new("python3").arg("--version").output() else {
        eprintln!("SKIPPED comm_peer_script_reads_the_plan_and_writes_merge_rows: no python3");
        return;
    };
    assert!(version.status.success(), "python3 --version failed");
    let out = Command::new("python3")
        .args(["-m", "unittest", "-v", "tests/python/test_comm_peers.py"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("running python3");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the Python tests failed:\n{log}");
    assert!(log.contains("Ran 7 tests"), "{log}");
}
