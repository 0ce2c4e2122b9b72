//! comm_bench's command line without a GPU: one GPU or no launcher is a clear error with
//! rc != 0 and nothing written; --help explains how ranks are started and what is measured.

use std::path::Path;
use std::process::{Command, Output};

fn comm_bench(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_comm_bench"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    c.args(args)
        .arg("--out")
        .arg(dir.join("comm.json"))
        .arg("--rendezvous-timeout-s")
        .arg("1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn no_launcher_or_one_rank_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let o = comm_bench(dir.path(), &[], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no rank environment") && err.contains("torchrun"),
        "{err}"
    );
    let o = comm_bench(dir.path(), &[("RANK", "0"), ("WORLD_SIZE", "1")], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("WORLD_SIZE=1") && err.contains("at least 2 ranks"),
        "{err}"
    );
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
}

#[test]
fn bad_flags_fail_before_any_rank_waits() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("RANK", "1"), ("WORLD_SIZE", "2"), ("MASTER_PORT", "1")];
    let o = comm_bench(
        dir.path(),
        &env,
        &["--min-bytes", "1G", "--max-bytes", "1K"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--min-bytes"), "{err}");
    assert!(files_in(dir.path()).is_empty());
    // Without a launcher too: the bad flag is named, not the missing rank environment.
    let o = comm_bench(dir.path(), &[], &["--min-bytes", "0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--min-bytes 0") && !err.contains("rank environment"),
        "{err}"
    );
}

#[test]
fn help_says_how_to_start_it_and_what_it_measures() {
    let o = Command::new(env!("CARGO_BIN_EXE_comm_bench"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    for want in [
        "torchrun --standalone --nproc-per-node 4 --no-python comm_bench",
        "MASTER_PORT + 1",
        "busbw",
        "NCCL_NVLS_ENABLE=0",
        "--rendezvous-timeout-s",
        "--merge",
    ] {
        assert!(help.contains(want), "--help lacks {want:?}:\n{help}");
    }
}
