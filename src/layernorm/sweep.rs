//! What a run covers: shapes (rows x cols, or a tensor shape normalized over its last dim),
//! dtypes, eps and timing settings, with the default sweeps for the GPU and the CPU.

use super::Dtype;
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::path::PathBuf;

/// How warm and cold rows are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimingMethod {
    /// Cold: back-to-back launches cycling through enough buffer sets that each launch's set
    /// was evicted by the launches since its last use (>= 2x L2 of other data in between);
    /// points too small for 64 sets fall back to flush. Warm: back to back on one set. Both
    /// hold the stream while the host queues each sample, so host time stays out.
    Rotate,
    /// Flush before each launch: cold = an L2 flush (a memset of 2x L2) before each launch, one
    /// launch between two events; warm = back-to-back launches on one set, no hold.
    Flush,
}

impl TimingMethod {
    /// What the rows of this method mean, for the artifact's notes.
    pub fn describe(self, l2_bytes: usize, l2_multiple: usize) -> String {
        match self {
            TimingMethod::Rotate => format!(
                "cold rows: back-to-back launches cycling through N buffer sets (x and y; gamma \
                 and beta shared and L2-resident), N the fewest with (N - 1) x bytes moved >= \
                 {l2_multiple} x L2 ({l2_bytes} bytes), at least 2, so between two launches on \
                 one set >= {l2_multiple} x L2 of other data passed through L2 (timing.method \
                 {}); points needing more than {} sets are flushed per launch instead (row \
                 notes). Warm rows: back to back on one set ({}). Both hold the stream with a \
                 short kernel while the host queues each sample, so host enqueue time stays out",
                crate::gpu::rotation::METHOD,
                crate::gpu::rotation::MAX_SETS,
                crate::gpu::rotation::METHOD_HELD,
            ),
            TimingMethod::Flush => format!(
                "cold rows: L2 flushed (memset of 2 x L2 = {} bytes) before each launch, one \
                 launch between two events; warm rows: back-to-back launches, no hold; \
                 timing.method cuda_events",
                2 * l2_bytes
            ),
        }
    }
}

/// A tensor shape; LayerNorm runs over the last dimension, the others are rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape(pub Vec<usize>);

impl Shape {
    pub fn rows(&self) -> usize {
        self.0[..self.0.len() - 1].iter().product()
    }
    pub fn cols(&self) -> usize {
        *self.0.last().expect("a shape has at least one dimension")
    }
    /// Bytes moved by one forward pass: read x once, write y once (gamma/beta not counted).
    pub fn bytes_moved(&self, dtype: Dtype) -> usize {
        2 * self.rows() * self.cols() * dtype.size_bytes()
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|d| d.to_string()).collect();
        f.write_str(&parts.join("x"))
    }
}

impl std::str::FromStr for Shape {
    type Err = anyhow::Error;
    /// "4096x1024" (rows x cols) or "4x512x1024" (normalized over the last dimension).
    fn from_str(s: &str) -> Result<Self> {
        let dims = s
            .split(['x', 'X', ','])
            .map(|d| {
                d.trim().parse::<usize>().with_context(|| {
                    format!("--shape {s:?}: {d:?} is not a whole number; write e.g. 4096x1024 or 4x512x1024")
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if dims.len() < 2 {
            bail!("--shape {s:?}: give at least rows and cols, e.g. 4096x1024 (or 1x2048 for one row)");
        }
        if dims.contains(&0) {
            bail!("--shape {s:?}: every dimension must be at least 1");
        }
        Ok(Shape(dims))
    }
}

/// The default GPU sweep: the seed case, the 4096-row family, two large shapes, one decode row.
pub fn default_gpu_shapes() -> Vec<Shape> {
    [
        vec![4, 512, 1024],
        vec![4096, 1024],
        vec![4096, 2048],
        vec![4096, 4096],
        vec![4096, 8192],
        vec![16384, 8192],
        vec![32768, 4096],
        vec![1, 2048],
    ]
    .into_iter()
    .map(Shape)
    .collect()
}

/// A CPU run only checks the artifact's shape: the seed case and one awkward row length.
pub fn default_cpu_shapes() -> Vec<Shape> {
    vec![
        Shape(vec![4, 512, 1024]),
        Shape(vec![64, 1025]),
        Shape(vec![1, 2048]),
    ]
}

/// Everything a run needs besides the device.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    pub shapes: Vec<Shape>,
    pub dtypes: Vec<Dtype>,
    pub eps: f32,
    pub warmup: usize,
    /// When a measurement (GPU or CPU) stops taking samples.
    pub sampling: crate::harness::Sampling,
    /// Launches per warm sample.
    pub batch: usize,
    /// Row bytes each thread of our kernel holds (None: the plan's default; see `plan::plan`).
    pub bytes_per_thread: Option<usize>,
    /// Which of our kernel families may run.
    pub kernel: super::plan::KernelChoice,
    /// Grid policy of our kernel (None: the family's default, see `plan::Variant::default_grid`).
    pub grid: Option<super::plan::GridChoice>,
    /// How our regs kernel reads x (evict-first or evict-last; see `plan::XCache`).
    pub x_cache: super::plan::XCache,
    /// Cap on resident blocks per SM for persistent grids (None: as many as fit).
    pub blocks_per_sm: Option<usize>,
    /// How warm and cold rows are timed.
    pub timing: TimingMethod,
    /// Cold rotation: how many times the L2 size must pass between two launches on one set.
    pub rotate_l2_multiple: usize,
    /// Seed of the first point's inputs; each point draws fresh ones from seed + index.
    pub seed: u64,
    pub out: PathBuf,
    /// Replace `out` even when it holds a run from another device (`--overwrite`).
    pub overwrite: bool,
}

impl SweepConfig {
    /// Checks the settings before any work starts; errors name the flag.
    pub fn check(&self) -> Result<()> {
        if self.shapes.is_empty() || self.dtypes.is_empty() {
            bail!("nothing to run: give at least one --shape and one --dtype");
        }
        if !(self.eps.is_finite() && self.eps > 0.0) {
            bail!(
                "--eps {}: use a small positive number such as 1e-5",
                self.eps
            );
        }
        self.sampling.check()?;
        if self.batch == 0 {
            bail!("--batch 0: warm samples need at least one launch");
        }
        if self.blocks_per_sm == Some(0) {
            bail!("--blocks-per-sm 0: use at least 1, or leave it out for as many as fit");
        }
        if self.rotate_l2_multiple == 0 {
            bail!("--rotate-l2-multiple 0: use at least 1 (2 is the default, like the flush)");
        }
        for s in &self.shapes {
            for &d in &self.dtypes {
                super::plan::plan(s.rows(), s.cols(), d, self.bytes_per_thread, self.kernel)
                    .with_context(|| format!("--shape {s} --dtype {d}"))?;
            }
        }
        Ok(())
    }

    /// The (index, shape, dtype) points in run order: shape-major.
    pub fn points(&self) -> Vec<(usize, Shape, Dtype)> {
        let mut v = Vec::new();
        for s in &self.shapes {
            for &d in &self.dtypes {
                v.push((v.len(), s.clone(), d));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_print() {
        let s: Shape = "4x512x1024".parse().unwrap();
        assert_eq!(
            (s.rows(), s.cols(), s.to_string()),
            (2048, 1024, "4x512x1024".into())
        );
        let s: Shape = "1x2048".parse().unwrap();
        assert_eq!((s.rows(), s.cols()), (1, 2048));
        assert_eq!(s.bytes_moved(Dtype::Bf16), 8192);
        for bad in ["4096", "4096x", "ax1", "0x8", ""] {
            let e = bad.parse::<Shape>().unwrap_err();
            assert!(format!("{e:#}").contains("--shape"), "{bad}: {e:#}");
        }
    }

    #[test]
    fn the_default_gpu_sweep_has_the_seed_case_the_families_and_a_decode_row() {
        let names: Vec<String> = default_gpu_shapes().iter().map(|s| s.to_string()).collect();
        assert_eq!(
            names,
            [
                "4x512x1024",
                "4096x1024",
                "4096x2048",
                "4096x4096",
                "4096x8192",
                "16384x8192",
                "32768x4096",
                "1x2048"
            ]
        );
    }

    #[test]
    fn check_names_the_flag_at_fault() {
        let mut c = SweepConfig {
            shapes: default_cpu_shapes(),
            dtypes: crate::layernorm::dtype::LAYERNORM_DTYPES.to_vec(),
            eps: 1e-5,
            warmup: 1,
            sampling: crate::harness::Sampling::fixed(5),
            batch: 1,
            bytes_per_thread: None,
            kernel: crate::layernorm::plan::KernelChoice::Regs,
            grid: None,
            x_cache: crate::layernorm::plan::XCache::Auto,
            blocks_per_sm: None,
            timing: TimingMethod::Rotate,
            rotate_l2_multiple: 2,
            seed: 0,
            out: "x.json".into(),
            overwrite: false,
        };
        c.check().unwrap();
        assert_eq!(c.points().len(), 9);
        c.eps = 0.0;
        assert!(format!("{:#}", c.check().unwrap_err()).contains("--eps"));
        c.eps = 1e-5;
        c.rotate_l2_multiple = 0;
        assert!(format!("{:#}", c.check().unwrap_err()).contains("--rotate-l2-multiple"));
        c.rotate_l2_multiple = 2;
        c.bytes_per_thread = Some(3);
        assert!(format!("{:#}", c.check().unwrap_err()).contains("--bytes-per-thread"));
    }
}
