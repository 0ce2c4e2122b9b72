//! Nsight Compute: the metrics we ask for, its command line, and parsing its `--csv` output.
//!
//! Runs on the CPU (tests use fixtures); `gpu::profile` spawns ncu over our own binary.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;

/// Hardware metrics collected for each point.
pub const METRICS: [&str; 14] = [
    "gpu__time_duration.sum",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "launch__registers_per_thread",
];

/// ncu's arguments (before the profiled command) for kernels named `kernels`.
pub fn ncu_args(kernels: &[String], metrics: &[&str]) -> Vec<String> {
    vec![
        "--csv".into(),
        "--print-units".into(),
        "base".into(),
        "--clock-control".into(),
        "none".into(),
        "--metrics".into(),
        metrics.join(","),
        "--kernel-name".into(),
        format!("regex:^({})$", kernels.join("|")),
    ]
}

/// Whether ncu's output says a requested metric does not exist on this GPU or ncu version.
pub fn mentions_metric_error(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.to_lowercase();
        l.contains("metric")
            && (l.contains("not found")
                || l.contains("failed to find")
                || l.contains("invalid")
                || l.contains("unknown"))
    })
}

/// Of `METRICS`, those whose base name (before the first `.`) appears as the first word of a
/// line of `ncu --query-metrics` output; None when the output lists no metrics at all.
pub fn supported_metrics(query_output: &str) -> Option<Vec<&'static str>> {
    let names: std::collections::BTreeSet<&str> = query_output
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.contains("__"))
        .collect();
    if names.is_empty() {
        return None;
    }
    Some(
        METRICS
            .iter()
            .copied()
            .filter(|m| names.contains(m.split('.').next().unwrap_or(m)))
            .collect(),
    )
}

/// One profiled launch.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuLaunch {
    pub kernel: String,
    /// "(16, 16, 1)" as ncu prints it, when the CSV has the column.
    pub block: Option<String>,
    pub grid: Option<String>,
    /// Metric name -> value in base units (bytes, nanoseconds, %).
    pub raw: BTreeMap<String, f64>,
}

impl NcuLaunch {
    /// The kernel's name without an argument list ("k(float*, int)" -> "k").
    pub fn base_name(&self) -> &str {
        self.kernel.split('(').next().unwrap_or("").trim()
    }
}

/// "(16, 16, 1)" or "16x16" -> [16, 16, 1] for comparisons.
pub fn dims(text: &str) -> Vec<u32> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect()
}

fn unit_scale(unit: &str) -> f64 {
    match unit.trim() {
        "usecond" | "us" => 1e3,
        "msecond" | "ms" => 1e6,
        "second" | "s" => 1e9,
        "Kbyte" | "KB" => 1e3,
        "Mbyte" | "MB" => 1e6,
        "Gbyte" | "GB" => 1e9,
        _ => 1.0,
    }
}

fn number(text: &str) -> Option<f64> {
    text.trim().replace(',', "").parse::<f64>().ok()
}

/// Parses ncu's `--csv` output (the "details" layout: one row per metric, or the "raw" layout:
/// one row per launch with a units row). Lines that ncu itself prints (`==PROF==`, `==WARNING==`)
/// and our program's own output are skipped. Launches come back in profiling order.
pub fn parse_csv(text: &str) -> Result<Vec<NcuLaunch>> {
    let start = text
        .lines()
        .position(|l| l.starts_with("\"ID\""))
        .context("no CSV table in ncu's output (no line starting with \"ID\")")?;
    let body: String = text
        .lines()
        .skip(start)
        .filter(|l| l.starts_with('"'))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(body.as_bytes());
    let header: Vec<String> = rdr.headers()?.iter().map(str::to_string).collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let (id_c, kernel_c) = (
        col("ID").context("ncu CSV has no ID column")?,
        col("Kernel Name").context("ncu CSV has no \"Kernel Name\" column")?,
    );
    let (block_c, grid_c) = (col("Block Size"), col("Grid Size"));
    let mut order: Vec<String> = Vec::new();
    let mut launches: BTreeMap<String, NcuLaunch> = BTreeMap::new();
    let details = (col("Metric Name"), col("Metric Value"));
    let unit_c = col("Metric Unit");
    let mut units: Option<Vec<String>> = None;
    for rec in rdr.records() {
        let rec = rec.context("reading ncu's CSV")?;
        let get = |i: usize| rec.get(i).unwrap_or("").to_string();
        let id = get(id_c);
        if id.trim().parse::<u64>().is_err() {
            // The raw layout's second line holds the units.
            if units.is_none() {
                units = Some(rec.iter().map(str::to_string).collect());
            }
            continue;
        }
        let l = launches.entry(id.clone()).or_insert_with(|| {
            order.push(id.clone());
            NcuLaunch {
                kernel: get(kernel_c),
                block: block_c.map(&get),
                grid: grid_c.map(&get),
                raw: BTreeMap::new(),
            }
        });
        match details {
            (Some(n), Some(v)) => {
                let scale = unit_c.map_or(1.0, |u| unit_scale(&get(u)));
                if let Some(x) = number(&get(v)) {
                    l.raw.insert(get(n), x * scale);
                }
            }
            _ => {
                for (i, h) in header.iter().enumerate() {
                    if h.contains("__") {
                        let scale = units
                            .as_ref()
                            .and_then(|u| u.get(i))
                            .map_or(1.0, |u| unit_scale(u));
                        if let Some(x) = number(&get(i)) {
                            l.raw.insert(h.clone(), x * scale);
                        }
                    }
                }
            }
        }
    }
    if order.is_empty() {
        bail!("ncu's CSV table has no profiled launches");
    }
    Ok(order
        .into_iter()
        .map(|id| launches.remove(&id).expect("inserted"))
        .collect())
}

/// The figures a result row carries, named with their units, from one launch's raw metrics.
/// FLOPs count FP32 and FP64 SASS instructions executed by threads (add, mul: 1; fma: 2).
pub fn derived_metrics(raw: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    let g = |k: &str| raw.get(k).copied();
    let mut out = BTreeMap::new();
    let mut put = |k: &str, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            out.insert(k.to_string(), v);
        }
    };
    let dur_ns = g("gpu__time_duration.sum").filter(|d| *d > 0.0);
    put("ncu_duration_us", dur_ns.map(|d| d / 1e3));
    put(
        "ncu_memory_throughput_pct",
        g("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
    );
    put(
        "ncu_compute_throughput_pct",
        g("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    );
    put(
        "ncu_achieved_occupancy_pct",
        g("sm__warps_active.avg.pct_of_peak_sustained_active"),
    );
    put(
        "ncu_sm_efficiency_pct",
        g("smsp__cycles_active.avg.pct_of_peak_sustained_elapsed"),
    );
    put(
        "ncu_registers_per_thread",
        g("launch__registers_per_thread"),
    );
    let dram = match (g("dram__bytes_read.sum"), g("dram__bytes_write.sum")) {
        (Some(r), Some(w)) => Some(r + w),
        _ => None,
    };
    put("ncu_dram_bytes", dram);
    put("ncu_dram_gbps", dram.zip(dur_ns).map(|(b, d)| b / d));
    let op = |name: &str| {
        g(&format!(
            "smsp__sass_thread_inst_executed_op_{name}_pred_on.sum"
        ))
    };
    let flop = ["fadd", "fmul", "ffma", "dadd", "dmul", "dfma"]
        .iter()
        .map(|n| op(n).map(|v| if n.ends_with("fma") { 2.0 * v } else { v }))
        .collect::<Option<Vec<f64>>>()
        .map(|v| v.iter().sum::<f64>());
    put("ncu_flop_count", flop);
    put(
        "ncu_achieved_tflops",
        flop.zip(dur_ns).map(|(f, d)| f / d / 1e3),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DETAILS: &str = r#"==PROF== Connected to process 4242 (/tmp/kernel_bench)
==PROF== Profiling "matmul_naive": 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","kernel_bench","127.0.0.1","matmul_naive","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","2,000"
"0","4242","kernel_bench","127.0.0.1","matmul_naive","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","3,000,000"
"0","4242","kernel_bench","127.0.0.1","matmul_naive","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","Mbyte","1"
"0","4242","kernel_bench","127.0.0.1","matmul_naive","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","sm__throughput.avg.pct_of_peak_sustained_elapsed","%","71.25"
"1","4242","kernel_bench","127.0.0.1","matmul_tiled","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","1.5"
"1","4242","kernel_bench","127.0.0.1","matmul_tiled","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","sm__warps_active.avg.pct_of_peak_sustained_active","%","n/a"
==PROF== Disconnected from process 4242
"#;

    #[test]
    fn parses_the_details_layout_in_order_with_units() {
        let l = parse_csv(DETAILS).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].base_name(), "matmul_naive");
        assert_eq!(dims(l[0].block.as_deref().unwrap()), [16, 16, 1]);
        assert_eq!(l[0].raw["gpu__time_duration.sum"], 2000.0);
        assert_eq!(l[0].raw["dram__bytes_read.sum"], 3e6);
        assert_eq!(l[0].raw["dram__bytes_write.sum"], 1e6);
        assert_eq!(l[1].raw["gpu__time_duration.sum"], 1500.0);
        assert!(!l[1]
            .raw
            .contains_key("sm__warps_active.avg.pct_of_peak_sustained_active"));
        let d = derived_metrics(&l[0].raw);
        assert_eq!(d["ncu_duration_us"], 2.0);
        assert_eq!(d["ncu_dram_bytes"], 4e6);
        assert_eq!(d["ncu_dram_gbps"], 2000.0);
        assert_eq!(d["ncu_compute_throughput_pct"], 71.25);
        assert!(
            !d.contains_key("ncu_achieved_tflops"),
            "no FLOP counters, no FLOP rate"
        );
    }

    #[test]
    fn parses_the_raw_layout_and_derives_flops() {
        let text = "\"ID\",\"Kernel Name\",\"Block Size\",\"gpu__time_duration.sum\",\
\"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum\",\
\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum\",\
\"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum\"
\"\",\"\",\"\",\"nsecond\",\"inst\",\"inst\",\"inst\",\"inst\",\"inst\",\"inst\"
\"3\",\"k(float*, int)\",\"(256, 1, 1)\",\"1,000\",\"10\",\"20\",\"1,000,000\",\"0\",\"0\",\"5\"
";
        let l = parse_csv(text).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].base_name(), "k");
        let d = derived_metrics(&l[0].raw);
        assert_eq!(d["ncu_flop_count"], 10.0 + 20.0 + 2e6 + 10.0);
        assert!((d["ncu_achieved_tflops"] - 2.00004).abs() < 1e-9);
    }

    #[test]
    fn output_without_a_table_is_an_error() {
        assert!(parse_csv("==PROF== No kernels were profiled.\n").is_err());
        let args = ncu_args(&["a".into(), "b".into()], &METRICS);
        assert!(args.contains(&"regex:^(a|b)$".to_string()));
        assert!(args
            .windows(2)
            .any(|w| w[0] == "--clock-control" && w[1] == "none"));
    }

    #[test]
    fn unsupported_metrics_are_recognised_and_filtered() {
        assert!(mentions_metric_error(
            "==ERROR== Failed to find metric sm__bogus.sum"
        ));
        assert!(!mentions_metric_error(
            "==PROF== Disconnected from process 1"
        ));
        let query = "Device NVIDIA H200 (GH100)\n----\nMetric Name   Metric Description\n\
                     dram__bytes_read   # of bytes read from DRAM\n\
                     gpu__time_duration   total duration\n";
        let ok = supported_metrics(query).unwrap();
        assert_eq!(ok, ["gpu__time_duration.sum", "dram__bytes_read.sum"]);
        assert_eq!(supported_metrics("nothing here"), None);
    }
}
