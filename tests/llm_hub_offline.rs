//! `--model ID` offline with an empty Hugging Face cache: the error says so and points at the
//! two other sources. (Own test binary: it sets process-wide environment variables.)

#[test]
fn offline_with_an_empty_cache_says_so_and_points_at_the_other_sources() {
    let tmp = tempfile::tempdir().unwrap();
    std::env::set_var("HF_HOME", tmp.path());
    std::env::set_var("HF_HUB_OFFLINE", "1");
    let e = opbench::llm::source::from_hub("TinyLlama/TinyLlama-1.1B-Chat-v1.0").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("offline"), "{msg}");
    assert!(msg.contains(&tmp.path().display().to_string()), "{msg}");
    assert!(
        msg.contains("config.json") && msg.contains("TinyLlama/TinyLlama-1.1B-Chat-v1.0"),
        "{msg}"
    );
    assert!(
        msg.contains("--model-dir") && msg.contains("--weights random"),
        "{msg}"
    );

    // The binary says the same and exits non-zero.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_llm_bench"))
        .args(["--device", "cpu", "--quiet", "--out"])
        .arg(tmp.path().join("llm.json"))
        .env("HF_HOME", tmp.path())
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("offline") && err.contains("--weights random"),
        "{err}"
    );
}
