//! Finding the compact kernel trace beside an artifact.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The compact trace's `format` field.
pub const TRACE_FORMAT: &str = "opbench_kernel_trace";

/// Finds the compact kernel trace (`*.trace.json` with `format: opbench_kernel_trace`) in the
/// folder of the artifact `file` under `artifacts`.
pub fn find_trace(artifacts: &Path, file: &str) -> Option<(PathBuf, Value)> {
    let dir = artifacts.join(file).parent()?.to_path_buf();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".trace.json"))
        })
        .collect();
    names.sort();
    for path in names {
        let Ok(text) = crate::input::read_text(&path, "trace", crate::input::ARTIFACT_MAX_BYTES)
        else {
            continue;
        };
        // Cheap check before parsing a Chrome trace of several MB.
        if !text.contains(TRACE_FORMAT) {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            if v.get("format").and_then(Value::as_str) == Some(TRACE_FORMAT) {
                return Some((path, v));
            }
        }
    }
    None
}
