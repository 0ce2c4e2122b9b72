//! Turning measurements into result rows and keeping the artifact and report on disk as a
//! sweep goes: one (shape, dtype) group at a time, ceilings settled at the end.

use super::dtype::Dtype;
use super::impls::Impl;
use super::metrics::{fill_ceiling_metrics, fill_group_metrics, fill_point_metrics};
use super::report;
use super::shapes::Shape;
use crate::artifact::{write_bytes_atomic, ArtifactWriter, ResultRow, Status};
use crate::env::Env;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A row with the point's coordinates: m, n, k, dtype, shape_set, impl_kind, ladder_step and,
/// for model shapes, model, layer_op, tokens.
pub fn base_row(shape: &Shape, dtype: Dtype, imp: Impl) -> ResultRow {
    let mut r = ResultRow::new("gemm", imp.name())
        .param("m", shape.m)
        .param("n", shape.n)
        .param("k", shape.k)
        .param("dtype", dtype.name())
        .param("shape_set", shape.set.name())
        .param("impl_kind", imp.kind().name())
        .param("ladder_step", imp.ladder_step());
    if let Some(mp) = shape.model {
        r = r
            .param("model", mp.model.name())
            .param("layer_op", mp.layer_op.name())
            .param("tokens", mp.tokens);
    }
    fill_point_metrics(&mut r, shape.m, shape.n, shape.k, dtype.size_bytes());
    r
}

/// A row that was not run, with the reason.
pub fn skipped_row(shape: &Shape, dtype: Dtype, imp: Impl, why: &str) -> ResultRow {
    let mut r = base_row(shape, dtype, imp);
    r.status = Status::Skipped;
    r.notes.push(why.to_string());
    r
}

/// Keeps the artifact (`<out>.partial` while running) and the report up to date.
pub struct Recorder {
    writer: ArtifactWriter,
    report: PathBuf,
    /// Ceilings measured before the sweep (TFLOP/s per dtype), raised by the sweep's own
    /// reference-implementation points at the end.
    pub matmul_tflops: BTreeMap<String, f64>,
}

impl Recorder {
    /// Starts the artifact at `out` (see `ArtifactWriter::start` for `overwrite`).
    pub fn start(out: &Path, report: &Path, env: Env, overwrite: bool) -> Result<Self> {
        let writer = ArtifactWriter::start("gemm", out, env, overwrite)
            .with_context(|| format!("starting the artifact {}", out.display()))?;
        Ok(Recorder {
            writer,
            report: report.to_path_buf(),
            matmul_tflops: BTreeMap::new(),
        })
    }

    /// The artifact as written so far (ceilings, notes, env are set through it).
    pub fn artifact(&mut self) -> &mut crate::artifact::Artifact {
        &mut self.writer.artifact
    }

    /// Adds the rows of one (shape, dtype) group: relative metrics, then saved to disk.
    pub fn push_group(&mut self, mut rows: Vec<ResultRow>) -> Result<()> {
        fill_group_metrics(&mut rows);
        fill_ceiling_metrics(&mut rows, &self.matmul_tflops);
        for r in rows {
            self.writer.push(r)?;
        }
        self.write_report()
    }

    fn write_report(&self) -> Result<()> {
        let text = report::render(&self.writer.artifact);
        write_bytes_atomic(&self.report, text.as_bytes())
            .with_context(|| format!("writing the report {}", self.report.display()))
    }

    /// Raises each dtype's ceiling to the best rate of `reference_impl` rows in the sweep,
    /// recomputes `pct_of_ceiling`, validates and moves the artifact into place.
    pub fn finish(mut self, reference_impl: &str, method: String) -> Result<(PathBuf, String)> {
        for r in &self.writer.artifact.results {
            if r.implementation != reference_impl || r.status != Status::Ok {
                continue;
            }
            if let (Some(tf), Some(dt)) = (r.metrics.get("tflops"), r.param_str("dtype")) {
                let c = self.matmul_tflops.entry(dt).or_insert(0.0);
                *c = c.max(*tf);
            }
        }
        let a = &mut self.writer.artifact;
        a.ceilings.matmul_tflops = self.matmul_tflops.clone();
        a.ceilings.method.push(method);
        fill_ceiling_metrics(&mut a.results, &self.matmul_tflops);
        let path = self.writer.finish()?;
        // Rendered from the file as written, so the report says complete: true.
        let text = report::render(&crate::artifact::read_artifact(&path)?);
        write_bytes_atomic(&self.report, text.as_bytes())
            .with_context(|| format!("writing the report {}", self.report.display()))?;
        Ok((path, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::shapes::{model_shapes, LayerOp, Model};
    use crate::stats::summarize;

    #[test]
    fn rows_carry_model_params_and_ceilings_settle_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("gemm.json");
        let rep = dir.path().join("gemm_report.txt");
        let mut rec = Recorder::start(&out, &rep, Env::cpu(), false).unwrap();
        rec.matmul_tflops.insert("bf16".into(), 1.0);
        let shape = model_shapes(Model::TinyLlama1_1b, &[LayerOp::KVProj], &[8])[0];
        let mut a = base_row(&shape, Dtype::Bf16, Impl::Cublas);
        a.stats
            .insert("time_us".into(), summarize(&[10.0, 11.0]).unwrap());
        fill_point_metrics(&mut a, 8, 256, 2048, 2);
        let s = skipped_row(&shape, Dtype::Bf16, Impl::MmaSmem, "not planned");
        rec.push_group(vec![a, s]).unwrap();
        assert!(rep.exists());
        let (path, text) = rec.finish("cublas", "test".into()).unwrap();
        let art = crate::artifact::read_artifact(&path).unwrap();
        assert!(art.run.complete);
        let r0 = &art.results[0];
        assert_eq!(r0.param_str("layer_op").as_deref(), Some("k_v_proj"));
        assert_eq!(r0.param_str("tokens").as_deref(), Some("8"));
        assert_eq!(r0.param_str("model").as_deref(), Some("tinyllama-1.1b"));
        // The sweep's cuBLAS rate beat the pre-measured 1 TFLOP/s: it becomes the ceiling.
        let tf = r0.metrics["tflops"];
        assert_eq!(art.ceilings.matmul_tflops["bf16"], tf.max(1.0));
        assert!((r0.metrics["pct_of_ceiling"] - 100.0 * tf / tf.max(1.0)).abs() < 1e-9);
        assert_eq!(art.results[1].status, Status::Skipped);
        assert!(text.contains("skipped: not planned"), "{text}");
        assert!(text.contains("complete: true"));
    }
}
