//! A `.cu` file read from disk with the local headers it includes, and the lookup of a kernel
//! named as written (`k`, `ns::k`, `softmax<256, float>`, `scale(float*, int)`).

use super::kernel_name::{normalize_type, KernelName};
use super::scan::{local_includes, scan, strip_comments, KernelDecl, KernelParam};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

pub use super::scan::TemplateParam;

/// Local headers followed from the source at most this deep (a guard against include cycles).
const MAX_INCLUDE_DEPTH: usize = 16;

/// A source file read from disk, with its kernels and those of its local headers.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: String,
    pub text: String,
    /// Kernels of the file, then of each local header, in include order.
    pub kernels: Vec<KernelDecl>,
    /// Local headers (`#include "x"`) found in the source's folder or an include folder.
    pub headers: Vec<PathBuf>,
    /// Folders searched for `#include` besides the source's own (--include, `include`).
    pub include_dirs: Vec<PathBuf>,
}

impl Source {
    /// Reads and scans `path` and the local headers it includes from its own folder.
    pub fn read(path: &Path) -> Result<Source> {
        Source::read_with(path, &[])
    }

    /// Reads and scans `path`; `#include "x"` is looked up in the including file's folder, then
    /// in `include_dirs`, and the headers found are scanned too.
    pub fn read_with(path: &Path, include_dirs: &[PathBuf]) -> Result<Source> {
        let text = crate::input::read_text(path, "kernel source", crate::input::SOURCE_MAX_BYTES)
            .context("check the path given to --source or the manifest's `source`")?;
        let mut s = Source::from_text(&path.display().to_string(), text);
        s.include_dirs = include_dirs.to_vec();
        let mut queue: Vec<(PathBuf, String, usize)> =
            vec![(path.to_path_buf(), s.text.clone(), 0)];
        while let Some((file, text, depth)) = queue.pop() {
            if depth >= MAX_INCLUDE_DEPTH {
                continue;
            }
            let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
            for inc in local_includes(&strip_comments(&text)) {
                let found = std::iter::once(&dir)
                    .chain(include_dirs)
                    .map(|d| d.join(&inc))
                    .find(|p| p.is_file());
                let Some(h) = found else { continue };
                if h == path || s.headers.contains(&h) {
                    continue;
                }
                let htext = crate::input::read_text(&h, "header", crate::input::SOURCE_MAX_BYTES)
                    .with_context(|| format!("included by {}", file.display()))?;
                s.kernels.extend(scan(&htext, &h.display().to_string()));
                s.headers.push(h.clone());
                queue.push((h, htext, depth + 1));
            }
        }
        Ok(s)
    }

    pub fn from_text(path: &str, text: String) -> Source {
        let kernels = scan(&text, path);
        Source {
            path: path.to_string(),
            text,
            kernels,
            headers: Vec::new(),
            include_dirs: Vec::new(),
        }
    }

    /// Every kernel's signature and place, one per line, for messages.
    pub fn listing(&self) -> String {
        if self.kernels.is_empty() {
            return "  (no __global__ function definitions)".into();
        }
        self.kernels
            .iter()
            .map(|k| format!("  {}  ({})", k.signature(), k.location()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn files(&self) -> String {
        if self.headers.is_empty() {
            self.path.clone()
        } else {
            let h: Vec<String> = self
                .headers
                .iter()
                .map(|h| h.display().to_string())
                .collect();
            format!("{} (and its local headers {})", self.path, h.join(", "))
        }
    }

    /// Each kernel name parsed, with the namespaces of its definition added when the name
    /// leaves them out (NVRTC's name expressions and nvcc's instantiation file need them).
    pub fn qualified_names(&self, names: &[String]) -> Result<Vec<KernelName>> {
        names
            .iter()
            .map(|n| {
                let mut k = KernelName::parse(n)?;
                let decl = self.kernel(n)?;
                if k.scope.is_empty() {
                    k.scope = decl.scope;
                }
                Ok(k)
            })
            .collect()
    }

    /// The kernel `name` as written: one instance, its template parameters replaced by the
    /// name's arguments; its `name` field is the text as written. A name matching no kernel
    /// lists the kernels found; a name matching several overloads lists each candidate.
    pub fn kernel(&self, name: &str) -> Result<KernelDecl> {
        let want = KernelName::parse(name)?;
        let candidates: Vec<&KernelDecl> = self
            .kernels
            .iter()
            .filter(|k| k.name == want.base && k.scope.ends_with(&want.scope))
            .filter(|k| match &want.param_types {
                Some(types) => {
                    types.len() == k.params.len()
                        && types.iter().zip(&k.params).all(|(t, p)| {
                            k.template.is_some() || normalize_type(t) == normalize_type(&p.ty)
                        })
                }
                None => true,
            })
            .collect();
        let decl = match candidates.as_slice() {
            [] => bail!(
                "kernel `{name}` is not defined in {}: the __global__ functions there are\n{}",
                self.files(),
                self.listing()
            ),
            [one] => *one,
            many => bail!(
                "kernel `{name}` is ambiguous in {}: it names {} overloads\n{}\nname one with its \
                 parameter types, e.g. `{}({})`",
                self.files(),
                many.len(),
                many.iter()
                    .map(|k| format!("  {}  ({})", k.signature(), k.location()))
                    .collect::<Vec<_>>()
                    .join("\n"),
                want.qualified(),
                many[0]
                    .params
                    .iter()
                    .map(|p| p.ty.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        instantiate(decl, &want)
    }
}

/// The instance `want` names of `decl`: template arguments checked and substituted into the
/// parameter types.
fn instantiate(decl: &KernelDecl, want: &KernelName) -> Result<KernelDecl> {
    let mut k = decl.clone();
    k.name = want.text.clone();
    match (&decl.template, &want.template_args) {
        (None, None) => {}
        (None, Some(_)) => bail!(
            "kernel `{}` ({}) is not a template, so `{}` names no instance of it: drop the `<...>`",
            want.base,
            decl.location(),
            want.text
        ),
        (Some(_), None) => bail!(
            "kernel `{}` ({}) is a template: name an instance with its arguments, e.g. `{}<...>` \
             for {}",
            want.base,
            decl.location(),
            want.qualified(),
            decl.signature()
        ),
        (Some(head), Some(args)) => {
            if args.len() > head.len() || head[args.len()..].iter().any(|p| p.default.is_none()) {
                bail!(
                    "`{}` gives {} template arguments but {} ({}) needs {} to {}",
                    want.text,
                    args.len(),
                    decl.signature(),
                    decl.location(),
                    head.iter().filter(|p| p.default.is_none()).count(),
                    head.len()
                );
            }
            let values: Vec<(&str, String)> = head
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let v = args
                        .get(i)
                        .cloned()
                        .or_else(|| p.default.clone())
                        .unwrap_or_default();
                    (p.name.as_str(), v)
                })
                .collect();
            k.params = decl
                .params
                .iter()
                .map(|p| KernelParam {
                    ty: substitute(&p.ty, &values),
                    name: p.name.clone(),
                })
                .collect();
            k.template = None;
        }
    }
    Ok(k)
}

/// Replaces whole identifiers of `ty` that are template parameter names.
fn substitute(ty: &str, values: &[(&str, String)]) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match values.iter().find(|(n, _)| *n == word.as_str()) {
            Some((_, v)) => out.push_str(v),
            None => out.push_str(word),
        }
        word.clear();
    };
    for ch in ty.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
extern "C" __global__ void k_one(const float* __restrict__ A, float *B, int M, int N) { }
template <int B, typename T = float> __global__ void k_templ(T* x, const T* y, int n) {}
__global__ void over(float* x, int n) {}
__global__ void over(double* x, int n) {}
__global__ void k_cpp(float* x) {}
namespace outer { __global__ void ns_k(float* x) {} }
"#;

    fn src() -> Source {
        Source::from_text("x.cu", SRC.to_string())
    }

    #[test]
    fn an_endless_source_is_refused_after_the_size_limit() {
        let e = format!("{:#}", Source::read(Path::new("/dev/zero")).unwrap_err());
        assert!(e.contains("/dev/zero") && e.contains("larger than"), "{e}");
        assert!(e.contains("manifest's `source`"), "{e}");
    }

    #[test]
    fn cpp_names_and_template_instances_resolve() {
        let s = src();
        assert_eq!(s.kernel("k_cpp").unwrap().params.len(), 1);
        assert_eq!(s.kernel("k_one").unwrap().params.len(), 4);
        let t = s.kernel("k_templ<256, double>").unwrap();
        assert_eq!(t.name, "k_templ<256, double>");
        assert_eq!(t.params[1].ty, "const double*");
        assert_eq!(
            t.signature(),
            "k_templ<256, double>(double* x, const double* y, int n)"
        );
        let q = s.qualified_names(&["ns_k".into()]).unwrap();
        assert_eq!(q[0].expression(), "&outer::ns_k");
        let d = s.kernel("k_templ<128>").unwrap();
        assert_eq!(d.params[0].ty, "float*", "default template argument");
        let o = s.kernel("over(double*, int)").unwrap();
        assert_eq!(o.params[0].ty, "double*");
    }

    #[test]
    fn bad_names_are_clear_errors() {
        let s = src();
        let e = s.kernel("k_three").unwrap_err().to_string();
        assert!(e.contains("`k_three` is not defined in x.cu"), "{e}");
        assert!(
            e.contains("k_one(const float* __restrict__ A, float * B, int M, int N)  (x.cu:2)")
                || e.contains("k_one(const float* __restrict__ A, float *B"),
            "{e}"
        );
        assert!(
            e.contains("template <int B, typename T = float> k_templ("),
            "{e}"
        );
        let e = s.kernel("over").unwrap_err().to_string();
        assert!(
            e.contains("ambiguous") && e.contains("over(float* x, int n)"),
            "{e}"
        );
        assert!(e.contains("over(double* x, int n)  (x.cu:5)"), "{e}");
        assert!(e.contains("over(float*, int)"), "{e}");
        let e = s.kernel("k_templ").unwrap_err().to_string();
        assert!(e.contains("is a template"), "{e}");
        let e = s.kernel("k_cpp<1>").unwrap_err().to_string();
        assert!(e.contains("not a template"), "{e}");
        let e = s.kernel("k_templ<1, float, 3>").unwrap_err().to_string();
        assert!(e.contains("gives 3 template arguments"), "{e}");
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = Source::read(Path::new("/no/such/kernels.cu")).unwrap_err();
        assert!(format!("{e:#}").contains("/no/such/kernels.cu"));
    }
}
