//! `--profile`: re-runs our own binary under Nsight Compute, one launch per measured point, and
//! attaches the hardware metrics to the rows. Without a usable ncu the run goes on without them.

use crate::artifact::ArtifactWriter;
use crate::kernels::args::Args;
use crate::kernels::manifest::block_label;
use crate::kernels::ncu::{derived_metrics, dims, ncu_args, parse_csv};
use crate::kernels::sweep::{Plan, Point};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

fn note(w: &mut ArtifactWriter, text: String) {
    eprintln!("profile: {text}");
    w.artifact.notes.push(format!("profile: {text}"));
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
    let mut kernels: Vec<String> = measured
        .iter()
        .map(|(_, id)| plan.manifest.kernels[points[id].kernel].name.clone())
        .collect();
    kernels.sort();
    kernels.dedup();
    let ids: Vec<String> = measured.iter().map(|(_, id)| id.to_string()).collect();
    let exe = std::env::current_exe().context("locating our own binary for ncu to run")?;
    eprintln!("profile: running {} launches under {}", ids.len(), args.ncu);
    let out = Command::new(&args.ncu)
        .args(ncu_args(&kernels))
        .arg(&exe)
        .args(std::env::args_os().skip(1))
        .arg("--ncu-child")
        .arg(ids.join(","))
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("starting {}", args.ncu))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if let Some(raw) = &args.ncu_raw {
        crate::artifact::write_bytes_atomic(raw, text.as_bytes())?;
    }
    if !out.status.success() {
        note(
            w,
            format!("ncu exited with {}; attaching what it reported", out.status),
        );
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
    let mut attached = 0;
    for (i, (row, id)) in measured.iter().enumerate() {
        let Some(l) = launches.get(i) else { break };
        let p = points[id];
        let name = &plan.manifest.kernels[p.kernel].name;
        let block_ok = l.block.as_deref().is_none_or(|b| dims(b) == p.block);
        if l.base_name() != name || !block_ok {
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
    note(
        w,
        format!(
            "Nsight Compute metrics (ncu --clock-control none, one launch per point, metrics {}) \
             attached to {attached} of {} measured points",
            crate::kernels::ncu::METRICS.len(),
            measured.len()
        ),
    );
    w.flush()
}
