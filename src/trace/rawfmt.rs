//! The raw trace file one traced process writes (the injection library) and `trace` reads:
//! tab-separated lines, one record each, appended as CUPTI hands over buffers. Std only, so
//! the injection crate compiles this same file.
//!
//! Lines: `H` header (format version, pid, CUPTI version), `N` a string (id, text), `G` a GPU,
//! `K` kernel, `A` a whole CUDA graph's execution (graph-level tracing), `C` memcpy, `M`
//! memset, `R` runtime API call, `V` driver API call, `Y` synchronization, `P` NVTX range, `D`
//! dropped-record count so far, `W` a warning of the injection library, `S` recording paused
//! or resumed by the program (CUPTI time, 0 or 1), `L` recording stopped early (CUPTI time,
//! why: the program started its own CUPTI subscriber), `X` records not kept so far past
//! `trace --max-records` (the last `X` line counts), `E` clean end. A process killed
//! mid-write leaves a last line without its newline; readers drop it, and a file
//! without `E` reads as incomplete.

use std::fmt::Write;

/// First field of the `H` line: the version of this line format.
pub const VERSION: u32 = 1;

/// The raw file of process `pid` inside the output folder.
pub fn file_name(pid: u32) -> String {
    format!("trace-{pid}.raw")
}

/// Whether `name` is a raw file name `file_name` made.
pub fn is_raw_file_name(name: &str) -> bool {
    name.strip_prefix("trace-")
        .and_then(|r| r.strip_suffix(".raw"))
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The environment variable that names the output folder for the injection library.
pub const OUT_DIR_ENV: &str = "OPBENCH_TRACE_DIR";

/// The libcupti the injection library loads by path before anything else (set by `trace`
/// when it finds one), so the traced program's library path need not reach it.
pub const CUPTI_LIB_ENV: &str = "OPBENCH_CUPTI_LIB";

/// The folder (set by `trace`, first on the program's LD_LIBRARY_PATH) whose `libcupti.so`
/// and `libcupti.so.13` name the libcupti every lookup by name must get: the injection library
/// points them at the program's own libcupti when the program loaded one first.
pub const CUPTI_ALIAS_ENV: &str = "OPBENCH_TRACE_CUPTI_ALIAS";

/// The names a libcupti is looked up by, each a link in that folder: cudarc's first candidate,
/// then the soname of CUDA 13's libcupti.
pub const CUPTI_NAMES: [&str; 2] = ["libcupti.so", CUPTI_SONAME];
pub const CUPTI_SONAME: &str = "libcupti.so.13";

/// How CUDA graphs are recorded: "node" (default: every kernel of a graph, with its graph id)
/// or "graph" (one record per graph execution: less overhead, no per-kernel view).
pub const GRAPHS_ENV: &str = "OPBENCH_TRACE_GRAPHS";

/// Which API calls are recorded: "work" (default: every runtime and driver call except
/// queries that neither enqueue GPU work nor wait for it, such as cudaGetDevice or
/// cuCtxGetCurrent), "all", or "none" (no runtime or driver call).
pub const API_ENV: &str = "OPBENCH_TRACE_API";

/// Where runtime and driver API records come from: "activity" (default: the RUNTIME and DRIVER
/// activity kinds) or "callback" (CUPTI's callback API, enabled only for the calls recorded),
/// to compare what each costs a workload.
pub const API_RECORDS_ENV: &str = "OPBENCH_TRACE_API_RECORDS";

/// Restricts the activity kinds recorded to those named (comma-separated: DEVICE,
/// CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME, DRIVER, SYNCHRONIZATION), to measure what each
/// costs a workload; each kind left out is named in a warning. Unset: all.
pub const KINDS_ENV: &str = "OPBENCH_TRACE_KINDS";

/// The periodic flushes, to measure what each costs a workload: "off" (no flush thread and no
/// CUPTI flush period: buffers are written only when CUPTI hands them over full and at exit,
/// so a killed process may lose what it recorded), "thread" (the flush thread alone) or
/// "period" (CUPTI's flush period alone, which hands over full buffers only); the raw file
/// names what is off in a warning. Unset: both, buffers asked for every second.
pub const FLUSH_ENV: &str = "OPBENCH_TRACE_FLUSH";

/// "inline": CUPTI's completed buffers are decoded in its completion callback instead of by
/// the injection library's writer thread, to measure what that costs a workload.
pub const DECODE_ENV: &str = "OPBENCH_TRACE_DECODE";

/// "0": CUPTI's global activity buffers instead of per-thread ones
/// (`CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER`, which the injection library asks for by
/// default), to measure what the setting changes for a workload.
pub const PER_THREAD_ENV: &str = "OPBENCH_TRACE_PER_THREAD_BUFFERS";

/// "cupti": CUPTI's default thread ids in API records instead of system thread ids (gettid,
/// which NVTX ranges and the SQLite export's globalTid use), to measure what the setting costs
/// a workload; API calls then do not share thread ids with NVTX ranges, and the raw file says
/// so in a warning.
pub const THREAD_IDS_ENV: &str = "OPBENCH_TRACE_THREAD_IDS";

/// "paused": the process starts with recording paused and records from its first
/// `opbench_trace_resume` (`trace --start-paused`; python/opbench/trace_control.py).
pub const START_ENV: &str = "OPBENCH_TRACE_START";

/// The most records (lines of kinds K, A, C, M, R, V, Y, P) a process writes
/// (`trace --max-records`); later ones are counted in `X` lines instead. Unset or 0: no limit.
pub const MAX_RECORDS_ENV: &str = "OPBENCH_TRACE_MAX_RECORDS";

/// One execution of a CUDA graph (graph-level tracing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawGraph {
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: u32,
    pub stream: u32,
    /// The graph launch's correlation id.
    pub correlation_id: u32,
    pub graph_id: u32,
}

/// A kernel record (CUPTI's concurrent-kernel record, the fields kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawKernel {
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: u32,
    pub stream: u32,
    pub correlation_id: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers_per_thread: u16,
    pub static_shared_bytes: i32,
    pub dynamic_shared_bytes: i32,
    /// 0 unless launched as a node of a CUDA graph.
    pub graph_id: u32,
    /// Id of its (mangled) name, from an earlier `N` line.
    pub name_id: u32,
}

/// A memcpy (`copy_kind` set) or memset (`value` set) record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawMem {
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: u32,
    pub stream: u32,
    pub correlation_id: u32,
    pub bytes: u64,
    /// Memcpy: CUPTI's `CUpti_ActivityMemcpyKind`.
    pub copy_kind: u8,
    /// Memset: the byte value set.
    pub value: u32,
    pub graph_id: u32,
}

/// A runtime or driver API call on a host thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawApi {
    pub start_ns: u64,
    pub end_ns: u64,
    pub tid: u32,
    pub correlation_id: u32,
    /// CUPTI's callback id of the function.
    pub cbid: u32,
    pub return_value: u32,
    /// Id of the function's name ("cudaLaunchKernel").
    pub name_id: u32,
}

/// A synchronization (stream, event, context) seen by CUPTI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawSync {
    pub start_ns: u64,
    pub end_ns: u64,
    /// CUPTI's `CUpti_ActivitySynchronizationType`.
    pub sync_type: u32,
    pub stream: u32,
    pub correlation_id: u32,
}

/// An NVTX range, push/pop (one thread) or start/end (ends on `end_tid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawRange {
    pub start_ns: u64,
    pub end_ns: u64,
    pub tid: u32,
    pub end_tid: u32,
    pub push_pop: bool,
    pub name_id: u32,
}

/// A GPU the process used.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawGpu {
    pub id: u32,
    pub name: String,
    pub compute_major: u32,
    pub compute_minor: u32,
    pub sm_count: u32,
    pub memory_bytes: u64,
}

/// Makes `s` safe inside a field: backslash, tab, newline and carriage return escaped.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\t' => o.push_str("\\t"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            c => o.push(c),
        }
    }
    o
}

/// The inverse of [`escape`].
pub fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        match it.next() {
            Some('t') => o.push('\t'),
            Some('n') => o.push('\n'),
            Some('r') => o.push('\r'),
            Some(other) => o.push(other),
            None => o.push('\\'),
        }
    }
    o
}

// `write!` into a String cannot fail; the results are ignored on purpose below.

pub fn header(o: &mut String, pid: u32, cupti_version: u32) {
    let _ = writeln!(o, "H\t{VERSION}\t{pid}\t{cupti_version}");
}

pub fn string(o: &mut String, id: u32, text: &str) {
    let _ = writeln!(o, "N\t{id}\t{}", escape(text));
}

pub fn gpu(o: &mut String, g: &RawGpu) {
    let _ = writeln!(
        o,
        "G\t{}\t{}\t{}\t{}\t{}\t{}",
        g.id,
        escape(&g.name),
        g.compute_major,
        g.compute_minor,
        g.sm_count,
        g.memory_bytes
    );
}

pub fn kernel(o: &mut String, k: &RawKernel) {
    let _ = writeln!(
        o,
        "K\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        k.start_ns,
        k.end_ns,
        k.device,
        k.stream,
        k.correlation_id,
        k.grid[0],
        k.grid[1],
        k.grid[2],
        k.block[0],
        k.block[1],
        k.block[2],
        k.registers_per_thread,
        k.static_shared_bytes,
        k.dynamic_shared_bytes,
        k.graph_id,
        k.name_id,
        0 // reserved: keeps the field count fixed for a later field
    );
}

pub fn graph(o: &mut String, g: &RawGraph) {
    let _ = writeln!(
        o,
        "A\t{}\t{}\t{}\t{}\t{}\t{}",
        g.start_ns, g.end_ns, g.device, g.stream, g.correlation_id, g.graph_id
    );
}

fn mem(o: &mut String, tag: char, m: &RawMem) {
    let _ = writeln!(
        o,
        "{tag}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        m.start_ns,
        m.end_ns,
        m.device,
        m.stream,
        m.correlation_id,
        m.bytes,
        m.copy_kind,
        m.value,
        m.graph_id
    );
}

pub fn memcpy(o: &mut String, m: &RawMem) {
    mem(o, 'C', m)
}

pub fn memset(o: &mut String, m: &RawMem) {
    mem(o, 'M', m)
}

/// `driver`: a driver API call (`V`), else a runtime one (`R`).
pub fn api(o: &mut String, driver: bool, a: &RawApi) {
    let _ = writeln!(
        o,
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        if driver { 'V' } else { 'R' },
        a.start_ns,
        a.end_ns,
        a.tid,
        a.correlation_id,
        a.cbid,
        a.return_value,
        a.name_id
    );
}

pub fn sync(o: &mut String, s: &RawSync) {
    let _ = writeln!(
        o,
        "Y\t{}\t{}\t{}\t{}\t{}",
        s.start_ns, s.end_ns, s.sync_type, s.stream, s.correlation_id
    );
}

pub fn range(o: &mut String, r: &RawRange) {
    let _ = writeln!(
        o,
        "P\t{}\t{}\t{}\t{}\t{}\t{}",
        r.start_ns, r.end_ns, r.tid, r.end_tid, r.push_pop as u8, r.name_id
    );
}

/// The records CUPTI reported dropped so far in this process (the last `D` line counts).
pub fn dropped(o: &mut String, total: u64) {
    let _ = writeln!(o, "D\t{total}");
}

/// The records not written so far because the process reached its `MAX_RECORDS_ENV` limit
/// (the last `X` line counts).
pub fn not_kept(o: &mut String, total: u64) {
    let _ = writeln!(o, "X\t{total}");
}

/// A message from the injection library (a refusal, a kind CUPTI would not record).
pub fn warning(o: &mut String, text: &str) {
    let _ = writeln!(o, "W\t{}", escape(text));
}

/// Recording stopped at CUPTI time `ns` (0: before it started) for the reason `why`: no
/// activity after that is in the file, though the process went on.
pub fn lost(o: &mut String, ns: u64, why: &str) {
    let _ = writeln!(o, "L\t{ns}\t{}", escape(why));
}

/// Recording paused (`on` false) or resumed at CUPTI time `ns` (0: from the start) by the
/// program (`opbench_trace_pause` / `_resume`): between a pause and the next resume nothing was
/// recorded, and the time is not the program's idle time.
pub fn recording(o: &mut String, ns: u64, on: bool) {
    let _ = writeln!(o, "S\t{ns}\t{}", on as u8);
}

/// The process ended and flushed everything (`why`: "exit", "atexit").
pub fn end(o: &mut String, why: &str) {
    let _ = writeln!(o, "E\t{}", escape(why));
}
