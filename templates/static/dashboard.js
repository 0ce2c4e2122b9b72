// opbench dashboard: reads the page's embedded data, applies the filters kept in the URL hash,
// and draws every chart with Plotly. All numbers were computed by the generator; this file only
// filters points, divides by a chosen baseline (speedup charts) and plots.
(function () {
  "use strict";

  var el = document.getElementById("opbench-data");
  var data = el ? JSON.parse(el.textContent) : { filters: [], charts: [] };
  var dims = data.filters || [];
  var FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

  // Artifact text is shown as text: Plotly reads a little HTML in labels, so escape it.
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }
  function hoverHtml(h) {
    return esc(h).split("\n").join("<br>");
  }

  // A point's hover: the generator's text, then the notes every point may carry among its
  // coordinates (`Point::dims`), written here once for every chart of every page.
  var NOTES = [["throttled", "throttled"], ["clocks", "clocks"]];
  function hoverOf(p) {
    var h = p.hover;
    NOTES.forEach(function (n) {
      if (p.f && p.f[n[0]]) h += "\n" + n[1] + ": " + p.f[n[0]];
    });
    return h;
  }

  function readState() {
    var s = {};
    var h = window.location.hash.replace(/^#/, "");
    if (!h) return s;
    h.split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i < 0) return;
      try {
        s[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
      } catch (e) { /* a hand-edited hash: ignore that pair */ }
    });
    return s;
  }

  function writeState(s) {
    var parts = Object.keys(s).filter(function (k) { return s[k]; }).sort().map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(s[k]);
    });
    var hash = parts.length ? "#" + parts.join("&") : " ";
    try {
      history.replaceState(null, "", hash === " " ? window.location.pathname + window.location.search : hash);
    } catch (e) {
      window.location.hash = parts.join("&");
    }
  }

  // A point (or trace) passes when each active filter either matches or the point lacks that dim.
  function passes(f, state, skip) {
    if (!f) return true;
    for (var i = 0; i < dims.length; i++) {
      var d = dims[i];
      if (d === skip) continue;
      var want = state[d];
      if (want && Object.prototype.hasOwnProperty.call(f, d) && f[d] !== want) return false;
    }
    return true;
  }

  function elementPasses(node, state) {
    for (var i = 0; i < dims.length; i++) {
      var d = dims[i];
      var want = state[d];
      var have = node.getAttribute("data-f-" + d);
      if (want && have !== null && have !== want) return false;
    }
    return true;
  }

  function axisType(log, categorical) {
    if (log) return "log";
    return categorical ? "category" : "-";
  }

  // Phone width: smaller margins and no mode bar (it would cover the legend; the data table's
  // downloads stay).
  var PHONE = 700;
  function phone() { return window.innerWidth <= PHONE; }

  // The legend rule: hidden only where the generator says (src/site/rules.rs), whatever the
  // width, so a colour is always named.
  function legendRule(layout, traces, c) {
    if (c.hide_legend) {
      layout.showlegend = false;
      return;
    }
    // A phone's legend wraps to many rows: add their height so the plot keeps its own.
    var entries = traces.filter(function (t) { return t.showlegend !== false; }).length;
    if (phone() && entries > 3) layout.height += 22 * Math.ceil(entries / 2);
  }

  // Category labels along x that stay apart: flat where they fit, slanted, upright, or, where
  // even upright labels would touch, every k-th label (the hover and the data table name
  // each). Long labels are cut in the middle so their ends, which tell them apart, stay.
  // A label character's width at the page's font, a little generous.
  function charPx(fontSize) { return fontSize * 0.64; }
  // Labels cut to `max` characters in the middle, or to the fewest more that keeps them
  // apart.
  function cutLabels(raw, max) {
    var longest = raw.reduce(function (m, s) { return Math.max(m, s.length); }, 0);
    for (var n = max; n < longest; n++) {
      var cut = raw.map(function (s) {
        return s.length > n ? s.slice(0, Math.ceil(n / 2) - 1) + "…" + s.slice(s.length - Math.floor(n / 2)) : s;
      });
      var distinct = {};
      cut.forEach(function (s) { distinct[s] = true; });
      if (Object.keys(distinct).length === cut.length) return cut;
    }
    return raw.slice();
  }
  // `room`: the pixels left of the chart's width for what is not the plot (the y axis, a
  // colour bar).
  function categoryTicks(axis, raw, div, fontSize, room, plotWidth) {
    var cut = cutLabels(raw, phone() ? 18 : 32);
    var longest = cut.reduce(function (m, s) { return Math.max(m, s.length); }, 0);
    var width = plotWidth || Math.max(120, (div.clientWidth || window.innerWidth) - room);
    var per = width / Math.max(1, raw.length);
    var line = fontSize * 1.35;
    var step = 1;
    var angle = 0;
    var CHAR_PX = charPx(fontSize);
    if (longest * CHAR_PX + 8 > per) {
      if (per * Math.sin(40 * Math.PI / 180) >= line) angle = -40;
      else {
        angle = -90;
        step = Math.max(1, Math.ceil(line / per));
      }
    }
    axis.tickmode = "array";
    axis.tickvals = raw.map(esc).filter(function (_, i) { return i % step === 0; });
    axis.ticktext = cut.map(esc).filter(function (_, i) { return i % step === 0; });
    axis.tickangle = angle;
    // Slanted labels take height from the plot: give it back.
    var extra = angle === 0 ? 0 : Math.min(300, longest * CHAR_PX * (angle === -40 ? 0.64 : 1) - 20);
    return Math.max(0, extra);
  }

  // After drawing: the plot's real width may leave less room than estimated (long y labels,
  // a colour bar); lay the category labels out again for it where that changes them.
  function refitTicks(div, raw, fontSize) {
    var size = div._fullLayout && div._fullLayout._size;
    var ax = div.layout && div.layout.xaxis;
    if (!size || !ax || !raw.length) return Promise.resolve();
    var again = {};
    var extra = categoryTicks(again, raw, div, fontSize, 0, size.w);
    if (again.tickangle === ax.tickangle && again.tickvals.length === (ax.tickvals || []).length) {
      return Promise.resolve();
    }
    return Plotly.relayout(div, { "xaxis.tickangle": again.tickangle, "xaxis.tickvals": again.tickvals,
      "xaxis.ticktext": again.ticktext, height: div.layout.height - (div._extraTicks || 0) + extra })
      .then(function () { div._extraTicks = extra; });
  }

  // Log axes labelled at 1, 2 and 5 of each decade, or at the powers of ten alone where
  // three labels a decade would not fit `pixels`, each label taking `labelPx` (its height on
  // a vertical axis, its width on a horizontal one): all nine digits crowd a short axis.
  function logTicks(axis, values, pixels, labelPx) {
    if (axis.type !== "log") return;
    var pos = values.filter(function (v) { return typeof v === "number" && v > 0; });
    if (!pos.length) return;
    var decades = Math.max(1, Math.log10(Math.max.apply(null, pos) / Math.min.apply(null, pos)) + 0.6);
    axis.dtick = pixels / (decades * 3) >= labelPx ? "D2" : 1;
  }

  // Charts with offset markers: the trace's slot beside its category (`scattermode` group),
  // shared by the traces of one `group` (an implementation's dot and its dashes), else its own.
  function offsetSlot(tr, t, index) {
    tr.offsetgroup = t.group !== undefined ? esc(t.group) : "slot" + index;
    tr.alignmentgroup = "all";
  }

  function baseLayout(c) {
    var narrow = phone();
    return {
      font: { family: FONT, size: narrow ? 11 : 12, color: "#1f2937" },
      margin: narrow ? { l: 50, r: c.y2_title ? 50 : 8, t: 30, b: 10 } : { l: 70, r: c.y2_title ? 70 : 20, t: 30, b: 10 },
      height: 430,
      paper_bgcolor: "#ffffff",
      plot_bgcolor: "#ffffff",
      hovermode: "closest",
      hoverlabel: { align: "left", font: { family: FONT, size: 12 } },
      legend: { orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom", font: { size: 11 } },
      barmode: c.stacked ? "stack" : "group",
      bargap: 0.18,
      xaxis: { title: { text: esc(c.x_title) }, automargin: true, gridcolor: "#e5e7eb",
        zeroline: false, linecolor: "#9ca3af" },
      yaxis: { title: { text: esc(c.y_title) }, automargin: true, gridcolor: "#e5e7eb",
        zeroline: false, linecolor: "#9ca3af", type: c.log_y ? "log" : "-",
        rangemode: c.log_y ? "normal" : "tozero" },
      shapes: [],
      annotations: []
    };
  }

  function xyTraces(c, state) {
    var out = [];
    var labels = [];
    var cats = {};
    var baseline = null;
    if (c.kind === "speedup") {
      var b = state.baseline && c.baselines.indexOf(state.baseline) >= 0 ? state.baseline : c.baselines[0];
      baseline = {};
      // The baseline's times ignore the implementation filter: it is chosen separately.
      c.traces.forEach(function (t) {
        t.points.forEach(function (p) {
          if (p.f.impl === b && passes(p.f, state, "impl")) baseline[p.g] = p.y;
        });
      });
    }
    c.traces.forEach(function (t) {
      if (!passes(t.f, state)) return;
      var pts = t.points.filter(function (p) { return passes(p.f, state); });
      var xs = [], ys = [], texts = [], up = [], down = [], hasErr = false;
      pts.forEach(function (p) {
        var y = p.y;
        var hover = hoverOf(p);
        if (baseline) {
          var base = baseline[p.g];
          if (base === undefined) return;
          y = base / p.y;
          hover = hover + "\nspeedup vs baseline " + y.toFixed(2) + "×";
        }
        xs.push(typeof p.x === "string" ? esc(p.x) : p.x);
        ys.push(y);
        texts.push(hoverHtml(hover));
        if (p.lo !== undefined && p.hi !== undefined) {
          hasErr = true;
          up.push(Math.max(0, p.hi - y));
          down.push(Math.max(0, y - p.lo));
        } else {
          up.push(0);
          down.push(0);
        }
        if (typeof p.x === "string") cats[p.x] = true;
      });
      if (!xs.length) return;
      var bar = t.mode === "bar";
      var tr = {
        type: bar ? "bar" : "scatter",
        name: esc(t.name),
        x: xs,
        y: ys,
        hovertext: texts,
        hoverinfo: "text",
        yaxis: t.y2 ? "y2" : "y",
        marker: { color: t.color },
        legendgroup: esc(t.name),
        showlegend: !t.no_legend
      };
      if (t.label !== undefined) {
        // A labelled guide (a roof): its name is written on the line (drawXy), not in the
        // legend; an empty label shares a near line's.
        tr.showlegend = false;
        if (t.label) labels.push({ text: t.label, y: ys[ys.length - 1], color: t.color });
      }
      if (!bar) {
        tr.mode = t.mode;
        tr.marker.size = t.symbol === "line-ew-open" ? 14 : 8;
        if (t.symbol) tr.marker.symbol = t.symbol;
        tr.line = { color: t.color, width: 2 };
        if (t.dash) tr.line.dash = t.dash;
      } else if (t.pattern) {
        tr.marker.pattern = { shape: t.pattern, fillmode: "overlay", fgcolor: "#ffffff", fgopacity: 0.85, size: 6 };
      }
      if (c.offset_markers && !bar) offsetSlot(tr, t, out.length);
      if (hasErr) {
        tr.error_y = { type: "data", symmetric: false, array: up, arrayminus: down,
          color: t.color, thickness: 1.2, width: 3 };
      }
      out.push(tr);
    });
    var raw = (c.x_order || []).filter(function (x) { return cats[x]; });
    return { traces: out, categories: raw.map(esc), raw: raw, anyCategory: Object.keys(cats).length > 0, labels: labels };
  }

  function drawXy(div, c, state) {
    var r = xyTraces(c, state);
    var layout = baseLayout(c);
    layout.xaxis.type = axisType(c.log_x, r.anyCategory);
    if (c.log_x && !r.anyCategory) {
      // Few distinct whole x values (batch sizes): tick exactly at them.
      var seen = {};
      r.traces.forEach(function (t) { t.x.forEach(function (x) { seen[x] = true; }); });
      var xs = Object.keys(seen).map(Number).sort(function (a, b) { return a - b; });
      var whole = xs.every(function (x) { return x === Math.round(x); });
      if (xs.length && xs.length <= 12 && whole) {
        layout.xaxis.tickvals = xs;
        layout.xaxis.ticktext = xs.map(String);
      }
    }
    if (r.anyCategory) {
      layout.xaxis.categoryorder = "array";
      layout.xaxis.categoryarray = r.categories.length ? r.categories : undefined;
      div._extraTicks = categoryTicks(layout.xaxis, r.raw, div, layout.font.size,
        (phone() ? 60 : 100) + (c.y2_title ? 60 : 0));
      layout.height += div._extraTicks;
    }
    if (c.y2_title) {
      layout.yaxis2 = { title: { text: esc(c.y2_title) }, overlaying: "y", side: "right",
        automargin: true, showgrid: false, zeroline: false, rangemode: "tozero" };
    }
    (c.hlines || []).forEach(function (h) {
      if (!passes(h.f, state)) return;
      // Annotations on a log axis take log10 coordinates (shapes take data values).
      var hy = c.log_y ? Math.log10(h.y) : h.y;
      layout.shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: h.y, y1: h.y,
        line: { color: h.color, width: 1.5, dash: "dash" } });
      layout.annotations.push({ xref: "paper", x: 1, xanchor: "right", yref: "y", y: hy,
        yanchor: "bottom", text: esc(h.label), showarrow: false,
        font: { size: 11, color: h.color }, bgcolor: "rgba(255,255,255,0.8)" });
    });
    r.labels.forEach(function (l) {
      // Above the line at its right end (nothing lies above a roof); one line per roof.
      layout.annotations.push({ xref: "paper", x: 1, xanchor: "right", yref: "y",
        y: c.log_y ? Math.log10(l.y) : l.y, yanchor: "bottom", text: hoverHtml(l.text),
        showarrow: false, align: "right", font: { size: 11, color: l.color },
        bgcolor: "rgba(255,255,255,0.85)" });
    });
    if (!r.traces.length) noPoints(layout);
    legendRule(layout, r.traces, c);
    var all = function (k) {
      return r.traces.reduce(function (a, t) { return a.concat(t[k] || []); }, []);
    };
    var plotW = (div.clientWidth || window.innerWidth) - (phone() ? 60 : 100);
    // An x label ("100M", "1000") is up to five characters wide; a y label one line high.
    logTicks(layout.xaxis, all("x"), plotW, layout.font.size * 3.5);
    logTicks(layout.yaxis, all("y"), layout.height - 170, layout.font.size * 1.6);
    if (c.offset_markers) {
      layout.scattermode = "group";
      layout.scattergap = 0.25;
    }
    return Plotly.react(div, r.traces, layout, config(c)).then(function () {
      return r.anyCategory ? refitTicks(div, r.raw, layout.font.size) : null;
    });
  }

  function drawHeatmap(div, c, state) {
    var cells = c.cells.filter(function (p) { return passes(p.f, state); });
    var xs = {}, ys = {};
    cells.forEach(function (p) { xs[p.x] = true; ys[p.y] = true; });
    var xo = c.x_order.filter(function (x) { return xs[x]; });
    var yo = c.y_order.filter(function (y) { return ys[y]; });
    var xi = {}, yi = {};
    xo.forEach(function (x, i) { xi[x] = i; });
    yo.forEach(function (y, i) { yi[y] = i; });
    var z = yo.map(function () { return xo.map(function () { return null; }); });
    var text = yo.map(function () { return xo.map(function () { return ""; }); });
    var label = yo.map(function () { return xo.map(function () { return ""; }); });
    var zmin = Infinity, zmax = -Infinity;
    cells.forEach(function (p) {
      var i = yi[p.y], j = xi[p.x];
      if (i === undefined || j === undefined) return;
      if (z[i][j] === null || p.z > z[i][j]) {
        z[i][j] = p.z;
        text[i][j] = hoverHtml(hoverOf(p));
        label[i][j] = esc(p.label);
      }
    });
    z.forEach(function (row) {
      row.forEach(function (v) {
        if (v !== null && v > 0) { zmin = Math.min(zmin, v); zmax = Math.max(zmax, v); }
      });
    });
    var colorbar = { title: { text: esc(c.z_title), side: "right" }, thickness: phone() ? 8 : 14 };
    if (c.log_z && zmax > 0) {
      // Color by log10(z); label the colorbar at 1-2-5 steps in z units.
      z = z.map(function (row) {
        return row.map(function (v) { return v !== null && v > 0 ? Math.log10(v) : null; });
      });
      var ticks = [];
      for (var e = Math.floor(Math.log10(zmin)); e <= Math.ceil(Math.log10(zmax)); e++) {
        [1, 2, 5].forEach(function (m) {
          var t = m * Math.pow(10, e);
          if (t >= zmin / 1.01 && t <= zmax * 1.01) ticks.push(t);
        });
      }
      colorbar.tickvals = ticks.map(Math.log10);
      colorbar.ticktext = ticks.map(function (t) { return String(+t.toPrecision(3)); });
    }
    var layout = baseLayout(c);
    layout.xaxis.type = "category";
    layout.yaxis.type = "category";
    layout.xaxis.gridcolor = layout.yaxis.gridcolor = "rgba(0,0,0,0)";
    layout.height = Math.max(300, 120 + 28 * yo.length);
    // Row labels cut on phones, so the cells keep the width.
    var yText = cutLabels(yo, phone() ? 14 : 40);
    layout.yaxis.tickmode = "array";
    layout.yaxis.tickvals = yo.map(esc);
    layout.yaxis.ticktext = yText.map(esc);
    var room = 40 + charPx(layout.font.size) * yText.reduce(function (m, s) { return Math.max(m, s.length); }, 0) +
      (phone() ? 50 : 80);
    div._extraTicks = categoryTicks(layout.xaxis, xo, div, layout.font.size, room);
    layout.height += div._extraTicks;
    // A cell's number only where the cell is wide enough to hold it.
    var cellPx = Math.max(120, (div.clientWidth || window.innerWidth) - room) / Math.max(1, xo.length);
    var widest = cells.reduce(function (m, p) { return Math.max(m, String(p.label).length); }, 0);
    var showText = xo.length <= 32 && yo.length <= 24 && widest * 6 <= cellPx;
    var traces = [];
    if (cells.length) {
      traces.push({
        type: "heatmap", x: xo.map(esc), y: yo.map(esc), z: z, hovertext: text, hoverinfo: "text",
        text: label, texttemplate: showText ? "%{text}" : "",
        colorscale: "Viridis", xgap: 1, ygap: 1, colorbar: colorbar,
        textfont: { size: xo.length > 16 ? 9 : 11 }
      });
    } else {
      noPoints(layout);
    }
    return Plotly.react(div, traces, layout, config(c)).then(function () {
      return cells.length ? refitTicks(div, xo, layout.font.size) : null;
    });
  }

  // Kernels as bars on a time axis: one lane per trace plus an "all" lane on top, so the white
  // gaps in it are the time no activity ran. A guide trace's x range frames the window.
  function drawTimeline(div, c, state) {
    var layout = baseLayout(c);
    var traces = [];
    var lanes = [];
    var all = { base: [], x: [], y: [], text: [] };
    c.traces.forEach(function (t) {
      if (t.guide) {
        var xs = t.points.map(function (p) { return p.x; });
        if (xs.length) {
          layout.shapes.push({ type: "rect", xref: "x", yref: "paper", x0: Math.min.apply(null, xs),
            x1: Math.max.apply(null, xs), y0: 0, y1: 1, line: { color: "#6b7280", width: 1, dash: "dot" },
            fillcolor: "rgba(0,0,0,0)" });
        }
        return;
      }
      if (!passes(t.f, state)) return;
      var pts = t.points.filter(function (p) { return passes(p.f, state); });
      if (!pts.length) return;
      var lane = esc(t.name);
      lanes.push(lane);
      var tr = { type: "bar", orientation: "h", name: lane, base: [], x: [], y: [], hovertext: [],
        hoverinfo: "text", marker: { color: t.color, line: { width: 0 } }, width: 0.8 };
      pts.forEach(function (p) {
        tr.base.push(p.x); tr.x.push(p.y); tr.y.push(lane); tr.hovertext.push(hoverHtml(hoverOf(p)));
        all.base.push(p.x); all.x.push(p.y); all.y.push("all activity"); all.text.push(hoverHtml(hoverOf(p)));
      });
      traces.push(tr);
    });
    if (traces.length) {
      traces.unshift({ type: "bar", orientation: "h", name: "all activity", base: all.base, x: all.x,
        y: all.y, hovertext: all.text, hoverinfo: "text", marker: { color: "#374151", line: { width: 0 } },
        width: 0.8 });
    } else {
      noPoints(layout);
    }
    layout.barmode = "overlay";
    layout.bargap = 0;
    layout.xaxis.title.text = esc(c.x_title);
    layout.xaxis.rangemode = "tozero";
    layout.yaxis.type = "category";
    layout.yaxis.title.text = "";
    layout.yaxis.rangemode = "normal";
    layout.yaxis.autorange = "reversed";
    layout.yaxis.categoryorder = "array";
    layout.yaxis.categoryarray = ["all activity"].concat(lanes);
    layout.height = Math.max(260, 110 + 34 * (lanes.length + 1));
    // A thousand 2 µs bars merge into one block at full width: with more than 150 activities,
    // open on a run of them so the gaps show (150, or a quarter of them when fewer than 600).
    // Which run: the densest (shortest span) from the first kernel on, which is the workload's
    // steady loop, where a multi-process job's first milliseconds are set-up copies and
    // memsets; the mode bar's autoscale shows the whole window.
    var SHOWN = Math.min(150, Math.max(30, Math.floor(all.base.length / 4)));
    if (all.base.length > 150) {
      var starts = all.base.map(function (b, i) { return [b, b + all.x[i]]; });
      starts.sort(function (a, b) { return a[0] - b[0]; });
      var firstKernel = Infinity;
      traces.forEach(function (tr) {
        if (tr.name === "all activity" || tr.name === "memcpy" || tr.name === "memset") return;
        tr.base.forEach(function (b) { if (b < firstKernel) firstKernel = b; });
      });
      var best = 0, bestSpan = Infinity;
      for (var i = 0; i + SHOWN <= starts.length; i++) {
        if (starts[i][0] < firstKernel && i + SHOWN < starts.length) continue;
        var span = starts[i + SHOWN - 1][0] - starts[i][0];
        if (span < bestSpan) { bestSpan = span; best = i; }
      }
      var s0 = starts[best][0], end = s0;
      for (var j = best; j < best + SHOWN; j++) end = Math.max(end, starts[j][1]);
      layout.xaxis.range = best === 0 ? [Math.min(0, s0), end] : [s0 - 0.02 * (end - s0), end];
      layout.xaxis.autorange = false;
    }
    legendRule(layout, traces, c);
    return Plotly.react(div, traces, layout, config(c));
  }

  // A clicked point's hover text, as lines in the panel under the chart (text, not HTML).
  function wireDetails(div, c) {
    if (!c.click_details || div.getAttribute("data-click") === "1" || !div.on) return;
    div.setAttribute("data-click", "1");
    div.on("plotly_click", function (ev) {
      var panel = document.getElementById("details-" + c.id);
      if (!panel || !ev || !ev.points || !ev.points.length) return;
      var p = ev.points[0];
      var h = p.hovertext !== undefined ? p.hovertext : (p.data.hovertext || [])[p.pointIndex];
      var lines = String(h || "").split("<br>");
      panel.textContent = "";
      var dl = document.createElement("dl");
      lines.forEach(function (l) {
        var tmp = document.createElement("div");
        tmp.innerHTML = l;
        var text = tmp.textContent;
        var i = text.indexOf(": ");
        var dt = document.createElement("dt");
        var dd = document.createElement("dd");
        if (i > 0) { dt.textContent = text.slice(0, i); dd.textContent = text.slice(i + 2); }
        else { dt.textContent = ""; dd.textContent = text; }
        dl.appendChild(dt); dl.appendChild(dd);
      });
      panel.appendChild(dl);
      panel.setAttribute("data-shown", "1");
    });
  }

  function noPoints(layout) {
    layout.annotations.push({ xref: "paper", yref: "paper", x: 0.5, y: 0.5, showarrow: false,
      text: "No points match the filters", font: { size: 14, color: "#6b7280" } });
    layout.xaxis.visible = false;
    layout.yaxis.visible = false;
  }

  function config(c) {
    return {
      responsive: true,
      displaylogo: false,
      displayModeBar: phone() ? false : "hover",
      // Nothing leaves the page: no button uploads a chart to Chart Studio (the PNG export
      // stays, it saves locally).
      showSendToCloud: false,
      showEditInChartStudio: false,
      showLink: false,
      plotlyServerURL: "",
      modeBarButtonsToRemove: ["select2d", "lasso2d", "sendChartToCloud", "sendDataToCloud",
        "editInChartStudio"],
      toImageButtonOptions: { format: "png", filename: "opbench-" + c.id, scale: 2 }
    };
  }

  function applyFilters(state) {
    document.querySelectorAll("select[data-dim]").forEach(function (s) {
      var d = s.getAttribute("data-dim");
      s.value = state[d] || "";
      if (s.value !== (state[d] || "")) s.value = "";
    });
    document.querySelectorAll("select[data-baseline]").forEach(function (s) {
      if (state.baseline) s.value = state.baseline;
    });
    document.querySelectorAll(".js-f").forEach(function (n) {
      n.hidden = !elementPasses(n, state);
    });
    // A chart of several GPUs says what was measured on the one the GPU filter picks.
    (data.charts || []).forEach(function (c) {
      var sub = document.querySelector("#fig-" + CSS.escape(c.id) + " .subtitle");
      if (!sub || !c.subtitle_by_gpu) return;
      var one = state.gpu && c.subtitle_by_gpu[state.gpu];
      sub.textContent = one || sub.getAttribute("data-all");
    });
  }

  function drawAll(state) {
    if (typeof window.Plotly === "undefined") {
      document.querySelectorAll(".plot").forEach(function (d) {
        d.textContent = "Plotly.js did not load (offline? render with --plotly inline). " +
          "The data tables below each chart still hold every point.";
        d.className = "plot plot-missing";
      });
      return Promise.resolve();
    }
    var jobs = (data.charts || []).map(function (c) {
      var div = document.getElementById(c.id);
      // A panel of another GPU than the filter's is hidden: drawn when shown again.
      if (!div || c.empty || !passes(c.f, state)) return Promise.resolve();
      var job = c.kind === "heatmap" ? drawHeatmap(div, c, state)
        : c.kind === "timeline" ? drawTimeline(div, c, state) : drawXy(div, c, state);
      return job.then(function () { wireDetails(div, c); });
    });
    return Promise.all(jobs);
  }

  // A filter in the address that names no value of this page (an old link, a GPU not
  // measured here): say so above the charts and show everything for that filter instead.
  function dropStale(state) {
    var stale = [];
    document.querySelectorAll("select[data-dim]").forEach(function (s) {
      var d = s.getAttribute("data-dim");
      if (!state[d]) return;
      var known = Array.prototype.some.call(s.options, function (o) { return o.value === state[d]; });
      if (!known) {
        stale.push(d + " = " + state[d]);
        delete state[d];
      }
    });
    var note = document.getElementById("stale-filters");
    if (stale.length) {
      if (!note) {
        note = document.createElement("div");
        note.id = "stale-filters";
        note.className = "warn";
        note.setAttribute("role", "status");
        var form = document.getElementById("filters");
        form.parentNode.insertBefore(note, form.nextSibling);
      }
      note.textContent = "The address asks for " + stale.join(", ") + ", which this page does " +
        "not have: showing all instead.";
      writeState(state);
    }
    return state;
  }

  // Each chart's data table, built from the page's data (the same rows, formatted by the
  // generator); rows carry their filter coordinates so applyFilters hides them like points.
  function tableOf(id) {
    var t = (data.tables || {})[id];
    return t && t.same_as ? data.tables[t.same_as] : t;
  }

  function buildTables() {
    document.querySelectorAll("table[data-table]").forEach(function (table) {
      var t = tableOf(table.getAttribute("data-table"));
      if (!t) return;
      var head = document.createElement("thead");
      var hr = document.createElement("tr");
      t.columns.forEach(function (c) {
        var th = document.createElement("th");
        th.scope = "col";
        th.textContent = c;
        hr.appendChild(th);
      });
      head.appendChild(hr);
      var body = document.createElement("tbody");
      t.rows.forEach(function (r, i) {
        var tr = document.createElement("tr");
        tr.className = "js-f";
        tr.setAttribute("data-row", i);
        Object.keys(r.f || {}).forEach(function (k) { tr.setAttribute("data-f-" + k, r.f[k]); });
        r.cells.forEach(function (c) {
          var td = document.createElement("td");
          td.textContent = c;
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      table.appendChild(head);
      table.appendChild(body);
    });
  }

  // The rows of a chart's table that the filters show, as CSV or JSON.
  function download(id, format) {
    var t = tableOf(id);
    var table = document.getElementById("t-" + id);
    if (!t || !table) return;
    var rows = [];
    // Numbers as measured, not as shown ("2821.37", not "2,821"): a row's raw value where it
    // has one, else the cell's text.
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      if (tr.hidden) return;
      var r = t.rows[Number(tr.getAttribute("data-row"))];
      rows.push(r.cells.map(function (c, i) {
        var v = r.raw ? r.raw[i] : null;
        return typeof v === "number" ? v : c;
      }));
    });
    var text, type;
    if (format === "json") {
      text = JSON.stringify(rows.map(function (r) {
        var o = {};
        t.columns.forEach(function (c, i) { o[c] = r[i]; });
        return o;
      }), null, 1);
      type = "application/json";
    } else {
      var q = function (v) { return /[",\n]/.test(String(v)) ? '"' + String(v).replace(/"/g, '""') + '"' : String(v); };
      text = [t.columns].concat(rows).map(function (r) { return r.map(q).join(","); }).join("\n") + "\n";
      type = "text/csv";
    }
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: type }));
    a.download = "opbench-" + id + "." + format;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  document.querySelectorAll("button[data-download]").forEach(function (b) {
    b.addEventListener("click", function () {
      download(b.getAttribute("data-chart"), b.getAttribute("data-download"));
    });
  });

  var rendering = 0;
  // A link to one chart (an overview card's "#chart=fig-…"): scrolled to once, when drawn.
  var jumped = false;
  function update() {
    var state = dropStale(readState());
    applyFilters(state);
    rendering += 1;
    document.body.setAttribute("data-rendered", "0");
    var mine = rendering;
    drawAll(state).then(function () {
      if (!jumped) {
        jumped = true;
        var at = state.chart ? document.getElementById(state.chart) : null;
        if (!at && state.chart) {
          // A chart drawn as one panel per GPU ("fig-llm-bound-h100"): the filter's GPU.
          at = Array.prototype.find.call(document.querySelectorAll("figure.chart"), function (f) {
            return f.id.indexOf(state.chart + "-") === 0 && !f.hidden;
          }) || null;
        }
        if (at) {
          at.scrollIntoView();
          // Below whatever stays stuck at the top (the header, the filter bar), so the
          // chart's title shows.
          var covered = 0;
          document.querySelectorAll("header.top, #filters").forEach(function (n) {
            if (getComputedStyle(n).position === "sticky") covered = Math.max(covered, n.getBoundingClientRect().bottom);
          });
          if (covered > 0) window.scrollBy(0, -(covered + 8));
        }
      }
      if (mine === rendering) document.body.setAttribute("data-rendered", "1");
    });
  }

  document.querySelectorAll("select[data-dim]").forEach(function (s) {
    s.addEventListener("change", function () {
      var st = readState();
      st[s.getAttribute("data-dim")] = s.value;
      writeState(st);
      update();
    });
  });
  document.querySelectorAll("select[data-baseline]").forEach(function (s) {
    s.addEventListener("change", function () {
      var st = readState();
      st.baseline = s.value;
      writeState(st);
      update();
    });
  });
  var reset = document.getElementById("reset-filters");
  if (reset) {
    reset.addEventListener("click", function () {
      writeState({});
      update();
    });
  }
  window.addEventListener("hashchange", update);
  // The header's page links scroll sideways in a narrow window: bring the current page's in.
  var active = document.querySelector("header nav a.active");
  if (active) {
    var nav = active.parentNode;
    var off = active.getBoundingClientRect().right - nav.getBoundingClientRect().right;
    if (off > 0) nav.scrollLeft += off + 8;
  }
  buildTables();
  update();
})();
