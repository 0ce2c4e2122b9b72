// opbench history page: loads each kind's data file (data/history-<kind>.js, a <script src>, so
// it works from file://) when its section comes into view, and draws its small charts with
// Plotly. Every value and hover label was computed by the generator; this file only picks the
// commits in the range, divides by the baseline commit's value (normalised view) and plots.
(function () {
  "use strict";

  var el = document.getElementById("opbench-data");
  var page = el ? JSON.parse(el.textContent) : {};
  var H = page.history;
  if (!H) return;
  var FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
  var store = window[H.global] = window[H.global] || {};
  var state = { window: H.window, normalise: false, baseline: null };
  var loaded = {};

  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }
  function short(hash) { return hash ? hash.slice(0, 10) : "unknown"; }
  function rgba(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }

  function kindOf(name) {
    for (var i = 0; i < H.kinds.length; i++) if (H.kinds[i].kind === name) return H.kinds[i];
    return null;
  }

  // The commit indices shown: the last `window` of the kind's commits (0: all).
  function range(d) {
    var n = d.commits.length;
    var from = state.window > 0 ? Math.max(0, n - state.window) : 0;
    return [from, n - 1];
  }

  // Index of the baseline commit in this kind's commits: the chosen one, else the oldest shown.
  function baseIndex(d, from) {
    if (state.baseline) {
      for (var i = 0; i < d.commits.length; i++) if (d.commits[i][0] === state.baseline) return i;
    }
    return from;
  }

  function traces(spec, d, chart) {
    var r = range(d), from = r[0], to = r[1];
    var b = baseIndex(d, from);
    var out = [], marks = { up: null, down: null };
    chart.lines.forEach(function (line) {
      var gpu = H.gpus[line.gpu] || { label: "?", color: "#6b7280" };
      var scale = 1;
      if (state.normalise) {
        var at = line.x.indexOf(b);
        if (at < 0) {  // the line lacks the baseline commit: its first point shown instead
          for (var k = 0; k < line.x.length; k++) if (line.x[k] >= from) { at = k; break; }
        }
        scale = at >= 0 && line.y[at] ? 1 / line.y[at] : 1;
      }
      var xs = [], ys = [], lo = [], hi = [], text = [];
      for (var i = 0; i < line.x.length; i++) {
        var x = line.x[i];
        if (x < from || x > to) continue;
        var c = d.commits[x];
        xs.push(x); ys.push(line.y[i] * scale); lo.push(line.lo[i] * scale); hi.push(line.hi[i] * scale);
        var t = esc(gpu.label) + "<br>commit " + esc(short(c[0])) + " · " + esc(c[1]) + "<br>" + esc(line.t[i]);
        if (state.normalise) t += "<br>×" + (line.y[i] * scale).toFixed(3) + " of the baseline";
        if (line.m[i] > 0) t += "<br><b>SLOWER</b> than the previous commit";
        if (line.m[i] < 0) t += "<br><b>FASTER</b> than the previous commit";
        text.push(t);
        var kind = line.m[i] > 0 ? "up" : (line.m[i] < 0 ? "down" : null);
        if (kind) {
          if (!marks[kind]) marks[kind] = { x: [], y: [], text: [] };
          marks[kind].x.push(x); marks[kind].y.push(line.y[i] * scale); marks[kind].text.push(t);
        }
      }
      if (!xs.length) return;
      // The regressions table's verdict on the newest commit (computed by the generator).
      var mk = line.mark, at = mk ? line.x.indexOf(mk.x) : -1;
      if (at >= 0 && mk.x >= from && mk.x <= to) {
        var key = mk.slower ? "tableUp" : "tableDown";
        if (!marks[key]) marks[key] = { x: [], y: [], text: [] };
        marks[key].x.push(mk.x); marks[key].y.push(line.y[at] * scale);
        marks[key].text.push(esc(gpu.label) + "<br>commit " + esc(short(d.commits[mk.x][0])) + "<br>" + esc(mk.t));
      }
      out.push({ x: xs, y: hi, mode: "lines", line: { width: 0 }, hoverinfo: "skip",
        showlegend: false, legendgroup: esc(gpu.label), type: "scatter" });
      out.push({ x: xs, y: lo, mode: "lines", line: { width: 0 }, fill: "tonexty",
        fillcolor: rgba(gpu.color, 0.18), hoverinfo: "skip", showlegend: false,
        legendgroup: esc(gpu.label), type: "scatter" });
      // Plotly reads a little HTML in names: GPU names from artifacts are shown as text.
      out.push({ x: xs, y: ys, name: esc(gpu.label), legendgroup: esc(gpu.label), type: "scatter",
        mode: xs.length > 60 ? "lines" : "lines+markers", line: { color: gpu.color, width: 2 },
        marker: { size: 4, color: gpu.color }, text: text, hovertemplate: "%{text}<extra></extra>",
        customdata: xs });
    });
    if (marks.up) out.push({ x: marks.up.x, y: marks.up.y, name: "SLOWER vs previous", type: "scatter",
      mode: "markers", marker: { symbol: "triangle-up", size: 10, color: "#dc2626" },
      text: marks.up.text, hovertemplate: "%{text}<extra></extra>", customdata: marks.up.x });
    if (marks.down) out.push({ x: marks.down.x, y: marks.down.y, name: "FASTER vs previous", type: "scatter",
      mode: "markers", marker: { symbol: "triangle-down", size: 10, color: "#16a34a" },
      text: marks.down.text, hovertemplate: "%{text}<extra></extra>", customdata: marks.down.x });
    [["tableUp", "SLOWER in the table", "#dc2626"], ["tableDown", "FASTER in the table", "#16a34a"]].forEach(function (m) {
      var v = marks[m[0]];
      if (v) out.push({ x: v.x, y: v.y, name: m[1], type: "scatter", mode: "markers",
        marker: { symbol: "diamond-open", size: 14, color: m[2], line: { width: 2.5, color: m[2] } },
        text: v.text, hovertemplate: "%{text}<extra></extra>", customdata: v.x });
    });
    return out;
  }

  // A few commit labels on the x axis, each with its run's date (from the generator), never one
  // per commit: at most `most` of them, the newest always.
  function ticks(d, most) {
    var r = range(d), from = r[0], to = r[1], n = to - from + 1;
    var step = Math.max(1, Math.ceil(n / most)), vals = [], text = [];
    for (var x = to; x >= from; x -= step) {
      vals.unshift(x);
      text.unshift(esc(short(d.commits[x][0]).slice(0, 7)) + "<br>" + esc(d.commits[x][2] || ""));
    }
    return { vals: vals, text: text };
  }

  function draw(kind) {
    var k = kindOf(kind), d = store[kind];
    if (!k || !d || typeof Plotly === "undefined") return;
    var r = range(d);
    k.charts.forEach(function (spec) {
      var div = document.getElementById(spec.id);
      var chart = d.charts[spec.id];
      if (!div || !chart) return;
      var narrow = div.clientWidth < 500;
      // A two-line label (commit, date) takes ~70 px.
      var tk = ticks(d, Math.max(2, Math.min(8, Math.floor((div.clientWidth - 70) / 70))));
      var layout = {
        font: { family: FONT, size: 11 }, margin: { l: 52, r: 38, t: 8, b: narrow ? 92 : 78 },
        height: 270, hovermode: "closest", showlegend: true,
        legend: { orientation: "h", x: 0, y: -0.38, font: { size: 11 } },
        xaxis: { tickvals: tk.vals, ticktext: tk.text, range: [r[0] - 0.5, r[1] + 0.5],
          title: { text: "commit · date of its run", standoff: 2, font: { size: 11 } }, zeroline: false },
        // The generator's range (every band, at least the verdict rule's scale); the normalised
        // view divides each line by its own baseline, so Plotly fits it.
        yaxis: { title: { text: state.normalise ? "× baseline" : esc(spec.quantity), font: { size: 11 } },
          zeroline: false, automargin: true,
          range: !state.normalise && chart.y_range ? chart.y_range : undefined,
          autorange: !state.normalise && chart.y_range ? false : true },
        paper_bgcolor: "#fff", plot_bgcolor: "#fff"
      };
      var wait = div.querySelector(".loading");
      if (wait) wait.remove();
      Plotly.react(div, traces(spec, d, chart), layout, { displayModeBar: false, responsive: true });
      if (!div.dataset.bound) {
        div.dataset.bound = "1";
        div.on("plotly_click", function (ev) { choose(kind, ev.points[0]); });
      }
    });
  }

  function drawAll() { Object.keys(loaded).forEach(function (k) { if (store[k]) draw(k); }); }

  // A click makes its commit the baseline and shows the point (its hover text) with a link to
  // the commit.
  function choose(kind, point) {
    var d = store[kind], x = point.x, c = d && d.commits[x];
    if (!c) return;
    state.baseline = c[0];
    var k = kindOf(kind), box = k && document.getElementById("details-" + k.id);
    var label = document.getElementById("hist-baseline");
    var link = H.repo_url && /^[0-9a-f]+$/i.test(c[0]) ? H.repo_url.replace(/\/$/, "") + "/commit/" + c[0] : null;
    var commit = link ? '<a href="' + esc(link) + '">' + esc(short(c[0])) + "</a>" : esc(short(c[0]));
    if (label) label.innerHTML = "baseline: commit " + commit + " (" + esc(c[1]) + ")";
    if (box) {
      // The hover text was escaped when it was built; only its <br> and <b> are markup.
      var shown = String(point.text || "").split("<br>").join(" · ");
      box.hidden = false;
      box.innerHTML = "Newest run of commit " + commit + " on this GPU: " + shown +
        ". It is now the baseline of the normalised view.";
      box.setAttribute("data-shown", "1");
    }
    if (state.normalise) drawAll();
  }

  function load(section) {
    var kind = section.getAttribute("data-kind");
    if (loaded[kind]) return;
    loaded[kind] = true;
    if (store[kind]) { draw(kind); return; }
    var s = document.createElement("script");
    s.src = section.getAttribute("data-file");
    s.onload = function () { draw(kind); };
    s.onerror = function () {
      section.querySelectorAll(".small-plot").forEach(function (p) {
        p.innerHTML = '<p class="plot-missing">Could not load ' + esc(s.src) + ".</p>";
      });
    };
    document.body.appendChild(s);
  }

  var sections = Array.prototype.slice.call(document.querySelectorAll("section.hist-kind"));
  if ("IntersectionObserver" in window) {
    var io = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) { if (e.isIntersecting) { load(e.target); io.unobserve(e.target); } });
    }, { rootMargin: "300px" });
    sections.forEach(function (s) { io.observe(s); });
  } else {
    sections.forEach(load);
  }

  var w = document.getElementById("hist-window");
  if (w) w.addEventListener("change", function () { state.window = parseInt(w.value, 10) || 0; drawAll(); });
  var n = document.getElementById("hist-normalise");
  if (n) n.addEventListener("change", function () { state.normalise = n.checked; drawAll(); });
  window.addEventListener("resize", function () {
    clearTimeout(window.__histResize);
    window.__histResize = setTimeout(drawAll, 200);
  });
})();
