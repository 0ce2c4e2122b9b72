//! Chart view models: traces of pre-computed points the browser only filters and plots,
//! and the same data as a pre-formatted table.

use super::fmt;
use super::points::Point;
use serde::Serialize;
use std::collections::BTreeMap;

/// Filter coordinates of a point or trace: dim -> value (see `filters::DIMS`).
pub type Dims = BTreeMap<String, String>;

/// How `dashboard.js` draws a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    /// Traces of points on x/y axes (bars, markers, lines).
    Xy,
    /// Cells on a category grid; several cells on one spot show the largest `z`.
    Heatmap,
    /// Like `Xy`, but `y` is a time and the browser divides the chosen baseline's time at the
    /// same group (`g`) by it.
    Speedup,
    /// Horizontal bars on a time axis, one lane per trace: a point's `x` is its start and `y`
    /// its duration; a guide trace's first and last `x` frame the window.
    Timeline,
}

/// One plotted point. `lo`/`hi` are absolute error-bar ends; `hover` is plain text, one line per
/// `\n` (the browser escapes it).
#[derive(Debug, Clone, Serialize)]
pub struct Pt {
    pub x: serde_json::Value,
    pub y: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    pub hover: String,
    pub f: Dims,
    /// Group key for `Speedup` charts: points with equal `g` are compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub g: Option<String>,
}

/// One series.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub name: String,
    pub color: String,
    /// "bar", "markers", "lines", "lines+markers".
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Bar fill pattern ("/", "x", ...), to tell GPUs apart while colors stay per implementation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Charts with `offset_markers`: traces with the same group share one slot beside the
    /// category (an implementation's dot and its dashes); without one, each trace has its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Plot against the right-hand axis.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub y2: bool,
    /// Trace-wide filter coordinates (a ceiling line per GPU and dtype, say).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub f: Dims,
    /// A reference line, not data: left out of the data table.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub guide: bool,
    /// Shares the legend entry of an earlier trace of the same name (the same kernel on
    /// another GPU, told apart by its symbol).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_legend: bool,
    /// Text written on a guide line's last point ("H200 bf16 771 TF/s"); a labelled guide
    /// has no legend entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub points: Vec<Pt>,
}

impl Trace {
    pub fn new(name: impl Into<String>, color: impl Into<String>, mode: &str) -> Self {
        Trace {
            name: name.into(),
            color: color.into(),
            mode: mode.into(),
            dash: None,
            symbol: None,
            pattern: None,
            group: None,
            y2: false,
            f: Dims::new(),
            guide: false,
            no_legend: false,
            label: None,
            points: Vec::new(),
        }
    }

    /// A timeline's dotted frame from x = 0 to `width` (µs): the window the chart draws
    /// (a guide, not data).
    pub fn window_frame(name: &str, width: f64) -> Self {
        let mut frame = Trace::new(name, super::palette::GUIDE, "lines");
        frame.guide = true;
        frame
            .points
            .push(pt_num(0.0, 0.0, String::new(), Dims::new()));
        frame
            .points
            .push(pt_num(width, 0.0, String::new(), Dims::new()));
        frame
    }
}

/// A horizontal line across the plot, filtered like a point.
#[derive(Debug, Clone, Serialize)]
pub struct HLine {
    pub y: f64,
    pub label: String,
    pub color: String,
    pub f: Dims,
}

/// One heatmap cell.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub x: String,
    pub y: String,
    pub z: f64,
    /// `z` formatted, shown in the cell.
    pub label: String,
    pub hover: String,
    pub f: Dims,
}

/// A data table: pre-formatted cells, each row with the filter coordinates of its point.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TableView {
    pub columns: Vec<String>,
    pub rows: Vec<TableRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TableRow {
    pub cells: Vec<String>,
    pub f: Dims,
    /// The unformatted number behind each cell that shows one (null elsewhere): the CSV and
    /// JSON downloads write these, the table shows `cells`. Empty for tables without numbers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<Option<f64>>,
}

impl TableRow {
    /// A row of text cells only.
    pub fn text(cells: Vec<String>, f: Dims) -> Self {
        TableRow {
            cells,
            f,
            raw: Vec::new(),
        }
    }
}

/// A chart and its data table.
#[derive(Debug, Clone, Serialize)]
pub struct ChartView {
    /// DOM id, unique in the page.
    pub id: String,
    pub title: String,
    /// What was measured where (GPUs, commits, dates) and the statistic drawn, from
    /// `super::measured::subtitle`.
    pub subtitle: String,
    /// How to read it: what is plotted, from which fields.
    pub caption: String,
    pub kind: ChartKind,
    pub x_title: String,
    pub y_title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y2_title: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub z_title: String,
    /// Heatmaps: color by log10(z) (the colorbar still reads in z units).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub log_z: bool,
    pub log_x: bool,
    pub log_y: bool,
    /// Category order of the x axis (xy charts with text x, and heatmaps).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub x_order: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub y_order: Vec<String>,
    pub traces: Vec<Trace>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<Cell>,
    /// `Speedup` charts: implementations to choose the baseline from, default first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub baselines: Vec<String>,
    /// Horizontal reference lines (parity, 100% of cuBLAS, a ceiling per GPU).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hlines: Vec<HLine>,
    /// Half width: few categories, fits beside another compact chart.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub compact: bool,
    /// Marker traces sharing a category sit side by side (one slot per trace or `group`),
    /// not on one spot where they would hide each other.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offset_markers: bool,
    /// Bars of the traces stacked instead of grouped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stacked: bool,
    /// Clicking a point shows its hover text in a panel below the chart.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub click_details: bool,
    /// Too many series for a legend: the hover names each.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hide_legend: bool,
    /// Why nothing is drawn, when the artifacts lack what this chart needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty: Option<String>,
    /// Chart-wide filter coordinates: a panel of one GPU (`pages::common::per_gpu`) hides
    /// when the GPU filter picks another.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub f: Dims,
    /// The subtitle of the rows of each GPU, shown instead of `subtitle` when the GPU filter
    /// picks one (empty when the chart draws one GPU).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub subtitle_by_gpu: BTreeMap<String, String>,
    pub table: TableView,
}

impl ChartView {
    pub fn new(id: &str, title: &str, caption: &str, x_title: &str, y_title: &str) -> Self {
        ChartView {
            id: id.into(),
            title: title.into(),
            subtitle: String::new(),
            caption: caption.into(),
            kind: ChartKind::Xy,
            x_title: x_title.into(),
            y_title: y_title.into(),
            y2_title: None,
            z_title: String::new(),
            log_z: false,
            log_x: false,
            log_y: false,
            x_order: Vec::new(),
            y_order: Vec::new(),
            traces: Vec::new(),
            cells: Vec::new(),
            baselines: Vec::new(),
            hlines: Vec::new(),
            compact: false,
            offset_markers: false,
            stacked: false,
            click_details: false,
            hide_legend: false,
            empty: None,
            f: Dims::new(),
            subtitle_by_gpu: BTreeMap::new(),
            table: TableView::default(),
        }
    }

    /// The subtitle from the rows the chart draws and `stat`, what it draws of each
    /// (`super::measured`).
    pub fn measured(mut self, rows: &[Point], stat: &str) -> Self {
        self.subtitle = super::measured::subtitle(rows, stat);
        self.subtitle_by_gpu = super::measured::subtitle_by_gpu(rows, stat);
        self
    }

    /// Whether any data point (not a guide line) or cell is present.
    pub fn has_data(&self) -> bool {
        !self.cells.is_empty() || self.traces.iter().any(|t| !t.guide && !t.points.is_empty())
    }

    /// Drops empty traces, applies the legend rule (`super::rules`), records why the chart is
    /// empty, and builds its data table.
    pub fn finish(mut self, when_empty: &str) -> Self {
        self.traces.retain(|t| !t.points.is_empty());
        super::rules::enforce(&mut self);
        if !self.has_data() {
            self.traces.clear();
            self.empty = Some(when_empty.to_string());
        }
        self.table = match self.kind {
            ChartKind::Heatmap => self.heatmap_table(),
            _ => self.xy_table(),
        };
        self
    }

    fn xy_table(&self) -> TableView {
        let ranged = self
            .traces
            .iter()
            .any(|t| t.points.iter().any(|p| p.lo.is_some()));
        let mut columns = vec![
            "series".to_string(),
            self.x_title.clone(),
            self.y_title.clone(),
        ];
        if self.kind == ChartKind::Speedup {
            columns[2] = "P50 time (µs)".into();
        }
        if ranged {
            columns.push("whisker low".into());
            columns.push("whisker high".into());
        }
        columns.push("details".into());
        let mut rows = Vec::new();
        for t in self.traces.iter().filter(|t| !t.guide) {
            for p in &t.points {
                let x_num = p.x.as_f64();
                let x = match &p.x {
                    serde_json::Value::Number(n) => fmt::num(n.as_f64().unwrap_or(f64::NAN)),
                    serde_json::Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                let mut cells = vec![t.name.clone(), x, fmt::num(p.y)];
                let mut raw = vec![None, x_num, Some(p.y)];
                if ranged {
                    for v in [p.lo, p.hi] {
                        cells.push(v.map(fmt::num).unwrap_or_default());
                        raw.push(v);
                    }
                }
                cells.push(p.hover.replace('\n', " · "));
                raw.push(None);
                let mut f = t.f.clone();
                f.extend(p.f.iter().map(|(k, v)| (k.clone(), v.clone())));
                rows.push(TableRow { cells, f, raw });
            }
        }
        TableView { columns, rows }
    }

    fn heatmap_table(&self) -> TableView {
        let columns = vec![
            self.y_title.clone(),
            self.x_title.clone(),
            self.z_title.clone(),
            "details".into(),
        ];
        let rows = self
            .cells
            .iter()
            .map(|c| TableRow {
                cells: vec![
                    c.y.clone(),
                    c.x.clone(),
                    fmt::num(c.z),
                    c.hover.replace('\n', " · "),
                ],
                f: c.f.clone(),
                raw: vec![None, None, Some(c.z), None],
            })
            .collect();
        TableView { columns, rows }
    }

    /// What the browser needs: everything but the texts and the table.
    pub fn browser_data(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(o) = v.as_object_mut() {
            o.remove("table");
            o.remove("caption");
            o.remove("subtitle");
            o.remove("title");
        }
        v
    }
}

/// A point with x as a number.
pub fn pt_num(x: f64, y: f64, hover: String, f: Dims) -> Pt {
    Pt {
        x: serde_json::json!(x),
        y,
        lo: None,
        hi: None,
        hover,
        f,
        g: None,
    }
}

/// A point with x as a category.
pub fn pt_cat(x: &str, y: f64, hover: String, f: Dims) -> Pt {
    Pt {
        x: serde_json::Value::String(x.to_string()),
        y,
        lo: None,
        hi: None,
        hover,
        f,
        g: None,
    }
}

/// Builds traces keyed by name, in first-seen order.
#[derive(Default)]
pub struct TraceSet {
    order: Vec<String>,
    traces: BTreeMap<String, Trace>,
}

impl TraceSet {
    /// The trace called `name`, created with `make` the first time.
    pub fn get(&mut self, name: &str, make: impl FnOnce() -> Trace) -> &mut Trace {
        if !self.traces.contains_key(name) {
            self.order.push(name.to_string());
            self.traces.insert(name.to_string(), make());
        }
        self.traces.get_mut(name).expect("inserted above")
    }

    pub fn into_vec(mut self) -> Vec<Trace> {
        self.order
            .iter()
            .filter_map(|n| self.traces.remove(n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_chart_says_why_and_a_full_one_gets_a_table() {
        let c = ChartView::new("c", "t", "", "x", "y").finish("no rows with gbps");
        assert_eq!(c.empty.as_deref(), Some("no rows with gbps"));
        let mut c = ChartView::new("c", "t", "", "shape", "GB/s");
        let mut t = Trace::new("candle", "#000", "bar");
        let mut p = pt_cat("4096×4096", 1234.6, "a\nb".into(), Dims::new());
        p.lo = Some(1.0);
        p.hi = Some(2.0);
        t.points.push(p);
        c.traces.push(t);
        let c = c.finish("none");
        assert!(c.empty.is_none());
        assert_eq!(
            c.table.rows[0].cells,
            ["candle", "4096×4096", "1,235", "1", "2", "a · b"]
        );
        // The downloads get the numbers as measured, not as shown.
        assert_eq!(
            c.table.rows[0].raw,
            [None, None, Some(1234.6), Some(1.0), Some(2.0), None]
        );
        assert!(c.browser_data().get("table").is_none());
    }
}
