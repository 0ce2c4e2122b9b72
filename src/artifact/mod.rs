//! The versioned artifact schema (version 1) that every benchmark writes: types, I/O, checks.
//!
//! One JSON file per benchmark run. `docs/artifacts.md` explains every field and
//! `docs/artifact.schema.json` is the JSON Schema for other producers.

mod device;
#[cfg(test)]
pub mod fixture;
pub mod interrupt;
mod io;
pub mod json_error;
pub mod limits;
mod load;
pub mod peer;
mod replace;
mod validate;
mod writer;

pub use device::check_row_device;
pub use io::{
    parse_artifact, read_artifact, read_artifact_of_kind, report_path_beside, write_bytes_atomic,
    write_json_atomic,
};
pub use load::{
    is_artifact_file, load_dir, load_dir_with_hint, symlink_warning, with_hint, Loaded,
    CALIBRATION_JSON, SKIPPED_PREFIX, SKIP_INVALID_HINT, SUMMARY_JSON,
};
pub use replace::{check_replace, device_of};
pub use validate::{is_nonnegative_metric, validate};
pub use writer::ArtifactWriter;

use crate::env::Env;
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema version this build writes and the newest it reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole artifact file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    pub schema_version: u32,
    /// Which benchmark wrote it: "layernorm", "gemm", "llm", ...
    pub kind: String,
    pub run: RunInfo,
    pub env: Env,
    #[serde(default)]
    pub ceilings: Ceilings,
    pub results: Vec<ResultRow>,
    /// The compiler that built the measured code, for benchmarks that compile user sources
    /// (`kernel_bench`); absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<CompilerInfo>,
    /// Free-form notes on the run as a whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Which compiler built the measured kernels, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompilerInfo {
    /// "nvcc" or "nvrtc".
    pub name: String,
    /// "13.0.88" (nvcc) or "13.0" (NVRTC).
    pub version: String,
    /// The executable or library used, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Every option it was given (input and output files left out).
    pub flags: Vec<String>,
    /// The GPU target: "sm_90" (nvcc's cubin) or "compute_90" (NVRTC's PTX).
    pub target: String,
}

/// Who ran what, when, on which commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunInfo {
    pub id: String,
    /// RFC 3339 UTC.
    pub started_utc: String,
    /// RFC 3339 UTC; equals `started_utc` until the run finishes.
    pub finished_utc: String,
    /// False while the run is in progress or when it was interrupted.
    pub complete: bool,
    pub git_commit: Option<String>,
    pub git_dirty: Option<bool>,
    pub tool_version: String,
    pub command_line: Vec<String>,
    /// True for a run drawn from a random generator (`history synth`), not measured. Absent
    /// (false) in every measured run, so files written before the field existed still load.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub synthetic: bool,
}

/// Ceilings measured in the same process as the results, for "% of ceiling" metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ceilings {
    /// Device-to-device copy bandwidth, bytes read + bytes written per second, in GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_gbps: Option<f64>,
    /// Best matrix-multiply rate per dtype ("f32", "tf32", "f16", "bf16") in TFLOP/s.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub matmul_tflops: BTreeMap<String, f64>,
    /// Launch-to-launch interval of a kernel that does (almost) nothing, back to back on one
    /// stream, in microseconds: the part of every launch's time no kernel design removes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_interval_us: Option<f64>,
    /// Copy bandwidth from one GPU to another, GB/s (bytes / time, one direction), keyed
    /// "SRC->DST" by device index (comm_bench).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub peer_copy_gbps: BTreeMap<String, f64>,
    /// Time of one 8-byte all-reduce across the run's ranks, back to back, microseconds: the
    /// latency floor of a collective (comm_bench).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective_latency_us: Option<f64>,
    /// How each ceiling was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub method: Vec<String>,
}

/// A parameter value: shapes, dtypes, batch sizes, names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Param {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Param::Int(v) => write!(f, "{v}"),
            Param::Float(v) => write!(f, "{v}"),
            Param::Bool(v) => write!(f, "{v}"),
            Param::Text(v) => write!(f, "{v}"),
        }
    }
}

impl From<&str> for Param {
    fn from(v: &str) -> Self {
        Param::Text(v.to_string())
    }
}
impl From<String> for Param {
    fn from(v: String) -> Self {
        Param::Text(v)
    }
}
impl From<i64> for Param {
    fn from(v: i64) -> Self {
        Param::Int(v)
    }
}
impl From<usize> for Param {
    fn from(v: usize) -> Self {
        Param::Int(v as i64)
    }
}
impl From<f64> for Param {
    fn from(v: f64) -> Self {
        Param::Float(v)
    }
}
impl From<bool> for Param {
    fn from(v: bool) -> Self {
        Param::Bool(v)
    }
}

/// Whether a point was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured, and its correctness check (if any) passed.
    Ok,
    /// Correctness failed or the run errored: no timing is reported.
    Failed,
    /// Not run (does not fit in memory, unsupported dtype, ...): see notes.
    Skipped,
}

/// How the timings were taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// "cuda_events", "host_clock_synchronized", ...
    pub method: String,
    pub warmup: usize,
    /// Launches timed together per sample (time is divided by it).
    pub launches_per_sample: usize,
    /// Whether L2 was flushed before each timed launch (cold) or not (warm).
    pub l2_cleared: bool,
    /// How the number of samples was decided (GPU rows; absent on CPU rows and older artifacts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingRecord>,
}

/// How a measurement decided when to stop sampling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingRecord {
    /// "median_interval" (the median's 95% interval reached the target), "time_budget",
    /// "max_samples" or "fixed_count".
    pub stopped_by: String,
    /// The target half-width of the median's 95% interval, percent of the median (0: none).
    pub target_median_ci_pct: f64,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Host wall time allowed for the samples, when there was a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ms: Option<f64>,
    /// Samples taken while NVML reported a clock-throttle reason (GPU idle aside) or an SM
    /// clock below the board's top clock, or whose clocks did not recover before them.
    pub throttled_samples: usize,
    /// "steady" (measured back to back), "recovered" (measured again, each sample after the
    /// clocks recovered) or "throttled" (could not be measured at full clocks: never judged
    /// FASTER or SLOWER). Absent in artifacts written before clocks were judged per point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<String>,
    /// Samples taken in all, the ones the statistics leave out included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_taken: Option<usize>,
    /// With "recovered": the median of the back-to-back samples, the power-capped steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained_p50_us: Option<f64>,
    /// Host time spent waiting for the clocks to recover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_wait_ms: Option<f64>,
}

impl SamplingRecord {
    /// Whether the point could not be measured at full clocks: "throttled", or, in artifacts
    /// written before clocks were judged per point, a throttle reason in every one of its `n`
    /// samples.
    pub fn throttled(&self, n: usize) -> bool {
        match self.clocks.as_deref() {
            Some(c) => c == "throttled",
            None => n > 0 && self.throttled_samples >= n,
        }
    }
}

/// Comparison of an output against a reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Correctness {
    /// What it was compared with, e.g. "cpu_f64".
    pub reference: String,
    pub max_abs_err: f64,
    /// ||y - ref||_2 / ||ref||_2
    pub rel_err: f64,
    /// Threshold on rel_err that `passed` was judged by.
    pub tolerance: f64,
    pub passed: bool,
    /// Outputs that were NaN or infinite (unwritten, poisoned, overflowed): the errors above
    /// are over the finite ones, and the check fails. Absent (0) in older artifacts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub non_finite: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One measured point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultRow {
    /// What was measured, e.g. "layernorm_forward", "gemm", "decode".
    pub benchmark: String,
    /// Who computed it, e.g. "candle", "opbench", "cublas", "transformers-eager".
    pub implementation: String,
    pub status: Status,
    /// Shape, dtype, batch, ...: the point's coordinates.
    pub params: BTreeMap<String, Param>,
    /// Sampled quantities; keys carry their unit (`time_us`, `decode_step_ms`).
    #[serde(default)]
    pub stats: BTreeMap<String, Summary>,
    /// Derived figures; keys carry their unit (`gbps`, `tflops`, `tokens_per_s`, `pct_of_copy_bw`).
    #[serde(default)]
    pub metrics: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correctness: Option<Correctness>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ResultRow {
    /// A row with coordinates and no measurements yet.
    pub fn new(benchmark: &str, implementation: &str) -> Self {
        ResultRow {
            benchmark: benchmark.to_string(),
            implementation: implementation.to_string(),
            status: Status::Ok,
            params: BTreeMap::new(),
            stats: BTreeMap::new(),
            metrics: BTreeMap::new(),
            timing: None,
            correctness: None,
            notes: Vec::new(),
        }
    }

    /// Builder-style parameter.
    pub fn param(mut self, key: &str, value: impl Into<Param>) -> Self {
        self.params.insert(key.to_string(), value.into());
        self
    }

    /// A parameter as text, for grouping and display.
    pub fn param_str(&self, key: &str) -> Option<String> {
        self.params.get(key).map(|p| p.to_string())
    }

    /// The median of a sampled quantity.
    pub fn p50(&self, stat: &str) -> Option<f64> {
        self.stats.get(stat).map(|s| s.p50)
    }

    /// How the clocks went while the point was sampled: "steady", "recovered" or "throttled"
    /// (`SamplingRecord::throttled`, judged on the sample count of its first quantity); None
    /// for rows without a sampling record.
    pub fn clocks(&self) -> Option<&str> {
        let s = self.timing.as_ref()?.sampling.as_ref()?;
        let n = self.stats.values().next().map_or(0, |s| s.n);
        Some(if s.throttled(n) {
            "throttled"
        } else {
            s.clocks.as_deref().unwrap_or("steady")
        })
    }

    /// Whether the point could not be measured at full clocks.
    pub fn throttled(&self) -> bool {
        self.clocks() == Some("throttled")
    }
}
