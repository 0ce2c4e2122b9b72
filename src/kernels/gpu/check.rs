//! Correctness on the GPU: one launch on fresh inputs with poisoned outputs, read back, each
//! output compared with its own tolerance.

use super::launch::{launch, Buffers};
use crate::artifact::Correctness;
use crate::gpu::Gpu;
use crate::kernels::cpu_ref::{matmul_rows, pick_rows, select_rows, FULL_CHECK_MACS};
use crate::kernels::data::{errors, generate, to_f64};
use crate::kernels::manifest::{Manifest, Role};
use crate::kernels::sweep::{ArgValue, Group, Point};
use anyhow::{bail, Result};
use cudarc::driver::CudaFunction;
use rand::Rng;

/// The written buffers of one launch, as (buffer index, values).
pub type Outputs = Vec<(usize, Vec<f64>)>;

/// Fresh host contents for every input and inout buffer (None for outputs).
pub fn fresh_inputs(m: &Manifest, g: &Group, rng: &mut impl Rng) -> Result<Vec<Option<Vec<u8>>>> {
    m.buffers
        .iter()
        .zip(&g.buffers)
        .map(|(b, s)| match b.role {
            Role::Output => Ok(None),
            _ => generate(b.dtype, s.len, b.init, rng).map(Some),
        })
        .collect()
}

/// Uploads inputs once per parameter set.
pub fn upload_inputs(gpu: &Gpu, bufs: &mut Buffers, host: &[Option<Vec<u8>>]) -> Result<()> {
    for (i, h) in host.iter().enumerate() {
        if let Some(bytes) = h {
            bufs.upload(gpu, i, bytes)?;
        }
    }
    Ok(())
}

/// Resets inouts, poisons outputs, launches once, waits, and reads the written buffers back.
pub fn run_once(
    gpu: &Gpu,
    f: &CudaFunction,
    p: &Point,
    m: &Manifest,
    bufs: &mut Buffers,
    host: &[Option<Vec<u8>>],
) -> Result<Outputs> {
    prepare(gpu, m, bufs, host)?;
    launch(gpu, f, p, &bufs.ptrs)?;
    gpu.synchronize()?;
    let mut out = Vec::new();
    for (i, b) in m.buffers.iter().enumerate() {
        if b.role != Role::Input {
            out.push((i, to_f64(b.dtype, &bufs.download(gpu, i)?)));
        }
    }
    Ok(out)
}

/// Resets inouts to their fresh contents and poisons outputs.
pub fn prepare(
    gpu: &Gpu,
    m: &Manifest,
    bufs: &mut Buffers,
    host: &[Option<Vec<u8>>],
) -> Result<()> {
    for (i, b) in m.buffers.iter().enumerate() {
        match b.role {
            Role::Input => {}
            Role::Output => bufs.poison(gpu, i)?,
            Role::Inout => bufs.upload(gpu, i, host[i].as_deref().expect("inout has data"))?,
        }
    }
    Ok(())
}

/// The buffers a point passes to its kernel (null pointers and scalars left out).
pub fn used_buffers(p: &Point) -> Vec<usize> {
    p.args
        .iter()
        .filter_map(|a| match a {
            ArgValue::Buffer(i) => Some(*i),
            _ => None,
        })
        .collect()
}

/// Whether a buffer read back is still entirely poisoned: the kernel did not write it.
fn unwritten(values: &[f64]) -> bool {
    !values.is_empty() && values.iter().all(|v| v.is_nan())
}

/// Compares each written buffer the kernel was given (`used`) with the reference's, each
/// against its own tolerance. An optional output left unwritten by the kernel, or by the
/// reference, is skipped. Returns the worst buffer's result (by error over its tolerance) and
/// one line listing every buffer's outcome.
pub fn compare(
    m: &Manifest,
    got: &Outputs,
    reference: &Outputs,
    against: &str,
    used: &[usize],
) -> (Correctness, String) {
    let mut worst: Option<(f64, Correctness)> = None;
    let mut lines = Vec::new();
    for ((i, y), (_, r)) in got.iter().zip(reference) {
        let b = &m.buffers[*i];
        if !used.contains(i) {
            continue;
        }
        if b.optional && unwritten(y) {
            lines.push(format!("{} not written (optional)", b.name));
            continue;
        }
        if b.optional && unwritten(r) {
            lines.push(format!(
                "{} not compared (the reference did not write it)",
                b.name
            ));
            continue;
        }
        let (max_abs, rel, non_finite) = errors(y, r);
        let tol = b.tolerance;
        let passed = non_finite == 0 && rel <= tol;
        lines.push(if non_finite > 0 {
            format!(
                "{} holds {non_finite} NaN/inf (unwritten or invalid)",
                b.name
            )
        } else {
            format!("{} rel_err {rel:.2e} (tolerance {tol:.0e})", b.name)
        });
        let score = if non_finite > 0 {
            f64::INFINITY
        } else if tol > 0.0 {
            rel / tol
        } else if rel > 0.0 {
            f64::MAX
        } else {
            0.0
        };
        let c = Correctness {
            reference: format!("{against} (buffer {})", b.name),
            max_abs_err: max_abs,
            rel_err: rel,
            tolerance: tol,
            passed,
            non_finite,
        };
        if worst
            .as_ref()
            .is_none_or(|(s, w)| (w.passed && !passed) || (w.passed == passed && score > *s))
        {
            worst = Some((score, c));
        }
    }
    let detail = format!("outputs checked against {against}: {}", lines.join("; "));
    let c = worst.map(|w| w.1).unwrap_or_else(|| Correctness {
        reference: format!("{against}: no output buffer of this kernel could be compared"),
        max_abs_err: 0.0,
        rel_err: 0.0,
        tolerance: 0.0,
        passed: false,
        non_finite: 0,
    });
    (c, detail)
}

/// Checks the reference kernel's C against a float64 CPU matmul of its A and B (all rows, or a
/// random subset past `FULL_CHECK_MACS` multiply-adds).
pub fn cpu_matmul(
    m: &Manifest,
    g: &Group,
    host: &[Option<Vec<u8>>],
    reference: &Outputs,
    rng: &mut impl Rng,
) -> Result<Correctness> {
    let (ins, outs) = m.matmul_buffers();
    let (ia, ib, ic) = (ins[0], ins[1], outs[0]);
    let (mm, nn, kk) = (
        g.params["M"] as usize,
        g.params["N"] as usize,
        g.params["K"] as usize,
    );
    for (i, want, expr) in [
        (ia, mm * kk, "M*K"),
        (ib, kk * nn, "K*N"),
        (ic, mm * nn, "M*N"),
    ] {
        if g.buffers[i].len != want {
            bail!(
                "cpu_reference = \"matmul\": buffer `{}` has {} elements but {expr} = {want}",
                m.buffers[i].name,
                g.buffers[i].len
            );
        }
    }
    let a = to_f64(m.buffers[ia].dtype, host[ia].as_deref().expect("input"));
    let b = to_f64(m.buffers[ib].dtype, host[ib].as_deref().expect("input"));
    let rows = pick_rows(mm, nn, kk, FULL_CHECK_MACS, rng);
    let want = matmul_rows(&a, &b, nn, kk, &rows);
    let c = &reference
        .iter()
        .find(|(i, _)| *i == ic)
        .expect("output read")
        .1;
    let got = select_rows(c, nn, &rows);
    let (max_abs, rel, non_finite) = errors(&got, &want);
    let tol = m.buffers[ic].tolerance;
    Ok(Correctness {
        reference: format!("cpu_f64_matmul ({} of {mm} rows)", rows.len()),
        max_abs_err: max_abs,
        rel_err: rel,
        tolerance: tol,
        passed: non_finite == 0 && rel <= tol,
        non_finite,
    })
}
