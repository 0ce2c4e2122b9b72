//! The recorded trace: GPU activities (kernels, copies, memsets) with device timestamps, and
//! the host-side windows of the steps they belong to.

use serde::{Deserialize, Serialize};

/// What a GPU activity record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    Kernel,
    Memcpy,
    Memset,
}

/// One GPU activity (CUPTI's kernel, memcpy or memset record, the fields we keep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    pub kind: ActivityKind,
    /// Kernel name as the driver reports it (C++ kernels mangled), or "memcpy HtoD" etc.
    pub name: String,
    /// Device timestamps (CUPTI clock, ns).
    pub start_ns: u64,
    pub end_ns: u64,
    pub stream: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    /// Bytes copied or set (0 for kernels).
    pub bytes: u64,
    pub correlation_id: u32,
    /// CUDA device ordinal (CUPTI's `deviceId`).
    #[serde(default)]
    pub device: u32,
    /// The CUDA graph the activity ran in (0: launched on its own).
    #[serde(default)]
    pub graph_id: u32,
    /// Kernels: registers per thread, static and dynamic shared memory per block (bytes).
    #[serde(default)]
    pub registers_per_thread: u16,
    #[serde(default)]
    pub static_shared_bytes: i32,
    #[serde(default)]
    pub dynamic_shared_bytes: i32,
    /// Copies: CUPTI's `CUpti_ActivityMemcpyKind` (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP; 0 otherwise).
    #[serde(default)]
    pub copy_kind: u8,
}

impl Activity {
    /// A kernel record (for fixtures and tests).
    pub fn kernel(name: &str, start_ns: u64, end_ns: u64) -> Self {
        Activity {
            kind: ActivityKind::Kernel,
            name: name.to_string(),
            start_ns,
            end_ns,
            stream: 0,
            grid: [1, 1, 1],
            block: [1, 1, 1],
            bytes: 0,
            correlation_id: 0,
            device: 0,
            graph_id: 0,
            registers_per_thread: 0,
            static_shared_bytes: 0,
            dynamic_shared_bytes: 0,
            copy_kind: 0,
        }
    }

    pub fn dur_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// Prefill or a decode step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Prefill,
    Decode,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
        }
    }
}

/// A traced step: host timestamps (same CUPTI clock) taken before its first operation was
/// issued and after the device was synchronized at its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepWindow {
    pub phase: Phase,
    /// 0 for prefill, 1-based decode step otherwise.
    pub step: usize,
    /// Tokens each sequence processes in this step (prompt length for prefill, 1 for decode).
    pub tokens: usize,
    /// Positions in the KV cache once the step is done.
    pub context_len: usize,
    pub start_ns: u64,
    pub end_ns: u64,
}

impl StepWindow {
    /// "prefill" or "decode 64".
    pub fn label(&self) -> String {
        match self.phase {
            Phase::Prefill => "prefill".into(),
            Phase::Decode => format!("decode {}", self.step),
        }
    }

    pub fn wall_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// A recorded trace: the steps and every activity seen while they ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub steps: Vec<StepWindow>,
    pub activities: Vec<Activity>,
    /// Records CUPTI reported as dropped (buffer full); 0 means the trace is complete.
    pub dropped_records: u64,
}

impl Trace {
    /// The activities that started inside a step's window, sorted by start time.
    pub fn step_activities(&self, w: &StepWindow) -> Vec<&Activity> {
        let mut v: Vec<&Activity> = self
            .activities
            .iter()
            .filter(|a| a.start_ns >= w.start_ns && a.start_ns < w.end_ns)
            .collect();
        v.sort_by_key(|a| (a.start_ns, a.end_ns));
        v
    }
}
