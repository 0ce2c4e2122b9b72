//! Checked integer expressions over sweep parameters: sizes, grids, FLOP and byte counts.
//!
//! Grammar: `+ - * / %`, unary minus, parentheses, integer literals (`1_000` allowed),
//! identifiers, and the functions `ceil_div(a, b)`, `min(a, ...)`, `max(a, ...)`, `pow(a, b)`,
//! `align_up(a, b)`. Arithmetic is on i64 and every operation is checked: an overflow or a
//! division by zero is an error that names the expression and the operation, never a wrap.

use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};

/// A parsed expression, kept with its source text for error messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    text: String,
    node: Node,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Int(i64),
    Var(String),
    Neg(Box<Node>),
    Bin(Op, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Func {
    CeilDiv,
    Min,
    Max,
    Pow,
    AlignUp,
}

/// Longest expression text, in characters: also bounds a left-leaning chain such as
/// `1+1+...`, which nests without parentheses.
pub const MAX_EXPR_CHARS: usize = 1024;
/// Deepest nesting of parentheses, calls and unary signs the parser follows.
pub const MAX_EXPR_DEPTH: usize = 64;

const FUNCS: &str = "ceil_div(a, b), min(a, ...), max(a, ...), pow(a, b), align_up(a, b)";

impl Expr {
    /// Parses `text`; errors show the text and the column at fault.
    pub fn parse(text: &str) -> Result<Expr> {
        let n = text.chars().count();
        if n > MAX_EXPR_CHARS {
            bail!(
                "expression `{}` is {n} characters long, more than the {MAX_EXPR_CHARS} allowed: \
                 split it with intermediate parameters",
                crate::text::elide_to(text, 40)
            );
        }
        let mut p = Parser {
            text,
            chars: text.char_indices().collect(),
            pos: 0,
            depth: 0,
        };
        let node = p.expr()?;
        p.skip_ws();
        if p.pos < p.chars.len() {
            return Err(p.error("unexpected text after the end of the expression"));
        }
        Ok(Expr {
            text: text.trim().to_string(),
            node,
        })
    }

    /// A constant expression.
    pub fn int(v: i64) -> Expr {
        Expr {
            text: v.to_string(),
            node: Node::Int(v),
        }
    }

    /// The source text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every identifier the expression reads.
    pub fn variables(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        collect_vars(&self.node, &mut out);
        out
    }

    /// Evaluates with checked i64 arithmetic. Errors name the expression and what overflowed.
    pub fn eval(&self, vars: &BTreeMap<String, i64>) -> Result<i64> {
        eval_node(&self.node, vars).map_err(|e| anyhow::anyhow!("expression `{}`: {e}", self.text))
    }
}

impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn collect_vars(n: &Node, out: &mut BTreeSet<String>) {
    match n {
        Node::Int(_) => {}
        Node::Var(v) => {
            out.insert(v.clone());
        }
        Node::Neg(a) => collect_vars(a, out),
        Node::Bin(_, a, b) => {
            collect_vars(a, out);
            collect_vars(b, out);
        }
        Node::Call(_, args) => args.iter().for_each(|a| collect_vars(a, out)),
    }
}

fn overflow(what: String) -> anyhow::Error {
    anyhow::anyhow!("integer overflow in {what} (beyond the i64 range ±9.2e18)")
}

fn eval_node(n: &Node, vars: &BTreeMap<String, i64>) -> Result<i64> {
    Ok(match n {
        Node::Int(v) => *v,
        Node::Var(name) => match vars.get(name) {
            Some(v) => *v,
            None => bail!(
                "`{name}` has no value here (known: {})",
                vars.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        },
        Node::Neg(a) => {
            let a = eval_node(a, vars)?;
            a.checked_neg().ok_or_else(|| overflow(format!("-({a})")))?
        }
        Node::Bin(op, a, b) => {
            let (a, b) = (eval_node(a, vars)?, eval_node(b, vars)?);
            let (sym, r) = match op {
                Op::Add => ("+", a.checked_add(b)),
                Op::Sub => ("-", a.checked_sub(b)),
                Op::Mul => ("*", a.checked_mul(b)),
                Op::Div | Op::Rem if b == 0 => bail!("division by zero in {a} / {b}"),
                Op::Div => ("/", a.checked_div(b)),
                Op::Rem => ("%", a.checked_rem(b)),
            };
            r.ok_or_else(|| overflow(format!("{a} {sym} {b}")))?
        }
        Node::Call(f, args) => {
            let v: Vec<i64> = args
                .iter()
                .map(|a| eval_node(a, vars))
                .collect::<Result<_>>()?;
            match f {
                Func::Min => *v.iter().min().expect("parser checks arity"),
                Func::Max => *v.iter().max().expect("parser checks arity"),
                Func::CeilDiv | Func::AlignUp => {
                    let (a, b) = (v[0], v[1]);
                    if b <= 0 {
                        bail!("the divisor of ceil_div/align_up must be positive, got {b}");
                    }
                    let q = a
                        .checked_add(b - 1)
                        .ok_or_else(|| overflow(format!("ceil_div({a}, {b})")))?
                        .div_euclid(b);
                    if *f == Func::CeilDiv {
                        q
                    } else {
                        q.checked_mul(b)
                            .ok_or_else(|| overflow(format!("align_up({a}, {b})")))?
                    }
                }
                Func::Pow => {
                    let (a, b) = (v[0], v[1]);
                    let e = u32::try_from(b)
                        .map_err(|_| anyhow::anyhow!("pow({a}, {b}): the exponent must be >= 0"))?;
                    a.checked_pow(e)
                        .ok_or_else(|| overflow(format!("pow({a}, {b})")))?
                }
            }
        }
    })
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<(usize, char)>,
    pos: usize,
    /// Nesting depth of [`Parser::unary`], through which every recursion passes.
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, msg: &str) -> anyhow::Error {
        let col = self.pos + 1;
        anyhow::anyhow!(
            "cannot parse expression `{}` at column {col}: {msg}",
            self.text
        )
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|c| c.1)
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Result<Node> {
        let mut lhs = self.term()?;
        loop {
            let op = if self.eat('+') {
                Op::Add
            } else if self.eat('-') {
                Op::Sub
            } else {
                return Ok(lhs);
            };
            let rhs = self.term()?;
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn term(&mut self) -> Result<Node> {
        let mut lhs = self.unary()?;
        loop {
            let op = if self.eat('*') {
                Op::Mul
            } else if self.eat('/') {
                Op::Div
            } else if self.eat('%') {
                Op::Rem
            } else {
                return Ok(lhs);
            };
            let rhs = self.unary()?;
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn unary(&mut self) -> Result<Node> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(self.error(&format!(
                "nested more than {MAX_EXPR_DEPTH} levels deep (parentheses, calls, signs)"
            )));
        }
        self.depth += 1;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<Node> {
        if self.eat('-') {
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        if self.eat('+') {
            return self.unary();
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Node> {
        self.skip_ws();
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let e = self.expr()?;
                if !self.eat(')') {
                    return Err(self.error("expected `)`"));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => self.number(),
            Some(c) if c.is_alphabetic() || c == '_' => self.ident_or_call(),
            Some(c) => Err(self.error(&format!("unexpected `{c}`"))),
            None => Err(self.error("the expression ends too early")),
        }
    }

    fn number(&mut self) -> Result<Node> {
        let start = self.pos;
        let mut digits = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_ascii_digit() || *c == '_') {
            if c != '_' {
                digits.push(c);
            }
            self.pos += 1;
        }
        if self.peek().is_some_and(|c| c.is_alphanumeric() || c == '.') {
            return Err(self.error("integers only (sizes and counts are whole numbers)"));
        }
        digits.parse::<i64>().map(Node::Int).map_err(|_| {
            self.pos = start;
            self.error(&format!("the literal {digits} does not fit in i64"))
        })
    }

    fn ident_or_call(&mut self) -> Result<Node> {
        let mut name = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
            name.push(c);
            self.pos += 1;
        }
        if !self.eat('(') {
            return Ok(Node::Var(name));
        }
        let func = match name.as_str() {
            "ceil_div" => Func::CeilDiv,
            "min" => Func::Min,
            "max" => Func::Max,
            "pow" => Func::Pow,
            "align_up" => Func::AlignUp,
            _ => return Err(self.error(&format!("unknown function `{name}` (known: {FUNCS})"))),
        };
        let mut args = Vec::new();
        if !self.eat(')') {
            loop {
                args.push(self.expr()?);
                if self.eat(')') {
                    break;
                }
                if !self.eat(',') {
                    return Err(self.error("expected `,` or `)` in the argument list"));
                }
            }
        }
        let ok = match func {
            Func::Min | Func::Max => !args.is_empty(),
            _ => args.len() == 2,
        };
        if !ok {
            return Err(self.error(&format!(
                "`{name}` got {} argument(s) (known: {FUNCS})",
                args.len()
            )));
        }
        Ok(Node::Call(func, args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn ev(text: &str, pairs: &[(&str, i64)]) -> Result<i64> {
        Expr::parse(text)?.eval(&vars(pairs))
    }

    #[test]
    fn deep_nesting_and_long_text_are_errors_not_a_stack_overflow() {
        for deep in [
            "(".repeat(100_000) + "1" + &")".repeat(100_000),
            "-".repeat(100_000) + "1",
            "min(".repeat(100_000) + "1" + &")".repeat(100_000),
        ] {
            let e = Expr::parse(&deep).unwrap_err().to_string();
            assert!(e.contains("characters long"), "{e}");
        }
        let e = Expr::parse(&("(".repeat(200) + "1" + &")".repeat(200)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("levels deep"), "{e}");
        let e = Expr::parse(&("-".repeat(300) + "1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("levels deep"), "{e}");
        let ok = "(".repeat(60) + "n" + &")".repeat(60);
        assert_eq!(
            Expr::parse(&ok).unwrap().eval(&vars(&[("n", 3)])).unwrap(),
            3
        );
        let chain = vec!["1"; MAX_EXPR_CHARS / 2].join("+");
        assert_eq!(Expr::parse(&chain).unwrap().eval(&vars(&[])).unwrap(), 512);
    }

    #[test]
    fn precedence_and_functions() {
        assert_eq!(ev("2 + 3 * 4", &[]).unwrap(), 14);
        assert_eq!(ev("(2 + 3) * 4", &[]).unwrap(), 20);
        assert_eq!(ev("-3 + 10 % 4", &[]).unwrap(), -1);
        assert_eq!(
            ev("2 * M * N * K", &[("M", 3), ("N", 5), ("K", 7)]).unwrap(),
            210
        );
        assert_eq!(ev("ceil_div(N, 16)", &[("N", 33)]).unwrap(), 3);
        assert_eq!(ev("ceil_div(32, 16)", &[]).unwrap(), 2);
        assert_eq!(ev("align_up(33, 16)", &[]).unwrap(), 48);
        assert_eq!(ev("min(4, 2, 9) + max(1, 7)", &[]).unwrap(), 9);
        assert_eq!(ev("pow(2, 20)", &[]).unwrap(), 1 << 20);
        assert_eq!(ev("1_000 * 3", &[]).unwrap(), 3000);
        assert_eq!(ev("100 / 7", &[]).unwrap(), 14);
    }

    #[test]
    fn variables_are_listed() {
        let e = Expr::parse("ceil_div(N, block_x) * M").unwrap();
        let v: Vec<_> = e.variables().into_iter().collect();
        assert_eq!(v, ["M", "N", "block_x"]);
    }

    #[test]
    fn overflow_is_an_error_naming_the_expression() {
        let e = ev("M * N * K", &[("M", 1 << 40), ("N", 1 << 20), ("K", 8)]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("`M * N * K`"), "{msg}");
        assert!(msg.contains("overflow"), "{msg}");
        assert!(ev("pow(10, 19)", &[])
            .unwrap_err()
            .to_string()
            .contains("overflow"));
        assert!(ev("9223372036854775807 + 1", &[]).is_err());
        assert!(ev("-(-9223372036854775807 - 1)", &[]).is_err());
        assert!(ev("ceil_div(9223372036854775807, 2)", &[]).is_err());
    }

    #[test]
    fn bad_input_is_rejected_clearly() {
        assert!(ev("4 / (N - N)", &[("N", 3)])
            .unwrap_err()
            .to_string()
            .contains("division by zero"));
        let e = ev("M * Q", &[("M", 1)]).unwrap_err().to_string();
        assert!(e.contains("`Q`"), "{e}");
        for bad in [
            "", "2 +", "(2", "2 ) ", "1.5 * N", "foo(1)", "min()", "pow(2)", "2 $ 3",
        ] {
            let err = Expr::parse(bad);
            assert!(err.is_err(), "{bad:?} parsed");
            assert!(
                err.unwrap_err().to_string().contains("cannot parse"),
                "{bad:?}"
            );
        }
        assert!(Expr::parse("99999999999999999999").is_err());
    }
}
