//! llm_bench: Llama inference measured like a serving benchmark (TTFT, prefill and decode
//! tokens/s, per-token latency, bandwidth bound) for candle and our own decode path; writes
//! artifacts/llm.json.

use clap::Parser;

fn main() {
    opbench::cli::main_with(|| opbench::llm::cli::run(opbench::llm::cli::Args::parse()));
}
