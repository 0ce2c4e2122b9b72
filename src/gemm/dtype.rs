//! The element types a GEMM point is measured in, with their sizes and correctness tolerances.

use clap::ValueEnum;

/// Input/output element type of one GEMM point (accumulation is always f32 or wider).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Dtype {
    /// f32 storage, f32 arithmetic on the FP32 pipes (no TF32).
    F32,
    /// f32 storage, TF32 tensor-core arithmetic (cuBLAS only).
    Tf32,
    /// f16 storage, f32 accumulation.
    F16,
    /// bf16 storage, f32 accumulation.
    Bf16,
}

impl Dtype {
    /// The name used in artifacts, reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Tf32 => "tf32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
        }
    }

    /// Bytes per stored element (tf32 is stored as f32).
    pub fn storage_bytes(self) -> usize {
        match self {
            Dtype::F32 | Dtype::Tf32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
        }
    }

    /// Threshold on ||out - ref||_2 / ||ref||_2. f32 sums of K products drift from each other by
    /// about u*sqrt(K/6) (u = 2^-24; 2e-6 at K = 8192), so 1e-5 leaves a 3x margin and still
    /// catches TF32 (~4e-4). 16-bit outputs are rounded to 8 (bf16) or 11 (f16) bits: ~1e-3.
    pub fn tolerance(self) -> f64 {
        match self {
            Dtype::F32 => 1e-5,
            Dtype::Tf32 | Dtype::F16 | Dtype::Bf16 => 1e-2,
        }
    }

    /// Parses the artifact/CLI name back.
    pub fn from_name(s: &str) -> Option<Dtype> {
        [Dtype::F32, Dtype::Tf32, Dtype::F16, Dtype::Bf16]
            .into_iter()
            .find(|d| d.name() == s)
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
    fn names_round_trip_and_sizes() {
        for d in [Dtype::F32, Dtype::Tf32, Dtype::F16, Dtype::Bf16] {
            assert_eq!(Dtype::from_name(d.name()), Some(d));
        }
        assert_eq!(Dtype::from_name("fp8"), None);
        assert_eq!(Dtype::Tf32.storage_bytes(), 4);
        assert_eq!(Dtype::Bf16.storage_bytes(), 2);
        assert!(Dtype::F32.tolerance() < Dtype::Bf16.tolerance());
    }
}
