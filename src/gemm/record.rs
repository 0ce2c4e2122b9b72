//! Turning measurements into result rows and keeping the artifact and report on disk as a
//! sweep goes: one (shape, dtype) group at a time, ceilings settled at the end.

use super::dtype::Dtype;
use super::impls::Impl;
use super::metrics::{fill_ceiling_metrics, fill_group_metrics, fill_point_metrics};
use super::report;
use super::shapes::{BLayout, Shape};
use crate::artifact::{write_bytes_atomic, Artifact, ArtifactWriter, ResultRow, Status};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A row with the point's coordinates: m, n, k, dtype, shape_set, impl_kind, ladder_step,
/// for model shapes model, layer_op, tokens, and b_layout = "nk" when B is stored [N, K].
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
    // Recorded only when B is transposed, so the kn points keep the identity they always had.
    if shape.b_layout == BLayout::Nk {
        r = r.param("b_layout", shape.b_layout.name());
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

/// Keeps the report up to date beside the artifact a sweep writes (`<out>.partial` while
/// running), and settles the matrix ceilings at the end.
pub struct Recorder {
    report: PathBuf,
    /// Ceilings measured before the sweep (TFLOP/s per dtype), raised by the sweep's own
    /// reference-implementation points at the end.
    pub matmul_tflops: BTreeMap<String, f64>,
}

impl Recorder {
    /// A recorder writing the report to `report`.
    pub fn new(report: &Path) -> Self {
        Recorder {
            report: report.to_path_buf(),
            matmul_tflops: BTreeMap::new(),
        }
    }

    /// Adds the rows of one (shape, dtype) group: relative metrics, then saved to disk.
    pub fn push_group(&mut self, w: &mut ArtifactWriter, mut rows: Vec<ResultRow>) -> Result<()> {
        fill_group_metrics(&mut rows);
        fill_ceiling_metrics(&mut rows, &self.matmul_tflops);
        for r in rows {
            w.push(r)?;
        }
        self.write_report(&w.artifact)
    }

    fn write_report(&self, a: &Artifact) -> Result<()> {
        let text = report::render(a);
        write_bytes_atomic(&self.report, text.as_bytes())
            .with_context(|| format!("writing the report {}", self.report.display()))
    }

    /// Raises each dtype's ceiling to the best rate of `reference_impl` rows in the sweep and
    /// recomputes `pct_of_ceiling`.
    pub fn settle(&mut self, a: &mut Artifact, reference_impl: &str, method: String) {
        for r in &a.results {
            if r.implementation != reference_impl || r.status != Status::Ok {
                continue;
            }
            if let (Some(tf), Some(dt)) = (r.metrics.get("tflops"), r.param_str("dtype")) {
                let c = self.matmul_tflops.entry(dt).or_insert(0.0);
                *c = c.max(*tf);
            }
        }
        a.ceilings.matmul_tflops = self.matmul_tflops.clone();
        a.ceilings.method.push(method);
        fill_ceiling_metrics(&mut a.results, &self.matmul_tflops);
    }

    /// The final report, rendered from the artifact as written at `path` (so it says
    /// complete: true), saved and returned.
    pub fn write_final(&self, path: &Path) -> Result<String> {
        let text = report::render(&crate::artifact::read_artifact(path)?);
        write_bytes_atomic(&self.report, text.as_bytes())
            .with_context(|| format!("writing the report {}", self.report.display()))?;
        Ok(text)
    }

    /// [`Recorder::settle`], then the artifact validated and moved into place, then the report.
    pub fn finish(
        mut self,
        mut w: ArtifactWriter,
        reference_impl: &str,
        method: String,
    ) -> Result<(PathBuf, String)> {
        self.settle(&mut w.artifact, reference_impl, method);
        let path = w.finish()?;
        let text = self.write_final(&path)?;
        Ok((path, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Param;
    use crate::gemm::shapes::{model_shapes, LayerOp, Model};
    use crate::stats::summarize;

    #[test]
    fn only_transposed_b_rows_carry_b_layout() {
        let shape = model_shapes(Model::TinyLlama1_1b, &[LayerOp::QOProj], &[32])[0];
        let kn = base_row(&shape, Dtype::Bf16, Impl::TmaWsSplitK);
        assert!(!kn.params.contains_key("b_layout"));
        let nk = base_row(
            &shape.with_b_layout(BLayout::Nk),
            Dtype::Bf16,
            Impl::TmaWsSplitK,
        );
        assert_eq!(nk.params["b_layout"], Param::Text("nk".into()));
        assert_eq!(nk.params["tokens"], kn.params["tokens"]);
    }

    #[test]
    fn rows_carry_model_params_and_ceilings_settle_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("gemm.json");
        let rep = dir.path().join("gemm_report.txt");
        let mut w = ArtifactWriter::start("gemm", &out, crate::env::Env::cpu(), false).unwrap();
        let mut rec = Recorder::new(&rep);
        rec.matmul_tflops.insert("bf16".into(), 1.0);
        let shape = model_shapes(Model::TinyLlama1_1b, &[LayerOp::KVProj], &[8])[0];
        let mut a = base_row(&shape, Dtype::Bf16, Impl::Cublas);
        a.stats
            .insert("time_us".into(), summarize(&[10.0, 11.0]).unwrap());
        fill_point_metrics(&mut a, 8, 256, 2048, 2);
        let s = skipped_row(&shape, Dtype::Bf16, Impl::MmaSmem, "not planned");
        rec.push_group(&mut w, vec![a, s]).unwrap();
        assert!(rep.exists());
        let (path, text) = rec.finish(w, "cublas", "test".into()).unwrap();
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
