//! Length limits on the text in an artifact or history record: names short enough to show on
//! a page or in a table, free text bounded, so one file cannot blow up every page it enters.

use super::{Ceilings, Param, RunInfo};
use crate::env::Env;
use anyhow::{bail, Result};
use std::collections::BTreeMap;

/// Longest name (kind, benchmark, implementation, parameter, quantity, GPU, ...), in characters.
pub const NAME_MAX_CHARS: usize = 256;
/// Longest piece of free text (a note, a command-line argument, a method), in characters.
pub const TEXT_MAX_CHARS: usize = 8192;

/// Most ranks of a collective (`params.world_size`): far above any NVLink domain or cluster
/// opbench has been run on, far below a typo's 99,999.
pub const WORLD_SIZE_MAX: i64 = 4096;

/// `params.world_size` of a row, when it has one: a whole number of ranks, 2 to
/// [`WORLD_SIZE_MAX`] (a collective of 0, 1 or -3 ranks measured nothing).
pub fn world_size(at: &str, params: &BTreeMap<String, Param>) -> Result<()> {
    let Some(p) = params.get("world_size") else {
        return Ok(());
    };
    match p {
        Param::Int(n) if (2..=WORLD_SIZE_MAX).contains(n) => Ok(()),
        other => bail!(
            "field `{at}.params.world_size` is {}: a collective runs on 2 to \
             {WORLD_SIZE_MAX} ranks (a whole number); re-run the benchmark or fix the file",
            serde_json::to_string(other).unwrap_or_default()
        ),
    }
}

fn check(field: &str, value: &str, max: usize, what: &str) -> Result<()> {
    // Bytes bound characters from above: most values never need counting.
    if value.len() <= max {
        return Ok(());
    }
    let n = value.chars().count();
    if n > max {
        bail!(
            "field `{field}` is {n} characters long (it starts {:?}): {what} may be at most {max} \
             characters; shorten it",
            crate::text::elide_to(value, 40)
        );
    }
    Ok(())
}

/// A name: at most [`NAME_MAX_CHARS`].
pub fn name(field: &str, value: &str) -> Result<()> {
    check(field, value, NAME_MAX_CHARS, "a name")
}

/// The compiler record: names bounded as names, the path and each flag as free text.
pub fn compiler(c: &super::CompilerInfo) -> Result<()> {
    name("compiler.name", &c.name)?;
    name("compiler.version", &c.version)?;
    name("compiler.target", &c.target)?;
    if let Some(p) = &c.path {
        text("compiler.path", p)?;
    }
    texts("compiler.flags", &c.flags)
}

/// Free text: at most [`TEXT_MAX_CHARS`].
pub fn text(field: &str, value: &str) -> Result<()> {
    check(field, value, TEXT_MAX_CHARS, "a note or other free text")
}

/// Each item of a list of free text.
pub fn texts(field: &str, values: &[String]) -> Result<()> {
    for (i, v) in values.iter().enumerate() {
        text(&format!("{field}[{i}]"), v)?;
    }
    Ok(())
}

/// The run block: id, commit and version are names, the command line free text.
pub fn run(r: &RunInfo) -> Result<()> {
    name("run.id", &r.id)?;
    name("run.tool_version", &r.tool_version)?;
    if let Some(c) = &r.git_commit {
        name("run.git_commit", c)?;
    }
    texts("run.command_line", &r.command_line)
}

/// The env block: every string in it is a name shown on the pages.
pub fn env(e: &Env) -> Result<()> {
    name("env.device", &e.device)?;
    name("env.host.cpu_model", &e.host.cpu_model)?;
    name("env.host.os", &e.host.os)?;
    if let Some(g) = &e.gpu {
        for (f, v) in [
            ("name", &g.name),
            ("uuid", &g.uuid),
            ("compute_capability", &g.compute_capability),
            ("driver_version", &g.driver_version),
            ("cuda_driver_version", &g.cuda_driver_version),
        ] {
            name(&format!("env.gpu.{f}"), v)?;
        }
        for (i, t) in g.throttle_reasons_seen.iter().enumerate() {
            name(&format!("env.gpu.throttle_reasons_seen[{i}]"), t)?;
        }
    }
    Ok(())
}

/// The ceilings block: dtype names and method text.
pub fn ceilings(c: &Ceilings) -> Result<()> {
    for k in c.matmul_tflops.keys() {
        name("ceilings.matmul_tflops (a key)", k)?;
    }
    texts("ceilings.method", &c.method)
}

/// A point's identity and the names of its quantities: `at` is `results[3]` or `points[3]`.
pub fn point<'a>(
    at: &str,
    benchmark: &str,
    implementation: &str,
    params: &BTreeMap<String, Param>,
    quantity_names: impl Iterator<Item = &'a String>,
    notes: &[String],
) -> Result<()> {
    name(&format!("{at}.benchmark"), benchmark)?;
    name(&format!("{at}.implementation"), implementation)?;
    for (k, v) in params {
        name(&format!("{at}.params (a key)"), k)?;
        if let Param::Text(t) = v {
            name(&format!("{at}.params.{k}"), t)?;
        }
    }
    for k in quantity_names {
        name(&format!("{at}.stats/metrics (a key)"), k)?;
    }
    texts(&format!("{at}.notes"), notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_sizes_outside_two_to_the_limit_are_refused() {
        let with = |p: Param| BTreeMap::from([("world_size".to_string(), p)]);
        for bad in [
            Param::Int(0),
            Param::Int(1),
            Param::Int(-3),
            Param::Int(99_999),
            Param::Float(2.5),
            Param::Text("4".into()),
        ] {
            let e = world_size("results[0]", &with(bad))
                .unwrap_err()
                .to_string();
            assert!(e.contains("results[0].params.world_size"), "{e}");
        }
        world_size("results[0]", &with(Param::Int(8))).unwrap();
        world_size("results[0]", &BTreeMap::new()).unwrap();
    }
}
