//! cuBLAS (`cublasGemmEx` through cudarc) as the reference: row-major C = A * B computed as the
//! column-major C^T = B^T * A^T (B^T read transposed when B is stored [N, K]), with f32
//! compute (no TF32) unless the dtype is tf32.

use super::operands::{check_gemm, DevMat, Elem};
use crate::gemm::dtype::Dtype;
use crate::gemm::shapes::BLayout;
use crate::gpu::Gpu;
use anyhow::{Context, Result};
use cudarc::cublas::{result::gemm_ex, sys, CudaBlas};

/// cuBLAS's version number (major * 10000 + minor * 100 + patch) as "major.minor.patch".
fn cublas_version(v: std::ffi::c_int) -> String {
    format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)
}

pub struct Cublas {
    blas: CudaBlas,
}

impl Cublas {
    /// A handle bound to the GPU's stream; records the loaded cuBLAS's version, which its
    /// rows carry as their `code` (`code_id::tag_library`).
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let blas = CudaBlas::new(gpu.stream.clone()).context("creating a cuBLAS handle")?;
        let mut v: std::ffi::c_int = 0;
        // SAFETY: the handle is live (owned by `blas`) and `v` a valid out-pointer.
        let status = unsafe { sys::cublasGetVersion_v2(*blas.handle(), &mut v) };
        if status == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS && v > 0 {
            crate::code_id::record_library("cublas", &cublas_version(v));
        }
        Ok(Cublas { blas })
    }

    /// Enqueues C = A * B at `dtype` (checked shapes and storage types), B stored as
    /// `layout` says.
    pub fn gemm(
        &self,
        dtype: Dtype,
        a: &DevMat,
        b: &DevMat,
        layout: BLayout,
        c: &DevMat,
    ) -> Result<()> {
        let (m, n, k) = check_gemm(a, b, c, layout, Elem::of(dtype))?;
        let (data, compute) = match dtype {
            Dtype::F32 => (
                sys::cudaDataType_t::CUDA_R_32F,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ),
            Dtype::Tf32 => (
                sys::cudaDataType_t::CUDA_R_32F,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
            ),
            Dtype::F16 => (
                sys::cudaDataType_t::CUDA_R_16F,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ),
            Dtype::Bf16 => (
                sys::cudaDataType_t::CUDA_R_16BF,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ),
            other => anyhow::bail!("cuBLAS GEMM runs in f32, tf32, f16 or bf16, not {other}"),
        };
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (m, n, k) = (m as i32, n as i32, k as i32);
        // Row-major B [K, N] is column-major N x K (leading dimension N), used as is; row-major
        // B [N, K] is column-major K x N (leading dimension K), used transposed.
        let (op_b, ld_b) = match layout {
            BLayout::Kn => (sys::cublasOperation_t::CUBLAS_OP_N, n),
            BLayout::Nk => (sys::cublasOperation_t::CUBLAS_OP_T, k),
        };
        // SAFETY: check_gemm proved the three buffers hold K*N, M*K and M*N elements of `data`;
        // column-major op(B) (N x K) * (K x M) with leading dimensions ld_b, K, N reads exactly
        // those. alpha/beta are f32 as CUBLAS_COMPUTE_32F* requires, and outlive the call.
        unsafe {
            gemm_ex(
                *self.blas.handle(),
                op_b,
                sys::cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha) as *const f32 as *const _,
                b.ptr as *const _,
                data,
                ld_b,
                a.ptr as *const _,
                data,
                k,
                (&beta) as *const f32 as *const _,
                c.ptr as *mut _,
                data,
                n,
                compute,
                sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .with_context(|| format!("cublasGemmEx {dtype} M={m} N={n} K={k}"))
    }
}
