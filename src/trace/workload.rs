//! The record model of a traced workload (the `trace` tool): per process, the GPU activities
//! (kernels, copies, memsets, as [`Activity`]), runtime and driver API calls, synchronizations,
//! NVTX ranges, the GPUs used and how complete the recording is.

use super::record::{Activity, ActivityKind};
use serde::{Deserialize, Serialize};

/// A runtime (`cuda*`) or driver (`cu*`) API call on a host thread (CUPTI clock, ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiCall {
    pub driver: bool,
    /// The function: "cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch".
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub tid: u32,
    /// Shared with the GPU activities this call started.
    pub correlation_id: u32,
    pub cbid: u32,
    pub return_value: u32,
}

impl ApiCall {
    pub fn dur_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// One execution of a whole CUDA graph (graph-level tracing: its kernels are not recorded one
/// by one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphExec {
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: u32,
    pub stream: u32,
    /// The graph launch's correlation id.
    pub correlation_id: u32,
    pub graph_id: u32,
}

impl GraphExec {
    /// The execution as a GPU activity ("CUDA graph 7"), for the analyses that take
    /// activities: it counts as computation and occupies its stream.
    pub fn as_activity(&self) -> Activity {
        Activity {
            correlation_id: self.correlation_id,
            stream: self.stream,
            device: self.device,
            graph_id: self.graph_id,
            grid: [0; 3],
            block: [0; 3],
            ..Activity::kernel(
                &format!("CUDA graph {}", self.graph_id),
                self.start_ns,
                self.end_ns,
            )
        }
    }
}

/// A synchronization the host waited in (CUPTI's synchronization record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRecord {
    /// CUPTI's `CUpti_ActivitySynchronizationType`: 1 event, 2 stream wait event, 3 stream,
    /// 4 context.
    pub sync_type: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub stream: u32,
    pub correlation_id: u32,
}

/// An NVTX range: push/pop on one thread, or start/end (possibly ending on another thread).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NvtxRange {
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub tid: u32,
    pub end_tid: u32,
    pub push_pop: bool,
}

/// A GPU the process used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub id: u32,
    pub name: String,
    pub compute_major: u32,
    pub compute_minor: u32,
    pub sm_count: u32,
    pub memory_bytes: u64,
}

/// Everything recorded in one traced process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessTrace {
    pub pid: u32,
    /// `cuptiGetVersion` of the libcupti that recorded it (0: unknown).
    pub cupti_version: u32,
    pub gpus: Vec<GpuInfo>,
    /// Kernels, copies and memsets.
    pub activities: Vec<Activity>,
    /// Graph executions (graph-level tracing only).
    #[serde(default)]
    pub graphs: Vec<GraphExec>,
    pub api: Vec<ApiCall>,
    pub syncs: Vec<SyncRecord>,
    pub ranges: Vec<NvtxRange>,
    /// Records CUPTI reported dropped (buffers full): not in the lists above.
    pub dropped_records: u64,
    /// Everything the process did is here: it flushed and closed its file (`flushed`) and
    /// recording never stopped early (`lost_from_ns` is None).
    pub complete: bool,
    /// The process flushed and closed its file (an `E` line); false when it was killed or
    /// crashed, so the last second or so may be missing.
    #[serde(default)]
    pub flushed: bool,
    /// Recording stopped at this CUPTI time (0: before it started) while the process went on
    /// (an `L` line): no activity after it is here. `lost_why` says why (the program started
    /// its own CUPTI subscriber, e.g. torch.profiler).
    #[serde(default)]
    pub lost_from_ns: Option<u64>,
    #[serde(default)]
    pub lost_why: Option<String>,
    /// Spans in which the program had recording paused (`S` lines: `opbench_trace_pause` to
    /// the next `_resume`, or from the start with `trace --start-paused`): nothing is recorded
    /// there, and analyses do not count them as idle.
    #[serde(default)]
    pub paused: Vec<PausedSpan>,
    /// Records not written because the process reached `trace --max-records` (`X` lines).
    #[serde(default)]
    pub records_not_kept: u64,
    /// A last line cut off mid-write (process killed), left out.
    pub torn_tail: bool,
    /// What the injection library reported (CUPTI refused a kind, version not supported).
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl ProcessTrace {
    pub fn kernels(&self) -> impl Iterator<Item = &Activity> {
        self.activities
            .iter()
            .filter(|a| a.kind == ActivityKind::Kernel)
    }

    /// The earliest start of any GPU activity or API call (None: nothing recorded).
    pub fn first_ns(&self) -> Option<u64> {
        let gpu = self.activities.iter().map(|a| a.start_ns);
        gpu.chain(self.api.iter().map(|a| a.start_ns)).min()
    }

    /// How long after its first record recording stopped early (`lost_from_ns`), in ns: 0
    /// when it stopped before anything was recorded.
    pub fn lost_after_ns(&self) -> Option<u64> {
        let t = self.lost_from_ns?;
        Some(self.first_ns().map_or(0, |f| t.saturating_sub(f)))
    }
}

/// Recording paused from `from_ns` (CUPTI time; 0: from the start) to `to_ns` (None: to the
/// end of the process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedSpan {
    pub from_ns: u64,
    pub to_ns: Option<u64>,
}

/// How many ns of [from_ns, to_ns] lie inside the paused spans.
pub fn paused_ns_within(spans: &[PausedSpan], from_ns: u64, to_ns: u64) -> u64 {
    spans
        .iter()
        .map(|s| {
            let (a, b) = (
                s.from_ns.max(from_ns),
                s.to_ns.unwrap_or(u64::MAX).min(to_ns),
            );
            b.saturating_sub(a)
        })
        .sum()
}

/// Every process of one traced command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub processes: Vec<ProcessTrace>,
}

impl Workload {
    pub fn kernels(&self) -> impl Iterator<Item = &Activity> {
        self.processes.iter().flat_map(|p| p.kernels())
    }

    pub fn kernel_count(&self) -> usize {
        self.kernels().count()
    }

    pub fn dropped_records(&self) -> u64 {
        // Saturating: each count is at most 2^53 (`input::COUNT_MAX`), their sum must not wrap.
        self.processes
            .iter()
            .fold(0u64, |t, p| t.saturating_add(p.dropped_records))
    }
}
