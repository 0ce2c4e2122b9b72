//! Opening a run's artifact the same way for every benchmark: the writer (with `.partial`),
//! the copy ceiling measured in this process, and the environment notes.

use crate::artifact::ArtifactWriter;
use crate::env::Env;
use anyhow::Result;
use std::path::Path;

/// Starts the artifact of `kind` at `out` with the copy ceiling `(GB/s, method)` when one was
/// measured and the run's environment notes (e.g. the NVML note), and saves nothing until the
/// first row (see [`ArtifactWriter::start`] for `overwrite`).
pub fn start_artifact(
    kind: &str,
    out: &Path,
    env: Env,
    overwrite: bool,
    copy: Option<(f64, String)>,
    notes: impl IntoIterator<Item = String>,
) -> Result<ArtifactWriter> {
    let mut w = ArtifactWriter::start(kind, out, env, overwrite)?;
    if let Some((gbps, method)) = copy {
        w.artifact.ceilings.copy_gbps = Some(gbps);
        w.artifact.ceilings.method.push(method);
    }
    w.artifact.notes.extend(notes);
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_and_notes_land_in_the_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let w = start_artifact(
            "layernorm",
            &dir.path().join("a.json"),
            Env::cpu(),
            false,
            Some((1000.0, "copy_gbps: test".into())),
            ["NVML unavailable".to_string()],
        )
        .unwrap();
        assert_eq!(w.artifact.ceilings.copy_gbps, Some(1000.0));
        assert_eq!(
            w.artifact.ceilings.method,
            vec!["copy_gbps: test".to_string()]
        );
        assert_eq!(w.artifact.notes, vec!["NVML unavailable".to_string()]);
        assert_eq!(w.artifact.kind, "layernorm");
    }
}
