//! llm_bench: Llama inference measured like a serving benchmark (TTFT, prefill and decode
//! tokens/s, per-token latency, bandwidth bound) for candle and our own decode path; writes
//! artifacts/llm.json.

fn main() {
    opbench::cli::tools::llm_bench(opbench::cli::tools::args());
}
