//! `opbench_env`: print this machine's environment block (host, GPU via NVML) as JSON.

use clap::Parser;

/// Print the `env` block a benchmark would record on this machine: host CPU, OS and, when an
/// NVIDIA driver is present, the GPU (name, UUID, compute capability, driver and CUDA versions,
/// memory, clocks, throttle reasons) read through NVML. With --ceilings (cuda builds only),
/// also opens the GPU and measures the device-to-device copy bandwidth.
#[derive(Parser)]
#[command(version, after_help = "Example:\n  opbench_env --gpu 0 > env.json")]
struct Args {
    /// GPU index to describe.
    #[arg(
        long,
        default_value_t = 0,
        allow_negative_numbers = true,
        value_parser = opbench::cli::count
    )]
    gpu: usize,
    /// Also open the GPU through CUDA and measure the copy-bandwidth ceiling (needs the `cuda` feature).
    #[arg(long)]
    ceilings: bool,
}

fn main() {
    opbench::cli::main_with(|| {
        let args = Args::parse();
        let gpu = u32::try_from(args.gpu)
            .map_err(|_| anyhow::anyhow!("--gpu {} is not a GPU index", args.gpu))?;
        let out = opbench::describe::describe(gpu, args.ceilings)?;
        println!("{}", serde_json::to_string_pretty(&out)?);
        Ok(())
    });
}
