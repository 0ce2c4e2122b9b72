//! GEMM problem shapes: nvbench-style axes (lists and power-of-two ranges, Cartesian product)
//! and the named projection shapes of a TinyLlama-1.1B layer at several token counts.

use anyhow::{bail, Context, Result};
use clap::ValueEnum;

/// Where a shape came from, stored as the `shape_set` param.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeSet {
    /// M = N = K from `--square`.
    Square,
    /// The Cartesian product of `--m`, `--n`, `--k`.
    Axes,
    /// A named model projection (`--model`).
    Model,
}

impl ShapeSet {
    pub fn name(self) -> &'static str {
        match self {
            ShapeSet::Square => "square",
            ShapeSet::Axes => "axes",
            ShapeSet::Model => "model",
        }
    }
}

/// One projection of a transformer layer: y[tokens, out] = x[tokens, in] * W^T.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum LayerOp {
    /// q_proj and o_proj: hidden -> hidden.
    #[value(name = "q_o_proj")]
    QOProj,
    /// k_proj and v_proj: hidden -> kv_heads * head_dim.
    #[value(name = "k_v_proj")]
    KVProj,
    /// gate_proj and up_proj: hidden -> intermediate.
    #[value(name = "gate_up_proj")]
    GateUpProj,
    /// down_proj: intermediate -> hidden.
    #[value(name = "down_proj")]
    DownProj,
    /// The output head: hidden -> vocabulary.
    #[value(name = "lm_head")]
    LmHead,
}

/// The model whose shapes `--model` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Model {
    /// TinyLlama-1.1B: hidden 2048, intermediate 5632, 32 heads, 4 KV heads of 64, vocab 32000.
    #[value(name = "tinyllama-1.1b")]
    TinyLlama1_1b,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::TinyLlama1_1b => "tinyllama-1.1b",
        }
    }

    /// (out_features, in_features) of a projection, i.e. GEMM (N, K).
    pub fn projection(self, op: LayerOp) -> (usize, usize) {
        let (hidden, inter, kv, vocab) = match self {
            Model::TinyLlama1_1b => (2048, 5632, 4 * 64, 32000),
        };
        match op {
            LayerOp::QOProj => (hidden, hidden),
            LayerOp::KVProj => (kv, hidden),
            LayerOp::GateUpProj => (inter, hidden),
            LayerOp::DownProj => (hidden, inter),
            LayerOp::LmHead => (vocab, hidden),
        }
    }
}

impl LayerOp {
    pub const ALL: [LayerOp; 5] = [
        LayerOp::QOProj,
        LayerOp::KVProj,
        LayerOp::GateUpProj,
        LayerOp::DownProj,
        LayerOp::LmHead,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LayerOp::QOProj => "q_o_proj",
            LayerOp::KVProj => "k_v_proj",
            LayerOp::GateUpProj => "gate_up_proj",
            LayerOp::DownProj => "down_proj",
            LayerOp::LmHead => "lm_head",
        }
    }
}

/// Model coordinates of a shape (params `model`, `layer_op`, `tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelPoint {
    pub model: Model,
    pub layer_op: LayerOp,
    /// batch x sequence = M.
    pub tokens: usize,
}

/// How B is stored (param `b_layout`, recorded only for `nk`, so a row without it is `kn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum BLayout {
    /// Row-major [K, N]: C = A * B.
    #[value(name = "kn")]
    Kn,
    /// Row-major [N, K], the layout of a PyTorch or candle linear layer's weight W
    /// (out_features x in_features): C = A * W^T.
    #[value(name = "nk")]
    Nk,
}

impl BLayout {
    pub fn name(self) -> &'static str {
        match self {
            BLayout::Kn => "kn",
            BLayout::Nk => "nk",
        }
    }

    /// B's (rows, cols) as stored for a K x N operand.
    pub fn stored_dims(self, n: usize, k: usize) -> (usize, usize) {
        match self {
            BLayout::Kn => (k, n),
            BLayout::Nk => (n, k),
        }
    }
}

/// One GEMM problem: C[M,N] = A[M,K] * B[K,N], B stored as `b_layout` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub set: ShapeSet,
    pub model: Option<ModelPoint>,
    pub b_layout: BLayout,
}

impl Shape {
    pub fn new(m: usize, n: usize, k: usize, set: ShapeSet) -> Self {
        Shape {
            m,
            n,
            k,
            set,
            model: None,
            b_layout: BLayout::Kn,
        }
    }

    /// The same problem with B stored as `layout`.
    pub fn with_b_layout(self, layout: BLayout) -> Self {
        Shape {
            b_layout: layout,
            ..self
        }
    }

    /// "4096x4096x4096" (M x N x K), with " B[N,K]" when B is stored transposed.
    pub fn label(&self) -> String {
        let layout = match self.b_layout {
            BLayout::Kn => "",
            BLayout::Nk => " B[N,K]",
        };
        format!("{}x{}x{}{layout}", self.m, self.n, self.k)
    }
}

/// Parses one axis: a comma-separated list of items, each a number (`1024`, `4k` = 4096),
/// a geometric range `start:end:xF` (`1024:8192:x2` = 1024,2048,4096,8192), or an arithmetic
/// range `start:end:+S` / `start:end:S`. `none` (or empty) gives no values. Duplicates are
/// dropped, order kept (see [`parse_axis_repeats`] for which).
pub fn parse_axis(spec: &str) -> Result<Vec<usize>> {
    parse_axis_repeats(spec).map(|(values, _)| values)
}

/// [`parse_axis`], also returning the values that were given more than once (each once).
pub fn parse_axis_repeats(spec: &str) -> Result<(Vec<usize>, Vec<usize>)> {
    let spec = spec.trim();
    if spec.is_empty() || spec.eq_ignore_ascii_case("none") {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut out: Vec<usize> = Vec::new();
    let mut repeated: Vec<usize> = Vec::new();
    for item in spec.split(',') {
        let item = item.trim();
        let parts: Vec<&str> = item.split(':').collect();
        let values = match parts.as_slice() {
            [v] => vec![parse_size(v)?],
            [a, b, step] => range(parse_size(a)?, parse_size(b)?, step)
                .with_context(|| format!("in the range {item:?}"))?,
            _ => bail!("{item:?} is neither a number nor a range start:end:xF / start:end:+S"),
        };
        for v in values {
            if !out.contains(&v) {
                out.push(v);
            } else if !repeated.contains(&v) {
                repeated.push(v);
            }
        }
    }
    Ok((out, repeated))
}

fn parse_size(s: &str) -> Result<usize> {
    let s = s.trim();
    let (digits, mult) = match s.strip_suffix(['k', 'K']) {
        Some(d) => (d, 1024),
        None => (s, 1),
    };
    let v: usize = digits
        .parse()
        .with_context(|| format!("{s:?} is not a positive integer (e.g. 4096 or 4k)"))?;
    if v == 0 {
        bail!("{s:?}: sizes must be at least 1");
    }
    v.checked_mul(mult)
        .with_context(|| format!("{s:?} is too large to count"))
}

fn range(start: usize, end: usize, step: &str) -> Result<Vec<usize>> {
    if end < start {
        bail!("end {end} is below start {start}");
    }
    let mut out = Vec::new();
    if let Some(f) = step.strip_prefix(['x', '*']) {
        let f: usize = f
            .parse()
            .with_context(|| format!("{step:?}: the factor after x must be an integer"))?;
        if f < 2 {
            bail!("{step:?}: a geometric factor must be at least 2");
        }
        let mut v = Some(start);
        while let Some(x) = v.filter(|x| *x <= end) {
            out.push(x);
            v = x.checked_mul(f);
        }
    } else {
        let s: usize = step
            .trim_start_matches('+')
            .parse()
            .with_context(|| format!("{step:?}: the step must be xF or +S with integers"))?;
        if s == 0 {
            bail!("{step:?}: the step must be at least 1");
        }
        out.extend((start..=end).step_by(s));
    }
    if out.len() > 4096 {
        bail!("{} values: too many points for one axis", out.len());
    }
    Ok(out)
}

/// All (m, n, k) combinations, m outermost.
pub fn cartesian(ms: &[usize], ns: &[usize], ks: &[usize]) -> Vec<Shape> {
    let mut out = Vec::with_capacity(ms.len() * ns.len() * ks.len());
    for &m in ms {
        for &n in ns {
            for &k in ks {
                out.push(Shape::new(m, n, k, ShapeSet::Axes));
            }
        }
    }
    out
}

/// M = N = K for each size.
pub fn square(sizes: &[usize]) -> Vec<Shape> {
    sizes
        .iter()
        .map(|&s| Shape::new(s, s, s, ShapeSet::Square))
        .collect()
}

/// The projection shapes of `model` at each token count: M = tokens, (N, K) = (out, in).
pub fn model_shapes(model: Model, ops: &[LayerOp], tokens: &[usize]) -> Vec<Shape> {
    let mut out = Vec::new();
    for &op in ops {
        let (n, k) = model.projection(op);
        for &t in tokens {
            out.push(Shape {
                m: t,
                n,
                k,
                set: ShapeSet::Model,
                b_layout: BLayout::Kn,
                model: Some(ModelPoint {
                    model,
                    layer_op: op,
                    tokens: t,
                }),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_lists_and_ranges() {
        assert_eq!(
            parse_axis("1024:8192:x2").unwrap(),
            vec![1024, 2048, 4096, 8192]
        );
        assert_eq!(parse_axis("1k,2k, 4096").unwrap(), vec![1024, 2048, 4096]);
        assert_eq!(
            parse_axis("128:512:+128").unwrap(),
            vec![128, 256, 384, 512]
        );
        assert_eq!(parse_axis("100:300:100").unwrap(), vec![100, 200, 300]);
        assert_eq!(parse_axis("64,64,1:64:x4").unwrap(), vec![64, 1, 4, 16]);
        assert_eq!(parse_axis("3:20:x3").unwrap(), vec![3, 9]);
        assert!(parse_axis("none").unwrap().is_empty());
        assert!(parse_axis("").unwrap().is_empty());
    }

    #[test]
    fn bad_axes_say_what_is_wrong() {
        for bad in ["0", "abc", "8:4:x2", "1:8:x1", "1:8:+0", "1:2", "1:2:3:4"] {
            let e = parse_axis(bad).unwrap_err();
            assert!(!format!("{e:#}").is_empty(), "{bad}");
        }
        let e = format!("{:#}", parse_axis("12q").unwrap_err());
        assert!(e.contains("12q"), "{e}");
        // Sizes and ranges near the top of the integer range stop instead of overflowing.
        let e = format!("{:#}", parse_axis("18446744073709551615k").unwrap_err());
        assert!(e.contains("too large"), "{e}");
        let top = usize::MAX / 2 + 1;
        assert_eq!(
            parse_axis(&format!("{top}:{}:x2", usize::MAX)).unwrap(),
            vec![top]
        );
    }

    #[test]
    fn cartesian_product_covers_every_combination() {
        let s = cartesian(&[1, 2], &[3], &[4, 5, 6]);
        assert_eq!(s.len(), 6);
        assert_eq!((s[0].m, s[0].n, s[0].k), (1, 3, 4));
        assert_eq!((s[5].m, s[5].n, s[5].k), (2, 3, 6));
        assert!(s.iter().all(|x| x.set == ShapeSet::Axes));
        assert!(cartesian(&[], &[1], &[1]).is_empty());
    }

    #[test]
    fn tinyllama_projection_shapes() {
        let m = Model::TinyLlama1_1b;
        assert_eq!(m.projection(LayerOp::QOProj), (2048, 2048));
        assert_eq!(m.projection(LayerOp::KVProj), (256, 2048));
        assert_eq!(m.projection(LayerOp::GateUpProj), (5632, 2048));
        assert_eq!(m.projection(LayerOp::DownProj), (2048, 5632));
        assert_eq!(m.projection(LayerOp::LmHead), (32000, 2048));
        let s = model_shapes(m, &LayerOp::ALL, &[1, 8, 32, 128, 512, 2048]);
        assert_eq!(s.len(), 30);
        let down = s
            .iter()
            .find(|x| x.model.unwrap().layer_op == LayerOp::DownProj && x.m == 512)
            .unwrap();
        assert_eq!((down.n, down.k), (2048, 5632));
        assert_eq!(down.model.unwrap().tokens, 512);
        assert_eq!(square(&[64])[0].label(), "64x64x64");
        use clap::ValueEnum;
        for op in LayerOp::ALL {
            assert_eq!(op.to_possible_value().unwrap().get_name(), op.name());
        }
    }
}
