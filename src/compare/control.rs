//! A control implementation: one whose code did not change between the two runs (candle,
//! cuBLAS) measures the machine's own run-to-run drift at each point.
//!
//! Within-run confidence intervals cannot see that drift (clocks, L2 and TLB state, other
//! tenants between runs). When the control moved at a point (its verdict is not SAME), the
//! FASTER/SLOWER verdicts of the other implementations at the same point are not evidence
//! of a change in their code and become UNCERTAIN, with the control's move noted; the
//! control's own SLOWER lines are not counted as regressions.

use super::line::{Change, Line};
use super::verdict::Verdict;

/// Downgrades verdicts where the control moved; returns how many lines were downgraded.
/// A line matches its control on GPU, kind, benchmark, parameters (after `--ignore-params`)
/// and quantity.
pub fn apply_control(lines: &mut [Line], control: &str) -> usize {
    let moved: Vec<(usize, f64)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.point.implementation == control)
        .filter_map(|(i, l)| match &l.change {
            Change::Compared(j) if j.verdict != Verdict::Same => {
                Some((i, j.ratio.unwrap_or(f64::NAN)))
            }
            _ => None,
        })
        .collect();
    let mut downgraded = 0;
    for (ci, ratio) in moved {
        // The control's own move is the machine's drift, never a regression of its code.
        lines[ci].control = Some("the control: the machine drifted here".into());
        let c = lines[ci].clone();
        for l in lines.iter_mut() {
            let same_point = l.point.implementation != control
                && l.gpu == c.gpu
                && l.stat == c.stat
                && l.point.kind == c.point.kind
                && l.point.benchmark == c.point.benchmark
                && l.point.params == c.point.params;
            if let (true, Change::Compared(j)) = (same_point, &mut l.change) {
                if matches!(j.verdict, Verdict::Faster | Verdict::Slower) {
                    j.verdict = Verdict::Uncertain;
                    l.control = Some(format!(
                        "control {control} moved {:+.1}%",
                        (ratio - 1.0) * 100.0
                    ));
                    downgraded += 1;
                }
            }
        }
    }
    downgraded
}
