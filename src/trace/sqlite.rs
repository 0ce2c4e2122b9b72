//! SQLite export with Nsight Systems' table and column names, so SQL written against an
//! `nsys export --type sqlite` file runs on it: `StringIds`, `TARGET_INFO_GPU`,
//! `CUPTI_ACTIVITY_KIND_KERNEL` / `_GRAPH_TRACE` (graph-level tracing) / `_MEMCPY` / `_MEMSET` /
//! `_RUNTIME` / `_DRIVER` / `_SYNCHRONIZATION`, `NVTX_EVENTS`, `ENUM_CUDA_MEMCPY_OPER`, plus `OPBENCH_TRACE_PROCESS`
//! (completeness per process; not an nsys table). Columns nsys has and CUPTI did not give us
//! are NULL. Ids follow nsys: `globalPid = pid << 24`, `globalTid = globalPid | (tid & 0xFFFFFF)`.

use super::names::{demangled, short_name};
use super::record::ActivityKind;
use super::workload::Workload;
use anyhow::{Context, Result};
use rusqlite::{params, Connection};
use std::collections::HashMap;
use std::path::Path;

const SCHEMA: &str = "
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER,
  clockRate INTEGER, smCount INTEGER, uuid TEXT, chipName TEXT, cuDevice INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
  gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER, localMemoryTotal INTEGER,
  gridId INTEGER, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
  sharedMemoryLimitConfig INTEGER, graphId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  srcKind INTEGER, dstKind INTEGER, graphNodeId INTEGER, graphId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER, graphId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,
  globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
CREATE TABLE OPBENCH_TRACE_PROCESS (globalPid INTEGER NOT NULL, pid INTEGER NOT NULL,
  cuptiVersion INTEGER, droppedRecords INTEGER NOT NULL, complete INTEGER NOT NULL,
  tornTail INTEGER NOT NULL, flushed INTEGER NOT NULL, lostFrom INTEGER, lostWhy TEXT,
  recordsNotKept INTEGER NOT NULL);
";

/// nsys' `ENUM_CUDA_MEMCPY_OPER` rows (CUPTI's memcpy kinds).
const MEMCPY_KINDS: [(i64, &str, &str); 11] = [
    (0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"),
    (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
    (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"),
    (3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"),
    (4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"),
    (5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"),
    (6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"),
    (7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"),
    (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"),
    (9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"),
    (10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"),
];

/// nsys' NVTX event types: push/pop range, start/end range.
const NVTX_PUSH_POP: i64 = 59;
const NVTX_START_END: i64 = 60;

pub fn global_pid(pid: u32) -> i64 {
    (pid as i64) << 24
}

pub fn global_tid(pid: u32, tid: u32) -> i64 {
    global_pid(pid) | (tid as i64 & 0xFF_FFFF)
}

/// Interns strings into `StringIds`.
struct Strings<'c> {
    ids: HashMap<String, i64>,
    insert: rusqlite::Statement<'c>,
}

impl Strings<'_> {
    fn id(&mut self, s: &str) -> Result<i64> {
        if let Some(&id) = self.ids.get(s) {
            return Ok(id);
        }
        let id = self.ids.len() as i64;
        self.insert.execute(params![id, s])?;
        self.ids.insert(s.to_string(), id);
        Ok(id)
    }
}

/// Writes `w` into a new database at `path` (atomically: a temporary file beside it, renamed).
pub fn write_sqlite(w: &Workload, path: &Path) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".trace-sqlite-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    {
        let mut c = Connection::open(tmp.path())
            .with_context(|| format!("opening {}", tmp.path().display()))?;
        fill(&mut c, w).with_context(|| format!("writing SQLite {}", path.display()))?;
        c.close().map_err(|(_, e)| e)?;
    }
    tmp.persist(path)
        .with_context(|| format!("moving the SQLite file into place at {}", path.display()))?;
    Ok(())
}

/// Creates the tables on `c` and inserts every record of `w` in one transaction.
pub fn fill(c: &mut Connection, w: &Workload) -> Result<()> {
    c.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
    let tx = c.transaction()?;
    tx.execute_batch(SCHEMA)?;
    {
        let mut s = Strings {
            ids: HashMap::new(),
            insert: tx.prepare("INSERT INTO StringIds (id, value) VALUES (?1, ?2)")?,
        };
        let mut e = tx.prepare("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?1, ?2, ?3)")?;
        for (id, n, l) in MEMCPY_KINDS {
            e.execute(params![id, n, l])?;
        }
        let mut gpu = tx.prepare(
            "INSERT INTO TARGET_INFO_GPU (id, name, totalMemory, smCount, cuDevice, computeMajor, \
             computeMinor) VALUES (?1, ?2, ?3, ?4, ?1, ?5, ?6)",
        )?;
        let mut seen_gpu = std::collections::HashSet::new();
        let mut kernel = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, \
             correlationId, globalPid, demangledName, shortName, mangledName, \
             registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, \
             staticSharedMemory, dynamicSharedMemory, graphId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
             ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        )?;
        let mut graph = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, streamId, \
             correlationId, globalPid, graphId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut memcpy = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, \
             correlationId, globalPid, bytes, copyKind, graphId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
             ?7, ?8, ?9)",
        )?;
        let mut memset = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, streamId, \
             correlationId, globalPid, bytes, graphId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let mut runtime = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, \
             nameId, returnValue) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut driver = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER (start, end, globalTid, correlationId, \
             nameId, returnValue) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut sync = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, streamId, \
             correlationId, globalPid, syncType) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut nvtx = tx.prepare(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, \
             textId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut proc = tx.prepare(
            "INSERT INTO OPBENCH_TRACE_PROCESS VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        // Per kernel name: (mangled, demangled, short) string ids, computed once.
        let mut name_ids: HashMap<&str, (i64, i64, i64)> = HashMap::new();
        for p in &w.processes {
            let gp = global_pid(p.pid);
            proc.execute(params![
                gp,
                p.pid,
                p.cupti_version,
                p.dropped_records as i64,
                p.complete,
                p.torn_tail,
                p.flushed,
                p.lost_from_ns.map(|t| t as i64),
                p.lost_why,
                p.records_not_kept as i64
            ])?;
            for g in &p.gpus {
                if seen_gpu.insert(g.id) {
                    gpu.execute(params![
                        g.id,
                        g.name,
                        g.memory_bytes as i64,
                        g.sm_count,
                        g.compute_major,
                        g.compute_minor
                    ])?;
                }
            }
            for a in &p.activities {
                match a.kind {
                    ActivityKind::Kernel => {
                        let ids = match name_ids.get(a.name.as_str()) {
                            Some(&ids) => ids,
                            None => {
                                let ids = (
                                    s.id(&a.name)?,
                                    s.id(&demangled(&a.name))?,
                                    s.id(&short_name(&a.name))?,
                                );
                                name_ids.insert(&a.name, ids);
                                ids
                            }
                        };
                        // Bound one by one (the hot insert: no parameter slice built per row).
                        let v: [i64; 19] = [
                            a.start_ns as i64,
                            a.end_ns as i64,
                            a.device.into(),
                            a.stream.into(),
                            a.correlation_id.into(),
                            gp,
                            ids.1,
                            ids.2,
                            ids.0,
                            a.registers_per_thread.into(),
                            a.grid[0].into(),
                            a.grid[1].into(),
                            a.grid[2].into(),
                            a.block[0].into(),
                            a.block[1].into(),
                            a.block[2].into(),
                            a.static_shared_bytes.into(),
                            a.dynamic_shared_bytes.into(),
                            a.graph_id.into(),
                        ];
                        for (i, x) in v.into_iter().enumerate() {
                            kernel.raw_bind_parameter(i + 1, x)?;
                        }
                        kernel.raw_execute()?;
                    }
                    ActivityKind::Memcpy => {
                        memcpy.execute(params![
                            a.start_ns as i64,
                            a.end_ns as i64,
                            a.device,
                            a.stream,
                            a.correlation_id,
                            gp,
                            a.bytes as i64,
                            a.copy_kind,
                            a.graph_id,
                        ])?;
                    }
                    ActivityKind::Memset => {
                        memset.execute(params![
                            a.start_ns as i64,
                            a.end_ns as i64,
                            a.device,
                            a.stream,
                            a.correlation_id,
                            gp,
                            a.bytes as i64,
                            a.graph_id,
                        ])?;
                    }
                }
            }
            for g in &p.graphs {
                graph.execute(params![
                    g.start_ns as i64,
                    g.end_ns as i64,
                    g.device,
                    g.stream,
                    g.correlation_id,
                    gp,
                    g.graph_id
                ])?;
            }
            for c in &p.api {
                let id = s.id(&c.name)?;
                let stmt = if c.driver { &mut driver } else { &mut runtime };
                let v: [i64; 6] = [
                    c.start_ns as i64,
                    c.end_ns as i64,
                    global_tid(p.pid, c.tid),
                    c.correlation_id.into(),
                    id,
                    c.return_value.into(),
                ];
                for (i, x) in v.into_iter().enumerate() {
                    stmt.raw_bind_parameter(i + 1, x)?;
                }
                stmt.raw_execute()?;
            }
            for y in &p.syncs {
                sync.execute(params![
                    y.start_ns as i64,
                    y.end_ns as i64,
                    y.stream,
                    y.correlation_id,
                    gp,
                    y.sync_type
                ])?;
            }
            for r in &p.ranges {
                let id = s.id(&r.name)?;
                let kind = if r.push_pop {
                    NVTX_PUSH_POP
                } else {
                    NVTX_START_END
                };
                nvtx.execute(params![
                    r.start_ns as i64,
                    r.end_ns as i64,
                    kind,
                    r.name,
                    global_tid(p.pid, r.tid),
                    global_tid(p.pid, r.end_tid),
                    id
                ])?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}
