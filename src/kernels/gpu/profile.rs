//! `--profile`: re-runs our own binary under Nsight Compute, one launch per measured point, and
//! attaches the hardware metrics to the rows. Without a usable ncu the run goes on without them.

use crate::artifact::ArtifactWriter;
use crate::kernels::args::Args;
use crate::kernels::kernel_name::{Demangled, KernelName};
use crate::kernels::manifest::block_label;
use crate::kernels::ncu::{
    derived_metrics, dims, mentions_metric_error, ncu_args, parse_csv, supported_metrics,
    NcuLaunch, METRICS,
};
use crate::kernels::sweep::{Plan, Point};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn note(w: &mut ArtifactWriter, text: String) {
    eprintln!("profile: {text}");
    w.artifact.notes.push(format!("profile: {text}"));
}

/// Runs ncu over our binary in its single-launch mode; returns ncu's stdout and stderr (also
/// echoed to ours) and, if it failed, why.
fn run_ncu(
    args: &Args,
    kernels: &[String],
    metrics: &[&str],
    ids: &str,
) -> Result<(String, String, Option<String>)> {
    let exe = std::env::current_exe().context("locating our own binary for ncu to run")?;
    let out_file = tempfile::NamedTempFile::new().context("a temporary file for ncu's output")?;
    let err_file = tempfile::NamedTempFile::new().context("a temporary file for ncu's log")?;
    let mut child = Command::new(&args.ncu)
        .args(ncu_args(kernels, metrics))
        .arg(&exe)
        .args(std::env::args_os().skip(1))
        .arg("--ncu-child")
        .arg(ids)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(out_file.reopen()?)
        .stderr(err_file.reopen()?)
        .spawn()
        .with_context(|| format!("starting {}", args.ncu))?;
    let deadline = Instant::now() + Duration::from_secs(args.profile_budget_s);
    let problem = loop {
        if let Some(status) = child.try_wait()? {
            break (!status.success()).then(|| format!("ncu exited with {status}"));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break Some(format!(
                "ncu did not finish within --profile-budget-s {} s and was stopped",
                args.profile_budget_s
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let read = |p: &std::path::Path| {
        crate::input::read_text(p, "ncu output", crate::input::ARTIFACT_MAX_BYTES)
            .unwrap_or_default()
    };
    let (text, log) = (read(out_file.path()), read(err_file.path()));
    eprint!("{log}");
    Ok((text, log, problem))
}

/// Profiles the points in `measured` ((row index, point id), in launch order) and adds the
/// `ncu_*` metrics to their rows.
pub fn attach(
    args: &Args,
    plan: &Plan,
    measured: &[(usize, usize)],
    w: &mut ArtifactWriter,
) -> Result<()> {
    if measured.is_empty() {
        note(w, "no point passed its check, nothing to profile".into());
        return w.flush();
    }
    match Command::new(&args.ncu).arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            note(
                w,
                format!(
                    "`{} --version` exited with {}: going on without profiler metrics",
                    args.ncu, o.status
                ),
            );
            return w.flush();
        }
        Err(e) => {
            note(w, format!("ncu (`{}`) cannot be run ({e}): going on without profiler metrics; install Nsight Compute or pass --ncu PATH", args.ncu));
            return w.flush();
        }
    }
    let points: BTreeMap<usize, &Point> = plan
        .groups
        .iter()
        .flat_map(|g| &g.points)
        .map(|p| (p.id, p))
        .collect();
    // ncu filters on the function's own name (no namespace, template arguments or parameters).
    let mut kernels: Vec<String> = measured
        .iter()
        .map(|(_, id)| {
            let name = &plan.manifest.kernels[points[id].kernel].name;
            KernelName::parse(name).map_or_else(|_| name.clone(), |k| k.base)
        })
        .collect();
    kernels.sort();
    kernels.dedup();
    let ids: Vec<String> = measured.iter().map(|(_, id)| id.to_string()).collect();
    let ids = ids.join(",");
    eprintln!(
        "profile: running {} launches under {}",
        measured.len(),
        args.ncu
    );
    let mut metrics: Vec<&str> = METRICS.to_vec();
    let (mut text, log, mut problem) = run_ncu(args, &kernels, &metrics, &ids)?;
    if parse_csv(&text).is_err() && mentions_metric_error(&format!("{text}\n{log}")) {
        // Some metric is unknown to this ncu or GPU: keep the ones it lists and try once more.
        let query = Command::new(&args.ncu).arg("--query-metrics").output();
        if let Some(ok) = query
            .ok()
            .and_then(|q| supported_metrics(&String::from_utf8_lossy(&q.stdout)))
        {
            let dropped: Vec<&str> = METRICS
                .iter()
                .copied()
                .filter(|m| !ok.contains(m))
                .collect();
            note(
                w,
                format!("ncu does not know {dropped:?}: profiling without them"),
            );
            metrics = ok;
            (text, _, problem) = run_ncu(args, &kernels, &metrics, &ids)?;
        }
    }
    if let Some(raw) = &args.ncu_raw {
        crate::artifact::write_bytes_atomic(raw, text.as_bytes())?;
    }
    if let Some(p) = problem {
        note(w, format!("{p}; attaching what it reported"));
    }
    let launches = match parse_csv(&text) {
        Ok(l) => l,
        Err(e) => {
            let tail: String = text.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
            note(
                w,
                format!("ncu's output could not be read ({e:#}); last lines: {tail}"),
            );
            return w.flush();
        }
    };
    let attached = attach_in_order(plan, &points, measured, &launches, w);
    note(
        w,
        format!(
            "Nsight Compute (ncu --clock-control none, one extra launch per point, {} metrics): \
             metrics attached to {attached} of {} measured points",
            metrics.len(),
            measured.len()
        ),
    );
    w.flush()
}

/// Matches profiled launches to measured points in order, checking kernel name and block.
fn attach_in_order(
    plan: &Plan,
    points: &BTreeMap<usize, &Point>,
    measured: &[(usize, usize)],
    launches: &[NcuLaunch],
    w: &mut ArtifactWriter,
) -> usize {
    let mut attached = 0;
    for (i, (row, id)) in measured.iter().enumerate() {
        let Some(l) = launches.get(i) else { break };
        let p = points[id];
        let name = &plan.manifest.kernels[p.kernel].name;
        let block_ok = l.block.as_deref().is_none_or(|b| dims(b) == p.block);
        let profiled = Demangled::from_text(&l.kernel, &l.kernel);
        let name_ok = KernelName::parse(name).is_ok_and(|k| k.matches(&profiled));
        if !name_ok || !block_ok {
            note(
                w,
                format!(
                    "profiled launch {i} is {} block {:?}, expected {name} block {}: metrics \
                     from here on are not attached",
                    l.kernel,
                    l.block,
                    block_label(p.block)
                ),
            );
            break;
        }
        w.artifact.results[*row]
            .metrics
            .extend(derived_metrics(&l.raw));
        attached += 1;
    }
    attached
}
