//! Replacing the site folder whole: the new site is built in a temporary folder beside it,
//! files only the old folder has are carried over, then the new folder is renamed into place.
//! A failure before the rename leaves the old folder exactly as it was.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Builds a new `out` with `build` (given the empty staging folder) and swaps it in.
///
/// Files and folders of the old `out` that the new one does not have (the user's own files,
/// pages of a kind no longer present) are kept: hard-linked (copied across file systems) into
/// the new folder before the swap. When `out` is a symbolic link, the folder it points to is
/// replaced and the link stays.
pub fn replace_dir<T>(out: &Path, build: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    let target = if out.exists() {
        out.canonicalize()
            .with_context(|| format!("resolving --out {}", out.display()))?
    } else {
        out.to_path_buf()
    };
    if target.exists() && !target.is_dir() {
        bail!(
            "--out {} exists and is not a folder: give a folder for the site",
            out.display()
        );
    }
    if let Ok(cwd) = std::env::current_dir().and_then(|d| d.canonicalize()) {
        if target.exists() && cwd.starts_with(&target) {
            bail!(
                "--out {} is the folder this command runs in (or holds it): the site replaces \
                 its folder whole, so give a folder of its own, e.g. --out site",
                out.display()
            );
        }
    }
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        bail!("--out {}: give a folder with a name", out.display());
    };
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("creating the folder {} for --out", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.new-"))
        .tempdir_in(&parent)
        .with_context(|| format!("creating a temporary folder in {}", parent.display()))?;
    // Temporary folders are private (0700); a site is meant to be served.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("setting permissions of {}", staging.path().display()))?;
    }
    let value = build(staging.path())?;
    if !target.exists() {
        let staged = staging.keep();
        std::fs::rename(&staged, &target)
            .with_context(|| format!("renaming {} onto {}", staged.display(), target.display()))?;
        return Ok(value);
    }
    carry_over(&target, staging.path())
        .with_context(|| format!("keeping the files of {} the new site lacks", out.display()))?;
    let old = free_name(&parent, &format!(".{name}.old-"));
    std::fs::rename(&target, &old)
        .with_context(|| format!("moving the old site {} aside", target.display()))?;
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, &target) {
        // Put the old site back; the new one goes.
        let _ = std::fs::rename(&old, &target);
        let _ = std::fs::remove_dir_all(&staged);
        return Err(e)
            .with_context(|| format!("renaming {} onto {}", staged.display(), target.display()));
    }
    if let Err(e) = std::fs::remove_dir_all(&old) {
        eprintln!(
            "warning: the new site is in place, but the old one at {} could not be removed: {e}",
            old.display()
        );
    }
    Ok(value)
}

/// A path `<dir>/<prefix><n>` that does not exist yet.
fn free_name(dir: &Path, prefix: &str) -> PathBuf {
    let pid = std::process::id();
    (0u32..)
        .map(|n| dir.join(format!("{prefix}{pid}-{n}")))
        .find(|p| p.symlink_metadata().is_err())
        .expect("some name is free")
}

/// Links every entry of `old` that `new` lacks into `new`, folders recursively.
fn carry_over(old: &Path, new: &Path) -> Result<()> {
    for entry in std::fs::read_dir(old).with_context(|| format!("reading {}", old.display()))? {
        let entry = entry.with_context(|| format!("reading {}", old.display()))?;
        let (from, to) = (entry.path(), new.join(entry.file_name()));
        let kind = entry
            .file_type()
            .with_context(|| format!("reading {}", from.display()))?;
        let there = to.symlink_metadata().ok();
        if kind.is_dir() {
            if there.is_none() {
                std::fs::create_dir(&to).with_context(|| format!("creating {}", to.display()))?;
                copy_permissions(&from, &to)?;
            }
            if to.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                carry_over(&from, &to)?;
            }
        } else if there.is_none() {
            link_or_copy(&from, &to, kind.is_symlink())?;
        }
    }
    Ok(())
}

fn copy_permissions(from: &Path, to: &Path) -> Result<()> {
    let perms = std::fs::metadata(from)
        .with_context(|| format!("reading {}", from.display()))?
        .permissions();
    std::fs::set_permissions(to, perms)
        .with_context(|| format!("setting permissions of {}", to.display()))
}

fn link_or_copy(from: &Path, to: &Path, symlink: bool) -> Result<()> {
    let what = || format!("keeping {} as {}", from.display(), to.display());
    #[cfg(unix)]
    if symlink {
        let target = std::fs::read_link(from).with_context(what)?;
        return std::os::unix::fs::symlink(target, to).with_context(what);
    }
    #[cfg(not(unix))]
    let _ = symlink;
    if std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to).map(|_| ()).with_context(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_build_leaves_the_old_folder_whole_and_no_temporary_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        std::fs::create_dir_all(out.join("assets")).unwrap();
        std::fs::write(out.join("index.html"), "old index").unwrap();
        std::fs::write(out.join("assets/a.js"), "old js").unwrap();
        let e = replace_dir(&out, |d| -> Result<()> {
            std::fs::write(d.join("index.html"), "half").unwrap();
            bail!("No space left on device")
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("No space left"), "{e:#}");
        assert_eq!(read(&out.join("index.html")), "old index");
        assert_eq!(read(&out.join("assets/a.js")), "old js");
        assert_eq!(names(tmp.path()), vec!["site"]);
    }

    #[test]
    fn the_new_folder_replaces_the_old_and_keeps_files_it_lacks() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        std::fs::create_dir_all(out.join("mine/deep")).unwrap();
        std::fs::write(out.join("index.html"), "old index").unwrap();
        std::fs::write(out.join("mine/deep/notes.txt"), "my notes").unwrap();
        let n = replace_dir(&out, |d| {
            std::fs::write(d.join("index.html"), "new index")?;
            Ok(7)
        })
        .unwrap();
        assert_eq!(n, 7);
        assert_eq!(read(&out.join("index.html")), "new index");
        assert_eq!(read(&out.join("mine/deep/notes.txt")), "my notes");
        assert_eq!(names(tmp.path()), vec!["site"]);
        // A folder that does not exist yet is created, parents included.
        let fresh = tmp.path().join("a/b/site");
        replace_dir(&fresh, |d| Ok(std::fs::write(d.join("x"), "y")?)).unwrap();
        assert_eq!(read(&fresh.join("x")), "y");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o755);
        }
    }

    #[test]
    fn a_file_or_the_working_folder_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let e = replace_dir(&file, |_| Ok(())).unwrap_err();
        assert!(format!("{e:#}").contains("not a folder"), "{e:#}");
        let e = replace_dir(Path::new("."), |_| Ok(())).unwrap_err();
        assert!(format!("{e:#}").contains("runs in"), "{e:#}");
    }
}
