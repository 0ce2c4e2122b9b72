//! Reads the raw per-process files (`rawfmt`) into [`ProcessTrace`]s. Errors name the file and
//! line; a torn last line (the process was killed mid-write) is dropped and flagged.

use super::rawfmt::{self, unescape};
use super::record::{Activity, ActivityKind};
use super::workload::{
    ApiCall, GpuInfo, GraphExec, NvtxRange, PausedSpan, ProcessTrace, SyncRecord, Workload,
};
use crate::input::{read_limited, COUNT_MAX, RAW_TRACE_MAX_BYTES};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

struct Fields<'a> {
    it: std::str::Split<'a, char>,
    line: usize,
}

impl<'a> Fields<'a> {
    fn next_str(&mut self) -> Result<&'a str> {
        self.it
            .next()
            .ok_or_else(|| anyhow!("line {}: too few fields", self.line))
    }

    fn num<T: FromStr>(&mut self) -> Result<T> {
        let s = self.next_str()?;
        s.parse()
            .map_err(|_| anyhow!("line {}: {s:?} is not a number", self.line))
    }

    /// A record's start and end times: an end before the start is an error (it would read as
    /// a 0 us record that looks fine).
    fn span(&mut self) -> Result<(u64, u64)> {
        let (start_ns, end_ns): (u64, u64) = (self.num()?, self.num()?);
        if end_ns < start_ns {
            bail!(
                "line {}: the record ends (at {end_ns} ns) before it starts (at {start_ns} ns): \
                 the file is damaged or was not written by opbench's injection library",
                self.line
            );
        }
        Ok((start_ns, end_ns))
    }
}

fn memcpy_name(kind: u8) -> &'static str {
    match kind {
        1 => "[CUDA memcpy Host-to-Device]",
        2 => "[CUDA memcpy Device-to-Host]",
        8 => "[CUDA memcpy Device-to-Device]",
        10 => "[CUDA memcpy Peer-to-Peer]",
        _ => "[CUDA memcpy]",
    }
}

/// Parses the text of one raw file. `Err` names the line; the caller adds the file.
pub fn parse_raw(text: &str) -> Result<ProcessTrace> {
    let mut p = ProcessTrace::default();
    // Keyed by id, not indexed: an id is whatever number the file says (up to u32::MAX).
    let mut strings: HashMap<u32, String> = HashMap::new();
    let (body, torn) = match text.rfind('\n') {
        Some(i) => (&text[..=i], i + 1 < text.len()),
        None => ("", !text.is_empty()),
    };
    p.torn_tail = torn;
    let mut saw_header = false;
    for (i, line) in body.lines().enumerate() {
        let n = i + 1;
        if line.is_empty() {
            continue;
        }
        let mut f = Fields {
            it: line.split('\t'),
            line: n,
        };
        let tag = f.next_str()?;
        if !saw_header && tag != "H" {
            bail!("line {n}: expected the header line (H), found {tag:?}: not a raw trace file");
        }
        let name = |id: u32, strings: &HashMap<u32, String>| -> Result<String> {
            strings
                .get(&id)
                .cloned()
                .ok_or_else(|| anyhow!("line {n}: string id {id} was not defined before"))
        };
        match tag {
            "H" => {
                if saw_header {
                    bail!(
                        "line {n}: a second header: two processes with the same pid wrote this \
                         file (a pid reused during the run); their records cannot be told apart"
                    );
                }
                let v: u32 = f.num()?;
                if v > rawfmt::VERSION {
                    bail!(
                        "line {n}: format version {v}, newer than this build reads ({}); \
                         read it with the `trace` of the build that wrote it",
                        rawfmt::VERSION
                    );
                }
                p.pid = f.num()?;
                p.cupti_version = f.num()?;
                saw_header = true;
            }
            "N" => {
                let id: u32 = f.num()?;
                strings.insert(id, unescape(f.next_str()?));
            }
            "G" => {
                let g = GpuInfo {
                    id: f.num()?,
                    name: unescape(f.next_str()?),
                    compute_major: f.num()?,
                    compute_minor: f.num()?,
                    sm_count: f.num()?,
                    memory_bytes: f.num()?,
                };
                // Each resume after a pause (`S`) reports the GPUs again.
                if !p.gpus.iter().any(|o| o.id == g.id) {
                    p.gpus.push(g);
                }
            }
            "K" => {
                let (start_ns, end_ns) = f.span()?;
                let (device, stream, correlation_id) = (f.num()?, f.num()?, f.num()?);
                let grid = [f.num()?, f.num()?, f.num()?];
                let block = [f.num()?, f.num()?, f.num()?];
                let (registers_per_thread, static_shared_bytes, dynamic_shared_bytes) =
                    (f.num()?, f.num()?, f.num()?);
                let graph_id = f.num()?;
                let id: u32 = f.num()?;
                p.activities.push(Activity {
                    kind: ActivityKind::Kernel,
                    name: name(id, &strings)?,
                    start_ns,
                    end_ns,
                    stream,
                    grid,
                    block,
                    bytes: 0,
                    correlation_id,
                    device,
                    graph_id,
                    registers_per_thread,
                    static_shared_bytes,
                    dynamic_shared_bytes,
                    copy_kind: 0,
                });
            }
            "A" => {
                let (start_ns, end_ns) = f.span()?;
                p.graphs.push(GraphExec {
                    start_ns,
                    end_ns,
                    device: f.num()?,
                    stream: f.num()?,
                    correlation_id: f.num()?,
                    graph_id: f.num()?,
                })
            }
            "C" | "M" => {
                let (start_ns, end_ns) = f.span()?;
                let (device, stream, correlation_id, bytes) =
                    (f.num()?, f.num()?, f.num()?, f.num()?);
                let copy_kind: u8 = f.num()?;
                let _value: u32 = f.num()?;
                let graph_id = f.num()?;
                let (kind, name) = if tag == "C" {
                    (ActivityKind::Memcpy, memcpy_name(copy_kind))
                } else {
                    (ActivityKind::Memset, "[CUDA memset]")
                };
                p.activities.push(Activity {
                    kind,
                    name: name.to_string(),
                    start_ns,
                    end_ns,
                    stream,
                    grid: [0; 3],
                    block: [0; 3],
                    bytes,
                    correlation_id,
                    device,
                    graph_id,
                    registers_per_thread: 0,
                    static_shared_bytes: 0,
                    dynamic_shared_bytes: 0,
                    copy_kind,
                });
            }
            "R" | "V" => {
                let (start_ns, end_ns) = f.span()?;
                let (tid, correlation_id, cbid, return_value) =
                    (f.num()?, f.num()?, f.num()?, f.num()?);
                let id: u32 = f.num()?;
                p.api.push(ApiCall {
                    driver: tag == "V",
                    name: name(id, &strings)?,
                    start_ns,
                    end_ns,
                    tid,
                    correlation_id,
                    cbid,
                    return_value,
                });
            }
            "Y" => {
                let (start_ns, end_ns) = f.span()?;
                p.syncs.push(SyncRecord {
                    start_ns,
                    end_ns,
                    sync_type: f.num()?,
                    stream: f.num()?,
                    correlation_id: f.num()?,
                })
            }
            "P" => {
                let (start_ns, end_ns) = f.span()?;
                let (tid, end_tid) = (f.num()?, f.num()?);
                let push_pop: u8 = f.num()?;
                let id: u32 = f.num()?;
                p.ranges.push(NvtxRange {
                    name: name(id, &strings)?,
                    start_ns,
                    end_ns,
                    tid,
                    end_tid,
                    push_pop: push_pop != 0,
                });
            }
            "D" => {
                let d: u64 = f.num()?;
                if d > COUNT_MAX {
                    bail!(
                        "line {n}: {d} dropped records, more than {COUNT_MAX} (2^53), the most \
                         opbench counts: the file is damaged"
                    );
                }
                p.dropped_records = p.dropped_records.max(d);
            }
            "X" => {
                let x: u64 = f.num()?;
                if x > COUNT_MAX {
                    bail!(
                        "line {n}: {x} records not kept, more than {COUNT_MAX} (2^53), the most \
                         opbench counts: the file is damaged"
                    );
                }
                p.records_not_kept = p.records_not_kept.max(x);
            }
            "W" => p.warnings.push(unescape(f.next_str()?)),
            "E" => p.flushed = true,
            "S" => {
                let t: u64 = f.num()?;
                let on: u8 = f.num()?;
                let open = p.paused.last_mut().filter(|s| s.to_ns.is_none());
                match (on, open) {
                    (0, None) => p.paused.push(PausedSpan {
                        from_ns: t,
                        to_ns: None,
                    }),
                    (0, Some(_)) => {} // paused twice: the first pause counts
                    (_, Some(s)) => s.to_ns = Some(t),
                    (_, None) => {} // resumed while recording: nothing was paused
                }
            }
            "L" => {
                // The earliest stop counts (the library writes one; two would be a bug).
                let t: u64 = f.num()?;
                let why = unescape(f.next_str()?);
                if p.lost_from_ns.is_none_or(|e| t < e) {
                    p.lost_from_ns = Some(t);
                    p.lost_why = Some(why);
                }
            }
            other => bail!("line {n}: unknown record tag {other:?}"),
        }
    }
    if !saw_header {
        bail!("no header line: the file is empty or not a raw trace file");
    }
    p.complete = p.flushed && p.lost_from_ns.is_none() && p.records_not_kept == 0;
    Ok(p)
}

/// Reads one raw file: its first bytes must be a header line (so a large file of something
/// else is refused before it is read whole), and at most [`RAW_TRACE_MAX_BYTES`] are read.
pub fn read_raw_file(path: &Path) -> Result<ProcessTrace> {
    let mut f = std::fs::File::open(path)
        .with_context(|| format!("{}: cannot open the raw trace file", path.display()))?;
    let mut head = Vec::new();
    (&mut f)
        .take(2)
        .read_to_end(&mut head)
        .with_context(|| format!("{}: cannot read the raw trace file", path.display()))?;
    if head != b"H\t" {
        bail!(
            "{}: not a raw trace file (it does not start with the header line `H`): give the \
             raw/ folder of a `trace` run",
            path.display()
        );
    }
    let mut bytes = head;
    bytes.extend(read_limited(
        f,
        path,
        "raw trace file",
        RAW_TRACE_MAX_BYTES - 2,
    )?);
    let text = String::from_utf8_lossy(&bytes);
    parse_raw(&text).with_context(|| format!("raw trace {}", path.display()))
}

/// The raw files in `dir` (`trace-<pid>.raw`), sorted by name.
pub fn raw_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let e = e.with_context(|| format!("listing {}", dir.display()))?;
        if e.file_name().to_str().is_some_and(rawfmt::is_raw_file_name) {
            v.push(e.path());
        }
    }
    v.sort();
    Ok(v)
}

/// Every process's raw file in `dir`, ordered by pid.
pub fn read_raw_dir(dir: &Path) -> Result<Workload> {
    let mut processes = raw_files(dir)?
        .iter()
        .map(|f| read_raw_file(f))
        .collect::<Result<Vec<_>>>()?;
    processes.sort_by_key(|p| p.pid);
    Ok(Workload { processes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::rawfmt::*;

    fn sample() -> String {
        let mut o = String::new();
        header(&mut o, 4242, 130001);
        string(&mut o, 0, "_Z6kernelPf");
        string(&mut o, 1, "cudaLaunchKernel");
        string(&mut o, 2, "model.layers.0\tattn");
        gpu(
            &mut o,
            &RawGpu {
                id: 0,
                name: "NVIDIA H100 80GB HBM3".into(),
                compute_major: 9,
                compute_minor: 0,
                sm_count: 132,
                memory_bytes: 85_000_000_000,
            },
        );
        api(
            &mut o,
            false,
            &RawApi {
                start_ns: 100,
                end_ns: 110,
                tid: 7,
                correlation_id: 5,
                cbid: 211,
                return_value: 0,
                name_id: 1,
            },
        );
        kernel(
            &mut o,
            &RawKernel {
                start_ns: 120,
                end_ns: 150,
                device: 0,
                stream: 7,
                correlation_id: 5,
                grid: [4, 2, 1],
                block: [128, 1, 1],
                registers_per_thread: 32,
                static_shared_bytes: 1024,
                dynamic_shared_bytes: 2048,
                graph_id: 3,
                name_id: 0,
            },
        );
        memcpy(
            &mut o,
            &RawMem {
                start_ns: 160,
                end_ns: 170,
                device: 0,
                stream: 7,
                correlation_id: 6,
                bytes: 4096,
                copy_kind: 2,
                value: 0,
                graph_id: 0,
            },
        );
        memset(
            &mut o,
            &RawMem {
                start_ns: 171,
                end_ns: 172,
                bytes: 64,
                value: 255,
                ..RawMem::default()
            },
        );
        sync(
            &mut o,
            &RawSync {
                start_ns: 150,
                end_ns: 175,
                sync_type: 3,
                stream: 7,
                correlation_id: 9,
            },
        );
        range(
            &mut o,
            &RawRange {
                start_ns: 90,
                end_ns: 180,
                tid: 7,
                end_tid: 7,
                push_pop: true,
                name_id: 2,
            },
        );
        graph(
            &mut o,
            &RawGraph {
                start_ns: 400,
                end_ns: 480,
                device: 0,
                stream: 7,
                correlation_id: 12,
                graph_id: 4,
            },
        );
        dropped(&mut o, 3);
        dropped(&mut o, 5);
        warning(
            &mut o,
            "cuptiActivityEnable(SYNCHRONIZATION): not supported",
        );
        o
    }

    #[test]
    fn records_past_max_records_make_the_process_incomplete_with_their_count() {
        let mut text = sample();
        not_kept(&mut text, 7);
        not_kept(&mut text, 40);
        end(&mut text, "exit");
        let p = parse_raw(&text).unwrap();
        assert_eq!(p.records_not_kept, 40, "the last X line counts");
        assert!(p.flushed && !p.complete);
        let mut big = sample();
        not_kept(&mut big, u64::MAX);
        let e = parse_raw(&big).unwrap_err().to_string();
        assert!(e.contains("records not kept"), "{e}");
    }

    #[test]
    fn every_record_kind_round_trips_through_the_line_format() {
        let mut text = sample();
        end(&mut text, "exit");
        let p = parse_raw(&text).unwrap();
        assert_eq!((p.pid, p.cupti_version), (4242, 130001));
        assert!(p.complete && !p.torn_tail);
        assert_eq!(p.dropped_records, 5);
        assert_eq!(
            p.warnings,
            ["cuptiActivityEnable(SYNCHRONIZATION): not supported"]
        );
        assert_eq!(p.gpus[0].sm_count, 132);
        let k = &p.activities[0];
        assert_eq!(k.kind, ActivityKind::Kernel);
        assert_eq!(k.name, "_Z6kernelPf");
        assert_eq!(
            (k.start_ns, k.end_ns, k.stream, k.correlation_id),
            (120, 150, 7, 5)
        );
        assert_eq!((k.grid, k.block), ([4, 2, 1], [128, 1, 1]));
        assert_eq!(
            (
                k.registers_per_thread,
                k.static_shared_bytes,
                k.dynamic_shared_bytes
            ),
            (32, 1024, 2048)
        );
        assert_eq!(k.graph_id, 3);
        let c = &p.activities[1];
        assert_eq!(
            (c.kind, c.bytes, c.copy_kind),
            (ActivityKind::Memcpy, 4096, 2)
        );
        assert_eq!(c.name, "[CUDA memcpy Device-to-Host]");
        assert_eq!(p.activities[2].kind, ActivityKind::Memset);
        assert_eq!(p.api[0].name, "cudaLaunchKernel");
        assert!(!p.api[0].driver);
        assert_eq!(p.syncs[0].sync_type, 3);
        assert_eq!(p.ranges[0].name, "model.layers.0\tattn");
        assert!(p.ranges[0].push_pop);
        let g = p.graphs[0];
        assert_eq!(
            (g.start_ns, g.end_ns, g.stream, g.correlation_id, g.graph_id),
            (400, 480, 7, 12, 4)
        );
        assert_eq!(g.as_activity().name, "CUDA graph 4");
    }

    #[test]
    fn a_killed_process_reads_as_incomplete_with_its_torn_line_dropped() {
        let mut text = sample();
        text.push_str("K\t200\t2"); // cut off mid-write
        let p = parse_raw(&text).unwrap();
        assert!(!p.complete && p.torn_tail);
        assert_eq!(p.activities.len(), 3);
    }

    #[test]
    fn a_process_whose_recording_stopped_early_reads_as_incomplete_from_then() {
        let mut text = sample();
        lost(&mut text, 160, "its own \"profiler\"\tstarted");
        lost(&mut text, 170, "again");
        end(&mut text, "exit");
        let p = parse_raw(&text).unwrap();
        assert!(p.flushed && !p.complete);
        assert_eq!(p.lost_from_ns, Some(160), "the earliest stop counts");
        assert_eq!(p.lost_why.as_deref(), Some("its own \"profiler\"\tstarted"));
        // The first record is the runtime call at 100.
        assert_eq!(p.lost_after_ns(), Some(60));
        let mut text = sample();
        lost(&mut text, 0, "before CUDA started");
        assert_eq!(parse_raw(&text).unwrap().lost_after_ns(), Some(0));
    }

    #[test]
    fn pauses_read_as_spans_and_a_paused_process_is_still_complete() {
        let mut text = String::new();
        header(&mut text, 9, 130001);
        recording(&mut text, 0, false); // started paused
        recording(&mut text, 500, true);
        let h100 = RawGpu {
            id: 0,
            name: "NVIDIA H100".into(),
            ..Default::default()
        };
        gpu(&mut text, &h100);
        recording(&mut text, 900, false);
        recording(&mut text, 950, false); // paused twice: the first counts
        recording(&mut text, 1200, true);
        gpu(&mut text, &h100); // each resume reports the GPUs again: one GPU
        recording(&mut text, 1300, true); // resumed while recording: nothing
        recording(&mut text, 2000, false); // never resumed
        end(&mut text, "exit");
        let p = parse_raw(&text).unwrap();
        let span = |from_ns, to_ns| PausedSpan { from_ns, to_ns };
        assert_eq!(
            p.paused,
            [span(0, Some(500)), span(900, Some(1200)), span(2000, None)]
        );
        assert!(p.complete, "a pause asked for by the program loses nothing");
        assert_eq!(p.gpus.len(), 1);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse_raw("K\t1\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("header"), "{e}");
        let mut t = String::new();
        header(&mut t, 1, 0);
        t.push_str("K\t1\t2\t0\t0\t0\t1\t1\t1\t1\t1\t1\t0\t0\t0\t0\t9\t0\n");
        let e = parse_raw(&t).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("string id 9"), "{e}");
        let mut t = String::new();
        header(&mut t, 1, 0);
        t.push_str("Q\t1\n");
        assert!(parse_raw(&t)
            .unwrap_err()
            .to_string()
            .contains("unknown record tag"));
        let e = parse_raw("H\t1\t5\t0\nH\t1\t5\t0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("same pid"), "{e}");
        let e = parse_raw("H\t99\t1\t0\n").unwrap_err().to_string();
        assert!(e.contains("newer"), "{e}");
        let mut t = String::new();
        header(&mut t, 1, 0);
        t.push_str("D\tx\n");
        assert!(parse_raw(&t)
            .unwrap_err()
            .to_string()
            .contains("not a number"));
    }

    #[test]
    fn a_huge_string_id_is_read_without_a_huge_table() {
        let mut t = String::new();
        header(&mut t, 1, 0);
        string(&mut t, u32::MAX, "cudaLaunchKernel");
        string(&mut t, 4_000_000_000, "_Z1kv");
        end(&mut t, "exit");
        parse_raw(&t).unwrap();
        let e = parse_raw("H\t1\t1\t0\nN\t99999999999999999999\tx\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("not a number"), "{e}");
    }

    #[test]
    fn a_record_ending_before_it_starts_and_an_absurd_drop_count_are_refused() {
        let mut t = String::new();
        header(&mut t, 1, 0);
        string(&mut t, 0, "k");
        kernel(
            &mut t,
            &RawKernel {
                start_ns: 500,
                end_ns: 100,
                ..RawKernel::default()
            },
        );
        let e = parse_raw(&t).unwrap_err().to_string();
        assert!(
            e.contains("line 3") && e.contains("before it starts"),
            "{e}"
        );
        let mut t = String::new();
        header(&mut t, 1, 0);
        dropped(&mut t, u64::MAX);
        let e = parse_raw(&t).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("dropped records"), "{e}");
    }

    #[test]
    fn a_large_file_without_a_header_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(file_name(7));
        // Sparse: 8 GiB of zeros would take seconds (and the memory) to read whole.
        std::fs::File::create(&p).unwrap().set_len(8 << 30).unwrap();
        let t = std::time::Instant::now();
        let e = format!("{:#}", read_raw_file(&p).unwrap_err());
        assert!(e.contains("trace-7.raw") && e.contains("header"), "{e}");
        assert!(t.elapsed().as_secs_f64() < 1.0);
    }

    #[test]
    fn dropped_totals_saturate_instead_of_wrapping() {
        let p = |d| crate::trace::workload::ProcessTrace {
            dropped_records: d,
            ..Default::default()
        };
        let w = Workload {
            processes: (0..4).map(|_| p(COUNT_MAX)).chain([p(u64::MAX)]).collect(),
        };
        assert_eq!(w.dropped_records(), u64::MAX);
    }

    #[test]
    fn only_raw_file_names_are_read() {
        assert!(is_raw_file_name(&file_name(123)));
        assert!(!is_raw_file_name("trace-.raw"));
        assert!(!is_raw_file_name("trace-12.raw.tmp"));
        assert!(!is_raw_file_name("trace-1a.raw"));
    }
}
