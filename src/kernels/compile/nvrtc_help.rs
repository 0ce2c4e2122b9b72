//! The message when NVRTC cannot compile a file and no nvcc is there to take over: which host
//! header stopped it, and what to install or change.

/// `cannot open source file "stdio.h"` in NVRTC's log -> ("stdio.h", the log line).
pub fn missing_header(log: &str) -> Option<(String, String)> {
    log.lines().find_map(|l| {
        let at = l.find("cannot open source file \"")?;
        let rest = &l[at + "cannot open source file \"".len()..];
        let name = &rest[..rest.find('"')?];
        Some((name.to_string(), l.trim().to_string()))
    })
}

/// Wraps NVRTC's error with what to do: `nvcc` is the nvcc found ("nvcc 13.0.88 at PATH") or
/// why none was.
pub fn explain_nvrtc_failure(
    e: anyhow::Error,
    path: &str,
    nvcc: std::result::Result<String, String>,
) -> anyhow::Error {
    let text = format!("{e:#}");
    let next = match &nvcc {
        Ok(found) => format!(
            "{found} is here: run with --compiler nvcc (or auto) to compile the whole file with it"
        ),
        Err(why) => format!(
            "No nvcc is here to compile the whole file: {why}. Install CUDA's nvcc (the CUDA \
             toolkit, e.g. NVIDIA's `cuda-nvcc-13-0` package, or from PyPI `pip install \
             nvidia-cuda-nvcc==13.0.*` as scripts/cuda-toolchain.sh does), put its bin/ on \
             PATH or set CUDA_HOME, and run with --compiler nvcc (or auto)"
        ),
    };
    match missing_header(&text) {
        Some((header, line)) => e.context(format!(
            "NVRTC cannot compile {path}: it includes the host header <{header}> ({line}), and \
             NVRTC compiles device code only (no host headers, host functions or main()). \
             {next}; or guard the host code with `#ifndef __CUDACC_RTC__` ... `#endif` so that \
             NVRTC skips it"
        )),
        None if nvcc.is_err() => e.context(format!(
            "NVRTC could not compile {path}: fix the error above, or, if the file needs host \
             code, use nvcc. {next}"
        )),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_host_header_and_what_to_install() {
        let log = "NVRTC could not compile f.cu for compute_90:\nf.cu(2): catastrophic error: \
                   cannot open source file \"stdio.h\"\n";
        assert_eq!(missing_header(log).unwrap().0, "stdio.h");
        let none = Err("no nvcc found".to_string());
        let e = explain_nvrtc_failure(anyhow::anyhow!("{log}"), "f.cu", none.clone());
        let m = format!("{e:#}");
        assert!(m.contains("includes the host header <stdio.h>"), "{m}");
        assert!(m.contains("no nvcc found"), "{m}");
        assert!(m.contains("nvidia-cuda-nvcc"), "{m}");
        assert!(m.contains("__CUDACC_RTC__"), "{m}");
        assert!(m.contains("--compiler nvcc"), "{m}");
        let found = Ok("nvcc 13.0.88 at /usr/bin/nvcc".to_string());
        let e = explain_nvrtc_failure(anyhow::anyhow!("{log}"), "f.cu", found.clone());
        let m = format!("{e:#}");
        assert!(m.contains("nvcc 13.0.88 at /usr/bin/nvcc is here"), "{m}");
        let e = explain_nvrtc_failure(anyhow::anyhow!("error: x undefined"), "f.cu", none);
        assert!(format!("{e:#}").contains("fix the error above"));
        let e = explain_nvrtc_failure(anyhow::anyhow!("error: x undefined"), "f.cu", found);
        assert_eq!(format!("{e:#}"), "error: x undefined");
    }
}
