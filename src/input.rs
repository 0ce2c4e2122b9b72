//! Bounded reading of every input file: each read takes at most a stated number of bytes, so a
//! device such as /dev/zero or an oversized file is an error naming the file, not a process the
//! kernel kills for memory.

use anyhow::{bail, Context, Result};
use std::io::Read;
use std::path::Path;

/// Most bytes of an artifact, history record or trace read back (decompressed for `.gz`).
pub const ARTIFACT_MAX_BYTES: u64 = 512 << 20;
/// Most bytes of a hand-written input: a kernel source or header, a manifest, a config.
pub const SOURCE_MAX_BYTES: u64 = 16 << 20;
/// Most bytes of one raw trace file (`trace-PID.raw`): a million-kernel process writes about
/// 110 MiB, so this leaves room for traces twenty times longer.
pub const RAW_TRACE_MAX_BYTES: u64 = 2 << 30;
/// Largest count read from a file (a raw trace's dropped records, a record count): 2^53, the
/// largest integer a JSON number (an f64) holds exactly.
pub const COUNT_MAX: u64 = 1 << 53;

/// Reads at most `max` bytes from `r`; more is an error naming `path` and `what` it is.
pub fn read_limited(mut r: impl Read, path: &Path, what: &str, max: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    r.by_ref()
        .take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{}: cannot read the {what}", path.display()))?;
    if bytes.len() as u64 > max {
        bail!(
            "{}: the {what} is larger than {} MiB, the most opbench reads: check that the path \
             names the right file (not a device or a stream)",
            path.display(),
            max >> 20
        );
    }
    Ok(bytes)
}

/// Reads the file at `path`, at most `max` bytes (see [`read_limited`]).
pub fn read_bytes(path: &Path, what: &str, max: u64) -> Result<Vec<u8>> {
    let f = std::fs::File::open(path)
        .with_context(|| format!("{}: cannot open the {what}", path.display()))?;
    read_limited(f, path, what, max)
}

/// [`read_bytes`] as UTF-8 text; invalid UTF-8 is an error naming the file.
pub fn read_text(path: &Path, what: &str, max: u64) -> Result<String> {
    String::from_utf8(read_bytes(path, what, max)?).map_err(|e| {
        anyhow::anyhow!(
            "{}: the {what} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_device_is_an_error_after_the_limit() {
        let e = read_text(Path::new("/dev/zero"), "kernel source", 1 << 20).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("/dev/zero") && e.contains("larger than 1 MiB"),
            "{e}"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.toml");
        std::fs::write(&p, vec![b'a'; 1 << 20]).unwrap();
        assert_eq!(read_text(&p, "manifest", 1 << 20).unwrap().len(), 1 << 20);
        std::fs::write(&p, vec![b'a'; (1 << 20) + 1]).unwrap();
        assert!(read_text(&p, "manifest", 1 << 20).is_err());
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        let e = format!("{:#}", read_text(&p, "manifest", 10).unwrap_err());
        assert!(e.contains("not UTF-8"), "{e}");
    }
}
