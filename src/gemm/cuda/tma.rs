//! TMA tensor maps for the Hopper GEMM kernels: a row-major 16-bit matrix described to the
//! copy engine (2-D, 128-byte swizzle, zero fill outside the matrix), passed to a kernel by value.

use anyhow::{bail, Context, Result};
use cudarc::driver::sys;
use cudarc::driver::DeviceRepr;

/// A `CUtensorMap` as a kernel argument (`const __grid_constant__ hopper::TmaDesc`).
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct TensorMap(sys::CUtensorMap);

// SAFETY: plain bytes that the driver copies into the kernel's parameter space.
unsafe impl DeviceRepr for TensorMap {}

/// Which 16-bit float the matrix holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    F16,
    Bf16,
}

/// A row-major `rows x cols` matrix at `ptr` read in boxes of `box_rows x box_cols`
/// (`box_cols` x 2 bytes must be at most 128, the swizzle span).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatrixBox {
    pub ptr: u64,
    pub rows: usize,
    pub cols: usize,
    pub box_rows: u32,
    pub box_cols: u32,
}

impl MatrixBox {
    /// The driver's rules for this map, as an error that names the broken one.
    fn check(&self) -> Result<()> {
        if !self.ptr.is_multiple_of(16) {
            bail!(
                "TMA needs a 16-byte aligned matrix (address {:#x})",
                self.ptr
            );
        }
        if !(self.cols * 2).is_multiple_of(16) {
            bail!(
                "TMA needs rows of a multiple of 16 bytes ({} columns of 2 bytes)",
                self.cols
            );
        }
        if self.box_cols * 2 > 128 || self.box_rows == 0 || self.box_rows > 256 {
            bail!(
                "TMA box {}x{} outside 1..=256 rows and 128 bytes per row",
                self.box_rows,
                self.box_cols
            );
        }
        Ok(())
    }
}

/// Encodes the tensor map (a host-side call; no GPU work).
pub fn encode(half: Half, m: &MatrixBox) -> Result<TensorMap> {
    m.check()?;
    let dtype = match half {
        Half::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        Half::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    };
    let dims: [u64; 2] = [m.cols as u64, m.rows as u64];
    let strides: [u64; 1] = [(m.cols * 2) as u64];
    let boxes: [u32; 2] = [m.box_cols, m.box_rows];
    let elem_strides: [u32; 2] = [1, 1];
    // SAFETY: a zeroed tensor map is plain data that the call below overwrites.
    let mut map: sys::CUtensorMap = unsafe { std::mem::zeroed() };
    // SAFETY: every array outlives the call and has the rank (2) or rank - 1 entries the
    // driver reads; the address is only recorded, not dereferenced, here.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            dtype,
            2,
            m.ptr as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .with_context(|| {
        format!(
            "cuTensorMapEncodeTiled for a {}x{} matrix in {}x{} boxes",
            m.rows, m.cols, m.box_rows, m.box_cols
        )
    })?;
    Ok(TensorMap(map))
}
