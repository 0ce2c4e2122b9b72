//! The element types a GEMM point is measured in, and how close each must come to the
//! float64 reference.

pub use crate::dtype::Dtype;

/// Input/output types of GEMM points (accumulation is always f32 or wider): f32 on the FP32
/// pipes (no TF32), tf32 (f32 storage, TF32 tensor cores; cuBLAS only), f16 and bf16.
pub const GEMM_DTYPES: [Dtype; 4] = [Dtype::F32, Dtype::Tf32, Dtype::F16, Dtype::Bf16];

/// `--dtypes` / `--model-dtypes`: one of [`GEMM_DTYPES`].
pub fn parse(s: &str) -> Result<Dtype, String> {
    Dtype::parse_among(s, &GEMM_DTYPES)
}

/// Threshold on ||out - ref||_2 / ||ref||_2. f32 sums of K products drift from each other by
/// about u*sqrt(K/6) (u = 2^-24; 2e-6 at K = 8192), so 1e-5 leaves a 3x margin and still
/// catches TF32 (~4e-4). 16-bit outputs are rounded to 8 (bf16) or 11 (f16) bits: ~1e-3.
pub fn tolerance(d: Dtype) -> f64 {
    match d {
        Dtype::F32 => 1e-5,
        _ => 1e-2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_takes_four_types_and_f32_is_strictest() {
        for d in GEMM_DTYPES {
            assert_eq!(parse(d.name()), Ok(d));
        }
        assert!(parse("f64").is_err());
        assert!(tolerance(Dtype::F32) < tolerance(Dtype::Bf16));
    }
}
