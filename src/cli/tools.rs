//! The command-line tools by name: each thin binary in bench/ runs one of these functions, and
//! the wheel's two multi-call binaries (`opbench-cpu`, `opbench-gpu`, which the `opbench`
//! launcher runs) run them by their first argument, so a tool's entry point is written once.
//!
//! The tools are split by what they link (see `launch`): a binary that names only `cpu_tool`
//! needs no GPU library beyond libcudart and loads on a machine without a driver.

use std::ffi::OsString;

use clap::Parser;

use super::launch;

/// A tool's entry point: the whole argument list, argv[0] first, as clap expects.
pub type Entry = fn(Vec<OsString>);

/// The entry point of a tool in `launch::CPU_TOOLS`.
pub fn cpu_tool(name: &str) -> Option<Entry> {
    Some(match name {
        "trace" => trace,
        "compare" => compare,
        "summarize" => summarize,
        "dashboard" => dashboard,
        "history" => history,
        _ => return None,
    })
}

/// The entry point of a tool in `launch::GPU_TOOLS`. Only a binary that may link the CUDA
/// libraries names this function.
pub fn gpu_tool(name: &str) -> Option<Entry> {
    Some(match name {
        "kernel_bench" => kernel_bench,
        "layernorm_bench" => layernorm_bench,
        "gemm_bench" => gemm_bench,
        "llm_bench" => llm_bench,
        "comm_bench" => comm_bench,
        "opbench_env" => opbench_env,
        _ => return None,
    })
}

/// The arguments of this process, for the single-tool binaries.
pub fn args() -> Vec<OsString> {
    std::env::args_os().collect()
}

/// The body of a multi-call binary: `<binary> <tool> [args...]` runs `<tool>` through `lookup`,
/// with argv[0] "opbench <tool>" (the command the user typed, through the launcher).
pub fn multicall(binary: &str, lookup: &dyn Fn(&str) -> Option<Entry>) {
    let mut argv = args();
    let first = argv
        .get(1)
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    if first.is_empty() || first == "--help" || first == "-h" {
        print!("{}", launch::help());
        return;
    }
    let Some(run) = lookup(&first) else {
        eprintln!(
            "error: {binary} has no command `{first}`; run `opbench {first} ...`, which picks the \
             binary that has it (`opbench --help` lists them)"
        );
        std::process::exit(2);
    };
    let mut args = vec![OsString::from(format!("opbench {first}"))];
    args.extend(argv.drain(2..));
    run(args);
}

pub fn trace(args: Vec<OsString>) {
    let args = crate::trace::cli::Args::parse_from(args);
    match crate::trace::cli::run(args) {
        Ok(exit) => crate::trace::cli::exit_as(exit),
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            std::process::exit(1);
        }
    }
}

pub fn compare(args: Vec<OsString>) {
    super::main_with(|| crate::compare::cli::run(crate::compare::cli::Args::parse_from(args)));
}

pub fn summarize(args: Vec<OsString>) {
    super::main_with(|| crate::summary::cli::run(crate::summary::cli::Args::parse_from(args)));
}

pub fn dashboard(args: Vec<OsString>) {
    super::main_with(|| crate::site::cli::run(crate::site::cli::Args::parse_from(args)));
}

pub fn history(args: Vec<OsString>) {
    super::main_with(|| crate::history::cli::run(crate::history::cli::Args::parse_from(args)));
}

pub fn kernel_bench(args: Vec<OsString>) {
    super::main_with(|| crate::kernels::main(crate::kernels::Args::parse_from(args)));
}

pub fn layernorm_bench(args: Vec<OsString>) {
    super::main_with(|| crate::layernorm::cli::run(crate::layernorm::cli::Args::parse_from(args)));
}

pub fn gemm_bench(args: Vec<OsString>) {
    super::main_with(|| crate::gemm::run(&crate::gemm::GemmArgs::parse_from(args)));
}

pub fn llm_bench(args: Vec<OsString>) {
    super::main_with(|| crate::llm::cli::run(crate::llm::cli::Args::parse_from(args)));
}

pub fn comm_bench(args: Vec<OsString>) {
    super::main_with(|| crate::comm::cli::run(crate::comm::cli::Args::parse_from(args)));
}

pub fn opbench_env(args: Vec<OsString>) {
    super::main_with(|| {
        let args = crate::describe::EnvArgs::parse_from(args);
        let gpu = u32::try_from(args.gpu)
            .map_err(|_| anyhow::anyhow!("--gpu {} is not a GPU index", args.gpu))?;
        let out = crate::describe::describe(gpu, args.ceilings)?;
        println!("{}", serde_json::to_string_pretty(&out)?);
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_tool_has_an_entry_point_in_the_right_table_only() {
        for (name, _) in launch::CPU_TOOLS {
            assert!(cpu_tool(name).is_some(), "{name} has no entry point");
            assert!(gpu_tool(name).is_none(), "{name} is in both tables");
        }
        for (name, _) in launch::GPU_TOOLS {
            assert!(gpu_tool(name).is_some(), "{name} has no entry point");
            assert!(cpu_tool(name).is_none(), "{name} is in both tables");
        }
        assert!(cpu_tool("nope").is_none() && gpu_tool("nope").is_none());
    }
}
