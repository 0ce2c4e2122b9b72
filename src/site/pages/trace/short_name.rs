//! Readable kernel names from mangled C++ symbols.

/// `_ZN8cublasLt19splitKreduce_kernelILi32E...` -> `cublasLt::splitKreduce_kernel`; other
/// names are cut at 60 characters.
pub fn short_name(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("_Z") {
        let rest = rest.strip_prefix('N').unwrap_or(rest);
        let b = rest.as_bytes();
        let mut i = 0;
        let mut parts = Vec::new();
        while i < b.len() && b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let n: usize = rest[i..j].parse().unwrap_or(0);
            if n == 0 || j + n > b.len() {
                break;
            }
            parts.push(&rest[j..j + n]);
            i = j + n;
        }
        if !parts.is_empty() {
            return parts.join("::").chars().take(60).collect();
        }
    }
    let s: String = name.chars().take(60).collect();
    if name.chars().count() > 60 {
        s + "…"
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_names_are_shortened() {
        assert_eq!(
            short_name("_ZN8cublasLt19splitKreduce_kernelILi32ELi16EifEEvNS_18c"),
            "cublasLt::splitKreduce_kernel"
        );
        assert_eq!(short_name("_Z14gemvNSP_kernelIffffLi1E"), "gemvNSP_kernel");
        assert_eq!(short_name("rmsnorm_f16"), "rmsnorm_f16");
        assert_eq!(short_name(&"x".repeat(70)).chars().count(), 61);
    }
}
