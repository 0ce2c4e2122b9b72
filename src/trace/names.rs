//! Kernel names as Nsight Systems shows them: `demangledName` (the C++ name with its template
//! arguments and parameters) and `shortName` (the base function name, no namespace, template
//! or parameters), from the mangled name CUPTI records. C names stay as they are.

use cpp_demangle::{DemangleOptions, Symbol};

/// The demangled name, or the name itself when it is not a mangled C++ name.
pub fn demangled(name: &str) -> String {
    if !name.starts_with("_Z") {
        return name.to_string();
    }
    Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| name.to_string())
}

/// Removes every balanced `<...>` and `(...)` group (templates, parameters).
fn strip_groups(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The base name: `void at::native::vectorized_elementwise_kernel<4, F>(int, F)` ->
/// `vectorized_elementwise_kernel`.
pub fn short_name(name: &str) -> String {
    let d = if name.starts_with("_Z") {
        Symbol::new(name)
            .ok()
            .and_then(|s| {
                s.demangle_with_options(&DemangleOptions::new().no_params().no_return_type())
                    .ok()
            })
            .unwrap_or_else(|| name.to_string())
    } else {
        name.to_string()
    };
    let bare = strip_groups(&d);
    // The return type (if any) is separated by a space; the base name is the last `::` part.
    let last = bare.split_whitespace().last().unwrap_or(&bare);
    let base = last.rsplit("::").next().unwrap_or(last);
    if base.is_empty() {
        d
    } else {
        base.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_names_give_nsys_style_demangled_and_short_names() {
        let m = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
        let d = demangled(m);
        assert!(
            d.starts_with("void at::native::vectorized_elementwise_kernel<4,"),
            "{d}"
        );
        assert_eq!(short_name(m), "vectorized_elementwise_kernel");
        assert_eq!(demangled("_Z6kernelPf"), "kernel(float*)");
        assert_eq!(short_name("_Z6kernelPf"), "kernel");
        // C names (Triton, NVRTC extern "C") are already short.
        assert_eq!(
            short_name("triton_poi_fused_add_0"),
            "triton_poi_fused_add_0"
        );
        assert_eq!(demangled("rmsnorm_f16"), "rmsnorm_f16");
        // Not valid mangling: kept.
        assert_eq!(demangled("_Zgarbage"), "_Zgarbage");
    }
}
