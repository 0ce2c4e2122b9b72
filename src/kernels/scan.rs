//! The kernel scanner: finds `__global__` function definitions in CUDA C++ text without a C++
//! parser.
//!
//! Comments and preprocessor lines (with their continuations) are blanked first, keeping line
//! numbers. From each `__global__` the scanner walks the parenthesised groups that follow
//! (`__launch_bounds__(256, 1)`, attribute macros) to the one followed by `{`: that is the
//! parameter list, and the identifier before it the kernel's name. A `template <...>` head, an
//! `extern "C"` and the enclosing namespaces are read off the text before it. Prototypes (a
//! list followed by `;`) are not kernels: the definition is.

use super::kernel_name::split_top_level;

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

/// One parameter of a template head: `int BLOCK = 256` or `typename T`.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateParam {
    pub name: String,
    pub default: Option<String>,
    /// As written, e.g. "int BLOCK = 256".
    pub text: String,
}

/// One `__global__` function found in a source file.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelDecl {
    /// The identifier; for an instance returned by `Source::kernel`, the name as written.
    pub name: String,
    /// Enclosing named namespaces, outermost first.
    pub scope: Vec<String>,
    /// The template head's parameters, for a kernel template.
    pub template: Option<Vec<TemplateParam>>,
    pub params: Vec<KernelParam>,
    /// Declared inside `extern "C"`, so its symbol is its name.
    pub extern_c: bool,
    /// The file that defines it (the source or one of its local headers).
    pub file: String,
    /// 1-based line of the `__global__`.
    pub line: usize,
}

impl KernelDecl {
    /// "template <int B, typename T> k(const T* x, int n)" or "k(const float* x, int n)".
    pub fn signature(&self) -> String {
        let p: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty, p.name).trim().to_string())
            .collect();
        let head = match &self.template {
            Some(t) => {
                let t: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
                format!("template <{}> ", t.join(", "))
            }
            None => String::new(),
        };
        format!("{head}{}({})", self.name, p.join(", "))
    }

    /// Where it is defined: "file.cu:76".
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// Replaces comments with spaces (newlines kept, so line numbers stay right); string and
/// character literals are kept as they are.
pub fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' && i + 1 < b.len() {
                out.push_str(&text[i..i + 1 + utf8_len(b[i + 1])]);
                i += 1 + utf8_len(b[i + 1]);
                continue;
            }
            if c == q || c == b'\n' {
                quote = None;
            }
        } else if c == b'"' || (c == b'\'' && !prev_is_digit(b, i)) {
            quote = Some(c);
        } else if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(' ');
                i += 1;
            }
            continue;
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            for ch in text[i..end].chars() {
                out.push(if ch == '\n' { '\n' } else { ' ' });
            }
            i = end;
            continue;
        }
        out.push_str(&text[i..i + utf8_len(c)]);
        i += utf8_len(c);
    }
    out
}

/// A `'` after a digit is a digit separator (`1'000`), not a character literal.
fn prev_is_digit(b: &[u8], i: usize) -> bool {
    i > 0 && b[i - 1].is_ascii_hexdigit()
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// `#include "x"` targets (not `<x>`), in order, from comment-free text.
pub fn local_includes(t: &str) -> Vec<String> {
    t.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let rest = rest.strip_prefix('"')?;
            rest.find('"').map(|e| rest[..e].to_string())
        })
        .collect()
}

/// Blanks preprocessor lines and their `\` continuations (newlines kept): a `__global__` in a
/// macro body is not a definition, and `#pragma unroll` in a body is noise.
fn blank_preprocessor(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut continued = false;
    for line in t.split_inclusive('\n') {
        let directive = continued || line.trim_start().starts_with('#');
        continued = directive && line.trim_end_matches(['\n', '\r']).ends_with('\\');
        if directive {
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Blanks the contents of string and character literals (a `{` or `__global__` in a string is
/// no code), keeping `"C"` for `extern "C"`.
fn blank_literals(t: &str) -> String {
    let b = t.as_bytes();
    let mut out = String::with_capacity(t.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || (c == b'\'' && !prev_is_digit(b, i)) {
            let mut j = i + 1;
            while j < b.len() && b[j] != c && b[j] != b'\n' {
                j += match b[j] {
                    b'\\' if j + 1 < b.len() => 1 + utf8_len(b[j + 1]),
                    other => utf8_len(other),
                };
            }
            let end = j.min(b.len());
            let body = &t[i + 1..end];
            out.push(c as char);
            if body == "C" {
                out.push('C');
            } else {
                out.extend(body.chars().map(|_| ' '));
            }
            if end < b.len() {
                out.push(b[end] as char);
            }
            i = end + 1;
        } else {
            out.push_str(&t[i..i + utf8_len(c)]);
            i += utf8_len(c);
        }
    }
    out
}

/// A byte range of the scanned text: (opening brace, closing brace).
type Span = (usize, usize);

/// Byte ranges of `extern "C" { ... }` blocks and of named `namespace N { ... }` blocks.
fn blocks(t: &str) -> (Vec<Span>, Vec<(Span, String)>) {
    let mut externs = Vec::new();
    let mut from = 0;
    while let Some(p) = t[from..].find("extern \"C\"") {
        let at = from + p + "extern \"C\"".len();
        from = at;
        let rest = t[at..].trim_start();
        if rest.starts_with('{') {
            let open = at + (t[at..].len() - rest.len());
            if let Some(close) = matching(t, open, '{', '}') {
                externs.push((open, close));
            }
        }
    }
    let mut spaces = Vec::new();
    let mut from = 0;
    while let Some(p) = t[from..].find("namespace") {
        let at = from + p;
        from = at + "namespace".len();
        if at > 0 && is_ident_byte(t.as_bytes()[at - 1]) {
            continue;
        }
        let rest = &t[from..];
        let name_len = rest
            .trim_start()
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(0);
        let lead = rest.len() - rest.trim_start().len();
        let name = rest.trim_start()[..name_len].to_string();
        let after = rest[lead + name_len..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = t.len() - after.len();
        if let Some(close) = matching(t, open, '{', '}') {
            spaces.push(((open, close), name));
        }
    }
    (externs, spaces)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Index of the bracket closing the one at `open`.
fn matching(t: &str, open: usize, o: char, c: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, ch) in t[open..].char_indices() {
        if ch == o {
            depth += 1;
        } else if ch == c {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(open + i);
            }
        }
    }
    None
}

/// The identifier ending just before byte `end` (spaces skipped).
fn ident_before(t: &str, end: usize) -> &str {
    let head = t[..end].trim_end();
    let start = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    &head[start..]
}

/// The kernels defined in `text` (the contents of `file`).
pub fn scan(text: &str, file: &str) -> Vec<KernelDecl> {
    let t = blank_literals(&blank_preprocessor(&strip_comments(text)));
    let (externs, spaces) = blocks(&t);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = t[from..].find("__global__") {
        let at = from + p;
        from = at + "__global__".len();
        let Some((name, open, close)) = parameter_list(&t, from) else {
            continue;
        };
        from = close + 1;
        // The declaration starts after the previous `;`, `}` or `{`.
        let decl_start = t[..at].rfind([';', '}', '{']).map_or(0, |i| i + 1);
        let prefix = &t[decl_start..at];
        let extern_c =
            prefix.contains("extern \"C\"") || externs.iter().any(|(s, e)| *s < at && at < *e);
        let scope = spaces
            .iter()
            .filter(|((s, e), _)| *s < at && at < *e)
            .flat_map(|(_, n)| n.split("::").map(str::to_string).collect::<Vec<_>>())
            .collect();
        out.push(KernelDecl {
            name: name.to_string(),
            scope,
            template: template_head(prefix),
            params: split_params(&t[open + 1..close]),
            extern_c,
            file: file.to_string(),
            line: t[..at].matches('\n').count() + 1,
        });
    }
    out
}

/// From just after a `__global__`: (name, open, close) of the parameter list of a definition,
/// or None for a prototype or text that is not a function.
fn parameter_list(t: &str, from: usize) -> Option<(&str, usize, usize)> {
    let mut look = from;
    loop {
        let open = look + t[look..].find('(')?;
        if t[look..open].contains([';', '{', '}']) {
            return None;
        }
        let close = matching(t, open, '(', ')')?;
        let next = t[close + 1..].trim_start().chars().next()?;
        match next {
            '{' => {
                let name = ident_before(t, open);
                return (!name.is_empty()).then_some((name, open, close));
            }
            ';' => return None,
            _ => look = close + 1,
        }
    }
}

/// `template <int B, typename T = float>` in a declaration's prefix.
fn template_head(prefix: &str) -> Option<Vec<TemplateParam>> {
    let at = prefix.find("template")?;
    let open = at + prefix[at..].find('<')?;
    let close = matching(prefix, open, '<', '>')?;
    Some(
        split_top_level(&prefix[open + 1..close])
            .into_iter()
            .map(|text| {
                let (decl, default) = match top_level_eq(&text) {
                    Some(i) => (text[..i].trim(), Some(text[i + 1..].trim().to_string())),
                    None => (text.trim(), None),
                };
                TemplateParam {
                    name: ident_before(decl, decl.len()).to_string(),
                    default,
                    text: text.clone(),
                }
            })
            .collect(),
    )
}

/// Position of an `=` (a default) outside brackets, not part of `==`, `<=`, `>=`, `!=`.
fn top_level_eq(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0i32;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth -= 1,
            b'=' if depth == 0 => {
                let prev = if i > 0 { b[i - 1] } else { b' ' };
                let next = b.get(i + 1).copied().unwrap_or(b' ');
                if !matches!(prev, b'=' | b'<' | b'>' | b'!') && next != b'=' {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_params(list: &str) -> Vec<KernelParam> {
    split_top_level(list)
        .into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p != "void")
        .map(|p| {
            // A default argument (`int C = 768`) is not part of the type or the name.
            let decl = match top_level_eq(&p) {
                Some(i) => p[..i].trim().to_string(),
                None => p,
            };
            let name = ident_before(&decl, decl.len());
            let ty = decl[..decl.len() - name.len()].trim();
            if ty.is_empty() || ty.ends_with("::") {
                // An unnamed parameter: the whole text is its type.
                KernelParam {
                    ty: decl.clone(),
                    name: String::new(),
                }
            } else {
                KernelParam {
                    ty: ty.to_string(),
                    name: name.to_string(),
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
