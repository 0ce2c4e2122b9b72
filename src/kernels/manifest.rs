//! The kernel manifest (TOML): buffers, scalars, launch shape and work counts of user kernels.
//!
//! `examples/matmul_kernels.toml` is the annotated example; `docs/notes/kernels.md` the reference.
//! Parsing checks every name and expression up front, so a typo fails before any GPU work.

use super::data::{Dtype, Init};
use super::expr::Expr;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Names every launch expression may read besides the parameters.
pub const BLOCK_VARS: [&str; 4] = ["block_x", "block_y", "block_z", "threads"];

/// A number or an expression in the TOML file.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ExprField {
    Int(i64),
    Text(String),
}

impl ExprField {
    fn parse(&self) -> Result<Expr> {
        match self {
            ExprField::Int(v) => Ok(Expr::int(*v)),
            ExprField::Text(t) => Expr::parse(t),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(i64),
    Many(Vec<i64>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum BlockEntry {
    One(u32),
    Dims(Vec<u32>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    source: Option<String>,
    include: Option<Vec<String>>,
    reference: Option<String>,
    cpu_reference: Option<CpuReference>,
    tolerance: Option<f64>,
    #[serde(default)]
    params: BTreeMap<String, OneOrMany>,
    block: Option<Vec<BlockEntry>>,
    grid: Option<Vec<ExprField>>,
    shared_bytes: Option<ExprField>,
    args: Option<Vec<String>>,
    flops: Option<ExprField>,
    bytes: Option<ExprField>,
    #[serde(default, rename = "buffer")]
    buffers: Vec<BufferFile>,
    #[serde(default)]
    scalars: BTreeMap<String, ScalarFile>,
    #[serde(default, rename = "kernel")]
    kernels: Vec<KernelFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BufferFile {
    name: String,
    #[serde(rename = "type")]
    dtype: Dtype,
    len: ExprField,
    role: Role,
    init: Option<String>,
    tolerance: Option<f64>,
    optional: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScalarFile {
    #[serde(rename = "type")]
    dtype: ScalarType,
    value: ScalarValueFile,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ScalarValueFile {
    Int(i64),
    Float(f64),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelFile {
    name: String,
    block: Option<Vec<BlockEntry>>,
    grid: Option<Vec<ExprField>>,
    shared_bytes: Option<ExprField>,
    args: Option<Vec<String>>,
}

/// What a buffer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read only: random data, uploaded once per parameter set.
    Input,
    /// Written: poisoned before each correctness launch, compared with the reference.
    Output,
    /// Read and written: fresh random data before each correctness launch, compared after.
    Inout,
}

/// A built-in float64 CPU reference that checks the reference kernel itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuReference {
    /// C[M×N] = A[M×K] · B[K×N], row-major; A, B = the first two input buffers in argument
    /// order, C = the first output; needs parameters M, N and K.
    Matmul,
}

/// Types a scalar kernel argument may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
}

/// A scalar's value: an integer expression of the parameters, or a float constant.
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    Expr(Expr),
    Float(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub dtype: ScalarType,
    pub value: ScalarValue,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    pub name: String,
    pub dtype: Dtype,
    /// Elements, as an expression of the parameters.
    pub len: Expr,
    pub role: Role,
    pub init: Init,
    pub tolerance: f64,
    /// An output a kernel may leave unwritten (or get as `null`): then it is not compared.
    pub optional: bool,
}

/// One kernel argument, resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// Index into `Manifest::buffers`.
    Buffer(usize),
    /// A name in `Manifest::scalars`.
    Scalar(String),
    /// A sweep parameter passed as a 32-bit int.
    Param(String),
    /// A null pointer (`"null"` in `args`), for a pointer the kernel may be given as nullptr.
    Null,
}

/// One kernel with its launch shape.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSpec {
    pub name: String,
    /// Block shapes to sweep, each (x, y, z).
    pub blocks: Vec<[u32; 3]>,
    /// Grid (x, y, z) as expressions of the parameters and the block variables.
    pub grid: [Expr; 3],
    pub shared_bytes: Expr,
    pub args: Vec<Arg>,
}

/// A validated manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Where it came from: "manifest examples/x.toml" or "built-in matmul convention".
    pub origin: String,
    pub source: PathBuf,
    /// Folders searched for `#include` after the source's own (`include`, relative to the
    /// manifest).
    pub include: Vec<PathBuf>,
    /// Parameter values to sweep, in name order.
    pub params: BTreeMap<String, Vec<i64>>,
    /// Parameters that take another's value at every point (the convention's square default:
    /// M -> N). Empty for manifest files.
    pub aliases: BTreeMap<String, String>,
    pub kernels: Vec<KernelSpec>,
    pub reference: String,
    pub cpu_reference: Option<CpuReference>,
    pub buffers: Vec<Buffer>,
    pub scalars: BTreeMap<String, Scalar>,
    pub flops: Option<Expr>,
    /// Bytes of device memory traffic; None means "each input read once, each output written
    /// once" (inout counted twice), the floor for most kernels.
    pub bytes: Option<Expr>,
}

fn parse_blocks(list: &[BlockEntry], at: &str) -> Result<Vec<[u32; 3]>> {
    if list.is_empty() {
        bail!("{at}: `block` is an empty list; give at least one block shape");
    }
    list.iter()
        .map(|b| {
            let dims: Vec<u32> = match b {
                BlockEntry::One(x) => vec![*x],
                BlockEntry::Dims(d) => d.clone(),
            };
            parse_block_dims(&dims).with_context(|| format!("{at}: block {dims:?}"))
        })
        .collect()
}

/// Checks 1 to 3 positive dimensions with at most 1024 threads in all.
pub fn parse_block_dims(dims: &[u32]) -> Result<[u32; 3]> {
    if dims.is_empty() || dims.len() > 3 || dims.contains(&0) {
        bail!("a block shape has 1 to 3 positive dimensions");
    }
    let mut b = [1u32; 3];
    b[..dims.len()].copy_from_slice(dims);
    let threads = b.iter().map(|d| *d as u64).product::<u64>();
    if threads > 1024 {
        bail!("{threads} threads per block: CUDA allows at most 1024");
    }
    Ok(b)
}

/// Parses a `--block` value: "16x16", "256", "32x8x1".
pub fn parse_block_text(text: &str) -> Result<[u32; 3]> {
    let dims: Vec<u32> = text
        .split('x')
        .map(|d| d.trim().parse::<u32>())
        .collect::<std::result::Result<_, _>>()
        .with_context(|| format!("block `{text}`: write it as X, XxY or XxYxZ, e.g. 16x16"))?;
    parse_block_dims(&dims).with_context(|| format!("block `{text}`"))
}

/// "16x16" for (16, 16, 1), "256" for (256, 1, 1).
pub fn block_label(b: [u32; 3]) -> String {
    match b {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}x{y}"),
        [x, y, z] => format!("{x}x{y}x{z}"),
    }
}

fn parse_grid(list: &[ExprField], at: &str) -> Result<[Expr; 3]> {
    if list.is_empty() || list.len() > 3 {
        bail!("{at}: `grid` has 1 to 3 entries (x, y, z)");
    }
    let mut g = [Expr::int(1), Expr::int(1), Expr::int(1)];
    for (i, e) in list.iter().enumerate() {
        g[i] = e.parse().with_context(|| format!("{at}: grid[{i}]"))?;
    }
    Ok(g)
}

fn check_vars(e: &Expr, allowed: &BTreeSet<String>, what: &str) -> Result<()> {
    for v in e.variables() {
        if !allowed.contains(&v) {
            bail!(
                "{what} `{e}` uses `{v}`, which is not defined here (it may use: {})",
                allowed.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(())
}

impl Manifest {
    /// Reads and validates a manifest file.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = crate::input::read_text(path, "manifest", crate::input::SOURCE_MAX_BYTES)
            .context("check the --manifest path")?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Manifest::parse(&text, dir, &format!("manifest {}", path.display()))
    }

    /// Parses manifest text; a relative `source` is taken relative to `dir`.
    pub fn parse(text: &str, dir: &Path, origin: &str) -> Result<Manifest> {
        let f: ManifestFile = toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        Manifest::validate(f, dir, origin).with_context(|| format!("{origin} is not valid"))
    }

    fn validate(f: ManifestFile, dir: &Path, origin: &str) -> Result<Manifest> {
        let source = match &f.source {
            Some(s) => dir.join(s),
            None => PathBuf::new(),
        };
        let include = f
            .include
            .unwrap_or_default()
            .iter()
            .map(|d| dir.join(d))
            .collect();
        let mut params = BTreeMap::new();
        for (name, v) in f.params {
            if BLOCK_VARS.contains(&name.as_str()) {
                bail!("parameter `{name}` clashes with a built-in launch variable {BLOCK_VARS:?}");
            }
            let values = match v {
                OneOrMany::One(x) => vec![x],
                OneOrMany::Many(xs) => xs,
            };
            if values.is_empty() {
                bail!("parameter `{name}` has no values");
            }
            params.insert(name, values);
        }
        let param_names: BTreeSet<String> = params.keys().cloned().collect();
        let mut launch_names = param_names.clone();
        launch_names.extend(BLOCK_VARS.iter().map(|s| s.to_string()));

        let mut buffers = Vec::new();
        for b in f.buffers {
            if buffers.iter().any(|x: &Buffer| x.name == b.name) {
                bail!("buffer `{}` is declared twice", b.name);
            }
            if b.dtype == Dtype::Tf32 {
                bail!(
                    "buffer `{}`: dtype tf32 is a GEMM compute mode, not a storage type: use f32",
                    b.name
                );
            }
            let len = b
                .len
                .parse()
                .with_context(|| format!("buffer `{}` len", b.name))?;
            check_vars(&len, &param_names, &format!("buffer `{}` len", b.name))?;
            let init = match (&b.init, b.role) {
                (Some(t), _) => Init::parse(t).with_context(|| format!("buffer `{}`", b.name))?,
                (None, Role::Output) => Init::Poison,
                (None, _) if b.dtype.is_float() => Init::Uniform(-1.0, 1.0),
                (None, _) => Init::RandInt(0, 16),
            };
            if b.role == Role::Output && init != Init::Poison {
                bail!(
                    "buffer `{}` is an output: outputs are always poisoned (NaN) before each \
                     check; drop its `init`, or make it role = \"inout\"",
                    b.name
                );
            }
            if b.role != Role::Output && init == Init::Poison {
                bail!(
                    "buffer `{}`: only outputs are poisoned; give inputs random data",
                    b.name
                );
            }
            let tolerance = b
                .tolerance
                .or(f.tolerance)
                .unwrap_or(super::data::default_tolerance(b.dtype));
            if !(tolerance >= 0.0 && tolerance.is_finite()) {
                bail!(
                    "buffer `{}`: tolerance must be a finite number >= 0",
                    b.name
                );
            }
            let optional = b.optional.unwrap_or(false);
            if optional && b.role != Role::Output {
                bail!(
                    "buffer `{}`: only outputs can be optional (a kernel may leave an output \
                     unwritten); drop `optional` or make it role = \"output\"",
                    b.name
                );
            }
            buffers.push(Buffer {
                name: b.name,
                dtype: b.dtype,
                len,
                role: b.role,
                init,
                tolerance,
                optional,
            });
        }
        if !buffers.iter().any(|b| b.role != Role::Input) {
            bail!("no buffer has role \"output\" or \"inout\": correctness cannot be checked");
        }

        let mut scalars = BTreeMap::new();
        for (name, s) in f.scalars {
            if params.contains_key(&name) || buffers.iter().any(|b| b.name == name) {
                bail!("scalar `{name}` has the name of a parameter or buffer");
            }
            let value = match (&s.value, s.dtype) {
                (ScalarValueFile::Float(v), ScalarType::F32 | ScalarType::F64) => {
                    ScalarValue::Float(*v)
                }
                (ScalarValueFile::Float(_), _) => {
                    bail!("scalar `{name}` is an integer type but its value is a float")
                }
                (ScalarValueFile::Int(v), _) => ScalarValue::Expr(Expr::int(*v)),
                (ScalarValueFile::Text(t), _) => {
                    let e = Expr::parse(t).with_context(|| format!("scalar `{name}`"))?;
                    check_vars(&e, &launch_names, &format!("scalar `{name}`"))?;
                    ScalarValue::Expr(e)
                }
            };
            scalars.insert(
                name,
                Scalar {
                    dtype: s.dtype,
                    value,
                },
            );
        }

        let resolve_args = |list: &[String], at: &str| -> Result<Vec<Arg>> {
            list.iter()
                .map(|a| {
                    if a == "null" || a == "nullptr" {
                        Ok(Arg::Null)
                    } else if let Some(i) = buffers.iter().position(|b| &b.name == a) {
                        Ok(Arg::Buffer(i))
                    } else if scalars.contains_key(a) {
                        Ok(Arg::Scalar(a.clone()))
                    } else if params.contains_key(a) {
                        Ok(Arg::Param(a.clone()))
                    } else {
                        bail!(
                            "{at}: argument `{a}` is not a buffer, scalar or parameter of this \
                             manifest (or `null` for a null pointer)"
                        )
                    }
                })
                .collect()
        };

        if f.kernels.is_empty() {
            bail!("no [[kernel]] tables: list the kernels to run, each with `name = \"...\"`");
        }
        let mut kernels = Vec::new();
        for k in &f.kernels {
            let at = format!("[[kernel]] `{}`", k.name);
            if kernels.iter().any(|x: &KernelSpec| x.name == k.name) {
                bail!("{at} is listed twice");
            }
            let blocks = match (&k.block, &f.block) {
                (Some(b), _) | (None, Some(b)) => parse_blocks(b, &at)?,
                (None, None) => bail!("{at}: no `block`; set it at the top or in the kernel table"),
            };
            let grid = match (&k.grid, &f.grid) {
                (Some(g), _) | (None, Some(g)) => parse_grid(g, &at)?,
                (None, None) => bail!("{at}: no `grid`; set it at the top or in the kernel table"),
            };
            for (i, g) in grid.iter().enumerate() {
                check_vars(g, &launch_names, &format!("{at}: grid[{i}]"))?;
            }
            let shared_bytes = match (&k.shared_bytes, &f.shared_bytes) {
                (Some(s), _) | (None, Some(s)) => s.parse().context("shared_bytes")?,
                (None, None) => Expr::int(0),
            };
            check_vars(&shared_bytes, &launch_names, &format!("{at}: shared_bytes"))?;
            let args = match (&k.args, &f.args) {
                (Some(a), _) | (None, Some(a)) => resolve_args(a, &at)?,
                (None, None) => bail!("{at}: no `args`; list the kernel's arguments in order"),
            };
            kernels.push(KernelSpec {
                name: k.name.clone(),
                blocks,
                grid,
                shared_bytes,
                args,
            });
        }
        let reference = f.reference.unwrap_or_else(|| kernels[0].name.clone());
        if !kernels.iter().any(|k| k.name == reference) {
            bail!("reference kernel `{reference}` is not among the [[kernel]] tables");
        }
        let parse_count = |e: &Option<ExprField>, what: &str| -> Result<Option<Expr>> {
            e.as_ref()
                .map(|e| {
                    let x = e.parse().context(what.to_string())?;
                    check_vars(&x, &param_names, what)?;
                    Ok(x)
                })
                .transpose()
        };
        let flops = parse_count(&f.flops, "flops")?;
        let bytes = parse_count(&f.bytes, "bytes")?;
        let m = Manifest {
            origin: origin.to_string(),
            source,
            include,
            params,
            aliases: BTreeMap::new(),
            kernels,
            reference,
            cpu_reference: f.cpu_reference,
            buffers,
            scalars,
            flops,
            bytes,
        };
        m.check_cpu_reference()?;
        Ok(m)
    }

    /// The reference kernel's spec.
    pub fn reference_kernel(&self) -> &KernelSpec {
        self.kernels
            .iter()
            .find(|k| k.name == self.reference)
            .expect("validated")
    }

    fn check_cpu_reference(&self) -> Result<()> {
        if self.cpu_reference == Some(CpuReference::Matmul) {
            for p in ["M", "N", "K"] {
                if !self.params.contains_key(p) && !self.aliases.contains_key(p) {
                    bail!(
                        "cpu_reference = \"matmul\" needs parameters M, N and K; `{p}` is missing"
                    );
                }
            }
            let (ins, outs) = self.matmul_buffers();
            if ins.len() < 2 || outs.is_empty() {
                bail!(
                    "cpu_reference = \"matmul\" needs two input buffers (A, B) and one output (C) \
                     among the reference kernel's arguments"
                );
            }
        }
        Ok(())
    }

    /// Input and output buffer indices of the reference kernel, in argument order.
    pub fn matmul_buffers(&self) -> (Vec<usize>, Vec<usize>) {
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        for a in &self.reference_kernel().args {
            if let Arg::Buffer(i) = a {
                match self.buffers[*i].role {
                    Role::Input => ins.push(*i),
                    Role::Output => outs.push(*i),
                    Role::Inout => {}
                }
            }
        }
        (ins, outs)
    }

    /// Replaces parameter lists with `--param` values; a name the manifest lacks is an error.
    pub fn override_params(&mut self, cli: &[(String, Vec<i64>)]) -> Result<()> {
        for (name, values) in cli {
            match self.params.get_mut(name) {
                Some(v) => v.clone_from(values),
                None => bail!(
                    "--param {name}: the {} does not define a parameter `{name}` (it defines: {})",
                    self.origin,
                    self.params.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            }
        }
        Ok(())
    }

    /// Replaces every kernel's block list with `--block` values.
    pub fn override_blocks(&mut self, blocks: &[[u32; 3]]) {
        if !blocks.is_empty() {
            for k in &mut self.kernels {
                k.blocks = blocks.to_vec();
            }
        }
    }

    /// Keeps only the kernels named by `--kernel` (and the reference, which checks them).
    pub fn select_kernels(&mut self, names: &[String]) -> Result<()> {
        if names.is_empty() {
            return Ok(());
        }
        for n in names {
            if !self.kernels.iter().any(|k| &k.name == n) {
                bail!(
                    "--kernel {n}: the {} has no [[kernel]] `{n}` (it lists: {})",
                    self.origin,
                    self.kernels
                        .iter()
                        .map(|k| k.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        let reference = self.reference.clone();
        self.kernels
            .retain(|k| k.name == reference || names.contains(&k.name));
        Ok(())
    }
}

/// Parses `--param N=128,256,512` into ("N", [128, 256, 512]).
pub fn parse_param_arg(text: &str) -> Result<(String, Vec<i64>)> {
    let (name, values) = text
        .split_once('=')
        .with_context(|| format!("--param `{text}`: write NAME=V1,V2,... e.g. N=128,256"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        bail!("--param `{text}`: `{name}` is not a valid parameter name");
    }
    let values = values
        .split(',')
        .map(|v| v.trim().replace('_', "").parse::<i64>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .with_context(|| format!("--param `{text}`: values must be integers"))?;
    Ok((name.to_string(), values))
}
