//! Launch-configuration arithmetic for kernels/layernorm.cu, kept pure so that awkward row
//! lengths (1, 7, 1023, 1025, 4097, 65536, ...) are tested on the CPU.

use super::Dtype;
use anyhow::{bail, Result};
use clap::ValueEnum;

/// Row-group sizes run from one warp to one block of this many threads.
pub const MAX_GROUP_THREADS: usize = 1024;
/// Blocks of fewer threads than this hold several row groups (warp-per-row for short rows).
pub const MIN_BLOCK_THREADS: usize = 128;
/// Threads per block of the long-row kernel.
pub const LONG_BLOCK_THREADS: usize = 512;
/// Vectors each thread of the long-row kernel loads per step (`LONG_CHUNK` in the .cu file).
pub const LONG_CHUNK: usize = 4;
/// Row bytes each thread holds by default (>= `FEW_ROWS` rows): 4 loads of 16 bytes. 64 is
/// faster than 128 for f16/bf16 at every large shape (with 64 values per thread the per-thread
/// arithmetic, not the loads in flight, is the limit) and within noise for f32 except short
/// rows; the measurements are in docs/notes/layernorm.md.
pub const DEFAULT_BYTES_PER_THREAD: usize = 64;
/// Row bytes per thread the default falls back to where 64 would cost more than it gains: a row
/// that fits one warp at this size with <= `ONE_WARP_MAX_VALUES` values per thread (f32 rows of
/// up to 1024: 64 bytes would add a shared-memory step and two barriers per row, measured 11%
/// slower cold at 4096x1024), or a row that 64 bytes would send to the two-pass long kernel.
pub const WIDE_BYTES_PER_THREAD: usize = 128;
/// See `WIDE_BYTES_PER_THREAD`.
pub const ONE_WARP_MAX_VALUES: usize = 32;
/// With fewer rows than this the run is latency-bound: spread each row over more threads.
pub const FEW_ROWS: usize = 128;
/// Row bytes per thread when there are fewer than `FEW_ROWS` rows.
pub const FEW_ROWS_BYTES_PER_THREAD: usize = 16;
/// A default plan of fewer threads than this (rows x threads per row; a 132-SM H100 or H200
/// holds 270,336) is latency-bound: each thread's serial work, not the bytes in flight, sets
/// its time, so it takes `SMALL_GRID_BYTES_PER_THREAD` instead (twice or four times the
/// threads). Measured at 2048x1024 (docs/notes/layernorm.md); 4096x1024 has exactly this many
/// and keeps its plan.
pub const SMALL_GRID_THREADS: usize = 1 << 17;
/// Row bytes per thread of a plan below `SMALL_GRID_THREADS`.
pub const SMALL_GRID_BYTES_PER_THREAD: usize = 32;
/// The kernels grid-stride over rows, so the grid never needs to exceed this.
pub const MAX_GRID_BLOCKS: usize = 1 << 24;
/// Shared memory one SM offers blocks (H100/H200: 228 KB, less 1 KB reserved per block).
pub const SMEM_PER_SM: usize = 220 * 1024;
/// The largest block the pipe kernels are compiled for (`__launch_bounds__`).
pub const PIPE_MAX_THREADS: usize = 512;

/// Vectors per thread instantiated for 16-byte accesses (`LN_ALL` in the .cu file).
pub const REGS_NV_VECTOR: [usize; 4] = [1, 2, 4, 8];
/// Vectors per thread instantiated for one-element accesses.
pub const REGS_NV_SCALAR: [usize; 6] = [1, 2, 4, 8, 16, 32];
/// Ring depths instantiated for the pipe kernels.
pub const PIPE_STAGES: [usize; 3] = [2, 3, 4];

/// The `__launch_bounds__` of `layernorm_regs_*_v{vec}_n{nv}` (`LN_ALL` in the .cu file):
/// the largest block it may run in, which keeps its registers within that block's share.
pub fn max_group_threads(vec: usize, nv: usize) -> usize {
    match (vec, nv) {
        (1, 16 | 32) => 256,
        (1, 8) => 512,
        (1, _) => 1024,
        (_, 4 | 8) => 512,
        _ => 1024,
    }
}

/// Which kernel family a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelChoice {
    /// The row in registers (or the long-row kernel): the default, fastest when measured.
    Regs,
    /// The cp.async ring where rows are 16-byte aligned and fit, else as regs. Measured
    /// slower than regs on the H200 (docs/notes/layernorm.md); kept as an experiment.
    Pipe,
    /// Persistent grid, each group's next row loaded into registers ahead, where rows are
    /// 16-byte aligned and there are enough of them; else as regs. Measured on the H100:
    /// faster than regs at 32 MB f16/bf16, slower from 128 MB (docs/notes/layernorm.md).
    Stream,
}

/// How the regs kernel reads x: with the evict-first hint (`.cs`, the lines are the first L2
/// evicts) or under an L2 evict-last policy (the `keep` kernels). y is stored `.cs` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum XCache {
    /// Evict-last for f32 tensors with at least 128 MiB of x (`EVICT_LAST_MIN_X_BYTES`),
    /// evict-first elsewhere: where each measured faster (docs/notes/layernorm.md).
    Auto,
    /// Evict-first everywhere.
    First,
    /// Evict-last wherever the plan is the regs kernel with 16-byte vectors.
    Last,
}

/// Under `XCache::Auto`, f32 x of at least this many bytes is read evict-last. On H200s the gain
/// grows with the size: 1.2-1.7% at 128 MiB of x on three boards (0.9% slower on a fourth),
/// 2.1-2.6% at 256 MiB and 2.6-3.6% at 512 MiB; at 32-64 MiB it was 5-14% slower. 16-bit rows
/// moved both ways (-2.0% to +2.6% at 256-512 MiB of x), so they stay evict-first.
pub const EVICT_LAST_MIN_X_BYTES: usize = 128 << 20;

/// Kernel names of the regs family and of its evict-last twin (`LN_ALL` in the .cu file).
const REGS_PREFIX: &str = "layernorm_regs_";
const KEEP_PREFIX: &str = "layernorm_keep_";

/// How many blocks our kernel's grid has (every kernel grid-strides over row groups, so any
/// of these covers every row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GridChoice {
    /// One block per row group, handed out by the hardware as blocks finish, so SMs that get
    /// more DRAM bandwidth take more rows. The fastest measured (docs/notes/layernorm.md).
    Rows,
    /// Persistent: as many blocks as fit on the device at once, each looping over row groups.
    /// Measured 1.1-9.0 points of copy below rows at >= 64 MiB (H100, H200): with a fixed set
    /// of rows per SM the SM with the smallest share of DRAM bandwidth sets the time.
    Fill,
    /// Persistent, with the fewest blocks that keep Fill's number of passes, so that every
    /// block loops over the same number of row groups, give or take one. Measured as Fill.
    Even,
}

impl GridChoice {
    pub fn name(self) -> &'static str {
        match self {
            GridChoice::Rows => "rows",
            GridChoice::Fill => "fill",
            GridChoice::Even => "even",
        }
    }
}

/// Which kernel family runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The row lives in registers of a group of threads: one read of x.
    Regs,
    /// As Regs, fed by a persistent grid through a cp.async ring of `stages` rows per group.
    Pipe,
    /// As Regs on a persistent grid, the next row loaded into registers while the current
    /// one is reduced and written.
    Stream,
    /// Row too long for registers: statistics pass, then a second read of x to write y.
    Long,
}

impl Variant {
    /// The grid a family gets unless `--grid` says otherwise: the streaming families are
    /// built to be persistent.
    pub fn default_grid(self) -> GridChoice {
        match self {
            Variant::Pipe | Variant::Stream => GridChoice::Fill,
            Variant::Regs | Variant::Long => GridChoice::Rows,
        }
    }
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
    /// How `grid_blocks` is chosen.
    pub grid: GridChoice,
    /// Blocks launched; for a persistent grid, an upper bound until `fit_to_device`.
    pub grid_blocks: usize,
    /// Ring depth of the pipe kernel (1 otherwise).
    pub stages: usize,
    /// Dynamic shared memory per block (the pipe kernel's ring).
    pub smem_bytes: usize,
    /// The `extern "C"` name in kernels/layernorm.cu.
    pub kernel: String,
}

impl LaunchPlan {
    /// Short name for artifacts and tables, e.g. "regs_v4_n8_tpr32", "pipe_n8_s3_tpr256",
    /// "regs_v4_n4_tpr256_grid-even" (the grid is named where it is not the family's default).
    pub fn variant_name(&self) -> String {
        let mut name = self.family_name();
        if self.x_evict_last() {
            name.push_str("_xlast");
        }
        if self.grid == self.variant.default_grid() {
            name
        } else {
            format!("{name}_grid-{}", self.grid.name())
        }
    }

    fn family_name(&self) -> String {
        match self.variant {
            Variant::Regs => format!(
                "regs_v{}_n{}_tpr{}",
                self.vec_width, self.vectors_per_thread, self.threads_per_row
            ),
            Variant::Pipe => format!(
                "pipe_n{}_s{}_tpr{}",
                self.vectors_per_thread, self.stages, self.threads_per_row
            ),
            Variant::Stream => format!(
                "stream_n{}_tpr{}",
                self.vectors_per_thread, self.threads_per_row
            ),
            Variant::Long => format!("long_v{}", self.vec_width),
        }
    }

    /// Row values per thread in the regs and pipe kernels.
    pub fn values_per_thread(&self) -> usize {
        self.vec_width * self.vectors_per_thread
    }

    /// Whether the kernel runs on a persistent grid sized by `fit_to_device`.
    pub fn persistent(&self) -> bool {
        self.grid != GridChoice::Rows
    }

    /// The plan with another grid policy (None: the family's default).
    pub fn with_grid(mut self, grid: Option<GridChoice>) -> Self {
        self.grid = grid.unwrap_or(self.variant.default_grid());
        self
    }

    /// Whether x is read under an L2 evict-last policy (a `keep` kernel) instead of evict-first.
    pub fn x_evict_last(&self) -> bool {
        self.kernel.starts_with(KEEP_PREFIX)
    }

    /// The plan with x read as `choice` says, where the plan is the regs kernel with 16-byte
    /// vectors (the only kernels with an evict-last variant); every other plan is unchanged.
    pub fn with_x_cache(mut self, choice: XCache) -> Self {
        let x_bytes = self.rows * self.cols * self.dtype.size_bytes();
        let last = match choice {
            XCache::First => false,
            XCache::Last => true,
            XCache::Auto => self.dtype == Dtype::F32 && x_bytes >= EVICT_LAST_MIN_X_BYTES,
        };
        let full = 16 / self.dtype.size_bytes();
        if self.variant == Variant::Regs && self.vec_width == full && last != self.x_evict_last() {
            let (from, to) = if last {
                (REGS_PREFIX, KEEP_PREFIX)
            } else {
                (KEEP_PREFIX, REGS_PREFIX)
            };
            self.kernel = self.kernel.replacen(from, to, 1);
        }
        self
    }

    /// Sizes a persistent grid from what the device holds at once (`blocks_per_sm` from the
    /// occupancy query): Fill takes all of it, never more than there are row groups; Even
    /// takes the fewest blocks that need no more passes than Fill, so the passes per block
    /// differ by at most one.
    pub fn fit_to_device(mut self, sm_count: usize, blocks_per_sm: usize) -> Result<Self> {
        if self.persistent() {
            if blocks_per_sm == 0 {
                bail!(
                    "{}: no block of {} threads with {} bytes of shared memory fits on an SM",
                    self.kernel,
                    self.block_threads,
                    self.smem_bytes
                );
            }
            let groups = ceil_div(self.rows, self.rows_per_block);
            let resident = (sm_count * blocks_per_sm).max(1);
            let blocks = if self.grid == GridChoice::Even {
                ceil_div(groups, ceil_div(groups, resident))
            } else {
                groups.min(resident)
            };
            self.grid_blocks = blocks.clamp(1, MAX_GRID_BLOCKS);
        }
        Ok(self)
    }
}

fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// Ring depth for a pipe block whose one stage takes `stage_bytes`: the depth that keeps the
/// most bytes in flight per SM, (stages - 1) x stage x blocks that fit; ties to fewer stages.
pub fn pipe_stages(stage_bytes: usize) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for s in PIPE_STAGES {
        let blocks = SMEM_PER_SM / (s * stage_bytes);
        let inflight = blocks * (s - 1) * stage_bytes;
        if blocks > 0 && best.is_none_or(|(_, b)| inflight > b) {
            best = Some((s, inflight));
        }
    }
    best.map(|(s, _)| s)
}

/// Plans the launch for `rows` rows of `cols` elements of `dtype`. Each thread holds at most
/// `bytes_per_thread` bytes of its row (16..=256, a power of two); None: 16 for fewer than
/// `FEW_ROWS` rows, else `DEFAULT_BYTES_PER_THREAD` (64) unless `WIDE_BYTES_PER_THREAD` (128)
/// keeps the row in one warp with few values per thread or out of the long-row kernel, and
/// `SMALL_GRID_BYTES_PER_THREAD` (32) where either would launch fewer than
/// `SMALL_GRID_THREADS` threads.
/// `choice` picks the kernel family.
pub fn plan(
    rows: usize,
    cols: usize,
    dtype: Dtype,
    bytes_per_thread: Option<usize>,
    choice: KernelChoice,
) -> Result<LaunchPlan> {
    let bpt = match bytes_per_thread {
        Some(b) => b,
        None if rows < FEW_ROWS => FEW_ROWS_BYTES_PER_THREAD,
        None => {
            let narrow = plan_with(rows, cols, dtype, DEFAULT_BYTES_PER_THREAD, choice)?;
            let wide = plan_with(rows, cols, dtype, WIDE_BYTES_PER_THREAD, choice)?;
            let one_warp = wide.variant != Variant::Long
                && wide.threads_per_row == 32
                && narrow.threads_per_row > 32
                && wide.values_per_thread() <= ONE_WARP_MAX_VALUES;
            let avoids_long = narrow.variant == Variant::Long && wide.variant != Variant::Long;
            let chosen = if one_warp || avoids_long {
                wide
            } else {
                narrow
            };
            if chosen.variant != Variant::Long && rows * chosen.threads_per_row < SMALL_GRID_THREADS
            {
                let spread = plan_with(rows, cols, dtype, SMALL_GRID_BYTES_PER_THREAD, choice)?;
                if spread.variant != Variant::Long {
                    return Ok(spread);
                }
            }
            return Ok(chosen);
        }
    };
    plan_with(rows, cols, dtype, bpt, choice)
}

/// `plan` with the bytes per thread given.
fn plan_with(
    rows: usize,
    cols: usize,
    dtype: Dtype,
    bpt: usize,
    choice: KernelChoice,
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
    if !bpt.is_power_of_two() || !(16..=256).contains(&bpt) {
        bail!("--bytes-per-thread {bpt}: use a power of two from 16 to 256");
    }
    let full = 16 / dtype.size_bytes();
    let vec = if cols.is_multiple_of(full) { full } else { 1 };
    let instantiated: &[usize] = if vec == 1 {
        &REGS_NV_SCALAR
    } else {
        &REGS_NV_VECTOR
    };
    let budget = (bpt / (vec * dtype.size_bytes())).max(1);
    let nv_cap = *instantiated
        .iter()
        .filter(|&&n| n <= budget)
        .max()
        .unwrap_or(&1);
    let nvec = cols / vec;
    let mut tpr = 32;
    while tpr <= MAX_GROUP_THREADS {
        let need = ceil_div(nvec, tpr);
        if need <= nv_cap {
            let nv = *instantiated
                .iter()
                .find(|&&n| n >= need)
                .expect("need <= nv_cap, which is instantiated");
            let block = tpr.max(MIN_BLOCK_THREADS);
            if block <= max_group_threads(vec, nv) {
                let rpb = block / tpr;
                // With few rows there is nothing to stream: the plain kernel has less latency.
                let pipe = choice == KernelChoice::Pipe
                    && vec == full
                    && block <= PIPE_MAX_THREADS
                    && rows >= FEW_ROWS;
                let stage_bytes = nv * 16 * block;
                let stages = if pipe { pipe_stages(stage_bytes) } else { None };
                let stream = choice == KernelChoice::Stream && vec == full && rows >= FEW_ROWS;
                let (variant, stages, kernel) = match stages {
                    Some(s) => (
                        Variant::Pipe,
                        s,
                        format!("layernorm_pipe_{}_n{nv}_s{s}", dtype.name()),
                    ),
                    None if stream => (
                        Variant::Stream,
                        1,
                        format!("layernorm_stream_{}_v{vec}_n{nv}", dtype.name()),
                    ),
                    None => (
                        Variant::Regs,
                        1,
                        format!("{REGS_PREFIX}{}_v{vec}_n{nv}", dtype.name()),
                    ),
                };
                return Ok(LaunchPlan {
                    rows,
                    cols,
                    dtype,
                    variant,
                    vec_width: vec,
                    vectors_per_thread: nv,
                    threads_per_row: tpr,
                    rows_per_block: rpb,
                    block_threads: block,
                    grid: variant.default_grid(),
                    grid_blocks: ceil_div(rows, rpb).min(MAX_GRID_BLOCKS),
                    stages,
                    smem_bytes: if variant == Variant::Pipe {
                        stages * stage_bytes
                    } else {
                        0
                    },
                    kernel,
                });
            }
        }
        tpr *= 2;
    }
    Ok(LaunchPlan {
        rows,
        cols,
        dtype,
        variant: Variant::Long,
        vec_width: vec,
        vectors_per_thread: LONG_CHUNK,
        threads_per_row: LONG_BLOCK_THREADS,
        rows_per_block: 1,
        block_threads: LONG_BLOCK_THREADS,
        grid: GridChoice::Rows,
        grid_blocks: rows.min(MAX_GRID_BLOCKS),
        stages: 1,
        smem_bytes: 0,
        kernel: format!("layernorm_long_{}_v{vec}", dtype.name()),
    })
}

/// Every kernel name `plan` can return, for checking against the .cu file.
pub fn all_kernel_names() -> Vec<String> {
    let mut names = Vec::new();
    for dt in crate::layernorm::dtype::LAYERNORM_DTYPES {
        let full = 16 / dt.size_bytes();
        for nv in REGS_NV_VECTOR {
            names.push(format!("{REGS_PREFIX}{}_v{full}_n{nv}", dt.name()));
            names.push(format!("{KEEP_PREFIX}{}_v{full}_n{nv}", dt.name()));
            names.push(format!("layernorm_stream_{}_v{full}_n{nv}", dt.name()));
            for s in PIPE_STAGES {
                names.push(format!("layernorm_pipe_{}_n{nv}_s{s}", dt.name()));
            }
        }
        for nv in REGS_NV_SCALAR {
            names.push(format!("{REGS_PREFIX}{}_v1_n{nv}", dt.name()));
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
    const CHOICES: [KernelChoice; 3] =
        [KernelChoice::Pipe, KernelChoice::Regs, KernelChoice::Stream];

    /// Replays the kernels' index arithmetic on the CPU: how many times each element is written.
    fn writes(p: &LaunchPlan) -> Vec<u32> {
        let mut count = vec![0u32; p.rows * p.cols];
        let nvec = p.cols / p.vec_width;
        let mut hit = |row: usize, i: usize| {
            for j in 0..p.vec_width {
                count[row * p.cols + i * p.vec_width + j] += 1;
            }
        };
        for b in 0..p.grid_blocks {
            match p.variant {
                // Both loop `base = b * rpb; base < rows; base += grid * rpb` over row groups.
                Variant::Regs | Variant::Pipe | Variant::Stream => {
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
                                        hit(row, i);
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
                                        hit(row, i);
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
        for dt in crate::layernorm::dtype::LAYERNORM_DTYPES {
            for &cols in &AWKWARD {
                for rows in [1, 3, 5, 130] {
                    for choice in CHOICES {
                        // Tiny persistent grids too, so blocks loop over several row groups.
                        for grid in [None, Some(GridChoice::Fill), Some(GridChoice::Even)] {
                            for blocks_per_sm in [1, 8] {
                                let p = plan(rows, cols, dt, None, choice)
                                    .unwrap()
                                    .with_grid(grid)
                                    .fit_to_device(2, blocks_per_sm)
                                    .unwrap();
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
            }
        }
    }

    #[test]
    fn plans_respect_the_hardware_and_the_register_budget() {
        for dt in crate::layernorm::dtype::LAYERNORM_DTYPES {
            for bpt in [16, 32, 64, 128, 256] {
                for &cols in &AWKWARD {
                    for choice in CHOICES {
                        let p = plan(4096, cols, dt, Some(bpt), choice).unwrap();
                        assert_eq!(p.cols % p.vec_width, 0, "{p:?}");
                        assert_eq!(p.threads_per_row % 32, 0, "{p:?}");
                        assert!(
                            p.block_threads <= 1024 && p.block_threads.is_multiple_of(32),
                            "{p:?}"
                        );
                        assert_eq!(p.block_threads, p.threads_per_row * p.rows_per_block);
                        assert!(p.grid_blocks * p.rows_per_block >= 4096, "{p:?}");
                        assert!(all_kernel_names().contains(&p.kernel), "{p:?}");
                        match p.variant {
                            Variant::Regs | Variant::Pipe | Variant::Stream => {
                                let bytes = p.values_per_thread() * dt.size_bytes();
                                assert!(bytes <= bpt.max(p.vec_width * dt.size_bytes()), "{p:?}");
                                let cover = p.threads_per_row * p.vectors_per_thread * p.vec_width;
                                assert!(cover >= cols, "{p:?}");
                                let maxt = if p.variant == Variant::Pipe {
                                    PIPE_MAX_THREADS
                                } else {
                                    max_group_threads(p.vec_width, p.vectors_per_thread)
                                };
                                assert!(p.block_threads <= maxt, "{p:?}");
                            }
                            Variant::Long => assert_eq!(p.block_threads, LONG_BLOCK_THREADS),
                        }
                        if p.variant == Variant::Pipe {
                            assert_eq!(p.vec_width * dt.size_bytes(), 16);
                            assert_eq!(
                                p.smem_bytes,
                                p.stages * p.vectors_per_thread * 16 * p.block_threads
                            );
                            assert!(p.smem_bytes <= SMEM_PER_SM, "{p:?}");
                            assert_ne!(choice, KernelChoice::Regs);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn chosen_configurations_for_the_default_sweep() {
        let p = plan(2048, 1024, Dtype::F32, None, KernelChoice::Regs).unwrap();
        assert_eq!(
            (p.block_threads, p.rows_per_block, p.grid_blocks),
            (128, 1, 2048)
        );
        assert_eq!(p.kernel, "layernorm_regs_f32_v4_n2");
        // (rows, cols, dtype) -> the default regs kernel: 64 bytes per thread, except f32 rows
        // of 1024 (one warp of 32 values at 128 bytes, two warps at 64), 16384/32768-value
        // rows (64 bytes would need the long-row kernel), and plans of fewer than
        // SMALL_GRID_THREADS threads (2048 rows of 1024: 32 bytes per thread).
        let want = [
            (2048, 1024, Dtype::F32, "regs_v4_n2_tpr128"),
            (2048, 1024, Dtype::F16, "regs_v8_n2_tpr64"),
            (4096, 1024, Dtype::F32, "regs_v4_n8_tpr32"),
            (4096, 2048, Dtype::F32, "regs_v4_n4_tpr128"),
            (4096, 2048, Dtype::Bf16, "regs_v8_n4_tpr64"),
            (4096, 4096, Dtype::F32, "regs_v4_n4_tpr256"),
            (4096, 4096, Dtype::F16, "regs_v8_n4_tpr128"),
            (4096, 8192, Dtype::F32, "regs_v4_n4_tpr512"),
            (4096, 8192, Dtype::Bf16, "regs_v8_n4_tpr256"),
            (16384, 8192, Dtype::F16, "regs_v8_n4_tpr256"),
            (32768, 4096, Dtype::F32, "regs_v4_n4_tpr256"),
            (32768, 4096, Dtype::Bf16, "regs_v8_n4_tpr128"),
            (300, 16384, Dtype::F32, "regs_v4_n8_tpr512"),
            (300, 32768, Dtype::F16, "regs_v8_n8_tpr512"),
            (1, 2048, Dtype::F16, "regs_v8_n1_tpr256"),
            (127, 2048, Dtype::F32, "regs_v4_n1_tpr512"),
        ];
        for (rows, cols, dt, name) in want {
            let p = plan(rows, cols, dt, None, KernelChoice::Regs).unwrap();
            assert_eq!(p.variant_name(), name, "{rows}x{cols} {dt}");
        }
        // An explicit --bytes-per-thread wins over the rule.
        let p = plan(4096, 1024, Dtype::F32, Some(64), KernelChoice::Regs).unwrap();
        assert_eq!(p.variant_name(), "regs_v4_n4_tpr64");
        let p = plan(4096, 8192, Dtype::Bf16, Some(128), KernelChoice::Regs).unwrap();
        assert_eq!(p.variant_name(), "regs_v8_n8_tpr128");
        // The ring, where asked for: 64-byte stages of 512 threads, 3 deep.
        let p = plan(4096, 8192, Dtype::F32, None, KernelChoice::Pipe).unwrap();
        assert_eq!(
            (p.variant, p.vectors_per_thread, p.threads_per_row),
            (Variant::Pipe, 4, 512)
        );
        assert_eq!(p.smem_bytes, p.stages * 4 * 16 * 512);
        let p = p.fit_to_device(132, 1).unwrap();
        assert_eq!(p.grid_blocks, 132);
    }

    #[test]
    fn x_is_read_evict_last_only_where_the_rule_or_the_user_says() {
        let regs = KernelChoice::Regs;
        let auto = |rows, cols, dt| {
            plan(rows, cols, dt, None, regs)
                .unwrap()
                .with_x_cache(XCache::Auto)
        };
        // 128 MiB of f32 x and more: the keep kernel, same launch.
        for (rows, cols) in [(32768, 4096), (16384, 8192), (16384, 4096), (4096, 8192)] {
            let p = auto(rows, cols, Dtype::F32);
            assert!(p.x_evict_last(), "{rows}x{cols}");
            assert_eq!(p.kernel, "layernorm_keep_f32_v4_n4");
            let base = plan(rows, cols, Dtype::F32, None, regs).unwrap();
            assert_eq!(p.variant_name(), format!("{}_xlast", base.variant_name()));
            assert_eq!(
                (p.block_threads, p.threads_per_row, p.grid_blocks),
                (base.block_threads, base.threads_per_row, base.grid_blocks)
            );
        }
        // Below the size, 16-bit rows, scalar rows, the long kernel: unchanged.
        for (rows, cols, dt) in [
            (4096, 4096, Dtype::F32),
            (8191, 4096, Dtype::F32),
            (32768, 8192, Dtype::Bf16),
            (65536, 4095, Dtype::F32),
            (8192, 65536, Dtype::F32),
        ] {
            let p = auto(rows, cols, dt);
            assert!(!p.x_evict_last(), "{rows}x{cols} {dt}");
            assert!(!p.kernel.contains("keep"), "{rows}x{cols} {dt}");
        }
        // Asked for: every regs plan with 16-byte vectors, and back again.
        let p = plan(4096, 1024, Dtype::Bf16, None, regs)
            .unwrap()
            .with_x_cache(XCache::Last);
        assert_eq!(p.kernel, "layernorm_keep_bf16_v8_n4");
        let p = p.with_x_cache(XCache::First);
        assert_eq!(p.kernel, "layernorm_regs_bf16_v8_n4");
        assert!(!p.x_evict_last());
        let p = auto(32768, 4096, Dtype::F32).with_x_cache(XCache::First);
        assert_eq!(p.kernel, "layernorm_regs_f32_v4_n4");
        let p = plan(4096, 4096, Dtype::F16, None, KernelChoice::Stream)
            .unwrap()
            .with_x_cache(XCache::Last);
        assert_eq!(p.kernel, "layernorm_stream_f16_v8_n4");
    }

    #[test]
    fn ring_depth_keeps_the_most_bytes_in_flight() {
        // 16 KB stages: 4 deep -> 3 blocks x 3 stages = 144 KB beats 3 deep (4 x 2 = 128 KB).
        assert_eq!(pipe_stages(16 * 1024), Some(4));
        // 64 KB stages: only 3 x 64 KB fits; 2 deep would keep 64 KB in flight, 3 deep 128 KB.
        assert_eq!(pipe_stages(64 * 1024), Some(3));
        assert_eq!(pipe_stages(200 * 1024), None);
        let e = plan(4096, 4096, Dtype::F32, None, KernelChoice::Pipe)
            .unwrap()
            .fit_to_device(132, 0)
            .unwrap_err();
        assert!(format!("{e}").contains("fits on an SM"));
    }

    #[test]
    fn stream_is_persistent_where_it_applies_and_regs_elsewhere() {
        let s = KernelChoice::Stream;
        let p = plan(4096, 4096, Dtype::F16, None, s).unwrap();
        assert_eq!(p.variant, Variant::Stream);
        assert_eq!(p.kernel, "layernorm_stream_f16_v8_n4");
        assert_eq!(p.variant_name(), "stream_n4_tpr128");
        assert!(p.persistent());
        // 132 SMs x 8 blocks of one row each: fewer blocks than the 4096 row groups.
        assert_eq!(p.clone().fit_to_device(132, 8).unwrap().grid_blocks, 1056);
        // The grid never exceeds the row groups.
        assert_eq!(p.fit_to_device(132, 64).unwrap().grid_blocks, 4096);
        // Too few rows, rows that are not 16-byte multiples, rows for the long kernel: as regs.
        for (rows, cols) in [(127, 4096), (4096, 1023), (3, 65536)] {
            let p = plan(rows, cols, Dtype::F32, None, s).unwrap();
            assert_ne!(p.variant, Variant::Stream, "{rows}x{cols}");
            assert!(!p.persistent() || p.variant == Variant::Pipe);
        }
        let e = plan(4096, 4096, Dtype::F32, None, s)
            .unwrap()
            .fit_to_device(132, 0)
            .unwrap_err();
        assert!(format!("{e}").contains("fits on an SM"));
    }

    #[test]
    fn even_grids_give_every_block_the_same_passes_give_or_take_one() {
        // Row groups per block in the kernels' loop: base = b, b + grid, ... < groups.
        let passes = |groups: usize, grid: usize, b: usize| (groups - b).div_ceil(grid);
        for (rows, resident) in [(4096, 792), (4096, 132), (32768, 781), (130, 264), (1, 8)] {
            let p = plan(rows, 4096, Dtype::F32, None, KernelChoice::Regs).unwrap();
            assert_eq!(p.grid, GridChoice::Rows);
            assert_eq!(p.grid_blocks, rows, "rows grid: one block per row");
            let fill = p.clone().with_grid(Some(GridChoice::Fill));
            let fill = fill.fit_to_device(resident, 1).unwrap();
            let even = p.with_grid(Some(GridChoice::Even));
            let even = even.fit_to_device(resident, 1).unwrap();
            assert_eq!(fill.grid_blocks, rows.min(resident));
            assert!(
                even.grid_blocks <= fill.grid_blocks,
                "{rows} rows, {resident}"
            );
            let most = passes(rows, fill.grid_blocks, 0);
            assert_eq!(passes(rows, even.grid_blocks, 0), most, "no extra pass");
            let least = passes(rows, even.grid_blocks, even.grid_blocks - 1);
            assert!(
                most - least <= 1,
                "{rows} rows, {resident}: {most} vs {least}"
            );
        }
        // 4096 rows, 792 resident: fill leaves 136 blocks a sixth pass; even runs 683 blocks,
        // 681 of them six passes and 2 five.
        let p = plan(4096, 4096, Dtype::F32, None, KernelChoice::Regs).unwrap();
        let even = p
            .with_grid(Some(GridChoice::Even))
            .fit_to_device(132, 6)
            .unwrap();
        assert_eq!(even.grid_blocks, 683);
        assert_eq!(even.variant_name(), "regs_v4_n4_tpr256_grid-even");
        // The streaming families are persistent by default and named as before.
        let s = plan(4096, 4096, Dtype::F16, None, KernelChoice::Stream).unwrap();
        assert_eq!(s.grid, GridChoice::Fill);
        assert_eq!(s.clone().with_grid(None).variant_name(), "stream_n4_tpr128");
        let rows = s
            .with_grid(Some(GridChoice::Rows))
            .fit_to_device(132, 8)
            .unwrap();
        assert_eq!(
            (rows.grid_blocks, rows.variant_name().as_str()),
            (4096, "stream_n4_tpr128_grid-rows")
        );
    }

    #[test]
    fn awkward_lengths_fall_back_to_scalar_or_long_rows() {
        let pipe = KernelChoice::Pipe;
        let p = plan(3, 7, Dtype::F32, None, pipe).unwrap();
        assert_eq!(
            (p.vec_width, p.vectors_per_thread, p.threads_per_row),
            (1, 1, 32)
        );
        assert_eq!(p.variant, Variant::Regs);
        let p = plan(300, 1025, Dtype::F16, None, pipe).unwrap();
        assert_eq!((p.vec_width, p.variant), (1, Variant::Regs));
        assert!(p.threads_per_row * p.vectors_per_thread >= 1025);
        let p = plan(3, 65536, Dtype::F32, None, pipe).unwrap();
        assert_eq!((p.variant, p.vec_width), (Variant::Long, 4));
        assert_eq!(p.kernel, "layernorm_long_f32_v4");
        let p = plan(3, 32769, Dtype::Bf16, None, pipe).unwrap();
        assert_eq!((p.variant, p.vec_width), (Variant::Long, 1));
        // The first GPU run's failure: 8193 f32 scalars wanted 512 threads of a 210-register
        // kernel. The launch bounds now send it to the long-row kernel.
        let p = plan(2, 8193, Dtype::F32, None, pipe).unwrap();
        assert_eq!(p.variant, Variant::Long);
        // 16384 f32 values fit: 512 threads x 8 vectors x 4; 32768 do not (1024 x 8 > bounds).
        assert_eq!(
            plan(300, 16384, Dtype::F32, None, pipe).unwrap().variant,
            Variant::Pipe
        );
        assert_eq!(
            plan(300, 32768, Dtype::F32, None, KernelChoice::Regs)
                .unwrap()
                .variant,
            Variant::Long
        );
    }

    #[test]
    fn bad_requests_are_refused_with_the_reason() {
        let a = KernelChoice::Pipe;
        assert!(
            format!("{}", plan(0, 8, Dtype::F32, None, a).unwrap_err()).contains("at least one")
        );
        assert!(
            format!("{}", plan(8, 0, Dtype::F32, None, a).unwrap_err()).contains("at least one")
        );
        let e = plan(8, 8, Dtype::F32, Some(12), a).unwrap_err();
        assert!(format!("{e}").contains("--bytes-per-thread"));
    }

    /// Expands `LN_ALL(...)` from the kernel source: every name `plan` can return must be
    /// instantiated, with the launch bound `max_group_threads` / `PIPE_MAX_THREADS` assume.
    #[test]
    fn every_planned_kernel_is_instantiated_in_the_cu_file() {
        let src =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/layernorm.cu"))
                .unwrap();
        let body_of = |name: &str| -> Vec<String> {
            let mut body = Vec::new();
            for l in src
                .lines()
                .skip_while(|l| !l.starts_with(&format!("#define {name}(")))
                .skip(1)
            {
                body.push(l.trim().trim_end_matches('\\').trim().to_string());
                if !l.trim_end().ends_with('\\') {
                    break;
                }
            }
            body
        };
        let args = |call: &str| -> Vec<String> {
            let inner = &call[call.find('(').unwrap() + 1..call.rfind(')').unwrap()];
            inner.split(',').map(|a| a.trim().to_string()).collect()
        };
        let pipe_s = body_of("LN_PIPE_S");
        let mut defined: Vec<(String, usize)> = Vec::new();
        for call in src.lines().filter(|l| l.starts_with("LN_ALL(")) {
            let a = args(call);
            let (dt, t, vfull) = (&a[0], &a[1], &a[2]);
            for line in body_of("LN_ALL") {
                let b = args(&line);
                let sub = |s: &str| {
                    s.replace("##DT##", dt)
                        .replace("##VFULL##", vfull)
                        .replace("##VFULL", vfull)
                };
                if line.starts_with("LN_PIPE_S(") {
                    for pl in &pipe_s {
                        let c = args(pl);
                        let name = c[0].replace("##DT##", dt).replace("##NV##", &b[2]);
                        assert_eq!(c[1], "T");
                        defined.push((name, b[3].parse().unwrap()));
                    }
                } else {
                    assert_eq!(b[1], "T", "{line}");
                    let _ = t;
                    defined.push((sub(&b[0]), b.last().unwrap().parse().unwrap()));
                }
            }
        }
        for name in all_kernel_names() {
            let found = defined.iter().find(|(n, _)| *n == name);
            let (_, maxt) = found
                .unwrap_or_else(|| panic!("{name} is not instantiated in kernels/layernorm.cu"));
            let want = if name.contains("_pipe_") {
                PIPE_MAX_THREADS
            } else if name.contains("_long_") {
                LONG_BLOCK_THREADS
            } else {
                let v: usize = name
                    .split("_v")
                    .nth(1)
                    .unwrap()
                    .split('_')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let n: usize = name.rsplit("_n").next().unwrap().parse().unwrap();
                max_group_threads(v, n)
            };
            assert_eq!(
                *maxt, want,
                "{name}: __launch_bounds__ in the .cu file vs plan.rs"
            );
        }
    }
}
