//! The `trace` tool on the CPU: nsys' kernel-summary SQL on our SQLite export, the scale of a
//! million-kernel trace, and the binary's behaviour around the command it runs.

use opbench::trace::kernsum::KernelStat;
use opbench::trace::raw::read_raw_dir;
use opbench::trace::rawfmt::{self, RawApi, RawGpu, RawGraph, RawKernel, RawMem, RawRange};
use opbench::trace::report::analyze_workload;
use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::Connection;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Writes the raw file of one synthetic process: `kernels` kernels cycling through `names`
/// on 4 streams, each launched by a runtime call, plus a copy every 100 kernels and an NVTX
/// range every 1000.
fn synth_process(dir: &Path, pid: u32, kernels: usize, names: &[&str]) {
    let mut o = String::with_capacity(kernels * 110);
    rawfmt::header(&mut o, pid, 130001);
    for (i, n) in names.iter().enumerate() {
        rawfmt::string(&mut o, i as u32, n);
    }
    let launch = names.len() as u32;
    rawfmt::string(&mut o, launch, "cudaLaunchKernel_v7000");
    rawfmt::string(&mut o, launch + 1, "cudaMemcpyAsync_v3020");
    rawfmt::string(&mut o, launch + 2, "model.layers.0");
    rawfmt::gpu(
        &mut o,
        &RawGpu {
            id: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_major: 9,
            compute_minor: 0,
            sm_count: 132,
            memory_bytes: 85_520_809_984,
        },
    );
    let mut t = 1_000_000u64;
    for i in 0..kernels {
        let corr = i as u32 * 2 + 1;
        // Durations vary with the index so medians and deviations are not trivial.
        let dur = 2_000 + (i as u64 * 7919) % 5_000;
        rawfmt::api(
            &mut o,
            false,
            &RawApi {
                start_ns: t,
                end_ns: t + 3_000,
                tid: 100,
                correlation_id: corr,
                cbid: 211,
                return_value: 0,
                name_id: launch,
            },
        );
        rawfmt::kernel(
            &mut o,
            &RawKernel {
                start_ns: t + 5_000,
                end_ns: t + 5_000 + dur,
                device: 0,
                stream: 7 + (i % 4) as u32,
                correlation_id: corr,
                grid: [(i % 1024) as i32 + 1, 1, 1],
                block: [256, 1, 1],
                registers_per_thread: 32,
                static_shared_bytes: 0,
                dynamic_shared_bytes: 4096,
                graph_id: 0,
                name_id: (i % names.len()) as u32,
            },
        );
        if i % 100 == 99 {
            rawfmt::memcpy(
                &mut o,
                &RawMem {
                    start_ns: t + 5_000 + dur,
                    end_ns: t + 6_000 + dur,
                    device: 0,
                    stream: 7,
                    correlation_id: corr + 1,
                    bytes: 4096,
                    copy_kind: 1,
                    value: 0,
                    graph_id: 0,
                },
            );
        }
        if i % 1000 == 0 {
            rawfmt::range(
                &mut o,
                &RawRange {
                    start_ns: t,
                    end_ns: t + 10_000_000,
                    tid: 100,
                    end_tid: 100,
                    push_pop: true,
                    name_id: launch + 2,
                },
            );
        }
        t += dur + 1_000;
    }
    rawfmt::dropped(&mut o, 0);
    rawfmt::end(&mut o, "exit");
    std::fs::write(dir.join(rawfmt::file_name(pid)), o).unwrap();
}

const NAMES: [&str; 5] = [
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
    "_Z6kernelPf",
    "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT",
    "triton_poi_fused_add_mul_0",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
];

/// nsys' `median` and `stdev` SQL aggregates (its report scripts register them in SQLite):
/// the median of the values, and their sample standard deviation.
struct Median;
struct Stdev;

impl Aggregate<Vec<f64>, Option<f64>> for Median {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Vec<f64>> {
        Ok(Vec::new())
    }
    fn step(&self, ctx: &mut Context<'_>, acc: &mut Vec<f64>) -> rusqlite::Result<()> {
        acc.push(ctx.get::<f64>(0)?);
        Ok(())
    }
    fn finalize(
        &self,
        _: &mut Context<'_>,
        acc: Option<Vec<f64>>,
    ) -> rusqlite::Result<Option<f64>> {
        Ok(acc.filter(|v| !v.is_empty()).map(|mut v| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        }))
    }
}

impl Aggregate<Vec<f64>, Option<f64>> for Stdev {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Vec<f64>> {
        Ok(Vec::new())
    }
    fn step(&self, ctx: &mut Context<'_>, acc: &mut Vec<f64>) -> rusqlite::Result<()> {
        acc.push(ctx.get::<f64>(0)?);
        Ok(())
    }
    fn finalize(
        &self,
        _: &mut Context<'_>,
        acc: Option<Vec<f64>>,
    ) -> rusqlite::Result<Option<f64>> {
        Ok(acc.map(|v| {
            let n = v.len() as f64;
            if v.len() < 2 {
                return 0.0;
            }
            let mean = v.iter().sum::<f64>() / n;
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        }))
    }
}

/// nsys' cuda_gpu_kern_sum, written from its documented output columns (Time (%), Total Time,
/// Instances, Avg, Med, Min, Max, StdDev, Name; by demangled name, total time descending).
const CUDA_GPU_KERN_SUM: &str = r#"
WITH summary AS (
    SELECT demangledName AS nameId, sum(end - start) AS total, count(*) AS num,
           avg(end - start) AS avg, median(end - start) AS med, min(end - start) AS min,
           max(end - start) AS max, stdev(end - start) AS stddev
    FROM CUPTI_ACTIVITY_KIND_KERNEL
    GROUP BY 1
), totals AS (SELECT sum(total) AS total FROM summary)
SELECT round(summary.total * 100.0 / (SELECT total FROM totals), 1) AS "Time (%)",
       summary.total AS "Total Time (ns)", summary.num AS "Instances",
       round(summary.avg, 1) AS "Avg (ns)", round(summary.med, 1) AS "Med (ns)",
       summary.min AS "Min (ns)", summary.max AS "Max (ns)",
       round(summary.stddev, 1) AS "StdDev (ns)", ids.value AS "Name"
FROM summary LEFT JOIN StringIds AS ids ON ids.id = summary.nameId
ORDER BY 2 DESC, 9
"#;

/// One row of cuda_gpu_kern_sum: Time (%), Total, Instances, Avg, Med, Min, Max, StdDev, Name.
type KernSumRow = (f64, i64, i64, f64, f64, i64, i64, f64, String);

fn nsys_kern_sum(db: &Path) -> Vec<KernSumRow> {
    let c = Connection::open(db).unwrap();
    c.create_aggregate_function("median", 1, FunctionFlags::SQLITE_DETERMINISTIC, Median)
        .unwrap();
    c.create_aggregate_function("stdev", 1, FunctionFlags::SQLITE_DETERMINISTIC, Stdev)
        .unwrap();
    let mut st = c.prepare(CUDA_GPU_KERN_SUM).unwrap();
    st.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
        ))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[test]
fn nsys_kernel_summary_sql_agrees_with_our_kernel_summary() {
    let dir = tempfile::tempdir().unwrap();
    synth_process(dir.path(), 11, 997, &NAMES);
    synth_process(dir.path(), 12, 301, &NAMES[1..3]);
    let w = read_raw_dir(dir.path()).unwrap();
    let a = analyze_workload(&w);
    let db = dir.path().join("t.sqlite");
    opbench::trace::sqlite::write_sqlite(&w, &db).unwrap();
    let rows = nsys_kern_sum(&db);
    assert_eq!(rows.len(), a.kernels.len());
    assert_eq!(rows.len(), NAMES.len());
    for (row, k) in rows.iter().zip(&a.kernels) {
        let KernelStat {
            time_us: _,
            name,
            time_pct,
            total_ns,
            instances,
            avg_ns,
            med_ns,
            min_ns,
            max_ns,
            stddev_ns,
        } = k;
        assert_eq!(&row.8, name);
        assert_eq!(row.0, r1(*time_pct), "{name}");
        assert_eq!(row.1 as u64, *total_ns, "{name}");
        assert_eq!(row.2 as u64, *instances, "{name}");
        assert_eq!(row.3, r1(*avg_ns), "{name}");
        assert_eq!(row.4, r1(*med_ns), "{name}");
        assert_eq!((row.5 as u64, row.6 as u64), (*min_ns, *max_ns), "{name}");
        assert_eq!(row.7, r1(*stddev_ns), "{name}");
    }
    // The demangled name is what nsys groups by; shortName and the mangled name are there too.
    let c = Connection::open(&db).unwrap();
    let short: String = c
        .query_row(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = \
             k.shortName WHERE k.mangledName = (SELECT id FROM StringIds WHERE value = ?1) \
             LIMIT 1",
            [NAMES[0]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(short, "vectorized_elementwise_kernel");
    // Every kernel of pid 12 joins its launch call through the correlation id.
    let joined: i64 = c
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r \
             ON r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24) \
             WHERE (k.globalPid >> 24) = 12",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(joined, 301);
    let gpu: (String, i64) = c
        .query_row(
            "SELECT name, smCount FROM TARGET_INFO_GPU WHERE id = 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(gpu, ("NVIDIA H100 80GB HBM3".to_string(), 132));
    let nvtx: i64 = c
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId WHERE \
             e.eventType = 59 AND s.value = 'model.layers.0' AND e.text = s.value",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nvtx, 1 + 1);
}

fn time(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    (t.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
}

fn gz_len(path: &Path) -> u64 {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&std::fs::read(path).unwrap()).unwrap();
    e.finish().unwrap().len() as u64
}

/// A million kernels (release builds; 100,000 in debug builds, or OPBENCH_TRACE_SCALE_KERNELS)
/// read, analysed and exported within 10 s, at most 100 bytes per kernel on disk compressed.
#[test]
fn a_million_kernel_trace_is_analysed_and_exported_in_time_and_space() {
    let n: usize = std::env::var("OPBENCH_TRACE_SCALE_KERNELS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            100_000
        } else {
            1_000_000
        });
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    synth_process(&raw, 1, n, &NAMES);
    // What `trace` does once the command has ended: read the raw files, then analyse and
    // write the artifact and the Chrome JSON while the SQLite file is written alongside.
    let t0 = Instant::now();
    let w = read_raw_dir(&raw).unwrap();
    let t_read = t0.elapsed();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let facts = opbench::trace::tool::RunFacts {
        workload: "synthetic",
        command: &[],
        status: None,
        overwrite: false,
        overhead: None,
    };
    let (a, _) = opbench::trace::tool::write_outputs(&w, &out, &facts).unwrap();
    let total = t0.elapsed();
    assert_eq!(a.kernel_count(), n);
    // Each part alone, for the notes.
    use opbench::trace::{breakdown, idle, kernsum, launch, ranges};
    use std::hint::black_box;
    let db = out.join("trace.sqlite");
    let chrome = out.join("timeline.trace.json");
    let each = [
        ("analyses", time(|| _ = black_box(analyze_workload(&w)))),
        (
            "kernel summary",
            time(|| _ = black_box(kernsum::kernel_summary(w.kernels()))),
        ),
        (
            "temporal",
            time(|| _ = black_box(breakdown::temporal_breakdown(&w))),
        ),
        ("idle", time(|| _ = black_box(idle::idle_by_stream(&w)))),
        ("launch", time(|| _ = black_box(launch::launch_stats(&w)))),
        ("ranges", time(|| _ = black_box(ranges::range_totals(&w)))),
        (
            "sqlite",
            time(|| {
                opbench::trace::sqlite::write_sqlite(&w, &dir.path().join("t.sqlite")).unwrap()
            }),
        ),
        (
            "chrome",
            time(|| {
                let mut f = std::io::BufWriter::new(Vec::new());
                opbench::trace::chrome::write_workload_chrome(&w, &serde_json::json!({}), &mut f)
                    .unwrap();
            }),
        ),
    ];
    let raw_file = raw.join(rawfmt::file_name(1));
    let per = |b: u64| b as f64 / n as f64;
    let (raw_b, raw_gz) = (
        std::fs::metadata(&raw_file).unwrap().len(),
        gz_len(&raw_file),
    );
    let (db_b, db_gz) = (std::fs::metadata(&db).unwrap().len(), gz_len(&db));
    eprintln!(
        "{n} kernels: read {:.2} s, then analyses and outputs {:.2} s (total {:.2} s); alone \
         (s): {each:?}; bytes per kernel: raw {:.1} (gz {:.1}), sqlite {:.1} (gz {:.1}), chrome \
         {:.1}",
        t_read.as_secs_f64(),
        (total - t_read).as_secs_f64(),
        total.as_secs_f64(),
        per(raw_b),
        per(raw_gz),
        per(db_b),
        per(db_gz),
        per(std::fs::metadata(&chrome).unwrap().len()),
    );
    assert!(total.as_secs_f64() <= 10.0, "took {total:?}");
    assert!(per(raw_gz) <= 100.0 && per(db_gz) <= 100.0);
    // The Chrome file is one JSON document with an event per record.
    if n <= 100_000 {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let kernels = ev.iter().filter(|e| e["cat"] == "kernel").count();
        assert_eq!(kernels, n);
    }
}

fn trace_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_trace"))
}

/// `trace --out OUT --from-raw RAW` with `extra` arguments.
fn from_raw(raw: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    trace_bin()
        .arg("--out")
        .arg(out)
        .arg("--from-raw")
        .arg(raw)
        .args(extra)
        .output()
        .unwrap()
}

/// An empty shared object stands for the injection library: without a GPU and driver CUDA
/// never loads it, and preloaded it does nothing.
fn fake_lib(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("libfake_inject.so");
    let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-x", "c", "/dev/null", "-o"])
        .arg(&p)
        .status()
        .expect("a C compiler (cc) builds an empty shared object");
    assert!(st.success());
    p
}

/// `--api` reaches the traced command as the injection library's setting, `none` included.
#[test]
fn the_api_setting_reaches_the_command_and_a_wrong_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lib = fake_lib(dir.path());
    for (flag, want) in [(None, "work"), (Some("all"), "all"), (Some("none"), "none")] {
        let marker = dir.path().join("api");
        let mut cmd = trace_bin();
        cmd.arg("--out")
            .arg(dir.path().join("out"))
            .arg("--injection")
            .arg(&lib);
        if let Some(f) = flag {
            cmd.args(["--api", f]);
        }
        let o = cmd
            .arg("--")
            .args(["sh", "-c"])
            .arg(format!(
                "echo \"$OPBENCH_TRACE_API\" > {}",
                marker.display()
            ))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), want);
    }
    let o = trace_bin()
        .args(["--api", "some", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--api") && err.contains("none"), "{err}");
}

#[test]
fn without_a_gpu_the_command_runs_its_exit_code_passes_and_nothing_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let lib = fake_lib(dir.path());
    let out = dir.path().join("out");
    let marker = dir.path().join("ran");
    let o = trace_bin()
        .arg("--out")
        .arg(&out)
        .arg("--injection")
        .arg(&lib)
        .arg("--cupti")
        .arg(&lib)
        .arg("--")
        .args(["sh", "-c"])
        .arg(format!(
            "echo \"$OPBENCH_TRACE_DIR $OPBENCH_CUPTI_LIB\" > {}; exit 3",
            marker.display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("nothing was recorded"), "{err}");
    // The command ran, told where to write.
    let told = std::fs::read_to_string(&marker).unwrap();
    let (dir_told, cupti_told) = told.trim().split_once(' ').unwrap();
    assert!(dir_told.ends_with("raw.partial"), "{told}");
    // The libcupti named with --cupti reaches the command.
    assert_eq!(cupti_told, lib.to_str().unwrap(), "{told}");
    assert!(!out.join("trace.json").exists());
}

#[test]
fn a_shared_object_injection_library_is_preloaded_ahead_of_the_commands_preloads() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libinject.so");
    let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-x", "c", "/dev/null", "-o"])
        .arg(&lib)
        .status()
        .expect("a C compiler (cc) builds an empty shared object");
    assert!(st.success());
    let lib = lib.canonicalize().unwrap();
    let marker = dir.path().join("preload");
    let run = |injection: &Path, earlier: Option<&Path>| {
        let mut c = trace_bin();
        c.arg("--out")
            .arg(dir.path().join("out"))
            .arg("--overwrite")
            .arg("--injection")
            .arg(injection)
            .arg("--")
            .args(["sh", "-c"])
            .arg(format!("echo \"$LD_PRELOAD\" > {}", marker.display()));
        c.env_remove("LD_PRELOAD");
        if let Some(e) = earlier {
            c.env("LD_PRELOAD", e);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(&marker).unwrap().trim().to_string()
    };
    assert_eq!(run(&lib, None), lib.to_str().unwrap().to_string());
    // The command's own preloads stay, after the library (the empty object loads anywhere).
    let both = run(&lib, Some(&lib));
    assert_eq!(both, format!("{}:{}", lib.display(), lib.display()));
}

#[test]
fn a_command_killed_by_a_signal_kills_trace_with_the_same_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let lib = fake_lib(dir.path());
    let o = trace_bin()
        .arg("--out")
        .arg(dir.path().join("out"))
        .arg("--injection")
        .arg(&lib)
        .args(["--", "sh", "-c", "kill -TERM $$"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(15), "{err}");
    assert!(err.contains("killed by signal 15 (SIGTERM)"), "{err}");
}

#[test]
fn bad_commands_folders_and_libraries_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let lib = fake_lib(dir.path());
    let run = |args: &[&str]| {
        let o = trace_bin().args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let out = dir.path().join("out");
    let (o, l) = (out.to_str().unwrap(), lib.to_str().unwrap());
    let (code, err) = run(&["--out", o, "--injection", l, "--", "no-such-command-xyz"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("\"no-such-command-xyz\" not found"), "{err}");
    // --out naming a file, and a folder under a read-only one.
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let (code, err) = run(&[
        "--out",
        file.to_str().unwrap(),
        "--injection",
        l,
        "--",
        "true",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("--out") && err.contains("is a file, not a folder"),
        "{err}"
    );
    // A folder that cannot be created (root ignores permission bits, /proc refuses anyone).
    let (code, err) = run(&[
        "--out",
        "/proc/opbench-trace-out",
        "--injection",
        l,
        "--",
        "true",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("--out /proc/opbench-trace-out: cannot create"),
        "{err}"
    );
    let missing = dir.path().join("nolib.so");
    let (_, err) = run(&[
        "--out",
        o,
        "--injection",
        missing.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert!(
        err.contains("nolib.so") && err.contains("does not exist"),
        "{err}"
    );
    let (code, err) = run(&[
        "--out",
        o,
        "--injection",
        l,
        "--cupti",
        "/nonexistent/libcupti.so.13",
        "--",
        "true",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("--cupti /nonexistent/libcupti.so.13 does not exist"),
        "{err}"
    );
    let (code, err) = run(&["--out", o, "--injection", l]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no command to trace"), "{err}");
    // An output file that is not ours is not replaced.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("trace.sqlite"), "my notes").unwrap();
    let (_, err) = run(&["--out", o, "--injection", l, "--", "true"]);
    assert!(
        err.contains("trace.sqlite exists") && err.contains("--overwrite"),
        "{err}"
    );
}

/// A recording started paused and resumed after the context existed has kernels but no GPU
/// record (CUPTI gives those at context creation): the artifact still says it ran on a GPU.
#[test]
fn kernels_without_a_gpu_record_still_make_a_cuda_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    synth_process(&raw, 31, 20, &NAMES);
    let p = raw.join(rawfmt::file_name(31));
    let text = std::fs::read_to_string(&p).unwrap();
    let without_gpu: String = text
        .lines()
        .filter(|l| !l.starts_with("G\t"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(without_gpu.len() < text.len(), "the fixture had a GPU line");
    std::fs::write(&p, without_gpu).unwrap();
    let out = dir.path().join("out");
    let o = from_raw(&raw, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let art = opbench::artifact::read_artifact(&out.join("trace.json")).unwrap();
    assert_eq!(art.env.device, "cuda");
}

#[test]
fn raw_files_become_a_valid_artifact_sqlite_and_chrome_json() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    synth_process(&raw, 21, 2_000, &NAMES);
    // A second process killed mid-write.
    synth_process(&raw, 22, 10, &NAMES[..1]);
    let p22 = raw.join(rawfmt::file_name(22));
    let text = std::fs::read_to_string(&p22).unwrap();
    let cut = text.rfind("\nE\t").unwrap();
    std::fs::write(&p22, format!("{}K\t5", &text[..cut + 1])).unwrap();
    // A third whose recording stopped 20 µs after its first record (the program started its
    // own CUPTI subscriber), ending cleanly.
    synth_process(&raw, 23, 10, &NAMES[..1]);
    let p23 = raw.join(rawfmt::file_name(23));
    let text = std::fs::read_to_string(&p23).unwrap();
    let cut = text.rfind("\nE\t").unwrap();
    let mut lost = String::new();
    rawfmt::lost(&mut lost, 1_020_000, "its own profiler");
    let text = format!("{}{lost}{}", &text[..cut + 1], &text[cut + 1..]);
    std::fs::write(&p23, text).unwrap();
    let out = dir.path().join("out");
    let o = from_raw(&raw, &out, &["--name", "synthetic"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("3 process(es), 2020 kernels"), "{err}");
    assert!(
        err.contains("pid 21 GPU 0: span") && err.contains("idle"),
        "{err}"
    );
    assert!(
        err.contains("pid 22: incomplete: the process ended without flushing"),
        "{err}"
    );
    assert!(
        err.contains("pid 23: incomplete: recording stopped 0.020 ms after its first record")
            && err.contains("Why: its own profiler"),
        "{err}"
    );
    let art = opbench::artifact::read_artifact(&out.join("trace.json")).unwrap();
    assert_eq!(art.kind, "trace");
    opbench::artifact::validate(&art).unwrap();
    // Other producers' schema accepts it too.
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../docs/artifact.schema.json")).unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("trace.json")).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let kernel_rows = art
        .results
        .iter()
        .filter(|r| r.benchmark == "trace_kernel")
        .count();
    assert_eq!(kernel_rows, NAMES.len());
    // The five names fall in four classes; the copies are the fifth.
    let mut classes: Vec<String> = art
        .results
        .iter()
        .filter(|r| r.benchmark == "trace_class")
        .filter_map(|r| r.param_str("class"))
        .collect();
    classes.sort();
    assert_eq!(
        classes,
        ["communication", "elementwise", "gemm", "memcpy", "other"]
    );
    let launch = art
        .results
        .iter()
        .find(|r| r.benchmark == "trace_launch")
        .unwrap();
    // Every synthetic kernel starts 5 µs after its call.
    assert_eq!(launch.metrics["launch_delay_p50_us"], 5.0);
    assert!(art
        .notes
        .iter()
        .any(|n| n.contains("pid 22") && n.contains("killed")));
    let p23 = art
        .results
        .iter()
        .find(|r| r.benchmark == "trace_process" && r.param_str("pid").as_deref() == Some("23"))
        .unwrap();
    assert_eq!(
        (p23.metrics["complete"], p23.metrics["flushed"]),
        (0.0, 1.0)
    );
    assert!((p23.metrics["lost_after_s"] - 20e-6).abs() < 1e-12);
    let db = rusqlite::Connection::open(out.join("trace.sqlite")).unwrap();
    let lost: (Option<i64>, i64) = db
        .query_row(
            "SELECT lostFrom, complete FROM OPBENCH_TRACE_PROCESS WHERE pid = 23",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(lost, (Some(1_020_000), 0));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("timeline.trace.json")).unwrap()).unwrap();
    assert!(v["traceEvents"].as_array().unwrap().len() > 4_000);
    // A second run replaces its own outputs without --overwrite.
    let o = from_raw(&raw, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A traced run that records nothing keeps the earlier outputs (and says so).
    let lib = fake_lib(dir.path());
    let o = trace_bin()
        .arg("--out")
        .arg(&out)
        .arg("--injection")
        .arg(&lib)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.contains("is kept"), "{err}");
    for f in ["trace.json", "trace.sqlite", "timeline.trace.json"] {
        assert!(out.join(f).exists(), "{f} was removed");
    }
}

#[test]
fn diff_names_the_kernels_added_removed_and_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir_all(b.join("raw")).unwrap();
    // Before: 600 kernels over all five names; after (an output folder with raw/): 100 kernels
    // of the first two names only.
    synth_process(&a, 1, 600, &NAMES);
    synth_process(&b.join("raw"), 2, 100, &NAMES[..2]);
    let o = trace_bin().arg("--diff").arg(&a).arg(&b).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = |needle: &str| {
        out.lines()
            .find(|l| l.contains(needle))
            .unwrap()
            .to_string()
    };
    assert!(line("nvjet_sm90").starts_with("removed"), "{out}");
    assert!(line("triton_poi_fused").starts_with("removed"), "{out}");
    // 120 instances before, 50 after.
    let k = line("kernel(float*)");
    assert!(
        k.starts_with("changed") && k.contains(" 120 ") && k.contains(" 50 "),
        "{out}"
    );
    let o = trace_bin()
        .arg("--diff")
        .arg(&a)
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no raw trace files"),
        "{err}"
    );
}

#[test]
fn sigterm_to_trace_reaches_the_command_and_ctrl_c_does_not_stop_trace() {
    let dir = tempfile::tempdir().unwrap();
    let lib = fake_lib(dir.path());
    let spawn = |script: &str| {
        trace_bin()
            .arg("--out")
            .arg(dir.path().join("out"))
            .arg("--injection")
            .arg(&lib)
            .args(["--", "sh", "-c", script])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let signal = |pid: u32, s: nix::sys::signal::Signal| {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), s).unwrap();
    };
    // Signals go to trace once the command runs (its first act is to create `started`).
    let started = dir.path().join("started");
    let wait_started = || {
        let t = Instant::now();
        while !started.exists() {
            assert!(t.elapsed().as_secs() < 30, "the command never started");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::fs::remove_file(&started).unwrap();
    };
    let s = started.display();
    // SIGTERM to trace alone: the command's trap answers with exit 7, which trace passes on.
    let c = spawn(&format!(
        "trap 'exit 7' TERM; touch {s}; i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); \
         done; exit 1"
    ));
    wait_started();
    signal(c.id(), nix::sys::signal::Signal::SIGTERM);
    let o = c.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // SIGINT to trace alone (not to the command): trace waits for the command's own end.
    let c = spawn(&format!("touch {s}; sleep 1; exit 4"));
    wait_started();
    signal(c.id(), nix::sys::signal::Signal::SIGINT);
    let o = c.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A process of `n` kernels alternating between "gemm" (`gemm_ns` long) and "relu" (1 µs).
fn two_kernel_process(dir: &Path, pid: u32, n: u32, gemm_ns: u64) {
    let mut o = String::new();
    rawfmt::header(&mut o, pid, 130001);
    rawfmt::string(&mut o, 0, "gemm");
    rawfmt::string(&mut o, 1, "relu");
    let mut t = 1_000u64;
    for i in 0..n {
        let dur = if i % 2 == 0 { gemm_ns } else { 1_000 };
        rawfmt::kernel(
            &mut o,
            &RawKernel {
                start_ns: t,
                end_ns: t + dur,
                stream: 7,
                correlation_id: i + 1,
                grid: [1, 1, 1],
                block: [32, 1, 1],
                name_id: i % 2,
                ..RawKernel::default()
            },
        );
        t += dur + 500;
    }
    rawfmt::end(&mut o, "exit");
    std::fs::write(dir.join(rawfmt::file_name(pid)), o).unwrap();
}

#[test]
fn compare_judges_each_kernel_between_two_traces() {
    let dir = tempfile::tempdir().unwrap();
    let mut arts = Vec::new();
    for (side, gemm_ns) in [("base", 5_000u64), ("head", 6_000)] {
        let raw = dir.path().join(side).join("raw");
        std::fs::create_dir_all(&raw).unwrap();
        two_kernel_process(&raw, 40, 200, gemm_ns);
        let out = dir.path().join(format!("{side}_out"));
        let o = from_raw(&raw, &out, &["--name", "w"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        arts.push(out.join("trace.json"));
    }
    let o = Command::new(env!("CARGO_BIN_EXE_compare"))
        .arg("--base")
        .arg(&arts[0])
        .arg("--head")
        .arg(&arts[1])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let line = |k: &str| {
        out.lines()
            .find(|l| l.contains(k))
            .unwrap_or("")
            .to_string()
    };
    assert!(line("kernel=gemm").contains("SLOWER"), "{out}");
    assert!(line("kernel=relu").contains("SAME"), "{out}");
}

#[test]
fn help_names_the_outputs_and_the_flags() {
    let o = trace_bin().arg("--help").output().unwrap();
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    for want in [
        "--out",
        "--injection",
        "--from-raw",
        "--diff",
        "--overwrite",
        "--cupti",
        "--graphs",
        "--start-paused",
        "trace_control.py",
        "trace.json",
        "trace.sqlite",
        "timeline.trace.json",
        "raw/trace-PID.raw",
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "exit status",
    ] {
        assert!(h.contains(want), "--help lacks {want}:\n{h}");
    }
}

#[test]
fn graph_level_records_become_graph_rows_a_table_and_timeline_events() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    // Two kernels, then three executions of graph 5 (10 µs each) on stream 9.
    let mut o = String::new();
    rawfmt::header(&mut o, 50, 130001);
    rawfmt::string(&mut o, 0, "k");
    for i in 0..2u32 {
        rawfmt::kernel(
            &mut o,
            &RawKernel {
                start_ns: 1_000 + 2_000 * i as u64,
                end_ns: 2_000 + 2_000 * i as u64,
                stream: 7,
                correlation_id: i + 1,
                ..RawKernel::default()
            },
        );
    }
    for i in 0..3u64 {
        rawfmt::graph(
            &mut o,
            &RawGraph {
                start_ns: 10_000 + 20_000 * i,
                end_ns: 20_000 + 20_000 * i,
                device: 0,
                stream: 9,
                correlation_id: 10 + i as u32,
                graph_id: 5,
            },
        );
    }
    rawfmt::end(&mut o, "exit");
    std::fs::write(raw.join(rawfmt::file_name(50)), o).unwrap();
    let out = dir.path().join("out");
    let o = from_raw(&raw, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let art = opbench::artifact::read_artifact(&out.join("trace.json")).unwrap();
    opbench::artifact::validate(&art).unwrap();
    let graph = art
        .results
        .iter()
        .find(|r| r.benchmark == "trace_graph")
        .unwrap();
    assert_eq!(graph.param_str("graph").as_deref(), Some("CUDA graph 5"));
    assert_eq!(graph.metrics["instances"], 3.0);
    assert_eq!(graph.metrics["total_us"], 30.0);
    let proc_row = art
        .results
        .iter()
        .find(|r| r.benchmark == "trace_process")
        .unwrap();
    assert_eq!(
        (proc_row.metrics["kernels"], proc_row.metrics["graph_execs"]),
        (2.0, 3.0)
    );
    // Graph executions are computation: 2 µs of kernels and 30 µs of graphs, over the span
    // from the first kernel's start (1 µs) to the last graph's end (60 µs).
    let t = art
        .results
        .iter()
        .find(|r| r.benchmark == "trace_temporal")
        .unwrap();
    assert_eq!(t.metrics["compute_us"], 32.0);
    assert_eq!(t.metrics["span_us"], 59.0);
    let c = Connection::open(out.join("trace.sqlite")).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE graphId = 5 AND streamId = 9",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 3);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("timeline.trace.json")).unwrap()).unwrap();
    let graphs = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "graph")
        .count();
    assert_eq!(graphs, 3);
}

/// `--start-paused` reaches the traced command (and only with the flag: an inherited setting
/// is cleared), and a process that paused recording is reported complete, its pauses counted
/// in the artifact and said in its notes and on stderr, the paused time left out of idle.
#[test]
fn start_paused_reaches_the_command_and_pauses_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let lib = fake_lib(dir.path());
    for (flag, want) in [(true, "paused"), (false, "")] {
        let marker = dir.path().join("start");
        let mut cmd = trace_bin();
        cmd.arg("--out")
            .arg(dir.path().join("out"))
            .arg("--injection")
            .arg(&lib)
            .env("OPBENCH_TRACE_START", "paused-by-the-caller");
        if flag {
            cmd.arg("--start-paused");
        }
        let o = cmd
            .arg("--")
            .args(["sh", "-c"])
            .arg(format!(
                "echo \"$OPBENCH_TRACE_START\" > {}",
                marker.display()
            ))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), want);
    }
    // Two kernels 1 ms apart on one stream, recording paused for 0.9 ms between them.
    let raw = dir.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    let mut o = String::new();
    rawfmt::header(&mut o, 77, 130001);
    rawfmt::string(&mut o, 0, "k");
    rawfmt::recording(&mut o, 0, false);
    rawfmt::recording(&mut o, 1_000, true);
    let kernel = |o: &mut String, start_ns: u64, corr: u32| {
        rawfmt::kernel(
            o,
            &RawKernel {
                start_ns,
                end_ns: start_ns + 50_000,
                stream: 7,
                correlation_id: corr,
                grid: [1, 1, 1],
                block: [32, 1, 1],
                ..RawKernel::default()
            },
        )
    };
    kernel(&mut o, 10_000, 1);
    rawfmt::recording(&mut o, 100_000, false);
    rawfmt::recording(&mut o, 1_000_000, true);
    kernel(&mut o, 1_010_000, 2);
    rawfmt::end(&mut o, "exit");
    std::fs::write(raw.join(rawfmt::file_name(77)), o).unwrap();
    let out = dir.path().join("paused_out");
    let o = from_raw(&raw, &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("recording was paused 2 time(s)"), "{err}");
    assert!(!err.contains("incomplete"), "{err}");
    let a: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("trace.json")).unwrap()).unwrap();
    let rows = a["results"].as_array().unwrap();
    let row = |b: &str| rows.iter().find(|r| r["benchmark"] == b).unwrap();
    let p = &row("trace_process")["metrics"];
    assert_eq!(
        (p["paused_spans"].as_f64(), p["complete"].as_f64()),
        (Some(2.0), Some(1.0))
    );
    // 1,010,000 - 60,000 = 950,000 ns apart, 900,000 of them paused: 50 us idle, not 950.
    let idle = &row("trace_stream_idle")["metrics"];
    assert_eq!(idle["idle_us"].as_f64(), Some(50.0), "{idle}");
    let notes = a["notes"].to_string();
    assert!(notes.contains("recording was paused 2 time(s)"), "{notes}");
}

/// A run that cannot start or records nothing keeps the earlier trace in --out; bad arguments
/// are refused, each naming its flag, before anything is run or written.
#[test]
fn the_earlier_trace_survives_a_failed_run_and_bad_arguments_are_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let lib = fake_lib(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("raw")).unwrap();
    synth_process(&out.join("raw"), 11, 20, &["_Z4gemmv", "_Z4relu"]);
    let o = from_raw(&out.join("raw"), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = std::fs::read(out.join("trace.json")).unwrap();
    let run = |args: &[&str]| {
        let o = trace_bin()
            .arg("--out")
            .arg(&out)
            .arg("--injection")
            .arg(&lib)
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let kept = |why: &str| {
        assert_eq!(
            std::fs::read(out.join("trace.json")).unwrap(),
            before,
            "{why}"
        );
        assert!(out.join("raw/trace-11.raw").is_file(), "{why}");
        assert!(!out.join("raw.partial").exists(), "{why}");
    };
    let (code, err) = run(&["--", "true"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("nothing was recorded") && err.contains("is kept"),
        "{err}"
    );
    kept("a command that records nothing");
    let (code, err) = run(&["--", "no-such-command-xyz"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("not found"), "{err}");
    kept("a mistyped command");
    let d = dir.path().to_str().unwrap();
    let (code, err) = run(&["--", d]);
    assert_eq!(code, Some(1));
    assert!(err.contains("is a folder, not a program"), "{err}");
    kept("a folder as CMD");
    for (args, want) in [
        (vec!["--name", "", "--", "true"], "--name"),
        (
            vec!["--diff-tol-pct", "NaN", "--", "true"],
            "--diff-tol-pct NaN",
        ),
        (
            vec!["--diff-tol-pct", "-3", "--", "true"],
            "--diff-tol-pct -3",
        ),
        (
            vec!["--diff-tol-pct", "1e308", "--", "true"],
            "--diff-tol-pct",
        ),
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        kept(want);
    }
    let o = from_raw(Path::new("/nonexistent/raw"), &dir.path().join("o3"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--from-raw /nonexistent/raw: not a folder"),
        "{err}"
    );
    let long = "n".repeat(300);
    let o = from_raw(&out.join("raw"), &dir.path().join("o2"), &["--name", &long]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--name"), "{err}");
    assert!(
        !dir.path().join("o2/trace.sqlite").exists(),
        "nothing written: {err}"
    );
    // A text file and a folder as --injection.
    for (inj, want) in [
        (dir.path().join("f.txt"), "not a shared object"),
        (dir.path().to_path_buf(), "is a folder"),
    ] {
        std::fs::write(dir.path().join("f.txt"), "hello").unwrap();
        let o = trace_bin()
            .arg("--out")
            .arg(&out)
            .arg("--injection")
            .arg(&inj)
            .args(["--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--injection") && err.contains(want), "{err}");
        kept(want);
    }
}

/// `--diff` takes the output folder of a `--from-raw` run (no raw/ in it: its trace.sqlite).
#[test]
fn diff_reads_an_output_folder_without_raw_files_from_its_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("raw")).unwrap();
    synth_process(&dir.path().join("raw"), 5, 30, &["_Z4gemmv", "_Z4relu"]);
    let out = dir.path().join("out");
    let o = from_raw(&dir.path().join("raw"), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = trace_bin()
        .arg("--diff")
        .arg(&out)
        .arg(dir.path().join("raw"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("2 kernel(s) unchanged"), "{text}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = trace_bin()
        .arg("--diff")
        .arg(&empty)
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no trace.sqlite") && !err.contains("  "),
        "{err}"
    );
}
