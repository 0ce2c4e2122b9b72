//! Device matrices handed to cuBLAS and our kernels: raw pointers with their shape and dtype,
//! borrowed from a candle tensor (inputs) or an owned output buffer, so every launch is checked.

use crate::gemm::dtype::Dtype;
use crate::gemm::shapes::BLayout;
use crate::gpu::Gpu;
use anyhow::{bail, Context, Result};
use candle_core::{Storage, Tensor};
use cudarc::driver::{CudaSlice, DevicePtr};
use std::marker::PhantomData;

/// How a matrix's elements are stored (tf32 is stored as f32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F32,
    F16,
    Bf16,
}

impl Elem {
    pub fn of(d: Dtype) -> Self {
        match d {
            Dtype::F32 | Dtype::Tf32 => Elem::F32,
            Dtype::F16 => Elem::F16,
            Dtype::Bf16 => Elem::Bf16,
            // Points only ever carry GEMM_DTYPES: `--dtypes` parses through gemm::dtype::parse.
            other => unreachable!("a GEMM point in {other}"),
        }
    }

    pub fn bytes(self) -> usize {
        match self {
            Elem::F32 => 4,
            _ => 2,
        }
    }
}

/// A row-major device matrix, valid for lifetime 'a (it borrows its owner).
#[derive(Debug, Clone, Copy)]
pub struct DevMat<'a> {
    pub ptr: u64,
    pub rows: usize,
    pub cols: usize,
    pub storage: Elem,
    _owner: PhantomData<&'a ()>,
}

impl<'a> DevMat<'a> {
    /// Borrows a contiguous 2-D CUDA tensor with no offset.
    pub fn from_tensor(t: &'a Tensor, gpu: &Gpu) -> Result<Self> {
        let (rows, cols) = t.dims2().context("GEMM operands must be 2-D")?;
        let (storage, layout) = t.storage_and_layout();
        if !layout.is_contiguous() || layout.start_offset() != 0 {
            bail!("GEMM operand must be contiguous and start at offset 0");
        }
        let Storage::Cuda(cs) = &*storage else {
            bail!("GEMM operand is not on the GPU");
        };
        let (ptr, kind) = match t.dtype() {
            candle_core::DType::F32 => (
                cs.as_cuda_slice::<f32>()?.device_ptr(&gpu.stream).0,
                Elem::F32,
            ),
            candle_core::DType::F16 => (
                cs.as_cuda_slice::<half::f16>()?.device_ptr(&gpu.stream).0,
                Elem::F16,
            ),
            candle_core::DType::BF16 => (
                cs.as_cuda_slice::<half::bf16>()?.device_ptr(&gpu.stream).0,
                Elem::Bf16,
            ),
            d => bail!("GEMM operand has dtype {d:?}; expected f32, f16 or bf16"),
        };
        Ok(DevMat {
            ptr,
            rows,
            cols,
            storage: kind,
            _owner: PhantomData,
        })
    }
}

/// An output matrix we own (bytes on the device), poisoned before each correctness run.
pub struct OutBuf {
    pub buf: CudaSlice<u8>,
    pub rows: usize,
    pub cols: usize,
    pub storage: Elem,
}

impl OutBuf {
    pub fn new(gpu: &Gpu, rows: usize, cols: usize, storage: Elem) -> Result<Self> {
        let bytes = rows
            .checked_mul(cols)
            .and_then(|e| e.checked_mul(storage.bytes()))
            .with_context(|| format!("a {rows}x{cols} output: its byte count overflows"))?;
        // SAFETY: uninitialized device bytes; every use poisons or fully writes them first.
        let buf = unsafe { gpu.stream.alloc::<u8>(bytes) }
            .with_context(|| format!("allocating a {rows}x{cols} output"))?;
        Ok(OutBuf {
            buf,
            rows,
            cols,
            storage,
        })
    }

    /// The buffer as a matrix for launches (device memory is written through the pointer;
    /// the host-side buffer object is only read).
    pub fn mat(&self, gpu: &Gpu) -> DevMat<'_> {
        let (ptr, _sync) = self.buf.device_ptr(&gpu.stream);
        DevMat {
            ptr,
            rows: self.rows,
            cols: self.cols,
            storage: self.storage,
            _owner: PhantomData,
        }
    }

    /// Fills it with 0xFF bytes (NaN in every float format), in stream order. A shared borrow
    /// is enough: the device bytes are not Rust memory.
    pub fn poison_shared(&self, gpu: &Gpu) -> Result<()> {
        let bytes = self.buf.num_bytes();
        let (ptr, _sync) = self.buf.device_ptr(&gpu.stream);
        // SAFETY: ptr is a live allocation of `bytes` bytes owned by `self.buf`, in stream order.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0xFF, bytes, gpu.stream.cu_stream()) }
            .context("poisoning an output buffer")
    }

    /// Copies it to the host as f32 (waits for the stream).
    pub fn to_host_f32(&self, gpu: &Gpu) -> Result<Vec<f32>> {
        let bytes = gpu
            .stream
            .clone_dtoh(&self.buf)
            .context("copying an output to the host")?;
        Ok(decode_f32(&bytes, self.storage))
    }
}

/// Little-endian device bytes as f32 values.
pub fn decode_f32(bytes: &[u8], storage: Elem) -> Vec<f32> {
    match storage {
        Elem::F32 => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Elem::F16 => bytes
            .chunks_exact(2)
            .map(|c| half::f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
            .collect(),
        Elem::Bf16 => bytes
            .chunks_exact(2)
            .map(|c| half::bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
            .collect(),
    }
}

/// Checks C = A * B shapes (B stored as `layout` says) and a common storage type: returns
/// (M, N, K).
pub fn check_gemm(
    a: &DevMat,
    b: &DevMat,
    c: &DevMat,
    layout: BLayout,
    want: Elem,
) -> Result<(usize, usize, usize)> {
    let (m, k, n) = (a.rows, a.cols, c.cols);
    if (b.rows, b.cols) != layout.stored_dims(n, k) {
        let (r, cc) = layout.stored_dims(n, k);
        bail!(
            "A is {m}x{k} and C has {n} columns, so B stored {} must be {r}x{cc}, not {}x{}",
            layout.name(),
            b.rows,
            b.cols
        );
    }
    if c.rows != m {
        bail!("C is {}x{} but A*B is {m}x{n}", c.rows, c.cols);
    }
    for (name, x) in [("A", a), ("B", b), ("C", c)] {
        if x.storage != want {
            bail!(
                "{name} is stored as {:?}, the launch needs {want:?}",
                x.storage
            );
        }
    }
    if m.max(n).max(k) > i32::MAX as usize {
        bail!("GEMM dimension above i32::MAX");
    }
    Ok((m, n, k))
}
