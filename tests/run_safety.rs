//! Through the real binaries, as a new user runs them: a failed or interrupted run keeps every
//! finished point of earlier runs, says what it kept, and never silently replaces an artifact
//! measured on another device.

use opbench::artifact::{read_artifact, ArtifactWriter, ResultRow};
use opbench::env::Env;
use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(exe: &str, args: &[&str], cwd: &Path) -> Output {
    Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A `.partial` with two finished points, as an interrupted run leaves it.
fn interrupted_run(path: &Path) -> Vec<u8> {
    let mut w = ArtifactWriter::start("llm", path, Env::cpu(), false).unwrap();
    for batch in [1usize, 2] {
        let mut row = ResultRow::new("generate", "candle").param("batch", batch);
        row.metrics.insert("tokens_per_s".into(), 1.0);
        w.push(row).unwrap();
    }
    let partial = w.partial_path().to_path_buf();
    drop(w);
    std::fs::read(partial).unwrap()
}

#[test]
fn a_command_that_fails_its_checks_leaves_the_earlier_partial_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("victim.json");
    let before = interrupted_run(&out);
    let o = run(
        env!("CARGO_BIN_EXE_llm_bench"),
        &[
            "--model-dir",
            "/nonexistent",
            "--device",
            "cpu",
            "--out",
            out.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("/nonexistent"), "{}", stderr(&o));
    let partial = tmp.path().join("victim.json.partial");
    assert_eq!(std::fs::read(&partial).unwrap(), before, "2 points kept");
    assert_eq!(names(tmp.path()), vec!["victim.json.partial"]);
}

#[test]
fn a_cpu_run_from_the_repository_root_does_not_replace_the_committed_gpu_artifacts() {
    // A copy of the repository's artifacts folder, so the test runs as a user in the root.
    let tmp = tempfile::tempdir().unwrap();
    let arts = tmp.path().join("artifacts");
    std::fs::create_dir_all(&arts).unwrap();
    for name in ["layernorm.json", "llm.json"] {
        std::fs::copy(root().join("artifacts").join(name), arts.join(name)).unwrap();
    }
    let committed = |n: &str| std::fs::read(root().join("artifacts").join(n)).unwrap();

    let ln = env!("CARGO_BIN_EXE_layernorm_bench");
    let small = ["--device", "cpu", "--shape", "4x64", "--dtype", "f32"];
    let o = run(ln, &small, tmp.path());
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("artifacts/layernorm.json holds layernorm run"),
        "{e}"
    );
    let old = read_artifact(&arts.join("layernorm.json")).unwrap();
    let was = format!(
        "measured on {} ({} results)",
        old.env.label(),
        old.results.len()
    );
    assert!(old.env.gpu.is_some() && e.contains(&was), "{e}");
    assert!(e.contains("--overwrite") && e.contains("--out"), "{e}");
    assert_eq!(
        std::fs::read(arts.join("layernorm.json")).unwrap(),
        committed("layernorm.json")
    );

    let o = run(
        env!("CARGO_BIN_EXE_llm_bench"),
        &[
            "--weights",
            "random",
            "--config",
            "llama-9m",
            "--device",
            "cpu",
            "--quiet",
        ],
        tmp.path(),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("artifacts/llm.json holds llm run"), "{e}");
    assert!(e.contains("another device"), "{e}");
    assert_eq!(
        std::fs::read(arts.join("llm.json")).unwrap(),
        committed("llm.json")
    );
    assert_eq!(
        names(&arts),
        vec!["layernorm.json", "llm.json"],
        "nothing else written"
    );

    // Asked for, the replacement happens.
    let mut forced = small.to_vec();
    forced.push("--overwrite");
    let o = run(ln, &forced, tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read_artifact(&arts.join("layernorm.json"))
            .unwrap()
            .env
            .device,
        "cpu"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_says_how_many_points_were_kept_and_where() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ln.json");
    let partial = tmp.path().join("ln.json.partial");
    let mut args: Vec<String> = ["--device", "cpu", "--dtype", "f32", "--samples", "200"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for cols in 1024..1064 {
        args.extend(["--shape".into(), format!("256x{cols}")]);
    }
    args.extend(["--out".into(), out.to_str().unwrap().into()]);
    let child = Command::new(env!("CARGO_BIN_EXE_layernorm_bench"))
        .args(&args)
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !partial.exists() {
        assert!(
            started.elapsed().as_secs() < 120,
            "no point finished in 2 minutes"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    let kept = read_artifact(&partial).unwrap();
    assert!(!kept.results.is_empty() && kept.results.len() < 40);
    let line = format!(
        "interrupted: {} finished point(s) kept in {}",
        kept.results.len(),
        partial.display()
    );
    assert!(e.contains(&line), "{e}");
    assert!(!out.exists());
}
