//! The one guard every output flag passes before a run starts: a file is replaced only when it
//! holds what that flag writes (an earlier run of the same output), or with `--overwrite`; an
//! output that is one of the run's inputs is never replaced. A flag that names a folder must
//! name a folder (or nothing yet), and each file it writes there passes the same file rules.

use anyhow::{bail, Result};
use std::path::{Component, Path, PathBuf};

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

/// One output flag that names a folder, and the files it writes directly inside it.
pub struct OutputDir<'a> {
    /// The flag, as the user types it: "--out-dir".
    pub flag: &'a str,
    pub path: &'a Path,
    /// The files written inside.
    pub files: &'a [DirFile],
}

/// A file an [`OutputDir`] writes: its name, what it holds, and how to recognise an earlier one.
pub struct DirFile {
    pub name: &'static str,
    pub what: &'static str,
    pub ours: fn(&[u8]) -> bool,
}

/// Refuses `o.path` when it (or a folder above it) is an existing file, and each file it
/// writes inside by [`check_output`] (one of `inputs`, a folder, or a file it did not write).
/// Errors name the flag and the fix.
pub fn check_output_dir(o: &OutputDir, inputs: &[&Path], overwrite: bool) -> Result<()> {
    let (flag, shown) = (o.flag, o.path.display());
    if let Some(file) = o.path.ancestors().find(|a| a.is_file()) {
        let what = if file == o.path {
            "is a file".to_string()
        } else {
            format!("lies inside the file {}", file.display())
        };
        bail!(
            "{flag} {shown} {what}, not a folder: give {flag} a folder (it is created if \
             missing)"
        );
    }
    for f in o.files {
        let path = o.path.join(f.name);
        let file = Output {
            flag: o.flag,
            path: &path,
            what: f.what,
            ours: f.ours,
        };
        check_output(&file, inputs, overwrite)?;
    }
    Ok(())
}

/// `ours` for a text output whose first line starts with `prefix`.
pub fn starts_with(bytes: &[u8], prefix: &str) -> bool {
    bytes.starts_with(prefix.as_bytes())
}

/// `ours` for a JSON output: an object that has `key`.
pub fn json_object_with(bytes: &[u8], key: &str) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).is_ok_and(|v| v.get(key).is_some())
}

/// The absolute path `p` names: symbolic links resolved in the part that exists, `.` and `..`
/// applied to the rest (which holds no link yet). None when no part of it can be resolved.
pub fn full_path(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let abs = std::env::current_dir().ok()?.join(p);
    let parts: Vec<Component> = abs.components().collect();
    (0..parts.len()).rev().find_map(|i| {
        let mut base = parts[..i].iter().collect::<PathBuf>().canonicalize().ok()?;
        for c in &parts[i..] {
            match c {
                Component::ParentDir => {
                    base.pop();
                }
                Component::Normal(n) => base.push(n),
                _ => {}
            }
        }
        Some(base)
    })
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

    fn csv(bytes: &[u8]) -> bool {
        starts_with(bytes, "kind,")
    }

    #[test]
    fn a_folder_flag_refuses_a_file_and_checks_what_it_writes_inside() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, "{}").unwrap();
        let files = &[DirFile {
            name: "s.csv",
            what: "a summary CSV",
            ours: csv,
        }];
        let at = |path| OutputDir {
            flag: "--out-dir",
            path,
            files,
        };
        let e = check_output_dir(&at(&file), &[], true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--out-dir") && e.contains("is a file, not a folder"),
            "{e}"
        );
        let inside = file.join("sub");
        let e = check_output_dir(&at(&inside), &[], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lies inside the file"), "{e}");

        let new = dir.path().join("new");
        check_output_dir(&at(&new), &[], false).unwrap();
        check_output_dir(&at(dir.path()), &[], false).unwrap();
        let csv_path = dir.path().join("s.csv");
        std::fs::write(&csv_path, "kind,file\n").unwrap();
        check_output_dir(&at(dir.path()), &[], false).unwrap();
        std::fs::write(&csv_path, "my notes").unwrap();
        let e = check_output_dir(&at(dir.path()), &[], false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("s.csv exists") && e.contains("--overwrite"),
            "{e}"
        );
        let e = check_output_dir(&at(dir.path()), &[&csv_path], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is the input"), "{e}");
    }
}
