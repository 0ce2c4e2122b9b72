//! Correctness: error statistics of an output against a reference, the pass rule per dtype,
//! and the float64 CPU reference for a sample of rows.

use crate::artifact::Correctness;

/// How far an output is from a reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrStats {
    /// max |out - ref| over the finite outputs (NaN/inf ones are counted in `non_finite`).
    pub max_abs_err: f64,
    /// ||out - ref||_2 / ||ref||_2 over the finite outputs.
    pub rel_err: f64,
    /// max |ref|, the scale the max-error rule is judged against.
    pub ref_max_abs: f64,
    /// Outputs that are NaN or infinite (poisoned 0xFF bytes read back as NaN).
    pub non_finite: usize,
    pub len: usize,
}

/// Running sums of a comparison; partial sums from threads merge.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    d2: f64,
    r2: f64,
    max_abs: f64,
    ref_max: f64,
    bad: usize,
    len: usize,
}

impl Acc {
    fn add(&mut self, o: f32, r: f64) {
        self.len += 1;
        self.ref_max = self.ref_max.max(r.abs());
        self.r2 += r * r;
        if !o.is_finite() {
            self.bad += 1;
            return;
        }
        let d = o as f64 - r;
        self.d2 += d * d;
        self.max_abs = self.max_abs.max(d.abs());
    }

    fn merge(mut self, o: Acc) -> Acc {
        self.d2 += o.d2;
        self.r2 += o.r2;
        self.max_abs = self.max_abs.max(o.max_abs);
        self.ref_max = self.ref_max.max(o.ref_max);
        self.bad += o.bad;
        self.len += o.len;
        self
    }

    fn finish(self) -> ErrStats {
        let (rel_err, max_abs_err) = if self.r2 > 0.0 {
            ((self.d2 / self.r2).sqrt(), self.max_abs)
        } else {
            // An all-zero reference: only an all-zero output matches.
            (if self.d2 > 0.0 { f64::MAX } else { 0.0 }, self.max_abs)
        };
        ErrStats {
            max_abs_err,
            rel_err,
            ref_max_abs: self.ref_max,
            non_finite: self.bad,
            len: self.len,
        }
    }
}

/// Compares `out` with `reference` element by element (same length), in f64.
pub fn compare(out: &[f32], reference: &[f64]) -> ErrStats {
    assert_eq!(out.len(), reference.len(), "compare: lengths differ");
    let mut acc = Acc::default();
    for (&o, &r) in out.iter().zip(reference) {
        acc.add(o, r);
    }
    acc.finish()
}

/// [`compare`] with an f32 reference, split over threads for big matrices.
pub fn compare_f32(out: &[f32], reference: &[f32]) -> ErrStats {
    assert_eq!(out.len(), reference.len(), "compare_f32: lengths differ");
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16);
    let per = out.len().div_ceil(threads).max(1 << 20);
    std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks(per)
            .zip(reference.chunks(per))
            .map(|(o, r)| {
                s.spawn(move || {
                    let mut acc = Acc::default();
                    for (&ov, &rv) in o.iter().zip(r) {
                        acc.add(ov, rv as f64);
                    }
                    acc
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("comparison thread"))
            .fold(Acc::default(), Acc::merge)
    })
    .finish()
}

/// Max error allowed, as a multiple of `tolerance * max|ref|`: catches a small wrong region
/// (one bad tile) that the norm-wise error would average away.
pub const MAX_ERR_FACTOR: f64 = 4.0;

/// Applies the pass rule: every output finite, rel_err <= tolerance, and
/// max_abs_err <= MAX_ERR_FACTOR * tolerance * max|ref|.
pub fn judge(stats: &ErrStats, tolerance: f64, reference: &str) -> Correctness {
    let passed = stats.non_finite == 0
        && stats.rel_err <= tolerance
        && stats.max_abs_err <= MAX_ERR_FACTOR * tolerance * stats.ref_max_abs;
    Correctness {
        reference: reference.to_string(),
        max_abs_err: stats.max_abs_err,
        rel_err: stats.rel_err,
        tolerance,
        passed,
        non_finite: stats.non_finite,
    }
}

/// Which rows of C the float64 reference covers: all when M <= count, else the first, the
/// last and evenly spread rows between (deterministic, so a failure can be reproduced).
pub fn sample_rows(m: usize, count: usize) -> Vec<usize> {
    if m <= count {
        return (0..m).collect();
    }
    let count = count.max(2);
    // Evenly spread, interior rows shifted by a varying odd offset so they land at different
    // positions inside the kernels' row tiles (not all on tile boundaries).
    let mut rows: Vec<usize> = (0..count)
        .map(|i| {
            let r = i * (m - 1) / (count - 1);
            if i == 0 || i + 1 == count {
                r
            } else {
                (r + 13 * i) % (m - 1)
            }
        })
        .collect();
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// C[rows, :] = A[rows, :] * B in float64. `a_rows` holds the chosen rows of A (row-major,
/// `k` each), `b` is K x N row-major. Returns rows.len() * n values. Threads over rows.
pub fn reference_rows_f64(a_rows: &[f32], b: &[f32], n: usize, k: usize) -> Vec<f64> {
    assert_eq!(b.len(), k * n, "B must be K x N");
    assert_eq!(a_rows.len() % k, 0, "A rows must be K long");
    let nrows = a_rows.len() / k;
    let mut out = vec![0.0f64; nrows * n];
    std::thread::scope(|s| {
        for (a, c) in a_rows.chunks(k).zip(out.chunks_mut(n)) {
            s.spawn(move || {
                for (kk, &av) in a.iter().enumerate() {
                    let av = av as f64;
                    let brow = &b[kk * n..(kk + 1) * n];
                    for (cv, &bv) in c.iter_mut().zip(brow) {
                        *cv += av * bv as f64;
                    }
                }
            });
        }
    });
    out
}

/// Picks the listed rows out of a row-major matrix with `cols` columns.
pub fn gather_rows(mat: &[f32], cols: usize, rows: &[usize]) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows.len() * cols);
    for &r in rows {
        out.extend_from_slice(&mat[r * cols..(r + 1) * cols]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_match_passes_and_nan_fails() {
        let r = vec![1.0, -2.0, 3.0];
        let s = compare(&[1.0, -2.0, 3.0], &r);
        assert_eq!(s.rel_err, 0.0);
        assert!(judge(&s, 1e-5, "x").passed);
        let s = compare(&[1.0, f32::NAN, 3.0], &r);
        assert_eq!((s.non_finite, s.rel_err), (1, 0.0));
        let c = judge(&s, 1e-2, "x");
        assert!(!c.passed && c.non_finite == 1, "{c:?}");
    }

    #[test]
    fn relative_error_is_normwise() {
        // ref norm 5 (3, 4); error (0.03, 0.04) has norm 0.05: rel 1e-2.
        let s = compare(&[3.03, 4.04], &[3.0, 4.0]);
        assert!((s.rel_err - 1e-2).abs() < 1e-6, "{}", s.rel_err);
        assert!(judge(&s, 2e-2, "x").passed);
        assert!(!judge(&s, 5e-3, "x").passed);
    }

    #[test]
    fn one_bad_element_fails_the_max_rule() {
        // 10000 exact values and one off by 10% of the max: the norm-wise error is tiny
        // (about 1e-3) but the max rule catches it.
        let reference: Vec<f64> = (0..10001).map(|i| 1.0 + (i % 7) as f64).collect();
        let mut out: Vec<f32> = reference.iter().map(|&v| v as f32).collect();
        out[5000] += 0.7;
        let s = compare(&out, &reference);
        assert!(s.rel_err < 1e-2);
        assert!(!judge(&s, 1e-2, "x").passed);
    }

    #[test]
    fn threaded_compare_matches_plain() {
        let n = 3 << 20;
        let reference: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 - 500.0).collect();
        let out: Vec<f32> = reference
            .iter()
            .enumerate()
            .map(|(i, v)| v + if i % 3 == 0 { 0.01 } else { 0.0 })
            .collect();
        let a = compare_f32(&out, &reference);
        let r64: Vec<f64> = reference.iter().map(|&v| v as f64).collect();
        let b = compare(&out, &r64);
        assert!((a.rel_err - b.rel_err).abs() <= 1e-12 * b.rel_err.max(1e-30));
        assert_eq!(a.max_abs_err, b.max_abs_err);
        assert_eq!(a.ref_max_abs, b.ref_max_abs);
        let mut poisoned = out.clone();
        poisoned[n - 1] = f32::NAN;
        assert_eq!(compare_f32(&poisoned, &reference).non_finite, 1);
    }

    #[test]
    fn reference_rows_match_a_hand_product() {
        // A = [[1,2],[3,4],[5,6]] (3x2), B = [[1,0,2],[0,1,3]] (2x3).
        let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [1.0f32, 0.0, 2.0, 0.0, 1.0, 3.0];
        let rows = [0usize, 2];
        let ar = gather_rows(&a, 2, &rows);
        let c = reference_rows_f64(&ar, &b, 3, 2);
        assert_eq!(c, vec![1.0, 2.0, 8.0, 5.0, 6.0, 28.0]);
    }

    #[test]
    fn sampled_rows_include_both_ends() {
        assert_eq!(sample_rows(5, 16), vec![0, 1, 2, 3, 4]);
        let r = sample_rows(4096, 16);
        assert_eq!(r[0], 0);
        assert_eq!(*r.last().unwrap(), 4095);
        assert!(r.len() >= 10 && r.len() <= 16);
        assert!(r.windows(2).all(|w| w[0] < w[1]));
    }
}
