//! A kernel named as written in C++: `k`, `ns::k`, a template instance `softmax<256, float>`,
//! or one overload picked by its parameter types `scale(float*, int)`; and the comparison of
//! such a name with a demangled symbol (`void softmax<256, float>(float*, float const*, int)`).

use anyhow::{bail, Result};

/// A parsed kernel name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelName {
    /// The text as written in the manifest or on the command line.
    pub text: String,
    /// Namespaces written before the name (`a::b::k` gives ["a", "b"]).
    pub scope: Vec<String>,
    /// The function's own identifier.
    pub base: String,
    /// `<...>` arguments, as written, when the name is a template instance.
    pub template_args: Option<Vec<String>>,
    /// `(...)` parameter types, as written, when the name picks an overload.
    pub param_types: Option<Vec<String>>,
}

impl KernelName {
    /// Parses `ns::k<256, float>(float*, int)`; every part but the identifier is optional.
    pub fn parse(text: &str) -> Result<KernelName> {
        let t = text.trim();
        let head_end = t.find(['<', '(']).unwrap_or(t.len());
        let (head, mut rest) = (t[..head_end].trim(), t[head_end..].trim());
        let mut parts: Vec<String> = head.split("::").map(|s| s.trim().to_string()).collect();
        let base = parts.pop().unwrap_or_default();
        if !is_identifier(&base) || parts.iter().any(|p| !is_identifier(p)) {
            bail!(
                "kernel name `{text}` is not a C++ name: write it as in the source, e.g. \
                 `layernorm_kernel`, `softmax_kernel<256, float>` or `scale(float*, int)`"
            );
        }
        let mut template_args = None;
        if rest.starts_with('<') {
            let close = matching(rest, 0, '<', '>')
                .ok_or_else(|| anyhow::anyhow!("kernel name `{text}`: `<` without its `>`"))?;
            template_args = Some(split_top_level(&rest[1..close]));
            rest = rest[close + 1..].trim();
        }
        let mut param_types = None;
        if rest.starts_with('(') {
            let close = matching(rest, 0, '(', ')')
                .ok_or_else(|| anyhow::anyhow!("kernel name `{text}`: `(` without its `)`"))?;
            let types = split_top_level(&rest[1..close]);
            param_types = Some(if types == ["void"] { Vec::new() } else { types });
            rest = rest[close + 1..].trim();
        }
        if !rest.is_empty() {
            bail!("kernel name `{text}`: unexpected `{rest}` after the name");
        }
        Ok(KernelName {
            text: t.to_string(),
            scope: parts,
            base,
            template_args,
            param_types,
        })
    }

    /// `ns::k<256, float>`: the name without parameter types.
    pub fn qualified(&self) -> String {
        let mut s = self.scope.join("::");
        if !s.is_empty() {
            s.push_str("::");
        }
        s.push_str(&self.base);
        if let Some(a) = &self.template_args {
            s.push_str(&format!("<{}>", a.join(", ")));
        }
        s
    }

    /// The C++ expression naming this kernel's function, for NVRTC's name expressions and for
    /// the instantiation file given to nvcc: `&k<256, float>`, or a cast to the function
    /// pointer type that picks an overload, `(void(*)(float*, int))k`.
    pub fn expression(&self) -> String {
        match &self.param_types {
            Some(t) => format!("(void(*)({})){}", t.join(", "), self.qualified()),
            None => format!("&{}", self.qualified()),
        }
    }

    /// Whether a demangled symbol (or a plain extern "C" one) is this kernel.
    pub fn matches(&self, symbol: &Demangled) -> bool {
        if symbol.base != self.base || !symbol.scope.ends_with(&self.scope) {
            return false;
        }
        let args_ok = match (&self.template_args, &symbol.template_args) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| normalize_template_arg(x) == normalize_template_arg(y))
            }
            _ => false,
        };
        let params_ok = match (&self.param_types, &symbol.param_types) {
            (Some(a), Some(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| normalize_type(x) == normalize_type(y))
            }
            _ => true,
        };
        args_ok && params_ok
    }
}

/// A symbol of a compiled module: its raw (mangled) name and what it demangles to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Demangled {
    pub symbol: String,
    /// The demangled text, or the symbol itself for extern "C" names.
    pub text: String,
    pub scope: Vec<String>,
    pub base: String,
    pub template_args: Option<Vec<String>>,
    /// None for extern "C" symbols, whose types the name does not carry.
    pub param_types: Option<Vec<String>>,
}

impl Demangled {
    /// Demangles an Itanium C++ symbol (`_Z...`); any other symbol stays as it is.
    pub fn new(symbol: &str) -> Demangled {
        let text = cpp_demangle::Symbol::new(symbol)
            .ok()
            .and_then(|s| s.demangle().ok())
            .unwrap_or_else(|| symbol.to_string());
        Demangled::from_text(symbol, &text)
    }

    /// Splits demangled text `void ns::k<256, float>(float*, int)` into its parts.
    pub fn from_text(symbol: &str, text: &str) -> Demangled {
        let t = text.trim();
        let (head, params) = match t.ends_with(')').then(|| last_group(t)).flatten() {
            Some(open) => {
                let list = split_top_level(&t[open + 1..t.len() - 1]);
                let list = if list == ["void"] { Vec::new() } else { list };
                (t[..open].trim(), Some(list))
            }
            None => (t, None),
        };
        // A template function's demangled name starts with its return type: keep what follows
        // the last space outside `<...>`.
        let name = last_top_level_word(head);
        let (qual, targs) = match name.find('<') {
            Some(i) if name.ends_with('>') => (
                &name[..i],
                Some(split_top_level(&name[i + 1..name.len() - 1])),
            ),
            _ => (name, None),
        };
        let mut scope: Vec<String> = qual.split("::").map(str::to_string).collect();
        let base = scope.pop().unwrap_or_default();
        Demangled {
            symbol: symbol.to_string(),
            text: t.to_string(),
            scope,
            base,
            template_args: targs,
            param_types: params,
        }
    }
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_alphabetic() || f == '_')
        && c.all(|ch| ch.is_alphanumeric() || ch == '_')
}

/// Index of the bracket closing the one at `open` (nesting of `<>`, `()` and `[]` counted).
fn matching(t: &str, open: usize, o: char, c: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in t[open..].char_indices() {
        if ch == o {
            depth += 1;
        } else if ch == c {
            depth -= 1;
            if depth == 0 {
                return Some(open + i);
            }
        }
    }
    None
}

/// Start of the last top-level `( ... )` group of `t`, which ends with `)`.
fn last_group(t: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in t.char_indices().rev() {
        match ch {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn last_top_level_word(t: &str) -> &str {
    let mut depth = 0i32;
    let mut start = 0;
    for (i, ch) in t.char_indices() {
        match ch {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    &t[start..]
}

/// Splits on commas outside brackets; each part trimmed, empty list for blank text.
pub fn split_top_level(list: &str) -> Vec<String> {
    if list.trim().is_empty() {
        return Vec::new();
    }
    let (mut parts, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for ch in list.chars() {
        match ch {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur).trim().to_string());
        } else {
            cur.push(ch);
        }
    }
    parts.push(cur.trim().to_string());
    parts
}

/// A parameter type for comparison: qualifiers that do not change which overload it is
/// dropped (`const`, `volatile`, `__restrict__`), `unsigned` spelled `unsigned int`, no spaces.
/// `const float* __restrict__` and `float const*` both give `float*`.
pub fn normalize_type(t: &str) -> String {
    let spaced = t.replace('*', " * ").replace('&', " & ");
    let words: Vec<&str> = spaced
        .split_whitespace()
        .filter(|w| {
            !matches!(
                *w,
                "const" | "volatile" | "__restrict__" | "__restrict" | "restrict"
            )
        })
        .collect();
    let mut out: Vec<&str> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        out.push(w);
        let next = words.get(i + 1).copied();
        if *w == "unsigned" && !matches!(next, Some("int" | "char" | "short" | "long")) {
            out.push("int");
        }
    }
    out.concat()
}

/// A template argument for comparison: no spaces, integer literals without their suffix or
/// cast (`256u`, `(unsigned int)256` and `256` are equal), types as `normalize_type`.
pub fn normalize_template_arg(a: &str) -> String {
    let mut t = a.trim();
    if t.starts_with('(') {
        if let Some(close) = t.find(')') {
            let after = t[close + 1..].trim();
            if after.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                t = after;
            }
        }
    }
    let digits = t.trim_end_matches(['u', 'U', 'l', 'L']);
    let body = digits.strip_prefix('-').unwrap_or(digits);
    if !body.is_empty() && body.chars().all(|c| c.is_ascii_digit()) {
        return digits.to_string();
    }
    normalize_type(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_template_and_overload_names() {
        let k = KernelName::parse("layernorm_forward_kernel3").unwrap();
        assert_eq!(
            (k.base.as_str(), k.template_args.clone()),
            ("layernorm_forward_kernel3", None)
        );
        assert_eq!(k.expression(), "&layernorm_forward_kernel3");
        let t = KernelName::parse(" softmax_kernel<256, float> ").unwrap();
        assert_eq!(t.template_args, Some(vec!["256".into(), "float".into()]));
        assert_eq!(t.expression(), "&softmax_kernel<256, float>");
        let o = KernelName::parse("ns::scale(float*, int)").unwrap();
        assert_eq!(o.scope, ["ns"]);
        assert_eq!(o.expression(), "(void(*)(float*, int))ns::scale");
        assert_eq!(
            KernelName::parse("f(void)").unwrap().param_types,
            Some(vec![])
        );
        for bad in ["", "3d", "k<int", "k(int", "k<int> x", "a b"] {
            assert!(KernelName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn splits_demangled_text() {
        let d = Demangled::from_text(
            "_Z",
            "void ns::softmax<256, float>(float*, float const*, int)",
        );
        assert_eq!(d.scope, ["ns"]);
        assert_eq!(d.base, "softmax");
        assert_eq!(d.template_args, Some(vec!["256".into(), "float".into()]));
        assert_eq!(d.param_types.as_ref().unwrap()[1], "float const*");
        let c = Demangled::from_text("plain", "plain");
        assert_eq!((c.base.as_str(), c.param_types.is_none()), ("plain", true));
    }

    #[test]
    fn demangles_itanium_symbols() {
        let d = Demangled::new("_Z25layernorm_forward_kernel1PfS_S_PKfS1_S1_ii");
        assert_eq!(d.base, "layernorm_forward_kernel1");
        assert_eq!(d.param_types.as_ref().unwrap().len(), 8);
        let t = Demangled::new("_Z14softmax_kernelILi256EfEvPT0_PKS0_i");
        assert_eq!(t.base, "softmax_kernel");
        let args = t.template_args.clone().unwrap();
        assert_eq!(normalize_template_arg(&args[0]), "256", "{}", t.text);
        assert_eq!(args[1], "float");
        assert!(KernelName::parse("softmax_kernel<256, float>")
            .unwrap()
            .matches(&t));
        assert!(!KernelName::parse("softmax_kernel<128, float>")
            .unwrap()
            .matches(&t));
        assert!(!KernelName::parse("softmax_kernel").unwrap().matches(&t));
    }

    #[test]
    fn matches_by_scope_and_parameter_types() {
        let d = Demangled::from_text("_Z", "ns::scale(float*, int)");
        assert!(KernelName::parse("scale").unwrap().matches(&d));
        assert!(KernelName::parse("ns::scale").unwrap().matches(&d));
        assert!(!KernelName::parse("other::scale").unwrap().matches(&d));
        assert!(KernelName::parse("scale(float *, int)")
            .unwrap()
            .matches(&d));
        assert!(!KernelName::parse("scale(double*, int)")
            .unwrap()
            .matches(&d));
        let c = Demangled::from_text("k", "k");
        assert!(KernelName::parse("k(float*)").unwrap().matches(&c));
    }

    #[test]
    fn normalizes_types_and_literals() {
        assert_eq!(normalize_type("const float* __restrict__"), "float*");
        assert_eq!(normalize_type("float const *"), "float*");
        assert_eq!(normalize_type("unsigned"), "unsignedint");
        assert_eq!(normalize_type("unsigned int"), "unsignedint");
        assert_eq!(normalize_type("unsigned long"), "unsignedlong");
        assert_eq!(normalize_template_arg("256u"), "256");
        assert_eq!(normalize_template_arg("(unsigned int)256"), "256");
        assert_eq!(normalize_template_arg("-3"), "-3");
        assert_eq!(normalize_template_arg("true"), "true");
    }
}
