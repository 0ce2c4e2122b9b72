//! The f32 matrix ceiling for the roofline: cuBLAS SGEMM (no TF32) in the same process.

use crate::gpu::{measure, Gpu, TimingConfig, TimingMode};
use anyhow::{Context, Result};
use cudarc::cublas::{sys::cublasOperation_t, CudaBlas, Gemm, GemmConfig};
use rand::Rng;

/// cuBLAS SGEMM on random n×n matrices: (TFLOP/s, how it was measured).
pub fn sgemm_tflops(gpu: &mut Gpu, n: usize) -> Result<(f64, String)> {
    let blas = CudaBlas::new(gpu.stream.clone()).context("creating a cuBLAS handle")?;
    let mut rng = rand::rng();
    let host: Vec<f32> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let a = gpu.stream.clone_htod(&host).context("SGEMM ceiling: A")?;
    let b = gpu.stream.clone_htod(&host).context("SGEMM ceiling: B")?;
    let mut c = gpu
        .stream
        .alloc_zeros::<f32>(n * n)
        .context("SGEMM ceiling: C")?;
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: n as i32,
        k: n as i32,
        alpha: 1.0f32,
        lda: n as i32,
        ldb: n as i32,
        beta: 0.0f32,
        ldc: n as i32,
    };
    let samples = 10;
    let tc = TimingConfig::fixed(3, samples, 3);
    let m = measure(gpu, tc, TimingMode::Warm, |_| {
        // SAFETY: a, b, c are n×n f32 device buffers on the handle's stream.
        unsafe { blas.gemm(cfg, &a, &b, &mut c) }.context("cublasSgemm")
    })?;
    let tflops = 2.0 * (n as f64).powi(3) / (m.time_us.p50 * 1e-6) / 1e12;
    Ok((
        tflops,
        format!(
            "matmul_tflops.f32: cuBLAS SGEMM {n}x{n}x{n} (default math mode, no TF32) on random \
             data, median of {} samples x {} calls",
            samples, tc.batch
        ),
    ))
}
