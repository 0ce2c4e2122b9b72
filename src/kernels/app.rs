//! kernel_bench's flow: load the manifest (or the convention), check it against the source,
//! expand the sweep, then print it with the source's compile status (`--device cpu`) or run it
//! on the GPU.

use super::args::{Args, Device};
use super::convention::matmul_manifest;
use super::manifest::{block_label, parse_block_text, parse_param_arg, Arg, Manifest};
use super::resume::{after_first_fault, RunEnd, FAULTED_EXIT_CODE};
use super::source::Source;
use super::sweep::{expand, Plan};
use crate::cli::{dedup_warn, dedup_warn_by};
use anyhow::{bail, Context, Result};
use std::fmt::Write;

/// Runs kernel_bench with parsed arguments.
pub fn main(args: Args) -> Result<()> {
    args.sampling.sampling().check()?;
    check_outputs(&args)?;
    let (plan, source) = load(&args)?;
    match args.device {
        Device::Cpu => {
            let names: Vec<String> = plan
                .manifest
                .kernels
                .iter()
                .map(|k| k.name.clone())
                .collect();
            let compiled = super::compile_check::check(&args, &source, &names)?;
            println!("{}", compiled.line(&source.path));
            print!("{}", describe(&plan));
            if let Some(path) = &args.plan_json {
                let json = serde_json::to_string_pretty(&super::plan_json::points(&plan))?;
                crate::artifact::write_bytes_atomic(path, json.as_bytes())?;
                eprintln!("wrote the sweep's points to {}", path.display());
            }
            Ok(())
        }
        Device::Cuda => {
            // One seed for every process of the run: a fresh one after a fault gets it too.
            let mut args = args;
            let seed_given = args.seed.is_some();
            args.seed.get_or_insert_with(rand::random);
            // Every CUDA object of this process is dropped when run_cuda returns.
            match run_cuda(&args, &plan, &source)? {
                RunEnd::Finished => Ok(()),
                // A continuing process: the first one starts the next.
                RunEnd::Faulted { .. } if args.resume_partial.is_some() => {
                    std::process::exit(FAULTED_EXIT_CODE)
                }
                RunEnd::Faulted { partial } => {
                    after_first_fault(&args, &plan, &partial, seed_given)
                }
            }
        }
    }
}

#[cfg(feature = "cuda")]
fn run_cuda(args: &Args, plan: &Plan, source: &Source) -> Result<RunEnd> {
    super::gpu::run(args, plan, source)
}

#[cfg(not(feature = "cuda"))]
fn run_cuda(_args: &Args, _plan: &Plan, _source: &Source) -> Result<RunEnd> {
    bail!(
        "this kernel_bench was built without the `cuda` feature, so it cannot run kernels: \
         rebuild with `cargo build --release --features cuda --bin kernel_bench` on a machine \
         with the CUDA toolkit, or pass --device cpu to check the manifest and list the sweep"
    )
}

/// Reads the manifest or builds the convention's, applies the command line, checks every
/// kernel against the source and expands the sweep.
///
/// A value repeated in a list (`--kernel a --kernel a`, `--param N=64,64`, `--block 16x16,16x16`,
/// a manifest's parameter or block list) is dropped with a warning on stderr: each point runs
/// once. The same `--param` name given twice is an error (which list was meant?).
pub fn load(args: &Args) -> Result<(Plan, Source)> {
    let mut params = args
        .params
        .iter()
        .map(|p| parse_param_arg(p))
        .collect::<Result<Vec<_>>>()?;
    for (i, (name, values)) in params.iter_mut().enumerate() {
        if args.params[..i]
            .iter()
            .any(|p| p.split_once('=').is_some_and(|(n, _)| n.trim() == name))
        {
            bail!(
                "--param {name} is given twice: give all its values in one flag, e.g. \
                 --param {name}=128,256"
            );
        }
        dedup_warn(&format!("--param {name}"), values);
    }
    let mut blocks = args
        .blocks
        .iter()
        .map(|b| parse_block_text(b).context("--block"))
        .collect::<Result<Vec<_>>>()?;
    warn_block_repeats("--block", &mut blocks);
    let mut kernels = args.kernels.clone();
    dedup_warn("--kernel", &mut kernels);
    let mut manifest = match (&args.manifest, &args.source) {
        (Some(path), source) => {
            let mut m = Manifest::load(path)?;
            if let Some(s) = source {
                m.source = s.clone();
            }
            if m.source.as_os_str().is_empty() {
                bail!(
                    "{} has no `source = \"FILE.cu\"`: add it or pass --source",
                    m.origin
                );
            }
            m.override_params(&params)?;
            m.select_kernels(&kernels)?;
            m
        }
        (None, Some(path)) => {
            let source = Source::read_with(path, &args.includes)?;
            matmul_manifest(&source, &kernels, &params)?
        }
        (None, None) => bail!(
            "nothing to run: give --manifest FILE.toml, or --source FILE.cu with --kernel and \
             --param for kernels of the built-in matmul convention (see --help)"
        ),
    };
    manifest.override_blocks(&blocks);
    let origin = manifest.origin.clone();
    for (name, values) in manifest.params.iter_mut() {
        dedup_warn(&format!("parameter `{name}` of the {origin}"), values);
    }
    for k in manifest.kernels.iter_mut() {
        warn_block_repeats(
            &format!("`block` of kernel `{}` in the {origin}", k.name),
            &mut k.blocks,
        );
    }
    let mut includes = manifest.include.clone();
    includes.extend(args.includes.iter().cloned());
    for d in &includes {
        if !d.is_dir() {
            bail!(
                "include folder {} (from --include or the {}'s `include`) is not a folder",
                d.display(),
                manifest.origin
            );
        }
    }
    let source = Source::read_with(&manifest.source, &includes)?;
    check_signatures(&manifest, &source)?;
    let plan = expand(manifest)?;
    Ok((plan, source))
}

/// Drops repeated block shapes, warning with their labels (`16x16`).
fn warn_block_repeats(what: &str, blocks: &mut Vec<[u32; 3]>) {
    dedup_warn_by(what, blocks, |b| block_label(*b));
}

/// Every kernel exists (named as written: C++ names, template instances, overloads with their
/// parameter types) and takes as many arguments as the manifest passes, pointers where buffers
/// go.
fn check_signatures(m: &Manifest, source: &Source) -> Result<()> {
    for k in &m.kernels {
        let decl = source
            .kernel(&k.name)
            .with_context(|| format!("the {} lists kernel `{}`", m.origin, k.name))?;
        if decl.params.len() != k.args.len() {
            bail!(
                "kernel `{}` ({}) takes {} parameters but the {} passes {}: {}",
                k.name,
                decl.location(),
                decl.params.len(),
                m.origin,
                k.args.len(),
                decl.signature()
            );
        }
        for (i, (a, p)) in k.args.iter().zip(&decl.params).enumerate() {
            let is_buf = matches!(a, Arg::Buffer(_) | Arg::Null);
            if is_buf != p.is_pointer() {
                bail!(
                    "kernel `{}` argument {} (`{}`) is {} in the source but the {} passes {}",
                    k.name,
                    i + 1,
                    p.name,
                    if p.is_pointer() {
                        "a pointer"
                    } else {
                        "a scalar"
                    },
                    m.origin,
                    if is_buf {
                        "a buffer"
                    } else {
                        "a scalar or parameter"
                    }
                );
            }
        }
    }
    Ok(())
}

/// The sweep as text: what `--device cpu` prints.
pub fn describe(plan: &Plan) -> String {
    let m = &plan.manifest;
    let mut s = String::new();
    let _ = writeln!(s, "kernels from {} ({})", m.source.display(), m.origin);
    let _ = writeln!(
        s,
        "reference: {}{}",
        m.reference,
        if m.cpu_reference.is_some() {
            ", itself checked against a float64 CPU matmul"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "{} parameter sets, {} points (kernel x block x parameters)",
        plan.groups.len(),
        plan.points()
    );
    for g in &plan.groups {
        let bufs: Vec<String> = m
            .buffers
            .iter()
            .zip(&g.buffers)
            .map(|(b, sb)| format!("{} {}[{}]", b.name, b.dtype.name(), sb.len))
            .collect();
        let _ = writeln!(
            s,
            "\n{}: buffers {} ({:.1} MiB); flops {}; bytes {:.0}",
            Plan::label(&g.params),
            bufs.join(", "),
            g.total_bytes as f64 / (1 << 20) as f64,
            g.flops.map_or("-".into(), |f| format!("{f:.0}")),
            g.bytes_moved
        );
        for p in &g.points {
            let _ = writeln!(
                s,
                "  #{:<4} {:<24} block {:<8} grid {}x{}x{}  shared {} B",
                p.id,
                m.kernels[p.kernel].name,
                block_label(p.block),
                p.grid[0],
                p.grid[1],
                p.grid[2],
                p.shared_bytes
            );
        }
    }
    s
}

/// Every file flag kernel_bench writes, checked before anything runs: none replaces an input
/// or a file it did not write (the artifact's own check is `artifact::check_replace`).
fn check_outputs(args: &Args) -> Result<()> {
    use crate::cli::output::{self, Output};
    let report = args.report_path();
    let mut outs = vec![Output {
        flag: "--report",
        path: &report,
        what: "a kernel_bench report",
        ours: |b| output::starts_with(b, "opbench kernel_bench report"),
    }];
    if let Some(p) = &args.plan_json {
        outs.push(Output {
            flag: "--plan-json",
            path: p,
            what: "a kernel_bench plan (a JSON list of points)",
            ours: |b| {
                serde_json::from_slice::<Vec<serde_json::Value>>(b)
                    .is_ok_and(|v| v.iter().all(|p| p.get("kernel").is_some()))
            },
        });
    }
    if let Some(p) = &args.ncu_raw {
        outs.push(Output {
            flag: "--ncu-raw",
            path: p,
            what: "ncu's CSV output",
            ours: |b| output::starts_with(b, "\"ID\"") || output::starts_with(b, "==PROF=="),
        });
    }
    let mut inputs: Vec<&std::path::Path> = vec![&args.out];
    inputs.extend(args.manifest.as_deref());
    inputs.extend(args.source.as_deref());
    output::check_outputs(&outs, &inputs, args.overwrite)
}
