//! How much memory a GEMM point needs, in checked arithmetic, and the refusals that name the
//! flag and shape when a point is too large to count or to fit.

use super::plan::Point;
use super::shapes::{Shape, ShapeSet};
use anyhow::{bail, Result};

/// Workspace left for cuBLAS and candle on the device.
const LIBRARY_WORKSPACE_BYTES: usize = 64 << 20;

/// The flag a shape came from, for messages.
pub fn flag_of(shape: &Shape) -> &'static str {
    match shape.set {
        ShapeSet::Square => "--square",
        ShapeSet::Axes => "--m/--n/--k",
        ShapeSet::Model => "--tokens",
    }
}

/// (M*K, K*N, M*N), or None when one of them does not fit in a machine word.
fn elements(m: usize, n: usize, k: usize) -> Option<(usize, usize, usize)> {
    Some((m.checked_mul(k)?, k.checked_mul(n)?, m.checked_mul(n)?))
}

/// Device memory one point needs: A and B, two outputs (ours and candle's), the f32 draw that
/// 16-bit inputs are rounded from, and 64 MiB for library workspaces. None: it overflows.
pub fn device_bytes_needed(m: usize, n: usize, k: usize, elem_bytes: usize) -> Option<usize> {
    let (mk, kn, mn) = elements(m, n, k)?;
    let operands = mk.checked_add(kn)?.checked_add(mn.checked_mul(2)?)?;
    elem_bytes
        .checked_mul(operands)?
        .checked_add(mk.max(kn).checked_mul(4)?)?
        .checked_add(LIBRARY_WORKSPACE_BYTES)
}

/// Host memory one point needs at its peak: A, B and C in the dtype, plus up to two f32
/// copies of each (the random draw, the values read back for the checks). None: it overflows.
pub fn host_bytes_needed(m: usize, n: usize, k: usize, elem_bytes: usize) -> Option<usize> {
    let (mk, kn, mn) = elements(m, n, k)?;
    mk.checked_add(kn)?
        .checked_add(mn)?
        .checked_mul(elem_bytes.checked_add(8)?)
}

/// Refuses a point whose sizes overflow 64-bit byte counts (no allocation could hold it).
pub fn check_countable(p: &Point) -> Result<()> {
    let e = p.dtype.size_bytes();
    let (m, n, k) = (p.shape.m, p.shape.n, p.shape.k);
    if host_bytes_needed(m, n, k, e).is_none() || device_bytes_needed(m, n, k, e).is_none() {
        bail!(
            "{}: shape {} (MxNxK) in {} is too large: its byte count does not fit in 64 bits; \
             give sizes whose matrices fit in memory",
            flag_of(&p.shape),
            p.shape.label(),
            p.dtype.name()
        );
    }
    Ok(())
}

const GB: f64 = 1e9;

/// Refuses, before anything is allocated, a point whose host memory need exceeds
/// `available` bytes.
pub fn check_fits_host(p: &Point, available: u64) -> Result<()> {
    let (m, n, k, d) = (p.shape.m, p.shape.n, p.shape.k, p.dtype);
    let need = host_bytes_needed(m, n, k, d.size_bytes()).unwrap_or(usize::MAX);
    if need as u64 > available {
        bail!(
            "{}: shape {} (MxNxK) in {} needs about {:.1} GB of host memory (A, B and C with \
             their f32 copies: {need} bytes), but {:.1} GB ({available} bytes) is available: \
             give a smaller size",
            flag_of(&p.shape),
            p.shape.label(),
            d.name(),
            need as f64 / GB,
            available as f64 / GB
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::dtype::Dtype;

    fn point(s: usize, set: ShapeSet) -> Point {
        Point {
            shape: Shape::new(s, s, s, set),
            dtype: Dtype::F32,
            impls: Vec::new(),
            cold: false,
        }
    }

    #[test]
    fn device_estimate() {
        // 8192^3 f32: A, B, 2 outputs of 256 MiB, a 256 MiB draw, 64 MiB workspace.
        assert_eq!(
            device_bytes_needed(8192, 8192, 8192, 4),
            Some((5 * 256 + 64) << 20)
        );
        // lm_head at one token: B (131 MB) and its f32 draw (262 MB) dominate.
        assert!(device_bytes_needed(1, 32000, 2048, 2).unwrap() < 512 << 20);
    }

    #[test]
    fn sizes_that_overflow_are_refused_with_the_flag_and_shape() {
        assert_eq!(
            host_bytes_needed(99_999_999_999, 99_999_999_999, 99_999_999_999, 4),
            None
        );
        assert_eq!(device_bytes_needed(1 << 40, 1 << 40, 1, 2), None);
        let e = format!(
            "{:#}",
            check_countable(&point(99_999_999_999, ShapeSet::Square)).unwrap_err()
        );
        assert!(
            e.starts_with("--square: shape 99999999999x99999999999x99999999999"),
            "{e}"
        );
        check_countable(&point(30_000, ShapeSet::Square)).unwrap();
    }

    #[test]
    fn points_larger_than_the_available_memory_are_refused_with_both_numbers() {
        // 30000^3 f32: three 3.6 GB matrices at 12 bytes per element.
        let need = host_bytes_needed(30_000, 30_000, 30_000, 4).unwrap();
        assert_eq!(need, 3 * 900_000_000 * 12);
        let e = format!(
            "{:#}",
            check_fits_host(&point(30_000, ShapeSet::Axes), 16_000_000_000).unwrap_err()
        );
        assert!(e.contains("--m/--n/--k: shape 30000x30000x30000"), "{e}");
        assert!(e.contains("32.4 GB") && e.contains("16.0 GB"), "{e}");
        check_fits_host(&point(1024, ShapeSet::Square), 16_000_000_000).unwrap();
    }
}
