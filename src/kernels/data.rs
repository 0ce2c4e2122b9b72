//! Element types and buffer contents on the host: random initialisation, bytes, f64 views, errors.

use anyhow::{bail, Context, Result};
use rand::Rng;
use rand_distr::{Distribution, Normal};

pub use crate::dtype::Dtype;

/// Default threshold on ||y - ref|| / ||ref|| for outputs of this type: loose enough for a
/// different summation order, tight enough to catch a wrong index. Integers must match.
pub fn default_tolerance(d: Dtype) -> f64 {
    match d {
        Dtype::F64 => 1e-10,
        Dtype::F32 => 1e-4,
        Dtype::F16 => 5e-3,
        Dtype::Bf16 => 2e-2,
        _ => 0.0,
    }
}

/// How a buffer is filled before each correctness run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Init {
    Uniform(f64, f64),
    Normal(f64, f64),
    RandInt(i64, i64),
    Zeros,
    Ones,
    /// 0xFF bytes: NaN for floats; for outputs, so that unwritten elements fail the check.
    Poison,
}

impl Init {
    /// Parses `uniform(lo, hi)`, `normal(mean, std)`, `randint(lo, hi)`, `zeros`, `ones`, `poison`.
    pub fn parse(text: &str) -> Result<Init> {
        let t = text.trim();
        let (name, args) = match t.find('(') {
            Some(i) if t.ends_with(')') => (&t[..i], &t[i + 1..t.len() - 1]),
            Some(_) => bail!("init `{text}`: missing `)`"),
            None => (t, ""),
        };
        let nums: Vec<f64> = if args.trim().is_empty() {
            Vec::new()
        } else {
            args.split(',')
                .map(|a| a.trim().parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .with_context(|| format!("init `{text}`: arguments must be numbers"))?
        };
        let two = |what: &str| -> Result<(f64, f64)> {
            match nums.as_slice() {
                [a, b] => Ok((*a, *b)),
                _ => bail!("init `{text}`: {what} takes two numbers"),
            }
        };
        let init = match name.trim() {
            "uniform" => {
                let (a, b) = two("uniform(lo, hi)")?;
                if a >= b || !a.is_finite() || !b.is_finite() {
                    bail!("init `{text}`: uniform needs finite lo < hi");
                }
                Init::Uniform(a, b)
            }
            "normal" => {
                let (m, s) = two("normal(mean, std)")?;
                if s <= 0.0 || !m.is_finite() || !s.is_finite() {
                    bail!("init `{text}`: normal needs a finite mean and std > 0");
                }
                Init::Normal(m, s)
            }
            "randint" => {
                let (a, b) = two("randint(lo, hi)")?;
                if a.fract() != 0.0 || b.fract() != 0.0 || a >= b {
                    bail!("init `{text}`: randint needs integers lo < hi (hi exclusive)");
                }
                Init::RandInt(a as i64, b as i64)
            }
            "zeros" if nums.is_empty() => Init::Zeros,
            "ones" if nums.is_empty() => Init::Ones,
            "poison" if nums.is_empty() => Init::Poison,
            _ => bail!(
                "init `{text}` is not known: use uniform(lo, hi), normal(mean, std), \
                 randint(lo, hi), zeros, ones or poison"
            ),
        };
        Ok(init)
    }

    /// Whether it draws random values (inputs should: zeros hide wrong indexing).
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Init::Uniform(..) | Init::Normal(..) | Init::RandInt(..)
        )
    }
}

/// `len` elements of `dtype` as little-endian bytes, drawn per `init`.
pub fn generate(dtype: Dtype, len: usize, init: Init, rng: &mut impl Rng) -> Result<Vec<u8>> {
    if init == Init::Poison {
        return Ok(vec![0xFF; len * dtype.size_bytes()]);
    }
    let normal = match init {
        Init::Normal(m, s) => Some(Normal::new(m, s).context("normal distribution")?),
        _ => None,
    };
    let mut draw = || -> f64 {
        match init {
            Init::Uniform(a, b) => rng.random_range(a..b),
            Init::Normal(..) => normal.as_ref().expect("set above").sample(rng),
            Init::RandInt(a, b) => rng.random_range(a..b) as f64,
            Init::Zeros => 0.0,
            Init::Ones => 1.0,
            Init::Poison => unreachable!("handled above"),
        }
    };
    let mut out = Vec::with_capacity(len * dtype.size_bytes());
    for _ in 0..len {
        let v = draw();
        match dtype {
            Dtype::F32 | Dtype::Tf32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            Dtype::F64 => out.extend_from_slice(&v.to_le_bytes()),
            Dtype::F16 => out.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()),
            Dtype::Bf16 => out.extend_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
            Dtype::I32 => out.extend_from_slice(&(v.round() as i32).to_le_bytes()),
            Dtype::I64 => out.extend_from_slice(&(v.round() as i64).to_le_bytes()),
            Dtype::U32 => out.extend_from_slice(&(v.round().max(0.0) as u32).to_le_bytes()),
            Dtype::U8 => out.push(v.round().clamp(0.0, 255.0) as u8),
        }
    }
    Ok(out)
}

/// The elements of a little-endian byte buffer as f64.
pub fn to_f64(dtype: Dtype, bytes: &[u8]) -> Vec<f64> {
    let n = dtype.size_bytes();
    bytes
        .chunks_exact(n)
        .map(|c| match dtype {
            Dtype::F32 | Dtype::Tf32 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            Dtype::F64 => f64::from_le_bytes(c.try_into().unwrap()),
            Dtype::F16 => half::f16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            Dtype::Bf16 => half::bf16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            Dtype::I32 => i32::from_le_bytes(c.try_into().unwrap()) as f64,
            Dtype::I64 => i64::from_le_bytes(c.try_into().unwrap()) as f64,
            Dtype::U32 => u32::from_le_bytes(c.try_into().unwrap()) as f64,
            Dtype::U8 => c[0] as f64,
        })
        .collect()
}

/// Errors of `y` against `reference`: (max |y - ref|, ||y - ref||_2 / ||ref||_2, count of
/// non-finite values), the two errors over the positions where `y` is finite. A NaN or
/// infinity in `y` (an unwritten, poisoned element) is counted, never folded into a number
/// (JSON has none); positions one side lacks count too. When ||ref|| is 0 the relative error
/// is ||y||_2.
pub fn errors(y: &[f64], reference: &[f64]) -> (f64, f64, usize) {
    let mut non_finite = y.len().abs_diff(reference.len());
    let (mut max_abs, mut diff2, mut ref2) = (0.0f64, 0.0f64, 0.0f64);
    for (a, b) in y.iter().zip(reference) {
        if !a.is_finite() {
            non_finite += 1;
            continue;
        }
        let d = (a - b).abs();
        max_abs = max_abs.max(d);
        diff2 += d * d;
        ref2 += b * b;
    }
    let rel = if ref2 > 0.0 {
        (diff2 / ref2).sqrt()
    } else {
        diff2.sqrt()
    };
    (max_abs, rel, non_finite)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn init_parses_and_rejects() {
        assert_eq!(
            Init::parse("uniform(-1, 1)").unwrap(),
            Init::Uniform(-1.0, 1.0)
        );
        assert_eq!(
            Init::parse(" normal(0,2) ").unwrap(),
            Init::Normal(0.0, 2.0)
        );
        assert_eq!(Init::parse("randint(0, 10)").unwrap(), Init::RandInt(0, 10));
        assert_eq!(Init::parse("zeros").unwrap(), Init::Zeros);
        for bad in [
            "uniform(1, 1)",
            "normal(0, 0)",
            "gauss(0,1)",
            "uniform(1)",
            "randint(0.5, 2)",
            "uniform(a, b)",
        ] {
            assert!(Init::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn generated_values_round_trip_and_stay_in_range() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for dt in [Dtype::F32, Dtype::F64, Dtype::F16, Dtype::Bf16] {
            let b = generate(dt, 1000, Init::Uniform(-2.0, 3.0), &mut rng).unwrap();
            assert_eq!(b.len(), 1000 * dt.size_bytes());
            let v = to_f64(dt, &b);
            assert!(v.iter().all(|x| (-2.01..=3.01).contains(x)), "{dt:?}");
            assert!(v.iter().any(|x| *x != v[0]), "{dt:?} is constant");
        }
        let b = generate(Dtype::I32, 500, Init::RandInt(-3, 4), &mut rng).unwrap();
        assert!(to_f64(Dtype::I32, &b)
            .iter()
            .all(|x| (-3.0..4.0).contains(x)));
        let p = generate(Dtype::F32, 4, Init::Poison, &mut rng).unwrap();
        assert!(to_f64(Dtype::F32, &p).iter().all(|x| x.is_nan()));
    }

    #[test]
    fn errors_flag_nan_and_measure_relative_error() {
        assert_eq!(errors(&[1.0, f64::NAN], &[1.0, 2.0]), (0.0, 0.0, 1));
        assert_eq!(errors(&[f64::INFINITY, 2.5], &[1.0, 2.0]).2, 1);
        assert_eq!(errors(&[1.0], &[1.0, 2.0]).2, 1);
        let (m, r, n) = errors(&[3.0, 4.0], &[3.0, 4.0]);
        assert_eq!((m, r, n), (0.0, 0.0, 0));
        let (m, r, _) = errors(&[3.0, 4.5], &[3.0, 4.0]);
        assert_eq!(m, 0.5);
        assert!((r - 0.1).abs() < 1e-12);
    }
}
