//! A benchmark's GPU session: the device, the ceilings measured once per process (copy, and
//! the launch interval where asked), the environment block and its notes, the artifact writer,
//! and the end of the run (copy measured again, clocks sampled, artifact moved into place).

use super::start::start_artifact;
use crate::artifact::{ArtifactWriter, ResultRow};
use crate::gpu::{copy_ceiling_gbps, launch_interval_us, Gpu};
use crate::progress::Progress;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// What a benchmark asks of its session.
pub struct SessionSpec<'a> {
    /// The artifact's `kind`.
    pub kind: &'a str,
    pub out: &'a Path,
    pub overwrite: bool,
    /// Measure the copy ceiling (kernel_bench's `--no-ceilings` turns it off).
    pub copy_ceiling: bool,
    /// Measure the interval of back-to-back launches of a near-empty kernel.
    pub launch_interval: bool,
}

/// An open run on one GPU.
pub struct Session {
    pub gpu: Gpu,
    pub w: ArtifactWriter,
    /// The copy ceiling of this process (GB/s), when measured.
    pub copy_gbps: Option<f64>,
}

impl Session {
    /// Measures the ceilings on `gpu`, then starts the artifact with them, the environment
    /// and the NVML note.
    pub fn start(mut gpu: Gpu, spec: SessionSpec<'_>) -> Result<Self> {
        let copy = if spec.copy_ceiling {
            let (gbps, method) = copy_ceiling_gbps(&mut gpu)?;
            eprintln!("copy ceiling: {gbps:.0} GB/s ({method})");
            Some((gbps, method))
        } else {
            None
        };
        let copy_gbps = copy.as_ref().map(|c| c.0);
        let env = gpu.env();
        let mut w = start_artifact(
            spec.kind,
            spec.out,
            env,
            spec.overwrite,
            copy,
            gpu.nvml_note(),
        )?;
        if spec.launch_interval {
            let (us, method) = launch_interval_us(&mut gpu)?;
            eprintln!("launch interval: {us:.2} us per back-to-back launch of a near-empty kernel");
            w.artifact.ceilings.launch_interval_us = Some(us);
            w.artifact.ceilings.method.push(method);
        }
        Ok(Session { gpu, w, copy_gbps })
    }

    /// Continues a run that another process handed over (a kernel faulted there): nothing is
    /// measured again; the copy ceiling is the one the artifact holds.
    pub fn resume(gpu: Gpu, w: ArtifactWriter) -> Session {
        let copy_gbps = w.artifact.ceilings.copy_gbps;
        Session { gpu, w, copy_gbps }
    }

    /// Saves a finished row and logs it under the current point.
    pub fn push(&mut self, progress: &Progress, row: ResultRow) -> Result<()> {
        progress.row(&row);
        self.w.push(row)
    }

    /// After a point: clocks and throttle reasons sampled, the bar advanced.
    pub fn point_done(&mut self, progress: &Progress) {
        self.gpu.sample_clocks();
        progress.step();
    }

    /// Ends the run: the copy measured again (a drift shows in the ceilings' methods), the
    /// environment as of now, the artifact validated and moved onto its path.
    pub fn finish(mut self) -> Result<PathBuf> {
        if self.copy_gbps.is_some() {
            let (end, _) = copy_ceiling_gbps(&mut self.gpu)?;
            self.w.artifact.ceilings.method.push(format!(
                "copy measured again after the sweep: {end:.0} GB/s (the ceiling above is the first)"
            ));
        }
        self.finish_as_is()
    }

    /// Ends a run whose CUDA context may be broken (a kernel faulted): nothing more runs on
    /// the GPU; the environment as of now and the rows so far are saved.
    pub fn finish_as_is(mut self) -> Result<PathBuf> {
        self.w.artifact.env = self.gpu.env();
        self.w.finish()
    }
}
