//! Parity of the opbench engine against a reference (candle): relative L2 error of the logits
//! at prefill and at each decode step, and the first step where the greedy tokens differ with
//! the reference's top-2 margin there (a near-tie explains a flip; a wide margin is a bug).

use anyhow::{bail, Result};

/// Tolerance on the relative L2 error of f16 logits.
pub const LOGITS_TOLERANCE: f64 = 1e-2;

/// How far one set of logits is from the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogitErr {
    /// ||ours - ref||_2 / ||ref||_2.
    pub rel_l2: f64,
    pub max_abs: f64,
}

/// Compares two equally long logit arrays; NaN anywhere is an infinite error.
pub fn compare_logits(ours: &[f32], reference: &[f32]) -> Result<LogitErr> {
    if ours.len() != reference.len() || ours.is_empty() {
        bail!(
            "parity: {} logits against {} reference logits",
            ours.len(),
            reference.len()
        );
    }
    let (mut num, mut den, mut max_abs) = (0f64, 0f64, 0f64);
    for (&a, &b) in ours.iter().zip(reference) {
        let (a, b) = (a as f64, b as f64);
        let d = a - b;
        if !d.is_finite() {
            return Ok(LogitErr {
                rel_l2: f64::INFINITY,
                max_abs: f64::INFINITY,
            });
        }
        num += d * d;
        den += b * b;
        max_abs = max_abs.max(d.abs());
    }
    let rel_l2 = if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    };
    Ok(LogitErr { rel_l2, max_abs })
}

/// The reference's largest minus second-largest logit of one row.
pub fn top2_margin(row: &[f32]) -> f64 {
    let (mut a, mut b) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for &v in row {
        let v = v as f64;
        if v > a {
            b = a;
            a = v;
        } else if v > b {
            b = v;
        }
    }
    a - b
}

/// Where greedy decoding first left the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenDiff {
    /// 0 = the token from prefill, s = decode step s.
    pub step: usize,
    pub row: usize,
    pub ours: u32,
    pub reference: u32,
    pub ref_top2_margin: f64,
}

/// The whole comparison of one point.
#[derive(Debug, Clone, PartialEq)]
pub struct ParityReport {
    pub prefill: LogitErr,
    pub decode: Vec<LogitErr>,
    pub first_token_diff: Option<TokenDiff>,
    /// Steps (prefill included) whose greedy tokens all matched before the first difference.
    pub steps_matched: usize,
}

impl ParityReport {
    pub fn new(prefill: LogitErr) -> Self {
        ParityReport {
            prefill,
            decode: Vec::new(),
            first_token_diff: None,
            steps_matched: 0,
        }
    }

    pub fn push_decode(&mut self, e: LogitErr) {
        self.decode.push(e);
    }

    /// Records step `step`'s tokens (`ref_logits`: [rows][vocab]).
    pub fn note_tokens(
        &mut self,
        step: usize,
        ours: &[u32],
        reference: &[u32],
        ref_logits: &[f32],
        vocab: usize,
    ) {
        if self.first_token_diff.is_some() {
            return;
        }
        match ours.iter().zip(reference).position(|(a, b)| a != b) {
            None => self.steps_matched = step + 1,
            Some(row) => {
                let margin = ref_logits
                    .get(row * vocab..(row + 1) * vocab)
                    .map(top2_margin)
                    .unwrap_or(f64::NAN);
                self.first_token_diff = Some(TokenDiff {
                    step,
                    row,
                    ours: ours[row],
                    reference: reference[row],
                    ref_top2_margin: margin,
                });
            }
        }
    }

    /// The largest relative error over prefill and every decode step.
    pub fn worst_rel_l2(&self) -> f64 {
        self.decode
            .iter()
            .map(|e| e.rel_l2)
            .fold(self.prefill.rel_l2, f64::max)
    }

    /// The largest absolute error over prefill and every decode step.
    pub fn worst_max_abs(&self) -> f64 {
        self.decode
            .iter()
            .map(|e| e.max_abs)
            .fold(self.prefill.max_abs, f64::max)
    }

    /// Logits within tolerance everywhere (token flips alone do not fail: they are reported).
    pub fn passed(&self) -> bool {
        self.worst_rel_l2() < LOGITS_TOLERANCE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_error_and_nan() {
        let e = compare_logits(&[1.0, 2.0, 2.0], &[1.0, 2.0, 2.1]).unwrap();
        assert!((e.max_abs - 0.1).abs() < 1e-6);
        assert!((e.rel_l2 - 0.1 / (1.0f64 + 4.0 + 4.41).sqrt()).abs() < 1e-6);
        let n = compare_logits(&[f32::NAN], &[1.0]).unwrap();
        assert!(n.rel_l2.is_infinite());
        assert!(compare_logits(&[1.0], &[1.0, 2.0]).is_err());
    }

    #[test]
    fn first_difference_and_margin() {
        let mut r = ParityReport::new(LogitErr {
            rel_l2: 1e-3,
            max_abs: 0.01,
        });
        let logits = [0.0, 5.0, 4.5, 1.0, /* row 1 */ 3.0, 1.0, 0.0, 2.5];
        r.note_tokens(0, &[1, 0], &[1, 0], &logits, 4);
        r.push_decode(LogitErr {
            rel_l2: 2e-3,
            max_abs: 0.02,
        });
        r.note_tokens(1, &[1, 3], &[1, 0], &logits, 4);
        r.note_tokens(2, &[0, 0], &[1, 0], &logits, 4);
        let d = r.first_token_diff.unwrap();
        assert_eq!((d.step, d.row, d.ours, d.reference), (1, 1, 3, 0));
        assert!((d.ref_top2_margin - 0.5).abs() < 1e-9);
        assert_eq!(r.steps_matched, 1);
        assert!(r.passed());
        assert!((r.worst_rel_l2() - 2e-3).abs() < 1e-12);
        r.push_decode(LogitErr {
            rel_l2: 0.5,
            max_abs: 3.0,
        });
        assert!(!r.passed());
    }
}
