//! llm_bench on the CPU with a tiny Llama the test makes: loading a model folder, generation
//! length, the artifact, clear errors for broken folders and configs, the peer merge.

use opbench::artifact::{read_artifact, Status};
use opbench::llm::{
    self, Arch, Backend, BenchOptions, ChatTemplate, DeviceChoice, DtypeChoice, Model, Source,
};
use std::path::{Path, PathBuf};

fn tiny_arch() -> Arch {
    Arch {
        name: "tiny".into(),
        hidden_size: 32,
        intermediate_size: 64,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        vocab_size: 64,
        rms_norm_eps: 1e-5,
        rope_theta: 10_000.0,
        max_position_embeddings: 128,
        tie_word_embeddings: false,
    }
}

/// A WordLevel tokenizer.json written by hand: specials, the chat template's pieces, words.
fn tokenizer_json() -> String {
    let words = [
        "<unk>",
        "<s>",
        "</s>",
        "<|",
        "user",
        "|>",
        "assistant",
        "hello",
        "gpu",
        "matrix",
        "the",
        "is",
        "fast",
        ".",
        "a",
        "kernel",
    ];
    let vocab: serde_json::Map<String, serde_json::Value> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (w.to_string(), serde_json::json!(i)))
        .collect();
    let special = |id: u32, s: &str| {
        serde_json::json!({"id": id, "content": s, "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true})
    };
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [special(0, "<unk>"), special(1, "<s>"), special(2, "</s>")],
        "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}
        },
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"}
    })
    .to_string()
}

/// A model folder: config.json + model.safetensors (random, f32) + tokenizer.json + a Zephyr
/// chat template in tokenizer_config.json.
fn make_model_dir(dir: &Path) {
    let backend = Backend::open(DeviceChoice::Cpu).unwrap();
    let m = Model::random(&tiny_arch(), candle_core::DType::F32, &backend, 7).unwrap();
    m.save_hf(dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json()).unwrap();
    std::fs::write(
        dir.join("tokenizer_config.json"),
        r#"{"chat_template": "{% for m in messages %}<|user|>\n{{ m['content'] }}</s>\n<|assistant|>\n{% endfor %}"}"#,
    )
    .unwrap();
}

fn options(source: Source, out: PathBuf) -> BenchOptions {
    BenchOptions {
        source,
        prompt_lens: vec![12],
        batches: vec![1, 3],
        new_tokens: 5,
        repeats: 2,
        warmup: 1,
        dtype: DtypeChoice::Auto,
        device: DeviceChoice::Cpu,
        prompt: "hello the gpu is fast".into(),
        template: ChatTemplate::Auto,
        seed: 1,
        out,
        overwrite: false,
        save_weights: None,
        event_tracking: false,
        verbose: false,
        profile_decode_step: None,
        mem_sample: true,
        progress: false,
        trace: None,
        impls: vec![llm::fast::Impl::Candle],
        pdl: true,
        ksplit: None,
        ablation: false,
        attn_split: None,
        attn_warps: None,
        attn_tc_warps: None,
        carveout: None,
        gemv_blocks_per_sm: None,
    }
}

#[test]
fn a_model_folder_loads_generates_and_the_artifact_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-model");
    std::fs::create_dir_all(&dir).unwrap();
    make_model_dir(&dir);
    let out = tmp.path().join("llm.json");
    let rows = llm::run(&options(Source::Dir(dir.clone()), out.clone())).unwrap();
    assert_eq!(rows.len(), 2);
    let a = read_artifact(&out).unwrap();
    assert_eq!(a.kind, "llm");
    assert!(a.run.complete);
    assert!(a.ceilings.copy_gbps.unwrap() > 0.0);
    for r in &a.results {
        assert_eq!(r.status, Status::Ok, "{:?}", r.notes);
        assert_eq!(r.param_str("weights").as_deref(), Some("real"));
        assert_eq!(r.param_str("chat_template").as_deref(), Some("zephyr"));
        // 5 new tokens: 1 from prefill, 4 decode steps, per repeat.
        assert_eq!(r.stats["decode_step_ms"].n, 2 * 4);
        assert_eq!(r.stats["ttft_ms"].n, 2);
        for k in [
            "decode_tokens_per_s",
            "prefill_tokens_per_s",
            "pct_of_bandwidth_bound",
            "weight_bytes",
        ] {
            assert!(r.metrics[k] > 0.0, "{k}");
        }
    }
    assert_eq!(
        a.results[0].metrics["weight_bytes"],
        (tiny_arch().param_count() * 4) as f64
    );
}

#[test]
fn generation_makes_exactly_the_new_tokens_asked_for() {
    let backend = Backend::open(DeviceChoice::Cpu).unwrap();
    let m = Model::random(&tiny_arch(), candle_core::DType::F32, &backend, 3).unwrap();
    let prompt = llm::prompt::random_tokens(64, 2, 9, 5).unwrap();
    let g = llm::generate::generate(&m, &backend, &prompt, 7, None, true, None).unwrap();
    assert_eq!(g.tokens.len(), 2);
    assert!(g
        .tokens
        .iter()
        .all(|t| t.len() == 7 && t.iter().all(|&x| x < 64)));
    assert_eq!(g.times.step_ms.len(), 6);
    assert!(g.times.e2e_ms >= g.times.ttft_ms);
    // Greedy decode is deterministic: the same prompt gives the same tokens.
    let g2 = llm::generate::generate(&m, &backend, &prompt, 7, None, true, None).unwrap();
    assert_eq!(g.tokens, g2.tokens);
    // Too many positions for the model is refused, not a panic.
    let e = llm::generate::generate(&m, &backend, &prompt, 200, None, true, None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("max_position_embeddings"), "{e}");
}

#[test]
fn the_chat_template_wraps_the_prompt_to_the_exact_length() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("tokenizer.json");
    std::fs::write(&f, tokenizer_json()).unwrap();
    let tok = llm::prompt::load_tokenizer(&f).unwrap();
    let ids = llm::prompt::templated_tokens(&tok, ChatTemplate::Zephyr, "hello gpu", 20).unwrap();
    assert_eq!(ids.len(), 20);
    assert_eq!(ids[0], 1, "BOS first");
    assert_eq!(&ids[1..4], &[3, 4, 5], "<| user |>");
    assert_eq!(&ids[16..20], &[2, 3, 6, 5], "</s> <| assistant |> last");
    let e = llm::prompt::templated_tokens(&tok, ChatTemplate::Zephyr, "hello", 5).unwrap_err();
    assert!(e.to_string().contains("too short"), "{e}");
}

#[test]
fn missing_files_in_model_dir_are_named_one_by_one() {
    let tmp = tempfile::tempdir().unwrap();
    let e = llm::source::from_dir(tmp.path()).unwrap_err().to_string();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(e.contains(f), "{f} not named in: {e}");
    }
    assert!(e.contains("3 file(s)"), "{e}");
    // A sharded index whose second shard is missing.
    std::fs::write(tmp.path().join("config.json"), "{}").unwrap();
    std::fs::write(tmp.path().join("tokenizer.json"), "{}").unwrap();
    std::fs::write(tmp.path().join("model-00001-of-00002.safetensors"), "").unwrap();
    std::fs::write(
        tmp.path().join("model.safetensors.index.json"),
        r#"{"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}"#,
    )
    .unwrap();
    let e = llm::source::from_dir(tmp.path()).unwrap_err().to_string();
    assert!(
        e.contains("model-00002-of-00002.safetensors") && !e.contains("00001-of"),
        "{e}"
    );
}

#[test]
fn a_config_llama_cannot_take_is_refused_naming_the_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bad");
    std::fs::create_dir_all(&dir).unwrap();
    make_model_dir(&dir);
    let cfg = dir.join("config.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    v["num_attention_heads"] = serde_json::json!(5);
    std::fs::write(&cfg, v.to_string()).unwrap();
    let e = llm::run(&options(Source::Dir(dir), tmp.path().join("o.json"))).unwrap_err();
    let msg = format!("{e:#}");
    assert!(
        msg.contains("config.json") && msg.contains("not divisible"),
        "{msg}"
    );
}

#[test]
fn weights_that_do_not_fit_the_config_name_the_tensor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    make_model_dir(&dir);
    let mut arch = tiny_arch();
    arch.num_hidden_layers = 3; // the file has 2 layers
    let e = Model::from_files(
        &arch,
        &[dir.join("model.safetensors")],
        candle_core::DType::F32,
        &candle_core::Device::Cpu,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("model.layers.2.self_attn.q_proj.weight: missing"),
        "{e}"
    );
}

#[test]
fn the_binary_runs_random_weights_saves_them_and_merges_a_peer() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("tiny-config.json");
    std::fs::write(&cfg, tiny_arch().hf_config_json("float32").to_string()).unwrap();
    let out = tmp.path().join("llm.json");
    let saved = tmp.path().join("weights");
    let bin = env!("CARGO_BIN_EXE_llm_bench");
    let run = std::process::Command::new(bin)
        .args([
            "--weights",
            "random",
            "--device",
            "cpu",
            "--prompt-len",
            "8",
            "--batch",
            "1,2",
        ])
        .args(["--new-tokens", "4", "--repeats", "2", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .arg("--save-weights")
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let a = read_artifact(&out).unwrap();
    assert_eq!(a.results.len(), 2);
    assert!(a
        .results
        .iter()
        .all(|r| r.param_str("weights").as_deref() == Some("random")));
    // The saved folder is a loadable model (with a tokenizer added) and has the parity logits.
    let model_dir = saved.join(tmp.path().file_name().unwrap());
    assert!(
        model_dir.join("parity.safetensors").is_file(),
        "{:?}",
        std::fs::read_dir(&saved).unwrap().collect::<Vec<_>>()
    );
    let arch = llm::configs::read_config_json(&model_dir.join("config.json"), None).unwrap();
    assert_eq!(arch.param_count(), tiny_arch().param_count());

    // A fake peer: the same logits (parity passes) and one generate row; another
    // implementation's logits beside them get a parity row of their own.
    for f in ["peer_logits.safetensors", "logits-opbench.safetensors"] {
        std::fs::copy(model_dir.join("parity.safetensors"), model_dir.join(f)).unwrap();
    }
    let model_name = a.results[0].param_str("model").unwrap();
    let peer = serde_json::json!({
        "rows": [{
            "benchmark": "generate", "implementation": "transformers-eager",
            "params": {"model": model_name, "dtype": "f32", "batch": 1, "prompt_len": 8,
                       "new_tokens": 4, "device": "cpu", "weights": "random"},
            "warmup": 1,
            "repeats": [
                {"ttft_ms": 2.0, "step_ms": [1.0, 1.0, 1.0], "e2e_ms": 5.0},
                {"ttft_ms": 3.0, "step_ms": [2.0, 2.0, 2.0], "e2e_ms": 9.0}
            ]
        }, {
            "benchmark": "decode_step_profile", "implementation": "transformers-eager",
            "params": {"model": model_name, "dtype": "f32", "batch": 1, "prompt_len": 8,
                       "new_tokens": 4, "device": "cpu", "profiler": "test"},
            "metrics": {"kernels_per_step": 10.0, "kernel_time_per_step_ms": 0.5}
        }],
        "notes": ["peer: transformers test double"]
    });
    let peer_file = tmp.path().join("peer_rows.json");
    std::fs::write(&peer_file, peer.to_string()).unwrap();
    let merge = std::process::Command::new(bin)
        .arg("--out")
        .arg(&out)
        .arg("--merge")
        .arg(&peer_file)
        .arg("--parity-dir")
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    let a = read_artifact(&out).unwrap();
    assert_eq!(
        a.results.len(),
        6,
        "{}",
        String::from_utf8_lossy(&merge.stdout)
    );
    // The profile row's kernel time as a share of the peer's measured step (p50 of 1,1,1,2,2,2 = 1.5 ms).
    let prof = a
        .results
        .iter()
        .find(|r| r.benchmark == "decode_step_profile")
        .unwrap();
    assert!(
        (prof.metrics["kernel_busy_pct_of_step"] - 100.0 * 0.5 / 1.5).abs() < 1e-9,
        "{:?}",
        prof.metrics
    );
    let peer_row = a
        .results
        .iter()
        .find(|r| r.implementation == "transformers-eager")
        .unwrap();
    assert_eq!(peer_row.stats["decode_step_ms"].n, 6);
    assert!(peer_row.metrics["pct_of_bandwidth_bound"] > 0.0);
    let parity: Vec<_> = a
        .results
        .iter()
        .filter(|r| r.benchmark == "parity")
        .collect();
    let imps: Vec<&str> = parity.iter().map(|r| r.implementation.as_str()).collect();
    assert_eq!(imps, ["candle", "opbench"]);
    for r in parity {
        let c = r.correctness.as_ref().unwrap();
        assert!(c.passed && c.rel_err == 0.0, "{}", r.implementation);
    }

    // Logits that disagree fail parity and withdraw candle's timings of that model.
    let m = candle_core::safetensors::load(
        model_dir.join("parity.safetensors"),
        &candle_core::Device::Cpu,
    )
    .unwrap();
    let bad = (m["logits"].clone() + 1.0).unwrap();
    let mut mm = std::collections::HashMap::new();
    mm.insert("logits".to_string(), bad);
    candle_core::safetensors::save(&mm, model_dir.join("peer_logits.safetensors")).unwrap();
    let merge = std::process::Command::new(bin)
        .arg("--out")
        .arg(&out)
        .arg("--parity-dir")
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    let a = read_artifact(&out).unwrap();
    assert!(a
        .results
        .iter()
        .filter(|r| r.implementation == "candle" && r.benchmark == "generate")
        .all(|r| r.status == Status::Failed && r.stats.is_empty()));

    // Rows of another device never join this CPU run: an H200 artifact, or a peer's CUDA row.
    let before = std::fs::read(&out).unwrap();
    let h200 = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts/llm.json");
    let mut cuda_peer = peer.clone();
    cuda_peer["rows"][0]["params"]["device"] = "cuda".into();
    std::fs::write(&peer_file, cuda_peer.to_string()).unwrap();
    for (file, says) in [
        (h200.as_path(), "measured on cuda NVIDIA H200"),
        (peer_file.as_path(), "rows[0].params.device"),
    ] {
        let merge = std::process::Command::new(bin)
            .arg("--out")
            .arg(&out)
            .arg("--merge")
            .arg(file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&merge.stderr);
        assert!(!merge.status.success(), "{err}");
        assert!(
            err.contains(says)
                && err.contains(&*file.to_string_lossy())
                && err.contains("llm.json"),
            "{err}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), before, "the artifact changed");
    }
}

#[test]
fn cuda_without_the_feature_or_a_gpu_is_a_clear_error() {
    let bin = env!("CARGO_BIN_EXE_llm_bench");
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(bin)
        .args([
            "--weights",
            "random",
            "--config",
            "llama-9m",
            "--device",
            "cuda",
            "--quiet",
            "--out",
        ])
        .arg(tmp.path().join("x.json"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--device cuda") || err.contains("cannot open CUDA GPU"),
        "{err}"
    );
    assert!(err.contains("--device cpu"), "{err}");
}

#[test]
fn trace_on_the_cpu_says_so_and_runs_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-model");
    std::fs::create_dir_all(&dir).unwrap();
    make_model_dir(&dir);
    let out = tmp.path().join("llm.json");
    let mut o = options(Source::Dir(dir), out.clone());
    o.batches = vec![1];
    let trace_out = tmp.path().join("llm_trace.json");
    o.trace = Some(llm::trace::TraceOptions {
        decode_steps: vec![1, 2],
        out: trace_out.clone(),
        chrome: tmp.path().join("c.trace.json"),
        compact: tmp.path().join("k.trace.json"),
        overwrite: false,
    });
    o.impls = vec![llm::fast::Impl::Candle, llm::fast::Impl::Opbench];
    let rows = llm::run(&o).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].status, Status::Ok);
    assert_eq!(rows[1].status, Status::Skipped);
    let a = read_artifact(&out).unwrap();
    let has = |s: &[&str]| a.notes.iter().any(|n| s.iter().all(|w| n.contains(w)));
    assert!(
        has(&["--trace: no candle trace made, ran without it", "CPU"]),
        "{:?}",
        a.notes
    );
    assert!(
        has(&[
            "--trace: no opbench trace made",
            "first point",
            "did not finish"
        ]),
        "{:?}",
        a.notes
    );
    assert!(!trace_out.exists());
}

#[test]
fn opbench_rows_sit_beside_candle_and_are_skipped_on_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-model");
    std::fs::create_dir_all(&dir).unwrap();
    make_model_dir(&dir);
    let out = tmp.path().join("llm.json");
    let mut o = options(Source::Dir(dir), out.clone());
    o.impls = vec![llm::fast::Impl::Candle, llm::fast::Impl::Opbench];
    let rows = llm::run(&o).unwrap();
    // Two batches x two implementations, candle first at each batch.
    assert_eq!(rows.len(), 4);
    let a = read_artifact(&out).unwrap();
    for (r, (imp, batch)) in a.results.iter().zip([
        ("candle", 1usize),
        ("opbench", 1),
        ("candle", 3),
        ("opbench", 3),
    ]) {
        assert_eq!(r.implementation, imp);
        assert_eq!(r.params["batch"], batch.into());
        // Both rows carry the same point coordinates.
        assert_eq!(r.params["prompt_len"], 12usize.into());
        if imp == "candle" {
            assert_eq!(r.status, Status::Ok);
        } else {
            assert_eq!(r.status, Status::Skipped);
            assert!(r.stats.is_empty());
            assert!(r.notes.iter().any(|n| n.contains("cuda")), "{:?}", r.notes);
            assert_eq!(r.params["pdl"], "on".into());
        }
    }
}
