//! Where a run happened: host, GPU (through NVML), git state, run ids and times.

mod gpu;
mod host;

pub use gpu::{board_label, Board, ClockSample, GpuEnv, GpuProbe};
pub use host::{available_memory_bytes, HostEnv};

use serde::{Deserialize, Serialize};

/// The `env` block of an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Env {
    /// "cuda" or "cpu": where the measured work ran.
    pub device: String,
    pub host: HostEnv,
    /// Present when a GPU was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuEnv>,
}

impl Env {
    /// A CPU-only environment.
    pub fn cpu() -> Self {
        Env {
            device: "cpu".into(),
            host: HostEnv::capture(),
            gpu: None,
        }
    }

    /// One-line description for logs and tables: "NVIDIA H200 (sm_90)" or the CPU model.
    pub fn label(&self) -> String {
        match &self.gpu {
            Some(g) => g.name.clone(),
            None => format!("CPU: {}", self.host.cpu_model),
        }
    }
}

/// Current time, RFC 3339 UTC with seconds.
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A fresh run id: UTC time plus random hex, sortable by time.
pub fn new_run_id() -> String {
    let t = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    format!("{t}-{:08x}", rand::random::<u32>())
}

/// (commit, dirty) of the working tree. `OPBENCH_GIT_COMMIT` / `OPBENCH_GIT_DIRTY` override it,
/// for machines that get a copy of the tree without `.git` (the GPU machine).
pub fn git_state() -> (Option<String>, Option<bool>) {
    if let Ok(c) = std::env::var("OPBENCH_GIT_COMMIT") {
        let dirty = std::env::var("OPBENCH_GIT_DIRTY")
            .ok()
            .map(|d| d == "1" || d == "true");
        return (Some(c), dirty);
    }
    let run = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = run(&["rev-parse", "HEAD"]);
    let dirty = commit
        .as_ref()
        .and_then(|_| run(&["status", "--porcelain", "--untracked-files=no"]))
        .map(|s| !s.is_empty());
    (commit, dirty)
}
