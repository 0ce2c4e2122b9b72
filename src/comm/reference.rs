//! The host reference every collective result is checked against: fresh random inputs per rank
//! (never zeros), stored in the run's element type, and the expected output of each collective
//! computed in float64 from exactly those stored values.

use super::Collective;
use crate::dtype::Dtype;
use anyhow::{bail, Result};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// The element types `comm_bench` moves.
pub const DTYPES: [Dtype; 2] = [Dtype::F32, Dtype::Bf16];

/// A value as `dtype` stores it.
pub fn stored(dtype: Dtype, v: f64) -> f64 {
    match dtype {
        Dtype::Bf16 => half::bf16::from_f64(v).to_f64(),
        Dtype::F16 => half::f16::from_f64(v).to_f64(),
        _ => v as f32 as f64,
    }
}

/// Unit roundoff of a floating type: half the gap between 1 and the next value.
fn unit_roundoff(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Bf16 => 2f64.powi(-8),
        Dtype::F16 => 2f64.powi(-11),
        Dtype::F64 => 2f64.powi(-53),
        _ => 2f64.powi(-24),
    }
}

/// Rank `rank`'s input of `len` elements: uniform in [-1, -1/8] and [1/8, 1], so no element
/// is zero or close to it; seeded by `seed` and the rank.
pub fn rank_input(seed: u64, rank: usize, len: usize, dtype: Dtype) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed ^ (rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (0..len)
        .map(|_| {
            let m: f64 = rng.random_range(0.125..1.0);
            stored(dtype, if rng.random_bool(0.5) { m } else { -m })
        })
        .collect()
}

/// What rank `rank` must hold after the collective, in float64, and the magnitude each element
/// is judged against (the sum of the absolute values that went into it).
pub fn expected(
    c: Collective,
    inputs: &[Vec<f64>],
    rank: usize,
    root: usize,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let world = inputs.len();
    if world < 2 || rank >= world || root >= world {
        bail!("rank {rank} and root {root} of {world} ranks");
    }
    let len = inputs[0].len();
    if inputs.iter().any(|v| v.len() != len) {
        bail!("the ranks' inputs differ in length");
    }
    let sums = |range: std::ops::Range<usize>| {
        let sum: Vec<f64> = range
            .clone()
            .map(|i| inputs.iter().map(|v| v[i]).sum())
            .collect();
        let mag: Vec<f64> = range
            .map(|i| inputs.iter().map(|v| v[i].abs()).sum())
            .collect();
        (sum, mag)
    };
    Ok(match c {
        Collective::AllReduce => sums(0..len),
        Collective::ReduceScatter => {
            if !len.is_multiple_of(world) {
                bail!("reduce_scatter of {len} elements over {world} ranks");
            }
            let chunk = len / world;
            sums(rank * chunk..(rank + 1) * chunk)
        }
        Collective::AllGather => {
            let out: Vec<f64> = inputs.iter().flatten().copied().collect();
            let mag = out.iter().map(|x| x.abs()).collect();
            (out, mag)
        }
        Collective::Broadcast => {
            let out = inputs[root].clone();
            let mag = out.iter().map(|x| x.abs()).collect();
            (out, mag)
        }
    })
}

/// How a rank's output compares with the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Largest |got - expected| / magnitude over the finite outputs.
    pub max_rel_err: f64,
    /// The bound it was judged by.
    pub tolerance: f64,
    /// Outputs that were NaN or infinite.
    pub non_finite: usize,
    pub passed: bool,
}

/// The bound for `c` over `world` ranks in `dtype`: a copy must be exact; a sum of `world`
/// stored values, added one rank at a time with a rounding to `dtype` after each addition,
/// errs by at most `world` unit roundoffs of the magnitude (and once more for the final
/// rounding).
pub fn tolerance(c: Collective, dtype: Dtype, world: usize) -> f64 {
    match c {
        Collective::AllGather | Collective::Broadcast => 0.0,
        Collective::AllReduce | Collective::ReduceScatter => {
            (world as f64 + 1.0) * unit_roundoff(dtype)
        }
    }
}

/// Checks `got` against `expected` with the magnitudes from [`expected`].
pub fn check(
    c: Collective,
    dtype: Dtype,
    world: usize,
    got: &[f64],
    expected: &[f64],
    magnitude: &[f64],
) -> Check {
    let tolerance = tolerance(c, dtype, world);
    let mut non_finite = got.len().abs_diff(expected.len());
    let mut max_rel_err: f64 = 0.0;
    for ((g, e), m) in got.iter().zip(expected).zip(magnitude) {
        if !g.is_finite() {
            non_finite += 1;
            continue;
        }
        max_rel_err = max_rel_err.max((g - e).abs() / m.max(f64::MIN_POSITIVE));
    }
    Check {
        max_rel_err,
        tolerance,
        non_finite,
        passed: non_finite == 0 && max_rel_err <= tolerance,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(world: usize, len: usize, dtype: Dtype) -> Vec<Vec<f64>> {
        (0..world).map(|r| rank_input(7, r, len, dtype)).collect()
    }

    #[test]
    fn inputs_are_fresh_per_rank_stored_and_never_near_zero() {
        let v = inputs(2, 1000, Dtype::Bf16);
        assert_ne!(v[0], v[1]);
        assert!(v
            .iter()
            .flatten()
            .all(|x| x.abs() >= 0.12 && x.abs() <= 1.0));
        assert!(v.iter().flatten().all(|x| stored(Dtype::Bf16, *x) == *x));
        assert_ne!(
            rank_input(8, 0, 10, Dtype::F32),
            rank_input(7, 0, 10, Dtype::F32)
        );
    }

    #[test]
    fn references_by_hand() {
        let ins = vec![vec![1.0, 2.0, 3.0, 4.0], vec![10.0, -20.0, 30.0, -40.0]];
        let (ar, mag) = expected(Collective::AllReduce, &ins, 1, 0).unwrap();
        assert_eq!(ar, vec![11.0, -18.0, 33.0, -36.0]);
        assert_eq!(mag, vec![11.0, 22.0, 33.0, 44.0]);
        let (rs, _) = expected(Collective::ReduceScatter, &ins, 1, 0).unwrap();
        assert_eq!(rs, vec![33.0, -36.0]);
        let (ag, _) = expected(Collective::AllGather, &ins, 0, 0).unwrap();
        assert_eq!(ag, vec![1.0, 2.0, 3.0, 4.0, 10.0, -20.0, 30.0, -40.0]);
        let (bc, _) = expected(Collective::Broadcast, &ins, 0, 1).unwrap();
        assert_eq!(bc, ins[1]);
        assert!(expected(
            Collective::ReduceScatter,
            &[vec![1.0; 3], vec![1.0; 3]],
            0,
            0
        )
        .is_err());
    }

    #[test]
    fn a_sum_rounded_in_bf16_passes_and_a_wrong_one_fails() {
        let world = 4;
        let ins = inputs(world, 4096, Dtype::Bf16);
        let (want, mag) = expected(Collective::AllReduce, &ins, 0, 0).unwrap();
        // A ring that rounds to bf16 after every addition, as a bf16 collective does.
        let ring: Vec<f64> = (0..4096)
            .map(|i| {
                ins.iter()
                    .fold(0.0, |acc, v| stored(Dtype::Bf16, acc + v[i]))
            })
            .collect();
        let ok = check(
            Collective::AllReduce,
            Dtype::Bf16,
            world,
            &ring,
            &want,
            &mag,
        );
        assert!(ok.passed, "{ok:?}");
        assert!(ok.max_rel_err > 0.0);
        // One element off by 5% of its magnitude fails; so does one NaN.
        let mut bad = ring.clone();
        bad[17] += 0.05 * mag[17];
        assert!(!check(Collective::AllReduce, Dtype::Bf16, world, &bad, &want, &mag).passed);
        let mut nan = ring;
        nan[3] = f64::NAN;
        let c = check(Collective::AllReduce, Dtype::Bf16, world, &nan, &want, &mag);
        assert_eq!((c.passed, c.non_finite), (false, 1));
    }

    #[test]
    fn copies_must_be_exact() {
        let ins = inputs(2, 8, Dtype::F32);
        let (want, mag) = expected(Collective::AllGather, &ins, 0, 0).unwrap();
        assert!(check(Collective::AllGather, Dtype::F32, 2, &want, &want, &mag).passed);
        let mut off = want.clone();
        off[5] = stored(Dtype::F32, off[5] * (1.0 + 1e-6));
        assert!(!check(Collective::AllGather, Dtype::F32, 2, &off, &want, &mag).passed);
    }
}
