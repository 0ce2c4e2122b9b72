//! Adding the transformers peer's rows and the logits parity check to an llm artifact.
//!
//! The peer (bench/peers/transformers_llm.py) writes `PeerRow`s with raw per-repeat times;
//! the statistics and the bandwidth bound are computed here with the same code as candle's.

use super::generate::RepeatTimes;
use super::rows::{fill_measured, host_timing};
use crate::artifact::{read_artifact, Correctness, Param, ResultRow, Status};
use anyhow::{bail, Context, Result};
use candle_core::{DType, Device, Tensor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A row as the Python peer writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerRow {
    pub benchmark: String,
    pub implementation: String,
    #[serde(default = "ok")]
    pub status: Status,
    pub params: BTreeMap<String, Param>,
    /// Per-repeat times (generate rows); stats and rates are derived from them.
    #[serde(default)]
    pub repeats: Vec<RepeatTimes>,
    #[serde(default)]
    pub warmup: usize,
    #[serde(default)]
    pub metrics: BTreeMap<String, f64>,
    #[serde(default)]
    pub notes: Vec<String>,
}

fn ok() -> Status {
    Status::Ok
}

/// The peer's file: `{"rows": [...], "notes": [...]}`.
pub type PeerFile = crate::artifact::peer::PeerFile<PeerRow>;

fn int_param(r: &ResultRow, k: &str) -> Result<usize> {
    match r.params.get(k) {
        Some(Param::Int(v)) if *v > 0 => Ok(*v as usize),
        other => bail!(
            "peer row {}: param `{k}` is {other:?}, expected a positive integer",
            r.implementation
        ),
    }
}

/// The point's identity, to find candle's row for the same point.
fn point_key(r: &ResultRow) -> Vec<Option<String>> {
    [
        "model",
        "dtype",
        "batch",
        "prompt_len",
        "new_tokens",
        "device",
    ]
    .iter()
    .map(|k| r.param_str(k))
    .collect()
}

/// Turns a peer row into an artifact row; the bound comes from candle's row of the same point.
pub fn peer_to_row(p: PeerRow, candle_rows: &[ResultRow]) -> Result<ResultRow> {
    let mut row = ResultRow::new(&p.benchmark, &p.implementation);
    row.status = p.status;
    row.params = p.params;
    row.metrics = p.metrics;
    row.notes = p.notes;
    if row.status == Status::Ok && !p.repeats.is_empty() {
        let b = int_param(&row, "batch")?;
        let pl = int_param(&row, "prompt_len")?;
        fill_measured(&mut row, b, pl, &p.repeats)?;
        row.timing = Some(host_timing(p.warmup));
        let key = point_key(&row);
        let twin = candle_rows.iter().find(|c| {
            c.benchmark == row.benchmark && c.implementation == "candle" && point_key(c) == key
        });
        match twin.and_then(|t| {
            t.metrics
                .get("decode_bytes_per_step")
                .zip(t.metrics.get("decode_bound_tokens_per_s"))
        }) {
            Some((&bytes, &bound)) => {
                row.metrics.insert("decode_bytes_per_step".into(), bytes);
                row.metrics
                    .insert("decode_bound_tokens_per_s".into(), bound);
                if let Some(&rate) = row.metrics.get("decode_tokens_per_s") {
                    row.metrics
                        .insert("pct_of_bandwidth_bound".into(), 100.0 * rate / bound);
                }
            }
            None => row
                .notes
                .push("no candle row of the same point: bandwidth bound not computed".into()),
        }
    }
    if row.status != Status::Ok {
        row.stats.clear();
    }
    // A profile row's kernel time as a share of the same point's measured decode step.
    if let Some(&kernel_ms) = row.metrics.get("kernel_time_per_step_ms") {
        let key = point_key(&row);
        let step = candle_rows
            .iter()
            .find(|c| {
                c.benchmark == "generate"
                    && c.implementation == row.implementation
                    && point_key(c) == key
            })
            .and_then(|c| c.p50("decode_step_ms"));
        if let Some(step) = step {
            row.metrics.insert("measured_step_p50_ms".into(), step);
            row.metrics
                .insert("kernel_busy_pct_of_step".into(), 100.0 * kernel_ms / step);
        }
    }
    Ok(row)
}

/// Relative L2 error, max abs error and whether the argmax agrees, of `got` against `want`.
pub fn compare_logits(got: &[f32], want: &[f32]) -> Result<(f64, f64, bool)> {
    if got.len() != want.len() || got.is_empty() {
        bail!(
            "logits have {} and {} values: they must match and be non-empty",
            got.len(),
            want.len()
        );
    }
    let (mut num, mut den, mut max_abs) = (0f64, 0f64, 0f64);
    for (&g, &w) in got.iter().zip(want) {
        let d = g as f64 - w as f64;
        num += d * d;
        den += (w as f64) * (w as f64);
        max_abs = max_abs.max(d.abs());
    }
    let rel = if den > 0.0 {
        (num / den).sqrt()
    } else {
        f64::MAX
    };
    let argmax = |v: &[f32]| {
        v.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i)
    };
    let rel = if rel.is_finite() { rel } else { f64::MAX };
    let max_abs = if max_abs.is_finite() {
        max_abs
    } else {
        f64::MAX
    };
    Ok((rel, max_abs, argmax(got) == argmax(want)))
}

/// Tolerance on the relative logits error per dtype.
pub fn parity_tolerance(dtype: &str) -> f64 {
    match dtype {
        "f32" => 1e-3,
        "bf16" => 3e-2,
        _ => 1e-2,
    }
}

/// The `logits` tensor of a safetensors file as rows of `vocab` (f32).
fn read_logit_rows(path: &Path) -> Result<(usize, Vec<f32>)> {
    let m = candle_core::safetensors::load(path, &Device::Cpu)
        .with_context(|| format!("{}: cannot read safetensors", path.display()))?;
    let t: &Tensor = m
        .get("logits")
        .with_context(|| format!("{}: no tensor named `logits`", path.display()))?;
    let rows = match t.dims() {
        [_] => 1,
        [r, _] => *r,
        d => bail!(
            "{}: `logits` has shape {d:?}, expected [vocab] or [rows, vocab]",
            path.display()
        ),
    };
    Ok((rows, t.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?))
}

/// The parity row of `imp` for one saved model folder: its logits (`ours`, a file in `dir`,
/// computed at `batch`: the prompt in every row, row 0 kept) against the transformers peer's on
/// the same weights. With peer_<ours> the two hold the same rows (the prompt's last position,
/// then each decode step on the sequence `ours` names) and every row is compared; otherwise
/// `ours`' first row against peer_logits.safetensors (the prompt saved in parity.safetensors).
/// `dtype`: the weights' dtype name.
pub fn parity_row(
    dir: &Path,
    ours: &str,
    imp: &str,
    dtype: &str,
    batch: usize,
) -> Result<ResultRow> {
    let (rows, got) = read_logit_rows(&dir.join(ours))?;
    let own_peer = dir.join(format!("peer_{ours}"));
    let has_own = own_peer.is_file();
    let (peer_rows, peer) = if has_own {
        read_logit_rows(&own_peer)?
    } else {
        read_logit_rows(&dir.join("peer_logits.safetensors"))?
    };
    let vocab = peer.len() / peer_rows.max(1);
    let steps = if has_own {
        if peer_rows != rows {
            bail!(
                "{}: {rows} rows of logits, but {} has {peer_rows}: rerun the peer on this folder",
                dir.join(ours).display(),
                own_peer.display()
            );
        }
        rows - 1
    } else {
        0
    };
    // Row 0 is the prompt's last position; rows 1.. the decode steps.
    let mut errs = Vec::with_capacity(steps + 1);
    for r in 0..=steps {
        let span = r * vocab..(r + 1) * vocab;
        let g = got.get(span.clone()).with_context(|| {
            format!(
                "{}: fewer than {} logits",
                dir.join(ours).display(),
                span.end
            )
        })?;
        errs.push(compare_logits(g, &peer[span])?);
    }
    let rel = errs.iter().map(|e| e.0).fold(0.0, f64::max);
    let max_abs = errs.iter().map(|e| e.1).fold(0.0, f64::max);
    let top1 = errs.iter().filter(|e| e.2).count();
    let tol = parity_tolerance(dtype);
    let passed = rel <= tol;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let ids = candle_core::safetensors::load(dir.join("parity.safetensors"), &Device::Cpu)?;
    let p = ids
        .get("input_ids")
        .map(|t| t.dims().last().copied().unwrap_or(0))
        .unwrap_or(0);
    let mut row = ResultRow::new("parity", imp)
        .param("model", name.as_str())
        .param("weights", "random")
        .param("dtype", dtype)
        .param("batch", batch)
        .param("prompt_len", p);
    if steps > 0 {
        row = row.param("decode_steps", steps);
    }
    row.status = if passed { Status::Ok } else { Status::Failed };
    row.correctness = Some(Correctness {
        reference: if steps == 0 {
            "transformers-eager: last-position logits of the same prompt and weights".into()
        } else {
            format!(
                "transformers-eager: logits at the prompt's last position and at {steps} decode \
                 steps (the tokens {imp} generated, run as one sequence), same weights; the \
                 worst row"
            )
        },
        max_abs_err: max_abs,
        rel_err: rel,
        tolerance: tol,
        passed,
        non_finite: 0,
    });
    row.metrics.insert("logits_rel_err".into(), rel);
    row.metrics.insert("logits_max_abs_err".into(), max_abs);
    row.metrics
        .insert("prefill_logits_rel_err".into(), errs[0].0);
    if steps > 0 {
        let decode = errs[1..].iter().map(|e| e.0).fold(0.0, f64::max);
        row.metrics
            .insert("decode_logits_rel_err_max".into(), decode);
        row.notes.push(format!(
            "rel L2 error against transformers: prompt {:.2e}, decode steps 1..{steps} max \
             {decode:.2e}; argmax agrees at {top1} of {} positions",
            errs[0].0,
            steps + 1
        ));
        // Where the argmax differs, how close transformers' own top two were (a near-tie
        // explains a flip; a wide margin would not).
        if let Some(r) = errs.iter().position(|e| !e.2) {
            let margin = super::fast::parity::top2_margin(&peer[r * vocab..(r + 1) * vocab]);
            row.notes.push(format!(
                "argmax first differs at {}: transformers' top-2 logit margin there {margin:.4}",
                if r == 0 {
                    "the prompt's last position".to_string()
                } else {
                    format!("decode step {r}")
                }
            ));
        }
    }
    row.metrics.insert(
        "top1_agrees".into(),
        if top1 == errs.len() { 1.0 } else { 0.0 },
    );
    Ok(row)
}

/// The logits files of one saved model folder, as (file name, implementation, batch): candle's
/// parity.safetensors first, then each `logits-<impl>[@b<batch>].safetensors` in name order
/// (run::impl_logits_file).
fn logits_files(sub: &Path) -> Result<Vec<(String, String, usize)>> {
    let mut found = vec![("parity.safetensors".to_string(), "candle".to_string(), 1)];
    let mut others: Vec<(String, String, usize)> = std::fs::read_dir(sub)
        .with_context(|| format!("{}: cannot list", sub.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let f = e.file_name().to_string_lossy().to_string();
            let name = f.strip_prefix("logits-")?.strip_suffix(".safetensors")?;
            // `@b<batch>` names the batch; a name without one (or with another suffix) is an
            // implementation at batch 1.
            let (imp, batch) = name
                .split_once("@b")
                .and_then(|(imp, b)| Some((imp, b.parse().ok().filter(|&b| b > 0)?)))
                .unwrap_or((name, 1));
            (!imp.is_empty()).then(|| (f.clone(), imp.to_string(), batch))
        })
        .collect();
    others.sort();
    found.extend(others);
    Ok(found)
}

/// Adds rows from peer files / other llm artifacts and parity rows to the artifact at `out`.
/// A failed parity check marks candle's generate rows of that model failed (timings dropped).
pub fn merge(
    out: &Path,
    files: &[std::path::PathBuf],
    parity_dir: Option<&Path>,
) -> Result<Vec<String>> {
    let mut a = read_artifact(out)?;
    if a.kind != "llm" {
        bail!("{}: kind is {:?}, expected \"llm\"", out.display(), a.kind);
    }
    let mut said = Vec::new();
    for f in files {
        let text = crate::input::read_text(f, "--merge file", crate::input::ARTIFACT_MAX_BYTES)?;
        let v: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", f.display()))?;
        let mut new_rows = Vec::new();
        if v.get("schema_version").is_some() {
            let other = crate::artifact::parse_artifact(&text)
                .with_context(|| format!("{}", f.display()))?;
            if other.kind != "llm" {
                bail!(
                    "--merge {}: a {:?} artifact, not an \"llm\" one (field `kind`): merge rows \
                     from llm artifacts or transformers peer files only",
                    f.display(),
                    crate::text::one_line(&other.kind)
                );
            }
            let (ours, theirs) = (
                crate::artifact::device_of(&a.env),
                crate::artifact::device_of(&other.env),
            );
            if ours != theirs {
                bail!(
                    "--merge {}: its rows were measured on {theirs} (field `env`), and {} (--out) \
                     is a run on {ours}: refusing to mix devices in one artifact; merge rows of \
                     the same device and GPU only, or keep the runs in separate files",
                    f.display(),
                    out.display()
                );
            }
            for mut r in other.results {
                r.notes.push(format!(
                    "merged from {} (run {})",
                    f.display(),
                    other.run.id
                ));
                new_rows.push(r);
            }
        } else {
            let peer: PeerFile = crate::artifact::peer::from_value(f, v)?;
            // One at a time, so a profile row finds the generate row of its point in the same file.
            let n = peer.rows.len();
            for (i, p) in peer.rows.into_iter().enumerate() {
                let row = peer_to_row(p, &a.results)?;
                crate::artifact::check_row_device(&a.env, &format!("rows[{i}]"), &row)
                    .with_context(|| {
                        format!(
                            "--merge {} into {} (--out, env {})",
                            f.display(),
                            out.display(),
                            crate::artifact::device_of(&a.env)
                        )
                    })?;
                a.results.push(row);
            }
            a.notes.extend(peer.notes);
            said.push(format!("{}: {n} row(s)", f.display()));
            continue;
        }
        said.push(format!("{}: {} row(s)", f.display(), new_rows.len()));
        a.results.extend(new_rows);
    }
    if let Some(dir) = parity_dir {
        let mut subs: Vec<_> = std::fs::read_dir(dir)
            .with_context(|| format!("--parity-dir {}: cannot list", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("parity.safetensors").is_file())
            .collect();
        subs.sort();
        for sub in subs {
            let name = sub.file_name().unwrap().to_string_lossy().to_string();
            if !sub.join("peer_logits.safetensors").is_file() {
                said.push(format!(
                    "{name}: no peer_logits.safetensors, parity not checked"
                ));
                continue;
            }
            let dtype = a
                .results
                .iter()
                .find(|r| {
                    r.implementation == "candle" && r.param_str("model").as_deref() == Some(&name)
                })
                .and_then(|r| r.param_str("dtype"))
                .unwrap_or_else(|| "f16".into());
            for (file, imp, batch) in logits_files(&sub)? {
                let row = parity_row(&sub, &file, &imp, &dtype, batch)?;
                let c = row.correctness.clone().unwrap();
                said.push(format!(
                    "parity {name} {dtype} {imp} batch {batch}: rel_err {:.2e} (tolerance {:.0e}): {}",
                    c.rel_err,
                    c.tolerance,
                    if c.passed { "passed" } else { "FAILED" }
                ));
                if !c.passed {
                    for r in a.results.iter_mut().filter(|r| {
                        r.benchmark == "generate"
                            && r.implementation == imp
                            && r.param_str("model").as_deref() == Some(&name)
                    }) {
                        r.status = Status::Failed;
                        r.stats.clear();
                        r.notes.push(format!(
                            "logits parity with transformers failed (rel_err {:.2e}): timings withdrawn",
                            c.rel_err
                        ));
                    }
                }
                // A parity check run again replaces its earlier row of the same point.
                a.results.retain(|r| {
                    (&r.benchmark, &r.implementation, &r.params)
                        != (&row.benchmark, &row.implementation, &row.params)
                });
                a.results.push(row);
            }
        }
    }
    crate::artifact::peer::write_merged(out, &mut a)?;
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn save(dir: &Path, file: &str, tensors: &[(&str, Tensor)]) {
        let m: HashMap<String, Tensor> = tensors
            .iter()
            .map(|(k, t)| (k.to_string(), t.clone()))
            .collect();
        candle_core::safetensors::save(&m, dir.join(file)).unwrap();
    }

    fn logits(rows: usize, vocab: usize, bump: f32) -> Tensor {
        let mut v: Vec<f32> = (0..rows * vocab)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 10.0)
            .collect();
        // `bump` on every logit of the last row: an error in one decode step only.
        for x in &mut v[(rows - 1) * vocab..] {
            *x += bump;
        }
        Tensor::from_vec(v, (rows, vocab), &Device::Cpu).unwrap()
    }

    #[test]
    fn parity_compares_every_decode_step_the_peer_ran() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("llama-test");
        std::fs::create_dir_all(&dir).unwrap();
        let ids = |n: usize| Tensor::from_vec(vec![3i64; n], (1, n), &Device::Cpu).unwrap();
        save(
            &dir,
            "parity.safetensors",
            &[("input_ids", ids(4)), ("logits", logits(1, 50, 0.0))],
        );
        save(
            &dir,
            "peer_logits.safetensors",
            &[("logits", logits(1, 50, 0.0))],
        );
        save(
            &dir,
            "logits-opbench.safetensors",
            &[("input_ids", ids(6)), ("logits", logits(3, 50, 0.0))],
        );
        // The peer's step 2 is 0.01 higher everywhere: within f16's tolerance.
        save(
            &dir,
            "peer_logits-opbench.safetensors",
            &[("logits", logits(3, 50, 0.01))],
        );
        let r = parity_row(&dir, "logits-opbench.safetensors", "opbench", "f16", 1).unwrap();
        assert_eq!(r.params["decode_steps"], Param::Int(2));
        assert_eq!(r.metrics["prefill_logits_rel_err"], 0.0);
        let step2 = r.metrics["decode_logits_rel_err_max"];
        assert!(step2 > 0.0 && step2 < 1e-2, "{step2}");
        assert_eq!(r.metrics["logits_rel_err"], step2);
        assert!(r.correctness.as_ref().unwrap().passed);
        // An error at one decode step fails the row, though the prompt's logits agree.
        save(
            &dir,
            "peer_logits-opbench.safetensors",
            &[("logits", logits(3, 50, 2.0))],
        );
        let r = parity_row(&dir, "logits-opbench.safetensors", "opbench", "f16", 1).unwrap();
        assert_eq!(r.metrics["prefill_logits_rel_err"], 0.0);
        assert!(!r.correctness.as_ref().unwrap().passed);
        // The bump moves every logit of step 2 alike, so the argmax agrees everywhere.
        assert!(r.notes[0].contains("agrees at 3 of 3"), "{:?}", r.notes);
        assert_eq!(r.status, Status::Failed);
        // An argmax that differs is placed, with the peer's top-2 margin there: step 1's
        // largest logit is 4.9, and the peer's first one is 6.0.
        let mut v: Vec<f32> = logits(3, 50, 0.0).flatten_all().unwrap().to_vec1().unwrap();
        v[50] = 6.0;
        let t = Tensor::from_vec(v, (3, 50), &Device::Cpu).unwrap();
        save(&dir, "peer_logits-opbench.safetensors", &[("logits", t)]);
        let r = parity_row(&dir, "logits-opbench.safetensors", "opbench", "f16", 1).unwrap();
        assert!(r.notes[0].contains("agrees at 2 of 3"), "{:?}", r.notes);
        assert!(
            r.notes[1].contains("decode step 1") && r.notes[1].contains("margin there 1.1000"),
            "{:?}",
            r.notes
        );
        // A peer file of other rows is named, not compared.
        save(
            &dir,
            "peer_logits-opbench.safetensors",
            &[("logits", logits(2, 50, 0.0))],
        );
        let e = parity_row(&dir, "logits-opbench.safetensors", "opbench", "f16", 1).unwrap_err();
        assert!(e.to_string().contains("rerun the peer"), "{e}");
        // A batch-2 file is the same implementation at batch 2, with its own peer file.
        save(
            &dir,
            "logits-opbench@b2.safetensors",
            &[("input_ids", ids(6)), ("logits", logits(3, 50, 0.0))],
        );
        save(
            &dir,
            "peer_logits-opbench@b2.safetensors",
            &[("logits", logits(3, 50, 0.0))],
        );
        // A suffix that names no batch stays part of the implementation's name.
        save(
            &dir,
            "logits-other@bx.safetensors",
            &[("logits", logits(1, 50, 0.0))],
        );
        let files = logits_files(&dir).unwrap();
        assert_eq!(
            files
                .iter()
                .map(|(f, i, b)| (f.as_str(), i.as_str(), *b))
                .collect::<Vec<_>>(),
            [
                ("parity.safetensors", "candle", 1),
                ("logits-opbench.safetensors", "opbench", 1),
                ("logits-opbench@b2.safetensors", "opbench", 2),
                ("logits-other@bx.safetensors", "other@bx", 1),
            ]
        );
        let r = parity_row(&dir, "logits-opbench@b2.safetensors", "opbench", "f16", 2).unwrap();
        assert_eq!(r.params["batch"], Param::Int(2));
        assert_eq!(r.params["decode_steps"], Param::Int(2));
        assert!(r.correctness.as_ref().unwrap().passed);
        // Without a peer file of its own, an implementation's prompt row is checked alone.
        std::fs::remove_file(dir.join("peer_logits-opbench.safetensors")).unwrap();
        let r = parity_row(&dir, "logits-opbench.safetensors", "opbench", "f16", 1).unwrap();
        assert!(!r.params.contains_key("decode_steps"));
        assert!(r.correctness.as_ref().unwrap().passed);
    }

    #[test]
    fn logits_comparison_reports_relative_error_and_argmax() {
        let want = [1.0f32, -2.0, 3.0, 0.5];
        let (rel, max_abs, top1) = compare_logits(&want, &want).unwrap();
        assert_eq!((rel, max_abs, top1), (0.0, 0.0, true));
        let got = [1.0f32, -2.0, 3.0, 3.5];
        let (rel, max_abs, top1) = compare_logits(&got, &want).unwrap();
        assert!((max_abs - 3.0).abs() < 1e-12);
        assert!(!top1);
        assert!((rel - 3.0 / (1.0f64 + 4.0 + 9.0 + 0.25).sqrt()).abs() < 1e-9);
        let nan = [f32::NAN, 0.0, 0.0, 0.0];
        assert_eq!(compare_logits(&nan, &want).unwrap().0, f64::MAX);
        assert!(compare_logits(&want[..2], &want).is_err());
    }
}
