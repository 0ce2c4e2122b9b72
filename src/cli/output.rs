//! The one guard every output flag passes before a run starts: a file is replaced only when it
//! holds what that flag writes (an earlier run of the same output), or with `--overwrite`; an
//! output that is one of the run's inputs is never replaced.

use anyhow::{bail, Result};
use std::path::Path;

/// One output flag and the file it names.
pub struct Output<'a> {
    /// The flag, as the user types it: "--plan-json".
    pub flag: &'a str,
    pub path: &'a Path,
    /// What the flag writes, for the message: "a kernel_bench plan (JSON)".
    pub what: &'a str,
    /// Whether existing bytes are an earlier output of this flag.
    pub ours: fn(&[u8]) -> bool,
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Refuses `o.path` when it is one of `inputs`, a folder, or an existing file that is not an
/// earlier output of the same flag (unless `overwrite`). Errors name the flag and the fix.
pub fn check_output(o: &Output, inputs: &[&Path], overwrite: bool) -> Result<()> {
    let (flag, shown) = (o.flag, o.path.display());
    if let Some(input) = inputs.iter().find(|i| same_file(o.path, i)) {
        bail!(
            "{flag} {shown} is the input {}: refusing to write over what this run reads; give \
             {flag} another path",
            input.display()
        );
    }
    if o.path.is_dir() {
        bail!("{flag} {shown} is a folder: give {flag} the path of a file");
    }
    if overwrite || !o.path.exists() {
        return Ok(());
    }
    let old = crate::input::read_bytes(o.path, "existing output", crate::input::ARTIFACT_MAX_BYTES);
    if !old.is_ok_and(|b| (o.ours)(&b)) {
        bail!(
            "{flag} {shown} exists and does not hold {}: refusing to replace it; give {flag} \
             another path, or pass --overwrite to replace the file",
            o.what
        );
    }
    Ok(())
}

/// Checks every output of a run (see [`check_output`]).
pub fn check_outputs(outputs: &[Output], inputs: &[&Path], overwrite: bool) -> Result<()> {
    outputs
        .iter()
        .try_for_each(|o| check_output(o, inputs, overwrite))
}

/// `ours` for a text output whose first line starts with `prefix`.
pub fn starts_with(bytes: &[u8], prefix: &str) -> bool {
    bytes.starts_with(prefix.as_bytes())
}

/// `ours` for a JSON output: an object that has `key`.
pub fn json_object_with(bytes: &[u8], key: &str) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).is_ok_and(|v| v.get(key).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(bytes: &[u8]) -> bool {
        starts_with(bytes, "[")
    }

    #[test]
    fn a_foreign_file_an_input_and_a_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("plan.json");
        let o = Output {
            flag: "--plan-json",
            path: &out,
            what: "a plan",
            ours: plan,
        };
        check_output(&o, &[], false).unwrap();
        std::fs::write(&out, "[]").unwrap();
        check_output(&o, &[], false).unwrap();
        std::fs::write(&out, "{\"kind\": \"gemm\"}").unwrap();
        let e = check_output(&o, &[], false).unwrap_err().to_string();
        assert!(
            e.contains("--plan-json") && e.contains("--overwrite"),
            "{e}"
        );
        check_output(&o, &[], true).unwrap();
        let e = check_output(&o, &[&out], true).unwrap_err().to_string();
        assert!(e.contains("is the input"), "{e}");
        let folder = Output {
            path: dir.path(),
            ..o
        };
        assert!(check_output(&folder, &[], true)
            .unwrap_err()
            .to_string()
            .contains("is a folder"));
    }
}
