//! Random inputs, the float64 CPU reference, and the error measures every point is judged by.

use super::{Dtype, Elem};
use crate::artifact::Correctness;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal, Uniform};

/// One problem's host inputs, already rounded to the element type the kernels read.
#[derive(Debug, Clone)]
pub struct Inputs<T> {
    pub rows: usize,
    pub cols: usize,
    pub x: Vec<T>,
    pub gamma: Vec<T>,
    pub beta: Vec<T>,
}

fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(32)
}

/// Runs `f(first_row, chunk)` over row chunks of `out` (`cols` wide) on all cores.
fn par_rows<U: Send>(out: &mut [U], cols: usize, f: impl Fn(usize, &mut [U]) + Sync) {
    let rows = out.len() / cols.max(1);
    let per = rows.div_ceil(threads()).max(1);
    std::thread::scope(|s| {
        for (i, chunk) in out.chunks_mut(per * cols).enumerate() {
            let f = &f;
            s.spawn(move || f(i * per, chunk));
        }
    });
}

impl<T: Elem> Inputs<T> {
    /// Fresh random inputs from `seed`: each row has its own offset in [-1, 1) and scale in
    /// [0.5, 2) over a normal draw, so mean and variance both matter; gamma is +-[0.5, 1.5),
    /// beta uniform in [-1, 1). Never zeros.
    pub fn random(rows: usize, cols: usize, seed: u64) -> Self {
        let mut master = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut x = vec![T::from_f64(0.0); rows * cols];
        let x_seed: u64 = master.random();
        par_rows(&mut x, cols, |first, chunk| {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(
                x_seed ^ (first as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            for row in chunk.chunks_mut(cols) {
                let offset: f64 = rng.random_range(-1.0..1.0);
                let scale: f64 = rng.random_range(0.5..2.0);
                for v in row {
                    let n: f64 = StandardNormal.sample(&mut rng);
                    *v = T::from_f64(offset + scale * n);
                }
            }
        });
        let mag = Uniform::new(0.5, 1.5).expect("valid range");
        let gamma = (0..cols)
            .map(|_| {
                let sign = if master.random::<bool>() { 1.0 } else { -1.0 };
                T::from_f64(sign * mag.sample(&mut master))
            })
            .collect();
        let beta = (0..cols)
            .map(|_| T::from_f64(master.random_range(-1.0..1.0)))
            .collect();
        Inputs {
            rows,
            cols,
            x,
            gamma,
            beta,
        }
    }

    /// y = (x - mean) / sqrt(var + eps) * gamma + beta in float64, two-pass mean and variance.
    pub fn reference(&self, eps: f32) -> Vec<f64> {
        let cols = self.cols;
        let mut y = vec![0f64; self.rows * cols];
        let eps = eps as f64;
        par_rows(&mut y, cols, |first, chunk| {
            for (r, out) in chunk.chunks_mut(cols).enumerate() {
                let row = &self.x[(first + r) * cols..(first + r + 1) * cols];
                let mean = row.iter().map(|v| v.to_f64()).sum::<f64>() / cols as f64;
                let var =
                    row.iter().map(|v| (v.to_f64() - mean).powi(2)).sum::<f64>() / cols as f64;
                let rstd = 1.0 / (var + eps).sqrt();
                for (c, o) in out.iter_mut().enumerate() {
                    *o = (row[c].to_f64() - mean) * rstd * self.gamma[c].to_f64()
                        + self.beta[c].to_f64();
                }
            }
        });
        y
    }
}

/// Compares `y` with the reference: max |y - ref| and ||y - ref||_2 / ||ref||_2 over the finite
/// outputs. A NaN or infinite output (an unwritten, poisoned element) is counted in
/// `non_finite` and fails the check.
pub fn compare<T: Elem>(y: &[T], reference: &[f64], dtype: Dtype) -> Correctness {
    assert_eq!(
        y.len(),
        reference.len(),
        "output and reference lengths differ"
    );
    let mut max_abs = 0f64;
    let mut diff2 = 0f64;
    let mut ref2 = 0f64;
    let mut non_finite = 0;
    for (v, r) in y.iter().zip(reference) {
        let v = v.to_f64();
        if !v.is_finite() {
            non_finite += 1;
            continue;
        }
        let d = (v - r).abs();
        max_abs = max_abs.max(d);
        diff2 += d * d;
        ref2 += r * r;
    }
    let (max_abs_err, rel_err) = (max_abs, (diff2 / ref2.max(f64::MIN_POSITIVE)).sqrt());
    let tolerance = super::dtype::tolerance(dtype);
    Correctness {
        reference: "cpu_f64".into(),
        max_abs_err,
        rel_err,
        tolerance,
        passed: non_finite == 0 && rel_err <= tolerance,
        non_finite,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn reference_matches_a_hand_computed_row() {
        // x = [1, 2, 3, 4]: mean 2.5, var 1.25; gamma 2, beta 1.
        let inp = Inputs::<f32> {
            rows: 1,
            cols: 4,
            x: vec![1.0, 2.0, 3.0, 4.0],
            gamma: vec![2.0; 4],
            beta: vec![1.0; 4],
        };
        let y = inp.reference(0.0);
        let s = 1.25f64.sqrt();
        let want = [
            -1.5 / s * 2.0 + 1.0,
            -0.5 / s * 2.0 + 1.0,
            0.5 / s * 2.0 + 1.0,
            1.5 / s * 2.0 + 1.0,
        ];
        for (a, b) in y.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }

    #[test]
    fn reference_is_stable_under_a_large_offset() {
        // E[x^2] - E[x]^2 in f32 would lose everything here; the two-pass f64 form does not.
        let inp = Inputs::<f32> {
            rows: 1,
            cols: 3,
            x: vec![10000.0, 10001.0, 10002.0],
            gamma: vec![1.0; 3],
            beta: vec![0.0; 3],
        };
        let y = inp.reference(0.0);
        let s = (2.0f64 / 3.0).sqrt();
        assert!(
            (y[0] + 1.0 / s).abs() < 1e-9 && y[1].abs() < 1e-12 && (y[2] - 1.0 / s).abs() < 1e-9
        );
    }

    #[test]
    fn each_row_is_normalized() {
        let inp = Inputs::<f32>::random(7, 1025, 1);
        let plain = Inputs {
            gamma: vec![1.0f32; 1025],
            beta: vec![0.0f32; 1025],
            ..inp
        };
        let y = plain.reference(1e-5);
        for row in y.chunks(1025) {
            let mean = row.iter().sum::<f64>() / 1025.0;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 1025.0;
            assert!(
                mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-4,
                "{mean} {var}"
            );
        }
    }

    #[test]
    fn random_inputs_are_fresh_nonzero_and_reproducible() {
        let a = Inputs::<bf16>::random(64, 100, 1);
        let b = Inputs::<bf16>::random(64, 100, 2);
        assert_ne!(a.x, b.x);
        assert_eq!(a.x, Inputs::<bf16>::random(64, 100, 1).x);
        assert!(a.gamma.iter().all(|g| g.to_f64().abs() >= 0.49));
        assert!(a.beta.iter().any(|b| b.to_f64() != 0.0));
        assert!(a.x.iter().filter(|v| v.to_f64() == 0.0).count() < 10);
        // Rows differ in offset: their means spread over [-1, 1).
        let means: Vec<f64> =
            a.x.chunks(100)
                .map(|r| r.iter().map(|v| v.to_f64()).sum::<f64>() / 100.0)
                .collect();
        let spread = means.iter().cloned().fold(f64::MIN, f64::max)
            - means.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread > 0.5, "{spread}");
    }

    #[test]
    fn compare_passes_rounded_outputs_and_fails_wrong_or_poisoned_ones() {
        let inp = Inputs::<f16>::random(16, 256, 3);
        let r = inp.reference(1e-5);
        let rounded: Vec<f16> = r.iter().map(|&v| f16::from_f64(v)).collect();
        let ok = compare(&rounded, &r, Dtype::F16);
        assert!(ok.passed && ok.rel_err > 0.0 && ok.rel_err < 1e-3, "{ok:?}");
        let mut wrong = rounded.clone();
        for v in wrong.iter_mut().take(256) {
            *v = f16::from_f64(v.to_f64() + 1.0);
        }
        assert!(!compare(&wrong, &r, Dtype::F16).passed);
        let mut poisoned = rounded;
        poisoned[4095] = f16::from_bits(0xFFFF);
        let c = compare(&poisoned, &r, Dtype::F16);
        assert!(
            !c.passed && c.non_finite == 1 && c.rel_err.is_finite(),
            "{c:?}"
        );
    }

    #[test]
    fn f32_tolerance_catches_a_biased_variance() {
        // The population variance vs the sample variance (n-1): a classic slip.
        let inp = Inputs::<f32>::random(8, 64, 4);
        let r = inp.reference(1e-5);
        let biased: Vec<f32> = r
            .iter()
            .map(|&v| (v * (63.0f64 / 64.0).sqrt()) as f32)
            .collect();
        assert!(!compare(&biased, &r, Dtype::F32).passed);
    }
}
