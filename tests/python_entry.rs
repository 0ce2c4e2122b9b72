//! The Python entry point (python/opbench/kernels.py) against this build's kernel_bench, on the
//! CPU path: runs tests/python/test_opbench_kernels.py with python3 when one is installed; and
//! the LayerNorm peer script's GPU-free parts (tests/python/test_layernorm_peers.py); and the
//! module-path NVTX helper of `trace` (tests/python/test_trace_modules.py); and the comm peer
//! script's GPU-free parts and its summary script (tests/python/test_comm_peers.py); and the
//! PTX edits of scripts/device/ln_kernel_ab.py (tests/python/test_ln_kernel_ab.py); and the verdict
//! of the trace overhead check (tests/python/test_trace_overhead_report.py); and pausing and
//! resuming `trace` from Python (tests/python/test_trace_control.py).

use std::process::Command;

/// Runs one unittest file with python3 (skipped, with a line saying so, where there is none)
/// and checks that it passed and ran `tests` tests.
fn unittest(test: &str, file: &str, tests: usize, env: &[(&str, &str)]) {
    let Ok(version) = Command::new("python3").arg("--version").output() else {
        eprintln!("SKIPPED {test}: no python3 on PATH");
        return;
    };
    assert!(version.status.success(), "python3 --version failed");
    let out = Command::new("python3")
        .args(["-m", "unittest", "-v", file])
        .envs(env.iter().copied())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("running python3");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the Python tests of {file} failed:\n{log}"
    );
    assert!(log.contains(&format!("Ran {tests} tests")), "{log}");
}

#[test]
fn python_module_drives_kernel_bench_on_the_cpu() {
    unittest(
        "python_module_drives_kernel_bench_on_the_cpu",
        "tests/python/test_opbench_kernels.py",
        4,
        &[("OPBENCH_KERNEL_BENCH", env!("CARGO_BIN_EXE_kernel_bench"))],
    );
}

#[test]
fn layernorm_peer_script_writes_the_file_the_merge_reads() {
    unittest(
        "layernorm_peer_script_writes_the_file_the_merge_reads",
        "tests/python/test_layernorm_peers.py",
        6,
        &[],
    );
}

#[test]
fn trace_module_ranges_nest_like_the_forward_and_backward_calls() {
    unittest(
        "trace_module_ranges_nest_like_the_forward_and_backward_calls",
        "tests/python/test_trace_modules.py",
        4,
        &[],
    );
}

#[test]
fn comm_peer_script_reads_the_plan_and_writes_merge_rows() {
    unittest(
        "comm_peer_script_reads_the_plan_and_writes_merge_rows",
        "tests/python/test_comm_peers.py",
        7,
        &[],
    );
}

#[test]
fn layernorm_ab_edits_only_the_accesses_each_variant_names() {
    unittest(
        "layernorm_ab_edits_only_the_accesses_each_variant_names",
        "tests/python/test_ln_kernel_ab.py",
        4,
        &[],
    );
}

#[test]
fn trace_overhead_check_says_pass_fail_or_undecided() {
    unittest(
        "trace_overhead_check_says_pass_fail_or_undecided",
        "tests/python/test_trace_overhead_report.py",
        5,
        &[],
    );
}

#[test]
fn trace_is_paused_and_resumed_from_python() {
    unittest(
        "trace_is_paused_and_resumed_from_python",
        "tests/python/test_trace_control.py",
        6,
        &[],
    );
}
