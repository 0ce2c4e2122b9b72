//! The element types benchmarks store their data in: one name, size and parse for every
//! benchmark. Which types a benchmark accepts, and how close to the reference each must come,
//! is that benchmark's own policy (its `dtype.rs`).

use serde::{Deserialize, Serialize};

/// An element type, by its artifact and command-line name ("f32", "bf16", ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    F32,
    /// f32 storage, TF32 tensor-core arithmetic (a GEMM compute mode).
    Tf32,
    F16,
    Bf16,
    F64,
    I64,
    I32,
    U32,
    U8,
}

impl Dtype {
    pub const ALL: [Dtype; 9] = [
        Dtype::F32,
        Dtype::Tf32,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::F64,
        Dtype::I64,
        Dtype::I32,
        Dtype::U32,
        Dtype::U8,
    ];

    /// The name used in artifacts, manifests, reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Tf32 => "tf32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F64 => "f64",
            Dtype::I64 => "i64",
            Dtype::I32 => "i32",
            Dtype::U32 => "u32",
            Dtype::U8 => "u8",
        }
    }

    /// Bytes per stored element (tf32 is stored as f32).
    pub fn size_bytes(self) -> usize {
        match self {
            Dtype::F64 | Dtype::I64 => 8,
            Dtype::F32 | Dtype::Tf32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::U8 => 1,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::F32 | Dtype::Tf32 | Dtype::F16 | Dtype::Bf16 | Dtype::F64
        )
    }

    /// candle's storage type for it (tf32 is stored as f32); None for types candle lacks.
    pub fn candle(self) -> Option<candle_core::DType> {
        use candle_core::DType as C;
        Some(match self {
            Dtype::F32 | Dtype::Tf32 => C::F32,
            Dtype::F16 => C::F16,
            Dtype::Bf16 => C::BF16,
            Dtype::F64 => C::F64,
            Dtype::I64 => C::I64,
            Dtype::U32 => C::U32,
            Dtype::U8 => C::U8,
            Dtype::I32 => return None,
        })
    }

    /// Parses `s` as one of `allowed`; the error names them (for a command-line flag).
    pub fn parse_among(s: &str, allowed: &[Dtype]) -> Result<Dtype, String> {
        let names = || {
            allowed
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match s.parse::<Dtype>() {
            Ok(d) if allowed.contains(&d) => Ok(d),
            _ => Err(format!("`{s}` is not one of {}", names())),
        }
    }
}

impl std::str::FromStr for Dtype {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        Dtype::ALL
            .into_iter()
            .find(|d| d.name() == t)
            .ok_or_else(|| {
                format!(
                    "`{s}` is not an element type: use one of {}",
                    Dtype::ALL.map(|d| d.name()).join(", ")
                )
            })
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_sizes_and_serde_agree() {
        for d in Dtype::ALL {
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
            assert_eq!(
                serde_json::to_string(&d).unwrap(),
                format!("\"{}\"", d.name())
            );
        }
        assert!("fp8".parse::<Dtype>().is_err());
        assert_eq!(Dtype::Tf32.size_bytes(), 4);
        assert_eq!(Dtype::Bf16.size_bytes(), 2);
        assert!(Dtype::F16.is_float() && !Dtype::U8.is_float());
        assert_eq!(
            Dtype::parse_among("tf32", &[Dtype::F32, Dtype::F16]),
            Err("`tf32` is not one of f32, f16".to_string())
        );
        assert_eq!(Dtype::parse_among("F16", &[Dtype::F16]), Ok(Dtype::F16));
    }
}
