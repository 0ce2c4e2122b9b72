//! Reading artifacts with errors that name the file and field, and writing them atomically.

use super::{validate, Artifact, SCHEMA_VERSION};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `value` as pretty JSON to `path` atomically: a temporary file in the same folder,
/// fsynced, then renamed over the target. Readers see the old file or the new one, never half.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).context("serializing JSON")?;
    write_bytes_atomic(path, &bytes)
}

/// Atomic write of raw bytes (see [`write_json_atomic`]).
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating output folder {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".opbench-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    // tempfile creates 0600 files; artifacts and site files are meant to be shared and served.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .with_context(|| format!("setting permissions of the file for {}", path.display()))?;
    }
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("renaming the temporary file onto {}", path.display()))?;
    Ok(())
}

/// The text report that goes beside an artifact: `<folder>/<stem>_report.txt` for `<folder>/<stem>.json`.
pub fn report_path_beside(artifact: &Path) -> PathBuf {
    let stem = artifact
        .file_stem()
        .map_or("report".into(), |s| s.to_string_lossy().to_string());
    artifact.with_file_name(format!("{stem}_report.txt"))
}

/// Reads, parses and validates one artifact. Errors name the file and the field at fault.
pub fn read_artifact(path: &Path) -> Result<Artifact> {
    let text = crate::input::read_text(path, "artifact", crate::input::ARTIFACT_MAX_BYTES)?;
    parse_artifact(&text)
        .with_context(|| format!("{}: not a valid opbench artifact", path.display()))
}

/// [`read_artifact`] for a command that reads one kind only (`layernorm_bench --table`): an
/// artifact of another kind is an error naming the file and both kinds, not an empty table.
pub fn read_artifact_of_kind(path: &Path, kind: &str) -> Result<Artifact> {
    let a = read_artifact(path)?;
    if a.kind != kind {
        bail!(
            "{}: a {:?} artifact, not a {kind:?} one (field `kind`): pass a file written by the \
             {kind} benchmark",
            path.display(),
            crate::text::one_line(&a.kind)
        );
    }
    Ok(a)
}

/// Parses and validates artifact JSON text.
pub fn parse_artifact(text: &str) -> Result<Artifact> {
    // Fast path for the common case, a well-formed file of a version we read: one pass, no
    // intermediate `Value`. Anything else takes the slow path below, which names the field.
    if let Ok(a) = serde_json::from_str::<Artifact>(text) {
        if (1..=SCHEMA_VERSION).contains(&a.schema_version) {
            validate(&a)?;
            return Ok(a);
        }
    }
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!(super::json_error::describe(text, &e)))?;
    match value.get("schema_version") {
        None => bail!("field `schema_version` is missing: every artifact starts with one"),
        Some(v) => match v.as_u64() {
            Some(n) if n as u32 > SCHEMA_VERSION => bail!(
                "field `schema_version` is {n}, newer than the {SCHEMA_VERSION} this opbench reads: \
                 upgrade opbench"
            ),
            Some(0) | None => bail!("field `schema_version` is {v}, expected an integer >= 1"),
            Some(_) => {}
        },
    }
    let artifact: Artifact = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        anyhow::anyhow!("field `{path}`: {}", e.into_inner())
    })?;
    validate(&artifact)?;
    Ok(artifact)
}
