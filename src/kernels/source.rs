//! Reading a `.cu` file: which `__global__` kernels it defines and their parameter lists.
//!
//! A light scanner, not a C++ parser: comments are stripped, then each `__global__` is followed
//! to the identifier before its `(` and the parameters up to the matching `)`. Enough to name
//! the kernels, check `extern "C"` (NVRTC keeps only unmangled names loadable by name) and
//! read the signature the built-in matmul convention needs.

use anyhow::{Context, Result};
use std::path::Path;

/// One kernel parameter: `const float* __restrict__ A` gives type `const float* __restrict__`.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelParam {
    pub ty: String,
    pub name: String,
}

impl KernelParam {
    pub fn is_pointer(&self) -> bool {
        self.ty.contains('*')
    }

    /// The type without qualifiers and pointer marks: "float", "int", "unsigned int".
    pub fn base_type(&self) -> String {
        self.ty
            .replace('*', " ")
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "__restrict__" | "__restrict" | "volatile"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One `__global__` function found in a source file.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelDecl {
    pub name: String,
    pub params: Vec<KernelParam>,
    /// Declared inside `extern "C"`, so its symbol is its name.
    pub extern_c: bool,
    /// 1-based line of the `__global__`.
    pub line: usize,
}

impl KernelDecl {
    /// "matmul_naive(const float* A, float* C, int N)"
    pub fn signature(&self) -> String {
        let p: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty, p.name))
            .collect();
        format!("{}({})", self.name, p.join(", "))
    }
}

/// A source file read from disk, with its kernels.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: String,
    pub text: String,
    pub kernels: Vec<KernelDecl>,
}

impl Source {
    /// Reads and scans `path`; a missing file is an error naming it.
    pub fn read(path: &Path) -> Result<Source> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "cannot read the kernel source {}: check the path given to --source or the \
                 manifest's `source`",
                path.display()
            )
        })?;
        Ok(Source::from_text(&path.display().to_string(), text))
    }

    pub fn from_text(path: &str, text: String) -> Source {
        let kernels = scan(&text);
        Source {
            path: path.to_string(),
            text,
            kernels,
        }
    }

    /// The kernel called `name`, or an error listing the ones the file defines.
    pub fn kernel(&self, name: &str) -> Result<&KernelDecl> {
        let k = self
            .kernels
            .iter()
            .find(|k| k.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.kernels.iter().map(|k| k.name.as_str()).collect();
                anyhow::anyhow!(
                    "kernel `{name}` is not defined in {}: the __global__ functions there are [{}]",
                    self.path,
                    names.join(", ")
                )
            })?;
        if !k.extern_c {
            anyhow::bail!(
                "kernel `{name}` ({}:{}) is not declared extern \"C\": its symbol is mangled, so \
                 it cannot be loaded by name. Write `extern \"C\" __global__ void {name}(...)`",
                self.path,
                k.line
            );
        }
        Ok(k)
    }
}

/// Replaces comments with spaces (newlines kept, so line numbers stay right).
fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i] as char;
        if in_str {
            out.push(c);
            if c == '\\' && i + 1 < b.len() {
                out.push(b[i + 1] as char);
                i += 1;
            } else if c == '"' {
                in_str = false;
            }
            i += 1;
        } else if c == '"' {
            in_str = true;
            out.push(c);
            i += 1;
        } else if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(' ');
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            for ch in text[i..end].chars() {
                out.push(if ch == '\n' { '\n' } else { ' ' });
            }
            i = end;
        } else {
            out.push_str(&text[i..i + utf8_len(b[i])]);
            i += utf8_len(b[i]);
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Byte ranges covered by `extern "C" { ... }` blocks.
fn extern_c_blocks(t: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = t[from..].find("extern \"C\"") {
        let at = from + p + "extern \"C\"".len();
        from = at;
        let rest = t[at..].trim_start();
        if !rest.starts_with('{') {
            continue;
        }
        let open = at + (t[at..].len() - rest.len());
        let mut depth = 0usize;
        for (i, ch) in t[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push((open, open + i));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn scan(text: &str) -> Vec<KernelDecl> {
    let t = strip_comments(text);
    let blocks = extern_c_blocks(&t);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = t[from..].find("__global__") {
        let at = from + p;
        from = at + "__global__".len();
        // The name is the identifier before the first `(` that does not open an attribute
        // such as `__launch_bounds__(256)`.
        let mut look = from;
        let found = loop {
            let Some(paren) = t[look..].find('(').map(|i| look + i) else {
                break None;
            };
            let name = t[from..paren]
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .rfind(|w| !w.is_empty())
                .unwrap_or("");
            let Some(close) = matching_paren(&t, paren) else {
                break None;
            };
            if ATTRIBUTES.contains(&name) {
                look = close + 1;
                continue;
            }
            break Some((name.to_string(), paren, close));
        };
        let Some((name, paren, close)) = found else {
            break;
        };
        if name.is_empty() {
            continue;
        }
        let params = split_params(&t[paren + 1..close]);
        // The declaration starts after the previous `;`, `}` or `{`.
        let decl_start = t[..at].rfind([';', '}', '{']).map_or(0, |i| i + 1);
        let extern_c = t[decl_start..at].contains("extern \"C\"")
            || blocks.iter().any(|(s, e)| *s < at && at < *e);
        out.push(KernelDecl {
            name: name.to_string(),
            params,
            extern_c,
            line: t[..at].matches('\n').count() + 1,
        });
    }
    out
}

/// Attributes that may sit between `__global__` and the kernel's name, with parentheses.
const ATTRIBUTES: [&str; 5] = [
    "__launch_bounds__",
    "__maxnreg__",
    "__cluster_dims__",
    "__attribute__",
    "__declspec",
];

/// Index of the `)` closing the `(` at `open`.
fn matching_paren(t: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, ch) in t[open..].char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_params(list: &str) -> Vec<KernelParam> {
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0i32, String::new());
    for ch in list.chars() {
        match ch {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p != "void")
        .map(|p| {
            let cut = p
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            KernelParam {
                ty: p[..cut].trim().to_string(),
                name: p[cut..].to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
// __global__ void commented_out(float* x) {}
#define TILE 16
extern "C" __global__ void k_one(const float* __restrict__ A, float *B,
                                 int M, int N) { }
/* a block comment
   __global__ void also_commented() {} */
extern "C" {
__global__ void k_two(float* out, unsigned int n) { if (n) { out[0] = 1; } }
}
template <int T> __global__ void k_templ(float* x) {}
extern "C" __global__ void __launch_bounds__(256, 1) k_bounded(float* x, int n) {}
__global__ void k_mangled(void) {}
"#;

    #[test]
    fn finds_kernels_signatures_and_linkage() {
        let s = Source::from_text("x.cu", SRC.to_string());
        let names: Vec<_> = s.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            ["k_one", "k_two", "k_templ", "k_bounded", "k_mangled"]
        );
        assert_eq!(s.kernel("k_bounded").unwrap().params.len(), 2);
        let one = s.kernel("k_one").unwrap();
        assert_eq!(one.line, 4);
        assert_eq!(one.params.len(), 4);
        assert_eq!(one.params[0].name, "A");
        assert!(one.params[0].is_pointer());
        assert_eq!(one.params[0].base_type(), "float");
        assert_eq!(one.params[3].ty, "int");
        let two = s.kernel("k_two").unwrap();
        assert_eq!(two.params[1].base_type(), "unsigned int");
        assert!(s.kernels[4].params.is_empty());
    }

    #[test]
    fn missing_and_mangled_kernels_are_clear_errors() {
        let s = Source::from_text("x.cu", SRC.to_string());
        let e = s.kernel("k_three").unwrap_err().to_string();
        assert!(e.contains("`k_three` is not defined in x.cu"), "{e}");
        assert!(e.contains("k_one, k_two"), "{e}");
        let e = s.kernel("k_mangled").unwrap_err().to_string();
        assert!(e.contains("extern \"C\""), "{e}");
        assert!(s.kernel("k_templ").is_err());
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = Source::read(Path::new("/no/such/kernels.cu")).unwrap_err();
        assert!(format!("{e:#}").contains("/no/such/kernels.cu"));
    }
}
