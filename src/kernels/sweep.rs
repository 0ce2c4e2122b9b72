//! The sweep: every combination of parameters × kernels × block shapes, fully evaluated up front.
//!
//! Building the plan evaluates every size, grid, scalar and count expression at every point, so
//! an overflow, a zero-sized buffer or an impossible grid stops the run before any GPU work,
//! with a message naming the expression and the parameter values.

use super::expr::Expr;
use super::manifest::{block_label, Arg, Manifest, Role, ScalarType, ScalarValue};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;

/// A kernel argument's value at one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue {
    /// Index into the manifest's buffers (passed as a device pointer).
    Buffer(usize),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

/// One buffer's size at one parameter set.
#[derive(Debug, Clone, PartialEq)]
pub struct SizedBuffer {
    pub len: usize,
    pub bytes: usize,
}

/// One launch configuration of one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Position in the whole sweep (0-based), used to match profiler rows.
    pub id: usize,
    /// Index into the manifest's kernels.
    pub kernel: usize,
    pub block: [u32; 3],
    pub grid: [u32; 3],
    pub shared_bytes: u32,
    pub args: Vec<ArgValue>,
}

/// All points of one parameter set: they share buffers, inputs and the reference output.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub params: BTreeMap<String, i64>,
    /// Same order as the manifest's buffers.
    pub buffers: Vec<SizedBuffer>,
    pub total_bytes: usize,
    pub flops: Option<f64>,
    /// Bytes the kernel must move through device memory (for GB/s and intensity).
    pub bytes_moved: f64,
    /// The reference kernel's points come first; `points[0]` computes the reference output.
    pub points: Vec<Point>,
}

/// A manifest expanded into its points.
#[derive(Debug, Clone)]
pub struct Plan {
    pub manifest: Manifest,
    pub groups: Vec<Group>,
}

impl Plan {
    pub fn points(&self) -> usize {
        self.groups.iter().map(|g| g.points.len()).sum()
    }

    /// "M=256 N=512" for messages.
    pub fn label(params: &BTreeMap<String, i64>) -> String {
        params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// "matmul_tiled block 16x16 at M=256 N=256 K=256".
    pub fn point_label(&self, g: &Group, p: &Point) -> String {
        format!(
            "{} block {} at {}",
            self.manifest.kernels[p.kernel].name,
            block_label(p.block),
            Plan::label(&g.params)
        )
    }
}

/// Cartesian product of the parameter lists, first name outermost.
pub fn param_sets(params: &BTreeMap<String, Vec<i64>>) -> Vec<BTreeMap<String, i64>> {
    let mut sets = vec![BTreeMap::new()];
    for (name, values) in params {
        sets = sets
            .into_iter()
            .flat_map(|s| {
                values.iter().map(move |v| {
                    let mut s = s.clone();
                    s.insert(name.clone(), *v);
                    s
                })
            })
            .collect();
    }
    sets
}

fn eval_at(e: &Expr, vars: &BTreeMap<String, i64>, what: &str) -> Result<i64> {
    e.eval(vars)
        .with_context(|| format!("{what} at {}", Plan::label(vars)))
}

/// Expands `manifest` into a plan; fails on the first bad expression.
pub fn expand(manifest: Manifest) -> Result<Plan> {
    let mut groups = Vec::new();
    let mut id = 0;
    // The reference kernel first: its first point computes the output the others are checked with.
    let r = manifest
        .kernels
        .iter()
        .position(|k| k.name == manifest.reference)
        .expect("validated");
    let order: Vec<usize> = std::iter::once(r)
        .chain((0..manifest.kernels.len()).filter(|i| *i != r))
        .collect();
    for mut vars in param_sets(&manifest.params) {
        for (alias, target) in &manifest.aliases {
            let v = vars[target];
            vars.insert(alias.clone(), v);
        }
        let mut buffers = Vec::new();
        let mut total = 0usize;
        let mut traffic = 0f64;
        for b in &manifest.buffers {
            let what = format!("buffer `{}` len", b.name);
            let len = eval_at(&b.len, &vars, &what)?;
            if len <= 0 {
                bail!(
                    "{what} `{}` is {len} at {}: sizes must be >= 1",
                    b.len,
                    Plan::label(&vars)
                );
            }
            let bytes = (len as usize)
                .checked_mul(b.dtype.size_bytes())
                .with_context(|| {
                    format!(
                        "{what} `{}`: {len} elements of {} overflow",
                        b.len,
                        b.dtype.name()
                    )
                })?;
            total = total
                .checked_add(bytes)
                .context("total buffer bytes overflow")?;
            traffic += bytes as f64 * if b.role == Role::Inout { 2.0 } else { 1.0 };
            buffers.push(SizedBuffer {
                len: len as usize,
                bytes,
            });
        }
        let flops = match &manifest.flops {
            Some(e) => Some(eval_at(e, &vars, "flops")? as f64),
            None => None,
        };
        let bytes_moved = match &manifest.bytes {
            Some(e) => eval_at(e, &vars, "bytes")? as f64,
            None => traffic,
        };
        let mut points = Vec::new();
        for &k in &order {
            let spec = &manifest.kernels[k];
            for &block in &spec.blocks {
                let mut lv = vars.clone();
                lv.insert("block_x".into(), block[0] as i64);
                lv.insert("block_y".into(), block[1] as i64);
                lv.insert("block_z".into(), block[2] as i64);
                lv.insert("threads".into(), block.iter().map(|d| *d as i64).product());
                let at = format!("kernel `{}` block {}", spec.name, block_label(block));
                let mut grid = [1u32; 3];
                for (i, e) in spec.grid.iter().enumerate() {
                    let v = eval_at(e, &lv, &format!("{at}: grid[{i}]"))?;
                    let max = if i == 0 { i32::MAX as i64 } else { 65535 };
                    if !(1..=max).contains(&v) {
                        bail!(
                            "{at}: grid[{i}] `{e}` is {v} at {}: CUDA allows 1..={max}",
                            Plan::label(&vars)
                        );
                    }
                    grid[i] = v as u32;
                }
                let shared = eval_at(&spec.shared_bytes, &lv, &format!("{at}: shared_bytes"))?;
                let shared_bytes = u32::try_from(shared).map_err(|_| {
                    anyhow::anyhow!("{at}: shared_bytes `{}` is {shared}", spec.shared_bytes)
                })?;
                let args = spec
                    .args
                    .iter()
                    .map(|a| arg_value(&manifest, a, &lv, &at))
                    .collect::<Result<Vec<_>>>()?;
                points.push(Point {
                    id,
                    kernel: k,
                    block,
                    grid,
                    shared_bytes,
                    args,
                });
                id += 1;
            }
        }
        groups.push(Group {
            params: vars,
            buffers,
            total_bytes: total,
            flops,
            bytes_moved,
            points,
        });
    }
    Ok(Plan { manifest, groups })
}

fn arg_value(m: &Manifest, a: &Arg, vars: &BTreeMap<String, i64>, at: &str) -> Result<ArgValue> {
    let fit = |v: i64, ty: &str, what: &str| -> anyhow::Error {
        anyhow::anyhow!("{at}: {what} = {v} does not fit the kernel's {ty} argument")
    };
    Ok(match a {
        Arg::Buffer(i) => ArgValue::Buffer(*i),
        Arg::Null => ArgValue::U64(0),
        Arg::Param(p) => {
            let v = vars[p];
            ArgValue::I32(i32::try_from(v).map_err(|_| fit(v, "32-bit int", p))?)
        }
        Arg::Scalar(name) => {
            let s = &m.scalars[name];
            match &s.value {
                ScalarValue::Float(f) => match s.dtype {
                    ScalarType::F32 => ArgValue::F32(*f as f32),
                    _ => ArgValue::F64(*f),
                },
                ScalarValue::Expr(e) => {
                    let v = eval_at(e, vars, &format!("scalar `{name}`"))?;
                    match s.dtype {
                        ScalarType::I32 => {
                            ArgValue::I32(i32::try_from(v).map_err(|_| fit(v, "i32", name))?)
                        }
                        ScalarType::I64 => ArgValue::I64(v),
                        ScalarType::U32 => {
                            ArgValue::U32(u32::try_from(v).map_err(|_| fit(v, "u32", name))?)
                        }
                        ScalarType::U64 => {
                            ArgValue::U64(u64::try_from(v).map_err(|_| fit(v, "u64", name))?)
                        }
                        ScalarType::F32 => ArgValue::F32(v as f32),
                        ScalarType::F64 => ArgValue::F64(v as f64),
                    }
                }
            }
        }
    })
}
