//! Float64 CPU references that check the reference kernel itself (today: matmul).

use rand::seq::index::sample;
use rand::Rng;

/// Multiply-adds above which only a random subset of rows is checked (about 1 s on 16 cores).
pub const FULL_CHECK_MACS: u64 = 1 << 31;

/// Which rows of C[M×N] = A[M×K]·B[K×N] to check: all of them when the product is small,
/// otherwise a sorted random subset sized to `budget_macs` multiply-adds (at least one row).
pub fn pick_rows(m: usize, n: usize, k: usize, budget_macs: u64, rng: &mut impl Rng) -> Vec<usize> {
    let per_row = (n as u64).saturating_mul(k as u64).max(1);
    let want = (budget_macs / per_row).max(1) as usize;
    if want >= m {
        return (0..m).collect();
    }
    let mut rows = sample(rng, m, want).into_vec();
    rows.sort_unstable();
    rows
}

/// Rows `rows` of A·B in float64 (row-major A[M×K], B[K×N]), spread over the CPU's cores.
/// Returns `rows.len() × n` values.
pub fn matmul_rows(a: &[f64], b: &[f64], n: usize, k: usize, rows: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; rows.len() * n];
    if rows.is_empty() || n == 0 {
        return out;
    }
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = rows.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (chunk_rows, chunk_out) in rows.chunks(per).zip(out.chunks_mut(per * n)) {
            s.spawn(move || {
                for (r, c_row) in chunk_rows.iter().zip(chunk_out.chunks_mut(n)) {
                    let a_row = &a[r * k..(r + 1) * k];
                    for (kk, &av) in a_row.iter().enumerate() {
                        let b_row = &b[kk * n..(kk + 1) * n];
                        for (c, &bv) in c_row.iter_mut().zip(b_row) {
                            *c += av * bv;
                        }
                    }
                }
            });
        }
    });
    out
}

/// The same rows picked out of a full M×N result.
pub fn select_rows(c: &[f64], n: usize, rows: &[usize]) -> Vec<f64> {
    rows.iter()
        .flat_map(|r| c[r * n..(r + 1) * n].iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn matmul_matches_hand_computed() {
        // A = [[1, 2], [3, 4], [5, 6]] (3×2), B = [[1, 0, 2], [0, 1, 3]] (2×3)
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [1.0, 0.0, 2.0, 0.0, 1.0, 3.0];
        let c = matmul_rows(&a, &b, 3, 2, &[0, 1, 2]);
        assert_eq!(c, [1.0, 2.0, 8.0, 3.0, 4.0, 18.0, 5.0, 6.0, 28.0]);
        assert_eq!(matmul_rows(&a, &b, 3, 2, &[2]), [5.0, 6.0, 28.0]);
        assert_eq!(select_rows(&c, 3, &[1]), [3.0, 4.0, 18.0]);
    }

    #[test]
    fn rows_are_sampled_only_past_the_budget() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        assert_eq!(pick_rows(64, 64, 64, 1 << 20, &mut rng).len(), 64);
        let r = pick_rows(4096, 4096, 4096, 1 << 31, &mut rng);
        assert_eq!(r.len(), 128);
        assert!(r.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(pick_rows(10, 1 << 20, 1 << 20, 1, &mut rng).len(), 1);
    }
}
