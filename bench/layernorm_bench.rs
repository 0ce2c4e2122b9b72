//! layernorm_bench: candle's LayerNorm against our CUDA kernel, checked and timed; writes artifacts/layernorm.json.

use clap::Parser;

fn main() {
    opbench::cli::main_with(
        || opbench::layernorm::cli::run(opbench::layernorm::cli::Args::parse()),
    );
}
