//! The built-in matmul convention: kernels run with no manifest, shapes inferred from signatures.
//!
//! A kernel follows it when its parameters are three `float*` (A, B, C) then `int`s named from
//! M, N and K, e.g. `matmul(const float* A, const float* B, float* C, int M, int N, int K)`.
//! Then: A is M×K, B is K×N (inputs, uniform(-1, 1)), C is M×N (output, poisoned), all
//! row-major; thread x walks the columns of C and thread y its rows, so the grid is
//! (ceil_div(N, block_x), ceil_div(M, block_y)); the block is 16x16 unless --block says
//! otherwise; FLOPs are 2·M·N·K; the first --kernel is the reference, itself checked against a
//! float64 CPU matmul. M and K default to N (square). Anything else needs a manifest.

use super::data::{Dtype, Init};
use super::expr::Expr;
use super::manifest::{Arg, Buffer, CpuReference, KernelSpec, Manifest, Role};
use super::source::Source;
use anyhow::{bail, Result};
use std::collections::BTreeMap;

const DIMS: [&str; 3] = ["M", "N", "K"];

/// Builds the manifest the convention implies for `kernels` of `source`.
pub fn matmul_manifest(
    source: &Source,
    kernels: &[String],
    params: &[(String, Vec<i64>)],
) -> Result<Manifest> {
    if kernels.is_empty() {
        bail!(
            "name at least one --kernel (kernels in {}: {})",
            source.path,
            names(source)
        );
    }
    let mut values: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (name, v) in params {
        if !DIMS.contains(&name.as_str()) {
            bail!(
                "--param {name}: without a manifest, kernels follow the built-in matmul \
                 convention, whose parameters are M, N and K. Write a manifest (see \
                 examples/matmul_kernels.toml) for other parameters"
            );
        }
        values.insert(name.clone(), v.clone());
    }
    if !values.contains_key("N") {
        bail!("--param N=... is required (M and K default to N: square matrices)");
    }
    // M and K not given: equal to N at every point (square), not swept independently.
    let aliases: BTreeMap<String, String> = ["M", "K"]
        .iter()
        .filter(|d| !values.contains_key(**d))
        .map(|d| (d.to_string(), "N".to_string()))
        .collect();

    let mut specs = Vec::new();
    for name in kernels {
        let decl = source.kernel(name)?;
        let ptrs: Vec<_> = decl.params.iter().take_while(|p| p.is_pointer()).collect();
        let ints = &decl.params[ptrs.len()..];
        let fits = ptrs.len() == 3
            && ptrs.iter().all(|p| p.base_type() == "float")
            && !ints.is_empty()
            && ints.iter().all(|p| {
                matches!(p.base_type().as_str(), "int" | "unsigned" | "unsigned int")
                    && DIMS.contains(&p.name.as_str())
            });
        if !fits {
            bail!(
                "kernel `{}` ({}) does not follow the built-in matmul convention \
                 (float* A, float* B, float* C, then int parameters named M, N, K): its \
                 signature is {}. Describe it in a manifest (--manifest, see \
                 examples/matmul_kernels.toml)",
                name,
                decl.location(),
                decl.signature()
            );
        }
        let mut args = vec![Arg::Buffer(0), Arg::Buffer(1), Arg::Buffer(2)];
        args.extend(ints.iter().map(|p| Arg::Param(p.name.clone())));
        specs.push(KernelSpec {
            name: name.clone(),
            blocks: vec![[16, 16, 1]],
            grid: [
                Expr::parse("ceil_div(N, block_x)")?,
                Expr::parse("ceil_div(M, block_y)")?,
                Expr::int(1),
            ],
            shared_bytes: Expr::int(0),
            args,
        });
    }
    let buffer = |name: &str, len: &str, role: Role| -> Result<Buffer> {
        Ok(Buffer {
            name: name.into(),
            dtype: Dtype::F32,
            len: Expr::parse(len)?,
            role,
            init: if role == Role::Output {
                Init::Poison
            } else {
                Init::Uniform(-1.0, 1.0)
            },
            tolerance: super::data::default_tolerance(Dtype::F32),
            optional: false,
        })
    };
    Ok(Manifest {
        origin: "built-in matmul convention".into(),
        source: source.path.clone().into(),
        include: source.include_dirs.clone(),
        params: values,
        aliases,
        reference: kernels[0].clone(),
        kernels: specs,
        cpu_reference: Some(CpuReference::Matmul),
        buffers: vec![
            buffer("A", "M * K", Role::Input)?,
            buffer("B", "K * N", Role::Input)?,
            buffer("C", "M * N", Role::Output)?,
        ],
        scalars: BTreeMap::new(),
        flops: Some(Expr::parse("2 * M * N * K")?),
        bytes: None,
    })
}

fn names(s: &Source) -> String {
    s.kernels
        .iter()
        .map(|k| k.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
extern "C" __global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {}
extern "C" __global__ void sq(const float* A, const float* B, float* C, int N) {}
extern "C" __global__ void other(const float* x, float* y, int n) {}
"#;

    fn p(list: &[(&str, &[i64])]) -> Vec<(String, Vec<i64>)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_vec()))
            .collect()
    }

    #[test]
    fn infers_buffers_grid_and_defaults_square() {
        let s = Source::from_text("m.cu", SRC.into());
        let m = matmul_manifest(&s, &["mm".into(), "sq".into()], &p(&[("N", &[64, 128])])).unwrap();
        assert_eq!(m.params.keys().collect::<Vec<_>>(), ["N"]);
        assert_eq!(m.aliases["M"], "N");
        assert_eq!(m.aliases["K"], "N");
        assert_eq!(m.reference, "mm");
        assert_eq!(m.kernels[1].args.len(), 4);
        assert_eq!(m.kernels[1].args[3], Arg::Param("N".into()));
        assert_eq!(m.buffers[2].len.text(), "M * N");
        assert_eq!(m.kernels[0].grid[0].text(), "ceil_div(N, block_x)");
    }

    #[test]
    fn other_signatures_and_params_need_a_manifest() {
        let s = Source::from_text("m.cu", SRC.into());
        let e = matmul_manifest(&s, &["other".into()], &p(&[("N", &[64])])).unwrap_err();
        assert!(
            e.to_string()
                .contains("does not follow the built-in matmul convention"),
            "{e}"
        );
        let e = matmul_manifest(&s, &["mm".into()], &p(&[("N", &[64]), ("B", &[2])])).unwrap_err();
        assert!(e.to_string().contains("--param B"), "{e}");
        let e = matmul_manifest(&s, &["mm".into()], &p(&[("M", &[64])])).unwrap_err();
        assert!(e.to_string().contains("--param N"), "{e}");
        let e = matmul_manifest(&s, &["nope".into()], &p(&[("N", &[64])])).unwrap_err();
        assert!(
            e.to_string().contains("`nope` is not defined in m.cu"),
            "{e}"
        );
    }
}
