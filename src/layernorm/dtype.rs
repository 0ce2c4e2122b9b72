//! The element types LayerNorm is benchmarked in, and their host-side conversions.

use clap::ValueEnum;
use half::{bf16, f16};

/// Input/output element type; accumulation is always f32 on the GPU, f64 in the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Dtype {
    F32,
    F16,
    Bf16,
}

impl Dtype {
    pub const ALL: [Dtype; 3] = [Dtype::F32, Dtype::F16, Dtype::Bf16];

    /// The name used in artifacts and kernel names: "f32", "f16", "bf16".
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
        }
    }

    pub fn bytes(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
        }
    }

    /// Threshold on ||y - ref|| / ||ref|| against the f64 reference. The output rounding alone
    /// costs ~1e-3 relative in bf16 and ~3e-4 in f16; f32 arithmetic lands near 1e-7.
    pub fn tolerance(self) -> f64 {
        match self {
            Dtype::F32 => 1e-5,
            Dtype::F16 | Dtype::Bf16 => 1e-2,
        }
    }

    pub fn candle(self) -> candle_core::DType {
        match self {
            Dtype::F32 => candle_core::DType::F32,
            Dtype::F16 => candle_core::DType::F16,
            Dtype::Bf16 => candle_core::DType::BF16,
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A host element type the benchmark can generate, upload and check; conversions to and from
/// f64 come from candle's `WithDType`.
pub trait Elem: candle_core::WithDType + Copy + Send + Sync + 'static {
    const ELEM: Dtype;
}

impl Elem for f32 {
    const ELEM: Dtype = Dtype::F32;
}

impl Elem for f16 {
    const ELEM: Dtype = Dtype::F16;
}

impl Elem for bf16 {
    const ELEM: Dtype = Dtype::Bf16;
}
