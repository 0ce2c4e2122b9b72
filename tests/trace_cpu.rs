//! CPU tests of the kernel-trace analysis: attribution of a recorded candle decode step (kernel
//! names as CUPTI reports them for candle 0.11.1's Llama), busy/idle arithmetic, the artifact
//! rows, and the Chrome trace-event and compact exports.

use opbench::artifact::ResultRow;
use opbench::trace::chrome::chrome_trace;
use opbench::trace::compact::compact_json;
use opbench::trace::rows::{trace_rows, ModelBytes};
use opbench::trace::{
    analyze_step, Activity, ActivityKind, ImplSteps, Layer, Layout, OpClass, Phase, StepAnalysis,
    StepWindow, Trace,
};

/// candle's layout for the 2-layer fixture.
const CANDLE2: Layout = Layout::NormAnchors { layers: 2 };

fn candle(s: &StepAnalysis) -> ImplSteps {
    ImplSteps {
        implementation: "candle".into(),
        steps: vec![s.clone()],
    }
}

const GEMV: &str = "_ZN8internal5gemvx6kernelIiiffffLb0ELb1ELb1ELb0ELi7ELb0E18cublasGemvParamsExIi30cublasGemvTensorStridedBatchedIKfES5_S3_IfEfEEEvT11_";
const SPLITK: &str = "_Z19splitKreduce_kernelILi32ELi16Ei6__halfS0_S0_fS0_Lb1ELb0ELb0EEv18cublasSplitKParamsIT4_EPKT2_S6_PS4_PKS1_PKT5_SB_PS7_PvlPS1_Pi";
const TNT: &str = "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_TNT";

/// One decoder layer of a candle decode step, in issue order, with the class each must get.
fn layer_kernels() -> Vec<(&'static str, OpClass)> {
    use OpClass::*;
    let mut v = vec![
        ("rmsnorm_f16", Rmsnorm),
        (TNT, Matmul),
        ("nvjet_sm90_hsh_8x64_64x16_4x1_v_bz_TNN", Matmul),
        ("nvjet_sm90_hsh_8x64_64x16_4x1_v_bz_TNN", Matmul),
        ("rope_f16", Rope),
        ("rope_f16", Rope),
    ];
    v.extend(std::iter::repeat_n(("copy2d_f16", KvCopy), 20));
    v.extend([
        ("cast_f16_f32", Attention),
        ("cast_f16_f32", Attention),
        ("cast_f16_f32", Attention),
        (GEMV, Attention),
        ("affine_f32", Attention),
        ("softmax_f32", Attention),
        (GEMV, Attention),
        ("cast_f32_f16", Attention),
        (TNT, Matmul),
        ("badd_f16", Elementwise),
        ("rmsnorm_f16", Rmsnorm),
        (TNT, Matmul),
        (TNT, Matmul),
        ("usilu_f16", Elementwise),
        ("bmul_f16", Elementwise),
        ("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_TNT", Matmul),
        (SPLITK, Matmul),
        ("badd_f16", Elementwise),
    ]);
    v
}

/// A 2-layer decode step: 1 µs kernels separated by 2 µs idle gaps, starting 5 µs after the
/// window opens, the window closing 10 µs after the last activity.
fn fixture() -> (Trace, Vec<(OpClass, Layer)>) {
    let mut names: Vec<(ActivityKind, &str, OpClass, Layer)> = vec![
        (
            ActivityKind::Memcpy,
            "memcpy HtoD",
            OpClass::Memcpy,
            Layer::Embedding,
        ),
        (
            ActivityKind::Kernel,
            "is_u32_f16",
            OpClass::Embedding,
            Layer::Embedding,
        ),
    ];
    for l in 0..2 {
        for (n, c) in layer_kernels() {
            names.push((ActivityKind::Kernel, n, c, Layer::Block(l)));
        }
    }
    for (k, n, c) in [
        (ActivityKind::Kernel, "rmsnorm_f16", OpClass::Rmsnorm),
        (
            ActivityKind::Kernel,
            "nvjet_sm90_hsh_256x8_64x16_2x1_v_bz_TNT",
            OpClass::Matmul,
        ),
        (ActivityKind::Kernel, "cast_f16_f32", OpClass::Elementwise),
        (ActivityKind::Kernel, "fast_argmax_f32", OpClass::Sampling),
        (ActivityKind::Memcpy, "memcpy DtoH", OpClass::Memcpy),
    ] {
        names.push((k, n, c, Layer::Head));
    }
    let start = 1_000_000u64;
    let mut t = start + 5_000;
    let mut acts = Vec::new();
    let mut want = Vec::new();
    for (k, n, c, l) in names {
        let mut a = Activity::kernel(n, t, t + 1_000);
        a.kind = k;
        if k != ActivityKind::Kernel {
            a.bytes = 4;
        }
        acts.push(a);
        want.push((c, l));
        t += 3_000;
    }
    let end = t - 2_000 + 10_000;
    // Reverse the records: attribution must not rely on delivery order.
    acts.reverse();
    // An activity outside the window belongs to no step.
    acts.push(Activity::kernel("rmsnorm_f16", end + 50, end + 60));
    let w = StepWindow {
        phase: Phase::Decode,
        step: 64,
        tokens: 1,
        context_len: 192,
        start_ns: start,
        end_ns: end,
    };
    (
        Trace {
            steps: vec![w],
            activities: acts,
            dropped_records: 0,
        },
        want,
    )
}

#[test]
fn a_recorded_decode_step_is_attributed_to_classes_and_layers() {
    let (trace, want) = fixture();
    let s = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    assert!(s.anchors.layers_assigned, "{:?}", s.anchors);
    assert_eq!(s.anchors.found, 5);
    assert_eq!(s.attributed.len(), want.len());
    for (i, ((a, at), (c, l))) in s.attributed.iter().zip(&want).enumerate() {
        assert_eq!(at.class, *c, "activity {i} {}", a.name);
        assert_eq!(at.layer, Some(*l), "activity {i} {}", a.name);
    }
    assert_eq!(s.by_class[&OpClass::KvCopy].count, 40);
    assert_eq!(s.by_class[&OpClass::Attention].count, 16);
    assert_eq!(s.by_layer[&Layer::Block(1)].count, layer_kernels().len());
    // The wrong layer count gives no layers, but classes by name still.
    let s3 = analyze_step(&trace, &trace.steps[0], &Layout::NormAnchors { layers: 3 });
    assert!(!s3.anchors.layers_assigned);
    assert!(s3.attributed.iter().all(|(_, a)| a.layer.is_none()));
}

#[test]
fn busy_idle_and_gaps_of_a_step_add_up() {
    let (trace, want) = fixture();
    let s = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    let n = want.len() as u64;
    assert_eq!(s.kernels + s.memcpys, n as usize);
    assert_eq!(s.memcpys, 2);
    assert_eq!(s.busy_ns, n * 1_000);
    assert_eq!(s.lead_ns, 5_000);
    assert_eq!(s.tail_ns, 10_000);
    assert_eq!(s.gaps, vec![2_000; n as usize - 1]);
    assert_eq!(s.gap_ns, (n - 1) * 2_000);
    assert_eq!(s.span_ns, n * 1_000 + (n - 1) * 2_000);
    assert_eq!(s.wall_ns, 5_000 + s.span_ns + 10_000);
    assert_eq!(s.idle_ns, s.wall_ns - s.busy_ns);
    let expect_idle = 100.0 * (s.wall_ns - s.busy_ns) as f64 / s.wall_ns as f64;
    assert!((s.idle_pct() - expect_idle).abs() < 1e-9);
}

/// The row of benchmark `bench` whose param `key` is `val`, at `scope`.
fn row<'a>(rows: &'a [ResultRow], bench: &str, key: &str, val: &str, scope: &str) -> &'a ResultRow {
    rows.iter()
        .find(|r| {
            r.benchmark == bench
                && r.params.get(key).map(|p| p.to_string()) == Some(val.into())
                && r.params["scope"].to_string() == scope
        })
        .unwrap_or_else(|| panic!("no {bench} row {key}={val} {scope}"))
}

#[test]
fn rows_carry_per_class_and_per_layer_times_and_matmul_bandwidth() {
    let (trace, _) = fixture();
    let s = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    let mb = ModelBytes {
        layers: 2,
        layer_weight_bytes: 1_000_000,
        head_weight_bytes: 500_000,
        kv_bytes_per_position_layer: 1024,
        dtype_bytes: 2,
        batch: 1,
    };
    let rows = trace_rows(
        &candle(&s),
        &mb,
        Some(4000.0),
        &[("model", "fixture".into())],
    );
    let get = |bench: &str, key: &str, val: &str, scope: &str| row(&rows, bench, key, val, scope);
    let m = get("trace_class", "class", "matmul", "step");
    // 2 x (3 + 1 + 2 + 2) weight matmuls + lm_head = 17 kernels of 1 µs.
    assert_eq!(m.metrics["count"], 17.0);
    assert!((m.metrics["time_us"] - 17.0).abs() < 1e-9);
    assert_eq!(m.metrics["floor_bytes"], 2_500_000.0);
    assert!((m.metrics["floor_gbps"] - 2_500_000.0 / 17_000.0).abs() < 1e-9);
    // Where kernels overlap (programmatic dependent launch), the rate is over the busy time
    // the class adds, not over its summed durations.
    let mut overlapped = s.clone();
    let mm = overlapped.by_class.get_mut(&OpClass::Matmul).unwrap();
    mm.busy_ns = mm.time_ns / 2;
    let rows2 = trace_rows(
        &candle(&overlapped),
        &mb,
        Some(4000.0),
        &[("model", "fixture".into())],
    );
    let m2 = row(&rows2, "trace_class", "class", "matmul", "step");
    assert!((m2.metrics["floor_gbps"] - 2_500_000.0 / 8_500.0).abs() < 1e-9);
    assert!(
        (m2.metrics["floor_pct_of_copy_bw"] - 100.0 * 2_500_000.0 / 8_500.0 / 4000.0).abs() < 1e-9
    );
    let l1 = get("trace_layer", "layer", "1", "step");
    assert!((l1.metrics["kv_copy_time_us"] - 20.0).abs() < 1e-9);
    assert_eq!(l1.metrics["matmul_floor_bytes"], 1_000_000.0);
    let st = get("trace_step", "step", "decode 64", "step");
    assert!((st.metrics["busy_us"] * 1e3 - s.busy_ns as f64).abs() < 1e-6);
    // The decode mean of one step equals the step.
    let mean = get("trace_step", "scope", "decode_mean", "decode_mean");
    assert_eq!(mean.metrics["idle_pct"], st.metrics["idle_pct"]);
    let att = get("trace_class", "class", "attention", "step");
    assert_eq!(att.metrics["floor_bytes"], (192 * 1024 * 2) as f64);
}

#[test]
fn the_chrome_export_is_valid_trace_event_json() {
    let (trace, want) = fixture();
    let s = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    let doc = chrome_trace(&[candle(&s)], serde_json::json!({"model": "fixture"}));
    let text = serde_json::to_string(&doc).unwrap();
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ev = back["traceEvents"].as_array().unwrap();
    let x: Vec<_> = ev.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(
        x.len(),
        want.len() + 1,
        "one event per activity + the step window"
    );
    for e in &x {
        for k in ["name", "ts", "dur", "pid", "tid", "cat"] {
            assert!(!e[k].is_null(), "{k} missing in {e}");
        }
        assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0);
    }
    // Times are µs from the step's start: the first activity starts 5 µs in and lasts 1 µs.
    let first = x.iter().find(|e| e["cat"] == "memcpy").unwrap();
    assert_eq!(first["ts"].as_f64().unwrap(), 5.0);
    assert_eq!(first["dur"].as_f64().unwrap(), 1.0);
    let step = x.iter().find(|e| e["cat"] == "step").unwrap();
    assert_eq!(step["name"], "decode 64");
    assert_eq!(step["dur"].as_f64().unwrap(), s.wall_ns as f64 / 1e3);
    let rope = x.iter().find(|e| e["name"] == "rope_f16").unwrap();
    assert_eq!(rope["args"]["layer"], "0");
    assert!(ev
        .iter()
        .any(|e| e["ph"] == "M" && e["name"] == "process_name"));
}

#[test]
fn the_compact_trace_interns_names_and_keeps_one_row_per_activity() {
    let (trace, want) = fixture();
    let s = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    let c = compact_json(&[candle(&s)], serde_json::json!({}), serde_json::json!({}));
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), want.len());
    let names = c["names"].as_array().unwrap();
    let mut uniq: Vec<&str> = names.iter().map(|n| n.as_str().unwrap()).collect();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), names.len(), "names are interned once");
    let cols = c["columns"].as_array().unwrap();
    assert!(rows
        .iter()
        .all(|r| r.as_array().unwrap().len() == cols.len()));
    // Row 1 is the embedding gather: its name id resolves to is_u32_f16.
    let id = rows[1][2].as_u64().unwrap() as usize;
    assert_eq!(names[id], "is_u32_f16");
    assert_eq!(rows[1][4], "embedding");
    assert_eq!(rows[0][5], 5_000);
}

/// The committed GPU trace: valid, complete, candle's and opbench's steps each with TinyLlama's
/// 22 layers placed, the classes' busy times adding up to each step's busy time, and the compact
/// trace's kernels matching the step rows.
#[test]
fn the_committed_gpu_trace_is_complete_and_consistent() {
    use opbench::artifact::read_artifact;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let a = read_artifact(&root.join("artifacts/llm_trace.json")).unwrap();
    assert_eq!(a.kind, "llm_trace");
    assert!(a.run.complete && a.run.git_commit.is_some() && a.env.gpu.is_some());
    assert_eq!(a.run.git_dirty, Some(false));
    let p = |r: &ResultRow, k: &str| r.params[k].to_string();
    let c: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("artifacts/llm_kernels.trace.json")).unwrap(),
    )
    .unwrap();
    let compact_steps = c["steps"].as_array().unwrap();
    for imp in ["candle", "opbench"] {
        let steps: Vec<_> = a
            .results
            .iter()
            .filter(|r| {
                r.implementation == imp && r.benchmark == "trace_step" && p(r, "scope") == "step"
            })
            .collect();
        assert_eq!(steps.len(), 4, "{imp}: prefill + 3 decode steps");
        for s in &steps {
            assert_eq!(p(s, "layers_assigned"), "true", "{imp} {}", p(s, "step"));
            let m = &s.metrics;
            assert!(m["busy_us"] > 0.0 && m["busy_us"] <= m["wall_us"]);
            assert!((m["idle_us"] + m["busy_us"] - m["wall_us"]).abs() < 1e-6);
            let of = |bench: &'static str| {
                a.results.iter().filter(move |r| {
                    r.implementation == imp
                        && r.benchmark == bench
                        && p(r, "scope") == "step"
                        && p(r, "step") == p(s, "step")
                })
            };
            let busy: f64 = of("trace_class").map(|r| r.metrics["busy_us"]).sum();
            assert!(
                (busy - m["busy_us"]).abs() / m["busy_us"] < 1e-6,
                "{imp}: class busy {busy} vs {m:?}"
            );
            assert_eq!(
                of("trace_layer").count(),
                24,
                "embedding + 22 layers + head"
            );
            // The compact trace holds the same kernels for this step.
            let si = compact_steps
                .iter()
                .position(|cs| cs["impl"] == imp && cs["label"].as_str() == Some(&p(s, "step")))
                .unwrap();
            let kernels = c["rows"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r[0] == si && r[1] == "k")
                .count();
            assert_eq!(kernels as f64, m["kernels"], "{imp} {}", p(s, "step"));
        }
    }
    let mean = |imp: &str| {
        a.results
            .iter()
            .find(|r| {
                r.implementation == imp
                    && r.benchmark == "trace_step"
                    && p(r, "scope") == "decode_mean"
            })
            .unwrap()
            .metrics
            .clone()
    };
    assert_eq!(mean("candle")["kernels"], 973.0);
    assert_eq!(
        mean("opbench")["kernels"],
        113.0,
        "plan::step_plan's 113 launches"
    );
    assert!(mean("opbench")["untraced_step_us"] > 0.0);
    let t: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("artifacts/llm_decode.trace.json")).unwrap(),
    )
    .unwrap();
    let ev = t["traceEvents"].as_array().unwrap();
    assert!(ev.len() > 3 * (973 + 113));
    assert!(ev.iter().any(|e| e["args"]["impl"] == "opbench"));
}

/// candle's step and the same step under another implementation's name, recorded later.
fn two_impls() -> [ImplSteps; 2] {
    let (mut trace, _) = fixture();
    let s = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    let shift = 5_000_000_000u64;
    for a in &mut trace.activities {
        (a.start_ns, a.end_ns) = (a.start_ns + shift, a.end_ns + shift);
    }
    trace.steps[0].start_ns += shift;
    trace.steps[0].end_ns += shift;
    let later = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    [
        candle(&s),
        ImplSteps {
            implementation: "opbench".into(),
            steps: vec![later],
        },
    ]
}

#[test]
fn each_implementation_gets_its_own_rows_and_labelled_export_tracks() {
    let both = two_impls();
    let mb = ModelBytes {
        layers: 2,
        layer_weight_bytes: 1_000_000,
        head_weight_bytes: 500_000,
        kv_bytes_per_position_layer: 1024,
        dtype_bytes: 2,
        batch: 1,
    };
    for t in &both {
        let rows = trace_rows(t, &mb, None, &[]);
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r.implementation == t.implementation));
    }
    let c = compact_json(
        &both,
        serde_json::json!({"candle": "a", "opbench": "b"}),
        serde_json::json!({}),
    );
    assert_eq!(c["version"], 2);
    let steps = c["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["impl"], "candle");
    assert_eq!(steps[1]["impl"], "opbench");
    // Each implementation's times start at its own first step.
    assert_eq!(steps[0]["start_ns"], 0);
    assert_eq!(steps[1]["start_ns"], 0);
    assert_eq!(steps[1]["anchor_rule"], "rmsnorm kernels");
    let rows = c["rows"].as_array().unwrap();
    let of = |i: u64| rows.iter().filter(|r| r[0] == i).count();
    assert_eq!(of(0), of(1));
    assert!(of(1) > 0);
    let doc = chrome_trace(&both, serde_json::json!({}));
    let ev = doc["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = ev
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"candle: GPU activity (CUPTI)"), "{names:?}");
    assert!(
        names.contains(&"opbench: GPU activity (CUPTI)"),
        "{names:?}"
    );
    let steps: Vec<_> = ev.iter().filter(|e| e["cat"] == "step").collect();
    assert_eq!(steps.len(), 2);
    assert_ne!(steps[0]["pid"], steps[1]["pid"]);
    assert_eq!(steps[0]["ts"], steps[1]["ts"], "both start at 0");
    assert!(ev
        .iter()
        .any(|e| e["ph"] == "X" && e["args"]["impl"] == "opbench" && e["cat"] == "matmul"));
}

#[test]
fn untraced_times_go_on_the_decode_mean_and_prefill_rows() {
    use opbench::trace::rows::add_untraced;
    let (trace, _) = fixture();
    let s = analyze_step(&trace, &trace.steps[0], &CANDLE2);
    let mb = ModelBytes {
        layers: 2,
        layer_weight_bytes: 1,
        head_weight_bytes: 1,
        kv_bytes_per_position_layer: 1,
        dtype_bytes: 2,
        batch: 1,
    };
    let mut rows = trace_rows(&candle(&s), &mb, None, &[]);
    add_untraced(&mut rows, Some(2.0), None);
    let with: Vec<_> = rows
        .iter()
        .filter(|r| r.metrics.contains_key("untraced_step_us"))
        .collect();
    assert_eq!(with.len(), 1, "only the decode mean's step row");
    assert_eq!(with[0].params["scope"].to_string(), "decode_mean");
    let m = &with[0].metrics;
    assert_eq!(m["untraced_step_us"], 2000.0);
    assert!((m["untraced_busy_pct"] - 100.0 * m["busy_us"] / 2000.0).abs() < 1e-9);
    assert!(rows
        .iter()
        .all(|r| !r.metrics.contains_key("untraced_ttft_us")));
}

/// Kernels that overlap, as programmatic dependent launch makes them: each starts while its
/// predecessor runs. Summed durations exceed the busy time; the busy time each class adds
/// (`busy_us`) sums to it.
#[test]
fn overlapping_kernels_split_the_busy_time_between_classes() {
    let mut acts = vec![
        Activity::kernel("decode_gemv_b1", 1_000, 11_000),
        Activity::kernel("decode_attn", 5_000, 15_000),
        Activity::kernel("decode_gemv_b1", 6_000, 30_000),
    ];
    acts.push(Activity::kernel("decode_argmax", 40_000, 42_000));
    let w = StepWindow {
        phase: Phase::Decode,
        step: 1,
        tokens: 1,
        context_len: 2,
        start_ns: 0,
        end_ns: 50_000,
    };
    let trace = Trace {
        steps: vec![w.clone()],
        activities: acts,
        dropped_records: 0,
    };
    let s = analyze_step(&trace, &w, &Layout::Plan(Vec::new()));
    assert_eq!(s.busy_ns, 29_000 + 2_000);
    let mb = ModelBytes {
        layers: 1,
        layer_weight_bytes: 1,
        head_weight_bytes: 1,
        kv_bytes_per_position_layer: 1,
        dtype_bytes: 2,
        batch: 1,
    };
    let t = ImplSteps {
        implementation: "opbench".into(),
        steps: vec![s],
    };
    let rows = trace_rows(&t, &mb, None, &[]);
    let class = |c: &str| {
        rows.iter()
            .find(|r| {
                r.benchmark == "trace_class"
                    && r.params["scope"].to_string() == "step"
                    && r.params["class"].to_string() == c
            })
            .unwrap()
            .metrics
            .clone()
    };
    let mm = class("matmul");
    assert_eq!(mm["time_us"], 10.0 + 24.0);
    assert_eq!(mm["busy_us"], 10.0 + 15.0);
    assert_eq!(class("attention")["busy_us"], 4.0);
    let busy: f64 = ["matmul", "attention", "sampling"]
        .iter()
        .map(|c| class(c)["busy_us"])
        .sum();
    assert_eq!(busy, 31.0);
    let shares: f64 = ["matmul", "attention", "sampling"]
        .iter()
        .map(|c| class(c)["busy_share_pct"])
        .sum();
    assert!((shares - 100.0).abs() < 1e-9);
}
