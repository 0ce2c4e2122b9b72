//! Matching the points of two sets of runs and judging every common one: the comparison report.

use super::line::{Change, Line, Side};
use super::verdict::{judge, Direction};
use crate::artifact::Status;
use crate::history::{HistoryPoint, HistoryRun};
use crate::identity::{is_setting, pair_rows, settings_diff, settings_text, Identity};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A row's parameters, problem and settings, as `k=v, k=v` (keys sorted).
pub fn params_text(row: &HistoryPoint) -> String {
    row.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Settings of a comparison.
#[derive(Debug, Clone)]
pub struct Options {
    /// Minimum relative change of the median that counts (0.03 = 3%).
    pub min_effect: f64,
    /// Problem parameters left out of a point's identity as well (settings never count).
    pub ignore_params: Vec<String>,
    /// An implementation that did not change between the runs (see `control`).
    pub control: Option<String>,
    /// Runs whose points give each point's range across boards (rule `boards`); empty: the
    /// rule is not applied.
    pub history: Vec<HistoryRun>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_effect: super::verdict::DEFAULT_MIN_EFFECT,
            ignore_params: Vec::new(),
            control: None,
            history: Vec::new(),
        }
    }
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub base_label: String,
    pub head_label: String,
    pub min_effect: f64,
    /// Runs used on each side: (GPU, kind, run id, commit).
    pub base_runs: Vec<RunUsed>,
    pub head_runs: Vec<RunUsed>,
    pub lines: Vec<Line>,
    /// Things a reader should know (several runs of one kind on a side, GPU pairing).
    pub notes: Vec<String>,
    /// SAME lines removed by [`Report::hide_same`] (still counted in the tally).
    #[serde(default)]
    pub hidden_same: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunUsed {
    pub gpu: String,
    /// The physical board ("GPU-9e9eaf8d"), when the run recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    pub kind: String,
    pub run_id: String,
    pub commit: Option<String>,
    pub file: String,
    /// A run drawn by `history synth`, not measured.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub synthetic: bool,
}

/// Counts per table label, in a fixed order.
pub fn counts(lines: &[Line]) -> Vec<(&'static str, usize)> {
    let order = [
        "SLOWER",
        "FAILED",
        "FASTER",
        "SAME",
        "UNCERTAIN",
        "ADDED",
        "REMOVED",
        "N/A",
    ];
    order
        .iter()
        .map(|l| (*l, lines.iter().filter(|x| x.label() == *l).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}

impl Report {
    pub fn regressions(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| l.is_regression())
    }

    /// The lines `--fail-on-regression` fails on: SLOWER, FAILED and REMOVED.
    pub fn gate_failures(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| l.fails_gate())
    }

    /// Drops the SAME lines (for short pull-request comments); the tally still counts them.
    pub fn hide_same(&mut self) {
        let before = self.lines.len();
        self.lines.retain(|l| l.label() != "SAME");
        self.hidden_same += before - self.lines.len();
    }

    /// "3 SLOWER, 40 SAME, 2 ADDED"
    pub fn tally(&self) -> String {
        let mut c = counts(&self.lines);
        if self.hidden_same > 0 {
            match c.iter_mut().find(|(l, _)| *l == "SAME") {
                Some(same) => same.1 += self.hidden_same,
                None => {
                    let at = c
                        .iter()
                        .position(|(l, _)| !matches!(*l, "SLOWER" | "FAILED" | "FASTER"))
                        .unwrap_or(c.len());
                    c.insert(at, ("SAME", self.hidden_same));
                }
            }
        }
        if c.is_empty() {
            return "no points".into();
        }
        c.iter()
            .map(|(l, n)| format!("{n} {l}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A row and the id of its run.
type Row<'a> = (&'a HistoryPoint, &'a str);

/// Per point, the newest run's rows (several when that run measured the point under several
/// settings) among one side's runs of one GPU, and the runs used.
struct Points<'a> {
    rows: BTreeMap<Identity, Vec<Row<'a>>>,
    runs: Vec<RunUsed>,
}

fn run_used(l: &HistoryRun) -> RunUsed {
    RunUsed {
        gpu: l.gpu(),
        board: l.record.env.gpu.as_ref().map(|g| g.board_label()),
        kind: l.kind().to_string(),
        run_id: l.run_id().to_string(),
        commit: l.commit().map(String::from),
        file: l.file.clone(),
        synthetic: l.synthetic(),
    }
}

fn points<'a>(
    runs: &[&'a HistoryRun],
    side: &str,
    ignore: &[String],
    notes: &mut Vec<String>,
) -> Points<'a> {
    let mut sorted: Vec<&HistoryRun> = runs.to_vec();
    // Oldest first, so a newer run's row replaces an older one's for the same point.
    sorted.sort_by(|a, b| (a.started(), a.run_id()).cmp(&(b.started(), b.run_id())));
    let mut per_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rows: BTreeMap<Identity, Vec<Row>> = BTreeMap::new();
    for l in &sorted {
        *per_kind.entry(l.kind()).or_default() += 1;
        let mut own: BTreeMap<Identity, Vec<Row>> = BTreeMap::new();
        for r in &l.record.points {
            own.entry(r.identity(l.kind(), ignore))
                .or_default()
                .push((r, l.run_id()));
        }
        rows.extend(own);
    }
    if let Some(first) = sorted.first() {
        for (kind, n) in per_kind.iter().filter(|(_, n)| **n > 1) {
            notes.push(format!(
                "{side}: {n} {kind} runs (processes) on {}; the table shows the newest run's row, and \
                 our code on one board is judged on the median of every process (rule processes)",
                first.gpu()
            ));
        }
    }
    Points {
        rows,
        runs: sorted.iter().map(|l| run_used(l)).collect(),
    }
}

/// A GPU label and that GPU's runs on each side (None: the side has no run on it).
type GpuPair<'a> = (
    String,
    Option<&'a Vec<&'a HistoryRun>>,
    Option<&'a Vec<&'a HistoryRun>>,
);

fn group_by_gpu(runs: &[HistoryRun]) -> BTreeMap<String, Vec<&HistoryRun>> {
    let mut m: BTreeMap<String, Vec<&HistoryRun>> = BTreeMap::new();
    for l in runs {
        m.entry(l.gpu()).or_default().push(l);
    }
    m
}

fn sampled(row: &HistoryPoint) -> bool {
    row.status == Status::Ok && !row.stats.is_empty()
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
    }
}

/// Pairs one point's rows on the two sides (see `identity::pair_rows`) and judges each pair.
fn compare_point(
    gpu: &str,
    key: &Identity,
    base: &[Row],
    head: &[Row],
    opts: &Options,
    out: &mut Vec<Line>,
) {
    let (bp, hp): (Vec<_>, Vec<_>) = (
        base.iter().map(|(r, _)| &r.params).collect(),
        head.iter().map(|(r, _)| &r.params).collect(),
    );
    let pairs = pair_rows(&key.kind, &bp, &hp);
    // Rows of one point on one side are told apart by the settings whose values differ
    // among them; a line names the point's variant by those settings alone.
    let mut telling: Vec<&String> = Vec::new();
    for rows in [&bp, &hp] {
        for r in rows.iter() {
            for k in r.keys().filter(|k| is_setting(&key.kind, k)) {
                if rows.iter().any(|o| o.get(k) != r.get(k)) && !telling.contains(&k) {
                    telling.push(k);
                }
            }
        }
    }
    let variant = |r: &HistoryPoint| {
        (!telling.is_empty()).then(|| {
            telling
                .iter()
                .map(|k| {
                    let v = r.params.get(*k).map_or("-".to_string(), |v| v.to_string());
                    format!("{k}={v}")
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    for &(i, j) in &pairs {
        let (b, h) = (base[i], head[j]);
        let ctx = RowContext {
            gpu,
            key,
            settings: settings_diff(&key.kind, &b.0.params, &h.0.params),
            variant: variant(h.0),
        };
        compare_rows(&ctx, Some(b), Some(h), opts, out);
    }
    // A row left over where the other side measured the point too is an extra measurement
    // under other settings (event tracking on as well as off), not a point added or removed.
    let extra = |r: &HistoryPoint, side: &str| Change::NotComparable {
        reason: format!(
            "{side} also measured this point with {}; the other side did not",
            variant(r).unwrap_or_else(|| settings_text(&key.kind, &r.params))
        ),
        lost: false,
    };
    for (i, b) in base.iter().enumerate() {
        if !pairs.iter().any(|p| p.0 == i) {
            let ctx = RowContext {
                gpu,
                key,
                settings: Vec::new(),
                variant: variant(b.0),
            };
            if head.is_empty() {
                compare_rows(&ctx, Some(*b), None, opts, out);
            } else {
                unpaired(&ctx, *b, true, extra(b.0, "base"), out);
            }
        }
    }
    for (j, h) in head.iter().enumerate() {
        if !pairs.iter().any(|p| p.1 == j) {
            let ctx = RowContext {
                gpu,
                key,
                settings: Vec::new(),
                variant: variant(h.0),
            };
            if base.is_empty() {
                compare_rows(&ctx, None, Some(*h), opts, out);
            } else {
                unpaired(&ctx, *h, false, extra(h.0, "head"), out);
            }
        }
    }
}

/// One line per quantity of a row that has no partner on the other side.
fn unpaired(ctx: &RowContext, (r, id): Row, is_base: bool, change: Change, out: &mut Vec<Line>) {
    let stats: Vec<String> = if r.stats.is_empty() {
        vec!["-".to_string()]
    } else {
        r.stats.keys().cloned().collect()
    };
    for stat in stats {
        let side = r.stats.get(&stat).map(|s| Side::of(s, id, r));
        let (base, head) = if is_base { (side, None) } else { (None, side) };
        out.push(Line {
            gpu: ctx.gpu.to_string(),
            point: ctx.key.clone(),
            settings: ctx.settings.clone(),
            variant: ctx.variant.clone(),
            stat,
            base,
            head,
            change: change.clone(),
            control: None,
            rule: None,
            confirm: false,
        });
    }
}

/// What every line of one pair of rows shares.
struct RowContext<'a> {
    gpu: &'a str,
    key: &'a Identity,
    settings: Vec<String>,
    variant: Option<String>,
}

/// A row that fails in head where base did not fail (measured it, or skipped it): a
/// regression, whatever base held.
fn newly_failed(b: &HistoryPoint, h: &HistoryPoint) -> bool {
    h.status == Status::Failed && b.status != Status::Failed
}

fn compare_rows(
    ctx: &RowContext,
    base: Option<Row>,
    head: Option<Row>,
    opts: &Options,
    out: &mut Vec<Line>,
) {
    let line = |stat: &str, b: Option<Side>, h: Option<Side>, change: Change| Line {
        gpu: ctx.gpu.to_string(),
        point: ctx.key.clone(),
        settings: ctx.settings.clone(),
        variant: ctx.variant.clone(),
        stat: stat.to_string(),
        base: b,
        head: h,
        change,
        control: None,
        rule: None,
        confirm: false,
    };
    let stat_names = |r: &HistoryPoint| -> Vec<String> {
        if r.stats.is_empty() {
            vec!["-".to_string()]
        } else {
            r.stats.keys().cloned().collect()
        }
    };
    let side =
        |r: &HistoryPoint, id: &str, stat: &str| r.stats.get(stat).map(|s| Side::of(s, id, r));
    match (base, head) {
        (None, None) => {}
        (Some((b, bid)), None) => {
            for s in stat_names(b) {
                out.push(line(&s, side(b, bid, &s), None, Change::Removed));
            }
        }
        (None, Some((h, hid))) => {
            for s in stat_names(h) {
                out.push(line(&s, None, side(h, hid, &s), Change::Added));
            }
        }
        (Some((b, bid)), Some((h, hid))) => {
            if newly_failed(b, h) {
                for s in stat_names(b) {
                    out.push(line(&s, side(b, bid, &s), None, Change::Failed));
                }
                return;
            }
            if !sampled(b) || !sampled(h) {
                let lost = b.status == Status::Ok && h.status == Status::Skipped;
                let reason = if lost {
                    "measured in base, skipped in head: head lost this point".to_string()
                } else if b.status != Status::Ok || h.status != Status::Ok {
                    format!(
                        "status {} in base, {} in head",
                        status_word(b.status),
                        status_word(h.status)
                    )
                } else {
                    "no sampled statistics (metrics only)".to_string()
                };
                let stat = if b.stats.is_empty() && h.stats.is_empty() {
                    "-".to_string()
                } else {
                    b.stats
                        .keys()
                        .chain(h.stats.keys())
                        .next()
                        .cloned()
                        .unwrap()
                };
                out.push(line(
                    &stat,
                    side(b, bid, &stat),
                    side(h, hid, &stat),
                    Change::NotComparable { reason, lost },
                ));
                return;
            }
            let names: BTreeSet<&String> = b.stats.keys().chain(h.stats.keys()).collect();
            for s in names {
                let change = match (b.stats.get(s), h.stats.get(s)) {
                    (Some(bs), Some(hs)) => {
                        Change::Compared(judge(bs, hs, Direction::of_stat(s), opts.min_effect))
                    }
                    (Some(_), None) => Change::Removed,
                    _ => Change::Added,
                };
                out.push(line(s, side(b, bid, s), side(h, hid, s), change));
            }
        }
    }
}

/// Compares two sets of runs point by point.
///
/// GPUs are paired first: when each side ran on exactly one GPU the two are compared (even
/// across models, e.g. H100 against H200); otherwise runs pair by equal GPU name and a GPU on
/// one side only shows as added or removed points. Within a GPU, a point is matched on its
/// identity (`crate::identity`: kind, benchmark, implementation, problem parameters); settings
/// that differ are listed on the line. When a side has several runs holding the same point,
/// the newest run's rows are used (and a note says so).
pub fn compare(
    base_label: &str,
    base: &[HistoryRun],
    head_label: &str,
    head: &[HistoryRun],
    opts: &Options,
) -> Report {
    let bg = group_by_gpu(base);
    let hg = group_by_gpu(head);
    let mut pairs: Vec<GpuPair> = Vec::new();
    let mut notes = Vec::new();
    if bg.len() == 1 && hg.len() == 1 {
        let (bn, bruns) = bg.iter().next().unwrap();
        let (hn, hruns) = hg.iter().next().unwrap();
        let gpu = if bn == hn {
            bn.clone()
        } else {
            notes.push(format!("comparing across GPUs: base on {bn}, head on {hn}"));
            format!("{bn} -> {hn}")
        };
        pairs.push((gpu, Some(bruns), Some(hruns)));
    } else {
        let names: BTreeSet<&String> = bg.keys().chain(hg.keys()).collect();
        for n in names {
            pairs.push((n.clone(), bg.get(n), hg.get(n)));
        }
    }
    let mut lines = Vec::new();
    let (mut base_runs, mut head_runs) = (Vec::new(), Vec::new());
    let empty = Vec::new();
    let mut ceilings = BTreeMap::new();
    let mut two_machines = BTreeSet::new();
    for (gpu, b, h) in pairs {
        if let (Some(b), Some(h)) = (b, h) {
            notes.extend(super::machines::note(&gpu, b, h));
            if !super::machines::same_machine(b, h) {
                two_machines.insert(gpu.clone());
            }
            for (kind, moves) in super::drift::ceiling_moves(b, h) {
                ceilings.insert((gpu.clone(), kind), moves);
            }
        }
        let bp = points(b.unwrap_or(&empty), "base", &opts.ignore_params, &mut notes);
        let hp = points(h.unwrap_or(&empty), "head", &opts.ignore_params, &mut notes);
        let keys: BTreeSet<&Identity> = bp.rows.keys().chain(hp.rows.keys()).collect();
        for k in keys {
            compare_point(
                &gpu,
                k,
                bp.rows.get(k).map_or(&[][..], |v| v.as_slice()),
                hp.rows.get(k).map_or(&[][..], |v| v.as_slice()),
                opts,
                &mut lines,
            );
        }
        base_runs.extend(bp.runs);
        head_runs.extend(hp.runs);
    }
    let drifts = super::drift::apply(&mut lines, &ceilings, &two_machines, opts.min_effect);
    let head_all: Vec<&HistoryRun> = head.iter().collect();
    let base_all: Vec<&HistoryRun> = base.iter().collect();
    super::processes::apply(
        &mut lines,
        &base_all,
        &head_all,
        &opts.history,
        &two_machines,
        opts.min_effect,
        &opts.ignore_params,
    );
    super::boards::apply(
        &mut lines,
        &head_all,
        &opts.history,
        &two_machines,
        &opts.ignore_params,
    );
    notes.extend(super::code::note(&super::code::counts(
        &lines,
        &base_all,
        &head_all,
        &opts.ignore_params,
    )));
    for ((gpu, kind, stat), d) in &drifts {
        notes.push(format!(
            "{gpu}, {kind} {stat}: {}; our implementations are judged against that",
            d.text()
        ));
    }
    if let Some(c) = &opts.control {
        let n = super::control::apply_control(&mut lines, c);
        if n > 0 {
            notes.push(format!(
                "{n} FASTER/SLOWER verdicts became UNCERTAIN: the control {c} moved at the same \
                 points (run-to-run drift of the machine, not of the code)"
            ));
        }
    }
    for (side, runs) in [("base", &base_runs), ("head", &head_runs)] {
        let n = runs.iter().filter(|u: &&RunUsed| u.synthetic).count();
        if n > 0 {
            notes.push(format!(
                "{side}: {n} of its {} runs are SYNTHETIC (drawn by `history synth`, not measured)",
                runs.len()
            ));
        }
    }
    for l in &mut lines {
        l.confirm = l.needs_confirmation(opts.min_effect);
    }
    // Judged lines first (table order), then added, removed and the rest.
    lines.sort_by_key(|l| match l.change {
        Change::Compared(_) | Change::Failed => 0,
        Change::Added => 1,
        Change::Removed => 2,
        Change::NotComparable { .. } => 3,
    });
    Report {
        base_label: base_label.to_string(),
        head_label: head_label.to_string(),
        min_effect: opts.min_effect,
        base_runs,
        head_runs,
        lines,
        notes,
        hidden_same: 0,
    }
}
