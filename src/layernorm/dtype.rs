//! The element types LayerNorm is benchmarked in, and their host-side conversions.

use half::{bf16, f16};

pub use crate::dtype::Dtype;

/// The types LayerNorm runs in (x, gamma, beta and y); accumulation is always f32 on the GPU,
/// f64 in the reference.
pub const LAYERNORM_DTYPES: [Dtype; 3] = [Dtype::F32, Dtype::F16, Dtype::Bf16];

/// `--dtype`: one of [`LAYERNORM_DTYPES`].
pub fn parse(s: &str) -> Result<Dtype, String> {
    Dtype::parse_among(s, &LAYERNORM_DTYPES)
}

/// Threshold on ||y - ref|| / ||ref|| against the f64 reference. The output rounding alone
/// costs ~1e-3 relative in bf16 and ~3e-4 in f16; f32 arithmetic lands near 1e-7.
pub fn tolerance(d: Dtype) -> f64 {
    match d {
        Dtype::F32 => 1e-5,
        _ => 1e-2,
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
