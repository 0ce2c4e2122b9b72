//! Launch-configuration arithmetic for kernels/layernorm.cu, kept pure so that awkward row
//! lengths (1, 7, 1023, 1025, 4097, 65536, ...) are tested on the CPU.

use super::Dtype;
use anyhow::{bail, Result};

/// Row-group sizes run from one warp to one block of this many threads.
pub const MAX_GROUP_THREADS: usize = 1024;
/// Blocks of fewer threads than this hold several row groups (warp-per-row for short rows).
pub const MIN_BLOCK_THREADS: usize = 128;
/// Threads per block of the long-row kernel.
pub const LONG_BLOCK_THREADS: usize = 512;
/// Vectors each thread of the long-row kernel loads per step (`LONG_CHUNK` in the .cu file).
pub const LONG_CHUNK: usize = 4;
/// f32 values a thread keeps in registers by default: 32 keeps the 16-byte path spill-free
/// (f32: 8 vectors of 4, f16/bf16: 4 vectors of 8; see `nvcc -Xptxas -v` in docs/notes).
pub const DEFAULT_VALUES_PER_THREAD: usize = 32;
/// The kernels grid-stride over rows, so the grid never needs to exceed this.
pub const MAX_GRID_BLOCKS: usize = 1 << 24;

/// Vectors per thread instantiated for 16-byte accesses (`LN_ALL` in the .cu file).
pub const REGS_NV_VECTOR: [usize; 4] = [1, 2, 4, 8];
/// Vectors per thread instantiated for one-element accesses.
pub const REGS_NV_SCALAR: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Which kernel family runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The row lives in registers of a group of threads: one read of x.
    Regs,
    /// Row too long for registers: statistics pass, then a second read of x to write y.
    Long,
}

/// Everything needed to launch one LayerNorm kernel on a (rows x cols) problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    pub rows: usize,
    pub cols: usize,
    pub dtype: Dtype,
    pub variant: Variant,
    /// Elements per memory access: 16 bytes' worth when cols allows it, else 1.
    pub vec_width: usize,
    /// Accesses of `vec_width` elements each thread makes per row (regs) or per step (long).
    pub vectors_per_thread: usize,
    /// Threads cooperating on one row (a multiple of 32).
    pub threads_per_row: usize,
    pub rows_per_block: usize,
    pub block_threads: usize,
    pub grid_blocks: usize,
    /// The `extern "C"` name in kernels/layernorm.cu.
    pub kernel: String,
}

impl LaunchPlan {
    /// Short name for artifacts and tables, e.g. "regs_v4_n8_tpr32" or "long_v1".
    pub fn variant_name(&self) -> String {
        match self.variant {
            Variant::Regs => format!(
                "regs_v{}_n{}_tpr{}",
                self.vec_width, self.vectors_per_thread, self.threads_per_row
            ),
            Variant::Long => format!("long_v{}", self.vec_width),
        }
    }

    /// Registers' worth of row values per thread in the regs kernel.
    pub fn values_per_thread(&self) -> usize {
        self.vec_width * self.vectors_per_thread
    }
}

fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// Plans the launch for `rows` rows of `cols` elements of `dtype`, keeping at most
/// `values_per_thread` row values in each thread's registers (a power of two, 8..=64).
pub fn plan(
    rows: usize,
    cols: usize,
    dtype: Dtype,
    values_per_thread: usize,
) -> Result<LaunchPlan> {
    if rows == 0 || cols == 0 {
        bail!("shape {rows}x{cols}: LayerNorm needs at least one row and one column");
    }
    if cols > i32::MAX as usize {
        bail!(
            "shape {rows}x{cols}: rows longer than {} elements are not supported",
            i32::MAX
        );
    }
    if rows.checked_mul(cols).is_none_or(|n| n > i64::MAX as usize) {
        bail!("shape {rows}x{cols}: too many elements");
    }
    if !values_per_thread.is_power_of_two() || !(8..=64).contains(&values_per_thread) {
        bail!("--values-per-thread {values_per_thread}: use a power of two from 8 to 64");
    }
    let full = 16 / dtype.bytes();
    let vec = if cols % full == 0 { full } else { 1 };
    let instantiated: &[usize] = if vec == 1 {
        &REGS_NV_SCALAR
    } else {
        &REGS_NV_VECTOR
    };
    let budget = (values_per_thread / vec).max(1);
    let nv_cap = *instantiated
        .iter()
        .filter(|&&n| n <= budget)
        .max()
        .unwrap_or(&1);
    let nvec = cols / vec;
    let mut tpr = 32;
    while tpr < MAX_GROUP_THREADS && ceil_div(nvec, tpr) > nv_cap {
        tpr *= 2;
    }
    let need = ceil_div(nvec, tpr);
    if need > nv_cap {
        return Ok(LaunchPlan {
            rows,
            cols,
            dtype,
            variant: Variant::Long,
            vec_width: vec,
            vectors_per_thread: LONG_CHUNK,
            threads_per_row: LONG_BLOCK_THREADS,
            rows_per_block: 1,
            block_threads: LONG_BLOCK_THREADS,
            grid_blocks: rows.min(MAX_GRID_BLOCKS),
            kernel: format!("layernorm_long_{}_v{vec}", dtype.name()),
        });
    }
    let nv = *instantiated
        .iter()
        .find(|&&n| n >= need)
        .expect("need <= nv_cap, which is instantiated");
    let block = tpr.max(MIN_BLOCK_THREADS);
    let rpb = block / tpr;
    Ok(LaunchPlan {
        rows,
        cols,
        dtype,
        variant: Variant::Regs,
        vec_width: vec,
        vectors_per_thread: nv,
        threads_per_row: tpr,
        rows_per_block: rpb,
        block_threads: block,
        grid_blocks: ceil_div(rows, rpb).min(MAX_GRID_BLOCKS),
        kernel: format!("layernorm_regs_{}_v{vec}_n{nv}", dtype.name()),
    })
}

/// Every kernel name `plan` can return, for checking against the .cu file.
pub fn all_kernel_names() -> Vec<String> {
    let mut names = Vec::new();
    for dt in Dtype::ALL {
        let full = 16 / dt.bytes();
        for nv in REGS_NV_VECTOR {
            names.push(format!("layernorm_regs_{}_v{full}_n{nv}", dt.name()));
        }
        for nv in REGS_NV_SCALAR {
            names.push(format!("layernorm_regs_{}_v1_n{nv}", dt.name()));
        }
        names.push(format!("layernorm_long_{}_v{full}", dt.name()));
        names.push(format!("layernorm_long_{}_v1", dt.name()));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const AWKWARD: [usize; 17] = [
        1, 2, 7, 31, 33, 100, 1000, 1023, 1024, 1025, 2048, 4097, 8192, 8193, 32768, 32769, 65536,
    ];

    /// Replays the kernels' index arithmetic on the CPU: how many times each element is written.
    fn writes(p: &LaunchPlan) -> Vec<u32> {
        let mut count = vec![0u32; p.rows * p.cols];
        let nvec = p.cols / p.vec_width;
        for b in 0..p.grid_blocks {
            match p.variant {
                Variant::Regs => {
                    let mut base = b * p.rows_per_block;
                    while base < p.rows {
                        for g in 0..p.rows_per_block {
                            let row = base + g;
                            if row >= p.rows {
                                continue;
                            }
                            for t in 0..p.threads_per_row {
                                for k in 0..p.vectors_per_thread {
                                    let i = t + k * p.threads_per_row;
                                    if i < nvec {
                                        for j in 0..p.vec_width {
                                            count[row * p.cols + i * p.vec_width + j] += 1;
                                        }
                                    }
                                }
                            }
                        }
                        base += p.grid_blocks * p.rows_per_block;
                    }
                }
                Variant::Long => {
                    let mut row = b;
                    while row < p.rows {
                        let step = LONG_CHUNK * p.block_threads;
                        let mut c0 = 0;
                        while c0 < nvec {
                            for t in 0..p.block_threads {
                                for k in 0..LONG_CHUNK {
                                    let i = c0 + t + k * p.block_threads;
                                    if i < nvec {
                                        for j in 0..p.vec_width {
                                            count[row * p.cols + i * p.vec_width + j] += 1;
                                        }
                                    }
                                }
                            }
                            c0 += step;
                        }
                        row += p.grid_blocks;
                    }
                }
            }
        }
        count
    }

    #[test]
    fn every_element_is_written_exactly_once_for_awkward_rows() {
        for dt in Dtype::ALL {
            for &cols in &AWKWARD {
                for rows in [1, 3, 5] {
                    let p = plan(rows, cols, dt, DEFAULT_VALUES_PER_THREAD).unwrap();
                    let w = writes(&p);
                    assert!(
                        w.iter().all(|&c| c == 1),
                        "{dt} {rows}x{cols} {p:?}: element written {:?} times",
                        w.iter().find(|&&c| c != 1)
                    );
                }
            }
        }
    }

    #[test]
    fn plans_respect_the_hardware_and_the_register_budget() {
        for dt in Dtype::ALL {
            for vpt in [8, 16, 32, 64] {
                for &cols in &AWKWARD {
                    let p = plan(4096, cols, dt, vpt).unwrap();
                    assert_eq!(p.cols % p.vec_width, 0, "{p:?}");
                    assert_eq!(p.threads_per_row % 32, 0, "{p:?}");
                    assert!(
                        p.block_threads <= 1024 && p.block_threads % 32 == 0,
                        "{p:?}"
                    );
                    assert_eq!(p.block_threads, p.threads_per_row * p.rows_per_block);
                    assert!(p.grid_blocks * p.rows_per_block >= 4096, "{p:?}");
                    assert!(all_kernel_names().contains(&p.kernel), "{p:?}");
                    if p.variant == Variant::Regs {
                        assert!(p.values_per_thread() <= vpt.max(p.vec_width), "{p:?}");
                        let cover = p.threads_per_row * p.vectors_per_thread * p.vec_width;
                        assert!(cover >= cols, "{p:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn chosen_configurations_for_the_default_sweep() {
        let p = plan(2048, 1024, Dtype::F32, 32).unwrap();
        assert_eq!(
            (p.vec_width, p.vectors_per_thread, p.threads_per_row),
            (4, 8, 32)
        );
        assert_eq!(
            (p.block_threads, p.rows_per_block, p.grid_blocks),
            (128, 4, 512)
        );
        let p = plan(4096, 8192, Dtype::F32, 32).unwrap();
        assert_eq!(
            (p.vec_width, p.vectors_per_thread, p.threads_per_row),
            (4, 8, 256)
        );
        assert_eq!(
            (p.block_threads, p.rows_per_block, p.grid_blocks),
            (256, 1, 4096)
        );
        let p = plan(4096, 8192, Dtype::Bf16, 32).unwrap();
        assert_eq!(
            (p.vec_width, p.vectors_per_thread, p.threads_per_row),
            (8, 4, 256)
        );
        assert_eq!(p.kernel, "layernorm_regs_bf16_v8_n4");
        let p = plan(1, 2048, Dtype::F16, 32).unwrap();
        assert_eq!((p.threads_per_row, p.grid_blocks), (64, 1));
    }

    #[test]
    fn awkward_lengths_fall_back_to_scalar_or_long_rows() {
        let p = plan(3, 7, Dtype::F32, 32).unwrap();
        assert_eq!(
            (p.vec_width, p.vectors_per_thread, p.threads_per_row),
            (1, 1, 32)
        );
        let p = plan(3, 1025, Dtype::F16, 32).unwrap();
        assert_eq!((p.vec_width, p.variant), (1, Variant::Regs));
        assert!(p.threads_per_row * p.vectors_per_thread >= 1025);
        let p = plan(3, 65536, Dtype::F32, 32).unwrap();
        assert_eq!((p.variant, p.vec_width), (Variant::Long, 4));
        assert_eq!(p.kernel, "layernorm_long_f32_v4");
        let p = plan(3, 32769, Dtype::Bf16, 32).unwrap();
        assert_eq!((p.variant, p.vec_width), (Variant::Long, 1));
        // 32768 f32 values fit exactly: 1024 threads x 8 vectors x 4.
        assert_eq!(
            plan(1, 32768, Dtype::F32, 32).unwrap().variant,
            Variant::Regs
        );
    }

    #[test]
    fn bad_requests_are_refused_with_the_reason() {
        assert!(format!("{}", plan(0, 8, Dtype::F32, 32).unwrap_err()).contains("at least one"));
        assert!(format!("{}", plan(8, 0, Dtype::F32, 32).unwrap_err()).contains("at least one"));
        let e = plan(8, 8, Dtype::F32, 12).unwrap_err();
        assert!(format!("{e}").contains("--values-per-thread"));
    }

    /// Expands `LN_ALL(...)` from the kernel source and checks it instantiates every name.
    #[test]
    fn every_planned_kernel_is_instantiated_in_the_cu_file() {
        let src =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/layernorm.cu"))
                .unwrap();
        // The macro body: the lines after `#define LN_ALL` up to the first without a `\`.
        let mut body: Vec<&str> = Vec::new();
        for l in src
            .lines()
            .skip_while(|l| !l.starts_with("#define LN_ALL"))
            .skip(1)
        {
            body.push(l);
            if !l.trim_end().ends_with('\\') {
                break;
            }
        }
        let mut defined = Vec::new();
        for call in src.lines().filter(|l| l.starts_with("LN_ALL(")) {
            let args: Vec<&str> = call["LN_ALL(".len()..call.len() - 1]
                .split(',')
                .map(str::trim)
                .collect();
            for line in &body {
                let inner = line
                    .trim()
                    .split('(')
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .next()
                    .unwrap();
                defined.push(
                    inner
                        .replace("##DT##", args[0])
                        .replace("##VFULL##", args[2])
                        .replace("##VFULL", args[2]),
                );
            }
        }
        for name in all_kernel_names() {
            assert!(
                defined.contains(&name),
                "{name} is not instantiated in kernels/layernorm.cu"
            );
        }
    }
}
