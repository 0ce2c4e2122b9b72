//! The host reference every collective result is checked against: fresh random inputs per rank
//! (never zeros), stored in the run's element type, and the expected output of each collective
//! computed in float64 from exactly those stored values.

use super::Collective;
use crate::dtype::Dtype;
use anyhow::{bail, Result};

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

/// The 64-bit finalizer of splitmix64: a bijection that scatters nearby counters.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Element `i` of rank `rank`'s input: uniform in [-1, -1/8] and [1/8, 1], so no element is
/// zero or close to it. Counter-based (a hash of seed, rank and index), so any rank can compute
/// any element of any rank's input on its own, in any order and on many threads.
pub fn input_at(seed: u64, rank: usize, i: usize, dtype: Dtype) -> f64 {
    let h = mix(mix(seed ^ (rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ i as u64);
    let u = (h >> 11) as f64 / (1u64 << 53) as f64;
    let m = 0.125 + 0.875 * u;
    stored(dtype, if h & 1 == 1 { -m } else { m })
}

/// Rank `rank`'s input of `len` elements (see [`input_at`]).
pub fn rank_input(seed: u64, rank: usize, len: usize, dtype: Dtype) -> Vec<f64> {
    (0..len).map(|i| input_at(seed, rank, i, dtype)).collect()
}

/// Elements of a rank's output for an input of `input_len` elements per rank.
pub fn output_len(c: Collective, world: usize, input_len: usize) -> usize {
    match c {
        Collective::AllReduce | Collective::Broadcast => input_len,
        Collective::AllGather => input_len * world,
        Collective::ReduceScatter => input_len / world,
    }
}

/// Element `i` of rank `rank`'s output after `c` over `world` ranks of `input_len` elements
/// each, in float64, with the magnitude it is judged against (the sum of the absolute values
/// that went into it); `input(r, j)` is element `j` of rank `r`'s input.
pub fn expected_at(
    c: Collective,
    world: usize,
    input_len: usize,
    rank: usize,
    root: usize,
    i: usize,
    input: impl Fn(usize, usize) -> f64,
) -> (f64, f64) {
    let sum_at = |j: usize| {
        (0..world).fold((0.0, 0.0), |(s, m), r| {
            let v = input(r, j);
            (s + v, m + v.abs())
        })
    };
    match c {
        Collective::AllReduce => sum_at(i),
        Collective::ReduceScatter => sum_at(rank * (input_len / world) + i),
        Collective::AllGather => {
            let v = input(i / input_len, i % input_len);
            (v, v.abs())
        }
        Collective::Broadcast => {
            let v = input(root, i);
            (v, v.abs())
        }
    }
}

/// What rank `rank` must hold after the collective, in float64, and the magnitude each element
/// is judged against, from every rank's input.
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
    if c == Collective::ReduceScatter && !len.is_multiple_of(world) {
        bail!("reduce_scatter of {len} elements over {world} ranks");
    }
    Ok((0..output_len(c, world, len))
        .map(|i| expected_at(c, world, len, rank, root, i, |r, j| inputs[r][j]))
        .unzip())
}

/// How a rank's output compares with the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Largest |got - expected| over the finite outputs.
    pub max_abs_err: f64,
    /// Largest |got - expected| / magnitude over the finite outputs.
    pub max_rel_err: f64,
    /// The bound it was judged by.
    pub tolerance: f64,
    /// Outputs that were NaN or infinite, or missing.
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

/// The running worst case of a comparison (one per thread, merged at the end).
#[derive(Debug, Clone, Copy, Default)]
struct Worst {
    abs: f64,
    rel: f64,
    non_finite: usize,
}

impl Worst {
    fn add(&mut self, got: f64, expected: f64, magnitude: f64) {
        if !got.is_finite() {
            self.non_finite += 1;
            return;
        }
        let d = (got - expected).abs();
        self.abs = self.abs.max(d);
        self.rel = self.rel.max(d / magnitude.max(f64::MIN_POSITIVE));
    }

    fn merge(self, o: Worst) -> Worst {
        Worst {
            abs: self.abs.max(o.abs),
            rel: self.rel.max(o.rel),
            non_finite: self.non_finite + o.non_finite,
        }
    }

    fn judge(self, tolerance: f64) -> Check {
        Check {
            max_abs_err: self.abs,
            max_rel_err: self.rel,
            tolerance,
            non_finite: self.non_finite,
            passed: self.non_finite == 0 && self.rel <= tolerance,
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
    let mut w = Worst {
        non_finite: got.len().abs_diff(expected.len()),
        ..Worst::default()
    };
    for ((g, e), m) in got.iter().zip(expected).zip(magnitude) {
        w.add(*g, *e, *m);
    }
    w.judge(tolerance(c, dtype, world))
}

/// A host element type `comm_bench` moves: its dtype and exact conversions from the stored
/// values of [`input_at`].
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: Dtype;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Element for f32 {
    const DTYPE: Dtype = Dtype::F32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Element for half::bf16 {
    const DTYPE: Dtype = Dtype::Bf16;
    fn from_f64(v: f64) -> Self {
        half::bf16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        half::bf16::to_f64(self)
    }
}

/// Rank `rank`'s input in its element type, filled on `threads` threads.
pub fn fill_input<T: Element>(seed: u64, rank: usize, out: &mut [T], threads: usize) {
    let per = out.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for (k, part) in out.chunks_mut(per).enumerate() {
            s.spawn(move || {
                for (o, v) in part.iter_mut().enumerate() {
                    *v = T::from_f64(input_at(seed, rank, k * per + o, T::DTYPE));
                }
            });
        }
    });
}

/// Checks rank `rank`'s output `got` after `c` over `world` ranks whose inputs of `input_len`
/// elements came from `seed` ([`input_at`]), on `threads` threads, holding no input in memory.
#[allow(clippy::too_many_arguments)]
pub fn check_seeded<T: Element>(
    c: Collective,
    seed: u64,
    world: usize,
    rank: usize,
    root: usize,
    input_len: usize,
    got: &[T],
    threads: usize,
) -> Check {
    let want = output_len(c, world, input_len);
    let per = got.len().div_ceil(threads.max(1)).max(1);
    let worst = std::thread::scope(|s| {
        let parts: Vec<_> = got
            .chunks(per)
            .enumerate()
            .map(|(k, part)| {
                s.spawn(move || {
                    let mut w = Worst::default();
                    for (o, g) in part.iter().enumerate() {
                        let (e, m) =
                            expected_at(c, world, input_len, rank, root, k * per + o, |r, j| {
                                input_at(seed, r, j, T::DTYPE)
                            });
                        w.add(g.to_f64(), e, m);
                    }
                    w
                })
            })
            .collect();
        parts
            .into_iter()
            .map(|h| h.join().expect("a check thread panicked"))
            .fold(Worst::default(), Worst::merge)
    });
    let mut worst = worst;
    worst.non_finite += got.len().abs_diff(want);
    worst.judge(tolerance(c, T::DTYPE, world))
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
    fn the_seeded_check_agrees_with_the_explicit_reference() {
        let (world, len, seed) = (3, 96, 11);
        for c in Collective::ALL {
            let ins: Vec<Vec<f64>> = (0..world)
                .map(|r| rank_input(seed, r, len, Dtype::Bf16))
                .collect();
            let (want, mag) = expected(c, &ins, 2, 1).unwrap();
            // The exact result, stored in bf16, as a device would hand it back.
            let got: Vec<half::bf16> = want.iter().map(|v| half::bf16::from_f64(*v)).collect();
            let seeded = check_seeded(c, seed, world, 2, 1, len, &got, 4);
            let back: Vec<f64> = got.iter().map(|v| v.to_f64()).collect();
            assert_eq!(
                seeded,
                check(c, Dtype::Bf16, world, &back, &want, &mag),
                "{c}"
            );
            assert!(seeded.passed, "{c}: {seeded:?}");
            // One wrong element anywhere (here the last thread's share) fails it.
            let mut bad = got.clone();
            let last = bad.len() - 1;
            bad[last] = half::bf16::from_f64(want[last] + 0.5 * mag[last]);
            assert!(
                !check_seeded(c, seed, world, 2, 1, len, &bad, 4).passed,
                "{c}"
            );
            // A short output is counted as missing elements.
            let short = check_seeded(c, seed, world, 2, 1, len, &got[..last], 4);
            assert_eq!((short.passed, short.non_finite), (false, 1), "{c}");
        }
        let mut filled = vec![0f32; 1000];
        fill_input(seed, 1, &mut filled, 3);
        let direct = rank_input(seed, 1, 1000, Dtype::F32);
        assert!(filled.iter().zip(&direct).all(|(a, b)| *a as f64 == *b));
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
