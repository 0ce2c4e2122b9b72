//! Correctness on the GPU: one launch on fresh inputs with poisoned outputs, read back, compared.

use super::launch::{launch, Buffers};
use crate::artifact::Correctness;
use crate::gpu::Gpu;
use crate::kernels::cpu_ref::{matmul_rows, pick_rows, select_rows, FULL_CHECK_MACS};
use crate::kernels::data::{errors, generate, to_f64};
use crate::kernels::manifest::{Manifest, Role};
use crate::kernels::sweep::{Group, Point};
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

/// Compares every written buffer with the reference's; the worst buffer (by error over its
/// tolerance) is reported.
pub fn compare(m: &Manifest, got: &Outputs, reference: &Outputs, against: &str) -> Correctness {
    let mut worst: Option<(f64, Correctness)> = None;
    for ((i, y), (_, r)) in got.iter().zip(reference) {
        let (max_abs, rel) = errors(y, r);
        let tol = m.buffers[*i].tolerance;
        let passed = rel <= tol;
        let score = if rel == f64::MAX {
            f64::INFINITY
        } else if tol > 0.0 {
            rel / tol
        } else if rel > 0.0 {
            f64::MAX
        } else {
            0.0
        };
        let c = Correctness {
            reference: format!("{against} (buffer {})", m.buffers[*i].name),
            max_abs_err: max_abs,
            rel_err: rel,
            tolerance: tol,
            passed,
        };
        if worst
            .as_ref()
            .is_none_or(|(s, w)| (w.passed && !passed) || (w.passed == passed && score > *s))
        {
            worst = Some((score, c));
        }
    }
    worst
        .map(|w| w.1)
        .expect("at least one output (manifest check)")
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
    let (max_abs, rel) = errors(&got, &want);
    let tol = m.buffers[ic].tolerance;
    Ok(Correctness {
        reference: format!("cpu_f64_matmul ({} of {mm} rows)", rows.len()),
        max_abs_err: max_abs,
        rel_err: rel,
        tolerance: tol,
        passed: rel <= tol,
    })
}
