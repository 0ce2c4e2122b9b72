//! layernorm_bench: candle's LayerNorm against our CUDA kernel, checked and timed; writes artifacts/layernorm.json.

fn main() {
    opbench::cli::tools::layernorm_bench(opbench::cli::tools::args());
}
