// Real-browser test of the rendered dashboard: opens every page from file:// in headless
// Chromium (Debian's /usr/bin/chromium, driven by playwright-core), fails on any console
// error, failed request or JavaScript dialog, checks that every chart the page's data promises
// was drawn with points, changes a filter and checks that the plotted points change and that
// the view survives a reload from its URL, and checks that hostile artifact text stays text.
// With --vercel, it checks a Vercel prebuilt output folder (scripts/ci/vercel-prebuilt.sh OUT):
// its structure against the site it was built from, then serves it on 127.0.0.1 with the
// headers of its config.json (Content-Security-Policy included), runs the same page checks
// there (and the filter checks, for outputs named by --vercel-filters) and fails on any CSP
// violation. Requests to the Plotly CDN are answered with the vendored copy (templates/vendor/,
// byte-identical), so `--plotly cdn` output is checked offline, integrity hash and CSP included.
//
// usage: node check.mjs --site DIR [--site DIR ...] [--hostile DIR] [--filters DIR]
//                       [--vercel OUT --vercel-from SITE ...] [--vercel-filters OUT ...]
//                       [--screenshot FILE --screenshot-site DIR] [--shots DIR] [--report DIR]
//                       [--scale DIR [--scale-workloads N]]
// Every --site is also checked at phone width (390 px); --report DIR saves the first screen of
// each page of --screenshot-site at 1440 and 390 px as DIR/<page>-<width>.png. --scale DIR: a
// site of N (default 50) traced workloads, whose frame must not grow with them.
import { chromium } from "playwright-core";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const EVIL = "</script><img src=x onerror=alert(1)>";
const FLAGS = [
  "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];

function parseArgs(argv) {
  const a = {
    site: [], hostile: null, filters: null, vercel: [], vercelFrom: [], vercelFilters: [],
    screenshot: null, screenshotSite: null, shots: null, report: null, scale: null, scaleWorkloads: 50,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`flag ${k} needs a value`);
    if (k === "--site") a.site.push(v);
    else if (k === "--hostile") a.hostile = v;
    else if (k === "--filters") a.filters = v;
    else if (k === "--vercel") a.vercel.push(v);
    else if (k === "--vercel-from") a.vercelFrom.push(v);
    else if (k === "--vercel-filters") a.vercelFilters.push(v);
    else if (k === "--screenshot") a.screenshot = v;
    else if (k === "--screenshot-site") a.screenshotSite = v;
    else if (k === "--shots") a.shots = v;
    else if (k === "--report") a.report = v;
    else if (k === "--scale") a.scale = v;
    else if (k === "--scale-workloads") a.scaleWorkloads = Number(v);
    else throw new Error(`unknown flag ${k}`);
  }
  if (a.vercel.length !== a.vercelFrom.length) throw new Error("each --vercel OUT needs its --vercel-from SITE");
  return a;
}

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed += 1;
    console.log(`  ok    ${what}`);
  } else {
    failed += 1;
    console.log(`  FAIL  ${what}`);
  }
}

function pages(dir) {
  return fs.readdirSync(dir).filter((f) => f.endsWith(".html")).sort();
}

// What the page's embedded data says should be drawn: chart ids with data.
async function expectedCharts(page) {
  return page.evaluate(() => {
    const d = JSON.parse(document.getElementById("opbench-data").textContent);
    return d.charts.filter((c) => !c.empty).map((c) => c.id);
  });
}

// Plotted points per chart, read from Plotly's own state on each graph div.
async function plotted(page) {
  return page.evaluate(() => {
    const out = {};
    document.querySelectorAll(".js-plotly-plot").forEach((div) => {
      let n = 0;
      const sig = [];
      (div.data || []).forEach((t) => {
        if (t.type === "heatmap") {
          (t.z || []).forEach((row) => row.forEach((v) => { if (v !== null) { n += 1; sig.push(v); } }));
        } else {
          n += (t.x || []).length;
          (t.y || []).forEach((v) => sig.push(v));
        }
      });
      out[div.id] = { traces: (div.data || []).length, points: n, sig: sig.join(",") };
    });
    return out;
  });
}

// Legend entries per chart: the composition rule of src/site/rules.rs (MAX_LEGEND_ENTRIES,
// read from there so the two cannot drift), at both widths.
const MAX_LEGEND = (() => {
  const rules = fs.readFileSync(new URL("../../src/site/rules.rs", import.meta.url), "utf8");
  const m = rules.match(/MAX_LEGEND_ENTRIES: usize = (\d+);/);
  if (!m) throw new Error("src/site/rules.rs: MAX_LEGEND_ENTRIES not found");
  return Number(m[1]);
})();
const PHONE = { width: 390, height: 844 };

async function legendEntries(page) {
  return page.evaluate(() => {
    const out = {};
    document.querySelectorAll(".js-plotly-plot").forEach((div) => {
      out[div.id] = div.querySelectorAll(".legend .traces").length;
    });
    return out;
  });
}

// What makes a drawn chart unreadable, per chart: tick labels of one axis that overlap (each
// label's box turned with the label, from its own SVG geometry, so slanted labels are judged
// as drawn), tick labels that read the same (labels cut to one text), and three or more
// colours with neither a legend nor a label in that colour on the chart.
async function readability(page) {
  return page.evaluate(() => {
    const out = [];
    // The four corners of a text's box in SVG pixels, shrunk a little: glyph boxes carry
    // padding above and below the letters.
    function corners(t) {
      const b = t.getBBox();
      const m = t.getCTM();
      if (!m || !b.width) return null;
      const padY = b.height * 0.18, padX = 0.5;
      const pts = [[b.x + padX, b.y + padY], [b.x + b.width - padX, b.y + padY],
        [b.x + b.width - padX, b.y + b.height - padY], [b.x + padX, b.y + b.height - padY]];
      return pts.map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    }
    // Separating-axis test for two convex quadrilaterals.
    function overlap(p, q) {
      for (const poly of [p, q]) {
        for (let i = 0; i < 4; i++) {
          const [x1, y1] = poly[i], [x2, y2] = poly[(i + 1) % 4];
          const nx = y1 - y2, ny = x2 - x1;
          const proj = (r) => r.map(([x, y]) => x * nx + y * ny);
          const a = proj(p), b = proj(q);
          if (Math.max(...a) <= Math.min(...b) || Math.max(...b) <= Math.min(...a)) return false;
        }
      }
      return true;
    }
    document.querySelectorAll(".js-plotly-plot").forEach((div) => {
      if (!div.offsetParent) return;
      const problems = [];
      for (const axis of ["xtick", "ytick"]) {
        const type = ((div._fullLayout || {})[axis === "xtick" ? "xaxis" : "yaxis"] || {}).type;
        const texts = [...div.querySelectorAll(`g.${axis} text`)].filter((t) => t.textContent.trim());
        const boxes = texts.map(corners);
        let hits = 0;
        for (let i = 0; i < texts.length; i++) {
          for (let j = i + 1; j < texts.length; j++) {
            if (boxes[i] && boxes[j] && overlap(boxes[i], boxes[j])) hits += 1;
          }
        }
        if (hits) problems.push(`${hits} overlapping ${axis} labels`);
        const seen = new Set(), twice = new Set();
        texts.forEach((t) => { const s = t.textContent; (seen.has(s) ? twice : seen).add(s); });
        // Category labels must differ; a log axis repeats its 2 and 5 in every decade.
        if (twice.size && type === "category") problems.push(`${axis} labels read the same: ${[...twice].slice(0, 3).join(" | ")}`);
      }
      const colours = new Set();
      (div.data || []).forEach((t) => {
        if (t.type === "heatmap" || t.visible === false) return;
        const c = (t.marker && t.marker.color) || (t.line && t.line.color);
        if (typeof c === "string") colours.add(c.toLowerCase());
      });
      const legend = div.querySelectorAll(".legend .traces").length > 0;
      const labelled = new Set(((div.layout || {}).annotations || [])
        .map((a) => ((a.font || {}).color || "").toLowerCase()));
      const bare = [...colours].filter((c) => !labelled.has(c));
      if (!legend && bare.length >= 3) problems.push(`${bare.length} colours, no legend or labels`);
      if (problems.length) out.push(`${div.id}: ${problems.join("; ")}`);
    });
    return out;
  });
}

// Share of the window the page frame may keep: the header and every bar stuck at the top.
const MAX_FRAME = 0.2;

// The page frame at one width: the header at the top of the page, and everything stuck at the
// top once the page is scrolled half way, cover at most MAX_FRAME of the window; the filters
// (where the page has them) are on screen and usable there.
async function frame(page) {
  return page.evaluate(async () => {
    const vh = window.innerHeight;
    window.scrollTo(0, 0);
    const header = document.querySelector("header.top").getBoundingClientRect().height;
    window.scrollTo(0, Math.max(0, (document.documentElement.scrollHeight - vh) / 2));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    // Sticky or fixed boxes stacked from the window's top edge down (a table head stuck
    // inside its own scroll box further down covers nothing of the frame).
    const boxes = [];
    for (const el of document.querySelectorAll("body *")) {
      const pos = getComputedStyle(el).position;
      if (pos !== "sticky" && pos !== "fixed") continue;
      const r = el.getBoundingClientRect();
      if (r.height > 0 && r.bottom > 0) boxes.push([r, el]);
    }
    boxes.sort((a, b) => a[0].top - b[0].top);
    let covered = 0;
    const stuck = [];
    for (const [r, el] of boxes) {
      if (r.top > covered + 2) continue;
      covered = Math.max(covered, r.bottom);
      stuck.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : ""} ${Math.round(r.height)}px`);
    }
    let filters = "none";
    const f = document.getElementById("filters");
    if (f) {
      const r = f.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + Math.min(60, r.width / 2), r.top + r.height / 2);
      filters = r.top >= 0 && r.bottom <= vh && hit && f.contains(hit) ? "on screen" : `off screen (top ${Math.round(r.top)})`;
    }
    window.scrollTo(0, 0);
    return { vh, header, covered, stuck, filters };
  });
}

async function checkFrame(page, name, width) {
  const m = await frame(page);
  check(m.header <= MAX_FRAME * m.vh && m.covered <= MAX_FRAME * m.vh,
    `${name} at ${width} px: header ${Math.round(m.header)} px and stuck bars ${Math.round(m.covered)} px of ${m.vh} (<= ${MAX_FRAME * 100}%)${m.stuck.length ? ": " + m.stuck.join(", ") : ""}`);
  if (m.filters !== "none") check(m.filters === "on screen", `${name} at ${width} px: filters reachable after scrolling (${m.filters})`);
}

// A site with many traced workloads: the frame of every page but the workloads' own (two of
// them stand for the rest) at both widths, and the Traces index lists every workload.
async function checkScale(browser, dir, workloads) {
  console.log(`scale ${dir}`);
  const all = pages(dir);
  const traced = all.filter((n) => n.startsWith("trace-"));
  check(traced.length >= workloads, `${dir}: ${traced.length} workload pages (>= ${workloads})`);
  for (const name of [...all.filter((n) => !n.startsWith("trace-")), ...traced.slice(0, 2)]) {
    for (const vp of [{ width: 1440, height: 1100 }, PHONE]) {
      const problems = [];
      const page = await open(browser, path.join(dir, name), problems, { viewport: vp });
      await checkFrame(page, `${path.basename(dir)}/${name}`, vp.width);
      const m = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      check(m.scroll <= m.client, `${path.basename(dir)}/${name} at ${vp.width} px: no horizontal scroll (${m.scroll} <= ${m.client})`);
      if (name === "traces.html") {
        const rows = await page.$$eval("#traces-index tbody tr", (rs) => rs.length);
        check(rows === traced.length, `traces.html lists every workload (${rows} of ${traced.length})`);
      }
      check(problems.length === 0, `${path.basename(dir)}/${name} at ${vp.width} px: no console error${problems.length ? ": " + problems.join(" | ") : ""}`);
      await page.close();
    }
  }
}

// Bars a reader can take in, per chart: no bar trace on a log axis (a bar's length from an
// arbitrary floor means nothing) and at most MAX_BARS bars in all (more is a wall of colour:
// facet the chart instead). A stack counts as one bar; a timeline's lanes (bars with a
// `base`: spans placed on a time axis, not lengths to compare) are not counted.
const MAX_BARS = 150;

async function barProblems(page) {
  return page.evaluate((maxBars) => {
    const out = [];
    document.querySelectorAll(".js-plotly-plot").forEach((div) => {
      const layout = div._fullLayout || {};
      const problems = [];
      let bars = 0;
      const stacks = new Set();
      const stacked = layout.barmode === "stack" || layout.barmode === "relative";
      (div.data || []).forEach((t) => {
        if (t.type !== "bar" || t.visible === false) return;
        const along = t.orientation === "h" ? (t.y || []) : (t.x || []);
        if (Array.isArray(t.base) && t.base.length) {
          // A timeline lane: spans, not compared lengths.
        } else if (stacked) along.forEach((x) => stacks.add(String(x)));
        else bars += along.length;
        // The value axis: y for vertical bars, x for horizontal ones.
        const axis = t.orientation === "h"
          ? "xaxis" + (t.xaxis && t.xaxis !== "x" ? t.xaxis.slice(1) : "")
          : "yaxis" + (t.yaxis && t.yaxis !== "y" ? t.yaxis.slice(1) : "");
        if ((layout[axis] || {}).type === "log") problems.push(`bars of "${t.name}" on log ${axis}`);
      });
      bars += stacks.size;
      if (bars > maxBars) problems.push(`${bars} bars (> ${maxBars})`);
      if (problems.length) out.push(`${div.id}: ${problems.slice(0, 3).join("; ")}`);
    });
    return out;
  }, MAX_BARS);
}

async function checkBars(page, name, width) {
  const bad = await barProblems(page);
  check(bad.length === 0, `${name} at ${width} px: no bars on a log axis, at most ${MAX_BARS} bars per chart${bad.length ? ": " + bad.join(" | ") : ""}`);
}

// The readability rules at one width: no overlapping or look-alike tick labels, a legend or
// labels for every chart of three colours or more, at most MAX_LEGEND legend entries, and
// nothing wider than the window.
async function checkReadable(page, name, width) {
  const bad = await readability(page);
  check(bad.length === 0, `${name} at ${width} px: tick labels apart and distinct, colours named${bad.length ? ": " + bad.join(" | ") : ""}`);
  const legends = await legendEntries(page);
  const crowded = Object.entries(legends).filter(([, n]) => n > MAX_LEGEND);
  check(crowded.length === 0, `${name} at ${width} px: at most ${MAX_LEGEND} legend entries per chart${crowded.length ? ": " + crowded.map(([id, n]) => `${id} ${n}`).join(", ") : ""}`);
  const m = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  check(m.scroll <= m.client, `${name} at ${width} px: no horizontal scroll (${m.scroll} <= ${m.client})`);
  await checkFrame(page, name, width);
  await checkChangeFirst(page, name, width);
  await checkRegressionChangeInView(page, name, width);
  await checkKernSumNearTop(page, name, width);
  await checkBars(page, name, width);
}

// The overview answers "what changed" on its first screen: a card with a signed change (or "—"
// where nothing of ours was judged on both sides) and the commits, its top above the fold.
async function checkChangeFirst(page, name, width) {
  if (name !== "index.html") return;
  const items = await page.$$eval("#regressions-strip .strip-items > li", (lis) => lis.map((li) => ({
    top: li.getBoundingClientRect().top + window.scrollY,
    change: (li.querySelector(".strip-change") || {}).textContent || "",
    commits: (li.querySelector(".strip-commits") || {}).textContent || "",
    vh: window.innerHeight,
  })));
  if (!items.length) return; // no pair of runs to compare: the page says so instead
  const first = items[0];
  check(first.top < first.vh && /^([+\u2212-]\d|\u2014)/.test(first.change.trim()) && /[0-9a-f]{7}/.test(first.commits),
    `${name} at ${width} px: the first screen shows a signed change with its commits ("${first.change.trim()}", ${first.commits.trim().slice(0, 40)}, top ${Math.round(first.top)} < ${first.vh} px)`);
}

// The history page's regressions tables: the change column's head ends inside the window, so
// the change is read without scrolling sideways.
async function checkRegressionChangeInView(page, name, width) {
  if (name !== "history.html") return;
  const heads = await page.$$eval("#t-regressions th.col-change, #t-against th.col-change",
    (ths) => ths.map((th) => ({ right: th.getBoundingClientRect().right, vw: window.innerWidth })));
  const rows = await page.$$eval("#t-regressions tbody tr, #t-against tbody tr", (rs) => rs.length);
  if (!rows) return;
  const out = heads.filter((h) => h.right > h.vw);
  check(heads.length > 0 && out.length === 0,
    `${name} at ${width} px: the regressions table's change column in view (${heads.map((h) => Math.round(h.right)).join(", ") || "no column"} <= ${heads.length ? heads[0].vw : "?"} px)`);
}

// A trace page opens on its numbers: the kern_sum table's top within 1.5 screens.
async function checkKernSumNearTop(page, name, width) {
  if (!name.startsWith("trace-")) return;
  const m = await page.evaluate(() => {
    const t = document.getElementById("wt-kernels");
    return { top: t ? t.getBoundingClientRect().top + window.scrollY : null, vh: window.innerHeight };
  });
  check(m.top !== null && m.top <= 1.5 * m.vh,
    `${name} at ${width} px: the kern_sum table starts within 1.5 screens (${m.top === null ? "no table" : Math.round(m.top)} <= ${1.5 * m.vh} px)`);
}

// A page at phone width: the readability rules, every chart full width and at least 250 px
// tall.
async function checkPhone(browser, dir, opts = {}) {
  console.log(`phone ${dir}`);
  for (const name of pages(dir)) {
    const problems = [];
    const page = await open(browser, path.join(dir, name), problems, { viewport: PHONE });
    const m = await page.evaluate(() => {
      const doc = document.documentElement;
      const main = document.querySelector("main").getBoundingClientRect().width;
      const plots = [...document.querySelectorAll(".js-plotly-plot")].map((d) => {
        const r = d.getBoundingClientRect();
        return { id: d.id, w: r.width, h: r.height };
      });
      return { scroll: doc.scrollWidth, client: doc.clientWidth, main, plots };
    });
    await checkReadable(page, name, PHONE.width);
    const small = m.plots.filter((p) => p.h < 250 || p.w < m.main * 0.85);
    check(small.length === 0, `${name} at ${PHONE.width} px: ${m.plots.length} charts full width and tall enough${small.length ? ": " + small.map((p) => `${p.id} ${Math.round(p.w)}×${Math.round(p.h)}`).join(", ") : ""}`);
    check(problems.length === 0, `${name} at ${PHONE.width} px: no console error${problems.length ? ": " + problems.join(" | ") : ""}`);
    await page.close();
  }
}

// Screenshots of every page at desktop and phone width (the first screen of each), for
// report/ and the README.
async function reportShots(browser, dir, out) {
  fs.mkdirSync(out, { recursive: true });
  for (const name of pages(dir)) {
    for (const vp of [{ width: 1440, height: 1100 }, PHONE]) {
      const page = await open(browser, path.join(dir, name), [], { viewport: vp });
      const file = path.join(out, `${name.replace(/\.html$/, "")}-${vp.width}.png`);
      await page.screenshot({ path: file });
      await page.close();
    }
  }
  console.log(`  saved screenshots of ${pages(dir).length} pages to ${out}`);
}

// Mode-bar buttons over all charts: how many charts, how many offer the PNG export, and the
// titles of any button that uploads, shares or edits the chart elsewhere.
async function modeBar(page) {
  return page.evaluate(() => {
    // Charts drawn without a mode bar (the history's small multiples) offer no button at all.
    const charts = [...document.querySelectorAll(".js-plotly-plot")].filter((d) => d.querySelector(".modebar-btn"));
    let png = 0;
    const outward = [];
    charts.forEach((div) => {
      const buttons = [...div.querySelectorAll(".modebar-btn")];
      if (buttons.some((b) => /^download plot as a png/i.test(b.getAttribute("data-title") || ""))) png += 1;
      buttons.forEach((b) => {
        const t = `${b.getAttribute("data-title") || ""} ${b.getAttribute("data-attr") || ""}`;
        if (/cloud|studio|share|edit|export to/i.test(t)) outward.push(t.trim());
      });
    });
    return { charts: charts.length, png, outward };
  });
}

// Response headers of served pages, by page.
const responseHeaders = new WeakMap();

// Opens a page from file:// or, for a served site (opts.served), over HTTP with CSP violations
// recorded in window.__csp and requests to other origins answered by opts.served.route.
async function open(browser, file, problems, opts = {}) {
  const page = await browser.newPage({ viewport: opts.viewport || { width: 1440, height: 1000 } });
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on("dialog", (d) => { problems.push(`dialog opened: ${d.message()}`); d.dismiss(); });
  const served = opts.served;
  if (served) {
    await page.addInitScript(() => {
      window.__csp = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        window.__csp.push(`${e.effectiveDirective} blocked ${e.blockedURI || "inline code"}`));
    });
    await page.route((u) => !u.href.startsWith(served.base), (r) => served.route(r));
    const resp = await page.goto(served.base + path.relative(served.dir, file).split(path.sep).join("/"));
    responseHeaders.set(page, resp ? resp.headers() : {});
  } else {
    // From file:// the network is off: a page that needs it fails on the aborted request.
    await page.route(/^(https?|wss?):/, (r) => r.abort("internetdisconnected"));
    await page.goto(pathToFileURL(file).href);
  }
  await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
  return page;
}

async function cspViolations(page) {
  return page.evaluate(() => window.__csp.slice());
}

async function checkSite(browser, dir, opts) {
  console.log(`site ${dir}`);
  for (const name of pages(dir)) {
    const problems = [];
    const page = await open(browser, path.join(dir, name), problems, opts);
    const want = await expectedCharts(page);
    const got = await plotted(page);
    for (const id of want) {
      const g = got[id];
      check(g && g.traces > 0 && g.points > 0, `${name}: chart ${id} drawn (${g ? g.points : 0} points)`);
    }
    // Charts whose points open a run: a real mouse click on a drawn marker fills the panel (on
    // the history page it names the commit made the baseline).
    const clickable = await page.$$eval(".click-details", (ds) => ds.map((d) => d.id.replace(/^details-/, "")));
    for (const id of clickable.slice(0, 1)) {
      const marker = page.locator(`#${id} .scatterlayer .trace .points path`).first();
      // The history page loads each section's data when it scrolls into view, after the page
      // has said it rendered: give the markers time to appear before judging.
      await marker.waitFor({ state: "attached", timeout: 15000 }).catch(() => {});
      check((await marker.count()) > 0, `${name}: chart ${id} has markers to click`);
      if (!(await marker.count())) continue;
      await marker.scrollIntoViewIfNeeded();
      const box = await marker.boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      await page.waitForFunction((i) => document.getElementById(`details-${i}`).getAttribute("data-shown") === "1",
        id, { timeout: 10000 }).catch(() => {});
      const text = await page.$eval(`#details-${id}`, (d) => d.innerText);
      const shown = name === "history.html" ? /commit/.test(text) && /baseline/.test(text)
        : /run\s/.test(text) && /commit/.test(text) && /GPU/.test(text);
      check(shown,
        `${name}: clicking a point of ${id} shows its run (${text.split("\n").slice(0, 2).join(" | ")})`);
    }
    // The mode bar: PNG export on every chart, no button that sends the chart anywhere.
    const bar = await modeBar(page);
    if (bar.charts) {
      check(bar.png === bar.charts, `${name}: every chart keeps its PNG export (${bar.png}/${bar.charts})`);
      check(bar.outward.length === 0, `${name}: no mode-bar button sends data out${bar.outward.length ? ": " + bar.outward.join(", ") : ""}`);
    }
    // Every drawn chart says what was measured where and the statistic (src/site/measured.rs).
    const subtitles = await page.$$eval("figure.chart", (fs) => fs
      .filter((f) => f.querySelector(".plot"))
      .map((f) => [f.id, (f.querySelector(".subtitle") || {}).textContent || ""]));
    const bare = subtitles.filter(([, t]) => !/^Measured on .+ · commit/.test(t));
    if (subtitles.length) {
      check(bare.length === 0, `${name}: every chart has its "Measured on … · commit … · statistic" subtitle${bare.length ? ": " + bare.map(([id]) => id).join(", ") : ""}`);
    }
    // The readability rules at desktop width (checkPhone repeats them at 390 px).
    await checkReadable(page, name, 1440);
    if (opts.hostile) {
      const imgs = await page.evaluate(() => document.querySelectorAll("img").length);
      check(imgs === 0, `${name}: no <img> element injected (${imgs})`);
      const shown = await page.evaluate((evil) => document.body.innerText.includes(evil), EVIL);
      if (name === "index.html") check(shown, `${name}: hostile text shown as text`);
    }
    if (opts.shots) {
      fs.mkdirSync(opts.shots, { recursive: true });
      await page.screenshot({ path: path.join(opts.shots, name.replace(/\.html$/, ".png")), fullPage: true });
    }
    if (opts.served) await checkServedPage(page, name, opts.served);
    check(problems.length === 0, `${name}: no console error, failed request or dialog${problems.length ? ": " + problems.join(" | ") : ""}`);
    await page.close();
  }
}

// The overview's cards each open the chart they summarise (the page scrolls to it), and the
// regressions strip lists the history's newest commit per kind and GPU, linking to the pages.
async function checkOverview(browser, dir) {
  const problems = [];
  const index = await open(browser, path.join(dir, "index.html"), problems);
  const links = await index.$$eval("a.card", (as) => as.map((a) => a.getAttribute("href")));
  const strip = await index.$$eval("#regressions-strip li a", (as) => as.map((a) => a.getAttribute("href")));
  await index.close();
  const charted = links.filter((l) => l.includes("#chart="));
  check(charted.length > 0, `${dir}: overview cards link to charts (${charted.length} of ${links.length})`);
  for (const link of charted) {
    const [file, hash] = link.split("#");
    const id = decodeURIComponent(hash.split("&").find((kv) => kv.startsWith("chart=")).slice(6));
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.route(/^(https?|wss?):/, (r) => r.abort("internetdisconnected"));
    await page.goto(pathToFileURL(path.join(dir, file)).href + "#" + hash);
    await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
    const seen = await page.evaluate((i) => {
      // The chart, or its panel of the link's GPU ("fig-llm-bound-h100").
      const el = document.getElementById(i) || [...document.querySelectorAll("figure.chart")]
        .find((f) => f.id.startsWith(i + "-") && !f.hidden);
      if (!el) return "missing";
      const r = el.getBoundingClientRect();
      if (!(r.top < window.innerHeight && r.bottom > 0)) return `off screen (top ${Math.round(r.top)})`;
      // Its title below everything stuck at the top of the window.
      const title = el.querySelector("h3") || el;
      let covered = 0;
      document.querySelectorAll("header.top, #filters").forEach((n) => {
        if (getComputedStyle(n).position === "sticky") covered = Math.max(covered, n.getBoundingClientRect().bottom);
      });
      const t = title.getBoundingClientRect().top;
      return t >= covered - 1 ? "in view" : `title under the sticky bar (${Math.round(t)} < ${Math.round(covered)})`;
    }, id);
    check(seen === "in view", `${dir}: card link ${file}#…${id} opens that chart (${seen})`);
    await page.close();
  }
  check(strip.length > 0 && strip.every((l) => fs.existsSync(path.join(dir, l.split("#")[0]))),
    `${dir}: regressions strip lists ${strip.length} kind/GPU pairs, each linking to an existing page`);
  check(problems.length === 0, `${dir}: overview opens without errors${problems.length ? ": " + problems.join(" | ") : ""}`);
}

// Change one filter on every page that has one: points must change, stay > 0, land in the URL,
// and the URL alone must restore the same view.
async function checkFilters(browser, dir, opts = {}) {
  console.log(`filters ${dir}`);
  let pagesWithFilters = 0;
  for (const name of pages(dir)) {
    const problems = [];
    const page = await open(browser, path.join(dir, name), problems, opts);
    const selects = await page.$$eval("select[data-dim]", (ss) =>
      ss.map((s) => ({ dim: s.getAttribute("data-dim"), values: Array.from(s.options).map((o) => o.value).filter((v) => v) })));
    const charts = await expectedCharts(page);
    if (!selects.length || !charts.length) { await page.close(); continue; }
    pagesWithFilters += 1;
    const total = (m) => Object.values(m).reduce((n, c) => n + c.points, 0);
    const before = await plotted(page);
    // The first filter value (dtype first) that changes what is plotted.
    const order = [...selects].sort((x, y) => (y.dim === "dtype") - (x.dim === "dtype"));
    let pick = null, value = null, after = null;
    for (const s of order) {
      for (const v of s.values) {
        await page.selectOption(`select[data-dim='${s.dim}']`, v);
        await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
        const now = await plotted(page);
        if (total(now) !== total(before)) { pick = s; value = v; after = now; break; }
      }
      if (pick) break;
      await page.selectOption(`select[data-dim='${s.dim}']`, "");
      await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
    }
    check(pick !== null, `${name}: some filter changes the plotted points`);
    if (!pick) { await page.close(); continue; }
    check(total(after) < total(before) && total(after) > 0,
      `${name}: ${pick.dim}=${value} changes the plotted points (${total(before)} -> ${total(after)})`);
    const changed = charts.filter((id) => before[id] && after[id] && before[id].sig !== after[id].sig);
    check(changed.length > 0, `${name}: ${changed.length} of ${charts.length} charts redrawn with other points`);
    const hidden = await page.$$eval("tr.js-f[hidden]", (rs) => rs.length);
    check(hidden > 0, `${name}: data table rows outside the filter are hidden (${hidden})`);
    // The CSV download of a chart holds exactly the rows its table shows under the filter.
    // The first chart whose table shows rows under the filter (a panel of another dtype or
    // GPU shows none).
    const tid = await page.$$eval("table[data-table]", (ts) => {
      const t = ts.find((x) => !x.closest("figure").hidden && x.querySelector("tbody tr:not([hidden])"));
      return t ? t.getAttribute("data-table") : null;
    }).catch(() => null);
    if (tid) {
      const shownRows = await page.$$eval(`#t-${tid} tbody tr:not([hidden])`, (rs) => rs.length);
      await page.$eval(`#fig-${tid} details.chart-data`, (d) => { d.open = true; });
      const [dl] = await Promise.all([page.waitForEvent("download"),
        page.click(`button[data-download='csv'][data-chart='${tid}']`)]);
      const csv = fs.readFileSync(await dl.path(), "utf8");
      const lines = csv.trim().split("\n").length - 1;
      check(lines === shownRows && shownRows > 0, `${name}: the CSV of ${tid} holds the ${shownRows} rows the filter shows (${lines})`);
      // Numbers as measured: no "2,821"-style text, and the JSON's value column is a number.
      const grouped = csv.match(/"-?\d{1,3}(,\d{3})+(\.\d+)?"/g) || [];
      check(grouped.length === 0, `${name}: the CSV of ${tid} holds raw numbers${grouped.length ? ": " + grouped.slice(0, 3).join(" ") : ""}`);
      const [jl] = await Promise.all([page.waitForEvent("download"),
        page.click(`button[data-download='json'][data-chart='${tid}']`)]);
      const json = JSON.parse(fs.readFileSync(await jl.path(), "utf8"));
      const col = await page.evaluate((i) => {
        const d = JSON.parse(document.getElementById("opbench-data").textContent);
        const t = d.tables[i].same_as ? d.tables[d.tables[i].same_as] : d.tables[i];
        return t.columns[t.columns.length >= 4 && t.rows[0].raw ? t.rows[0].raw.findIndex((v) => typeof v === "number") : 2];
      }, tid);
      check(json.length === shownRows && json.length > 0 && typeof json[0][col] === "number",
        `${name}: the JSON of ${tid} holds "${col}" as a number (${json.length ? JSON.stringify(json[0][col]) : "no rows"})`);
    }
    const url = page.url();
    check(url.includes(`#`) && decodeURIComponent(url).includes(`${pick.dim}=${value}`), `${name}: the filter is in the URL (${url.split("#")[1]})`);
    // A fresh tab from the shared URL shows the same view.
    const p2 = await open(browser, path.join(dir, name), problems, opts);
    await p2.goto(url);
    await p2.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
    const restored = await plotted(p2);
    const sel = await p2.$eval(`select[data-dim='${pick.dim}']`, (s) => s.value);
    check(sel === value && total(restored) === total(after), `${name}: the shared URL restores the view (${total(restored)} points)`);
    // A stale filter in the URL (a GPU this page never measured) is named above the charts
    // and falls back to "all": every point drawn.
    const p3 = await open(browser, path.join(dir, name), problems, opts);
    await p3.goto(url.split("#")[0] + "#" + encodeURIComponent(pick.dim) + "=" + encodeURIComponent("NVIDIA A100 (not here)"));
    await p3.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
    const note = await p3.$eval("#stale-filters", (n) => n.textContent).catch(() => "");
    const fallback = total(await plotted(p3));
    check(note.includes("NVIDIA A100 (not here)") && fallback === total(before),
      `${name}: a stale filter is named and falls back to all (${fallback} points; ${note})`);
    await p3.close();
    // Speedup charts: choosing another baseline changes the ratios.
    const base = await p2.$$eval("select[data-baseline]", (ss) => ss.map((s) => Array.from(s.options).map((o) => o.value)));
    if (base.length && base[0].length > 1) {
      const id = await p2.$eval("select[data-baseline]", (s) => s.getAttribute("data-baseline"));
      const b0 = (await plotted(p2))[id];
      await p2.selectOption("select[data-baseline]", base[0][1]);
      await p2.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
      const b1 = (await plotted(p2))[id];
      check(b0 && b1 && b0.sig !== b1.sig && b1.points > 0, `${name}: another baseline changes the speedups (${b0?.points} -> ${b1?.points} points)`);
    }
    await page.getByRole("button", { name: "show all" }).click();
    await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
    check(total(await plotted(page)) === total(before), `${name}: "show all" restores every point`);
    if (opts.served) {
      const v = [...await cspViolations(page), ...await cspViolations(p2)];
      check(v.length === 0, `${name}: no Content-Security-Policy violation while filtering${v.length ? ": " + v.join(" | ") : ""}`);
    }
    check(problems.length === 0, `${name}: no console error while filtering${problems.length ? ": " + problems.join(" | ") : ""}`);
    await p2.close();
    await page.close();
  }
  check(pagesWithFilters > 0, `filters exercised on ${pagesWithFilters} pages`);
}

// ---- Vercel prebuilt output -------------------------------------------------------------

const VENDOR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../templates/vendor");
const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".json": "application/json", ".csv": "text/csv; charset=utf-8", ".txt": "text/plain; charset=utf-8",
  ".png": "image/png", ".svg": "image/svg+xml",
};

// Every file under dir, as paths relative to it with "/" separators.
function files(dir, sub = "") {
  return fs.readdirSync(path.join(dir, sub), { withFileTypes: true }).flatMap((e) => {
    const rel = sub ? `${sub}/${e.name}` : e.name;
    return e.isDirectory() ? files(dir, rel) : [rel];
  }).sort();
}

// The headers Vercel sends for a path: config.json's routes in order until the filesystem.
function headersFor(urlPath, routes) {
  const out = {};
  for (const r of routes) {
    if (r.handle) break;
    if (r.src && new RegExp(r.src).test(urlPath)) {
      for (const [k, v] of Object.entries(r.headers || {})) out[k.toLowerCase()] = v;
      if (!r.continue) break;
    }
  }
  return out;
}

function directive(csp, name) {
  const d = (csp || "").split(";").map((x) => x.trim().split(/\s+/)).find((x) => x[0] === name);
  return d ? d.slice(1) : [];
}

// A static server on 127.0.0.1 that answers like Vercel for this output: files from static/
// (index.html for a folder) with the headers of config.json's routes.
function serve(dir, routes) {
  const server = http.createServer((req, res) => {
    let urlPath = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
    if (urlPath.endsWith("/")) urlPath += "index.html";
    const file = path.join(dir, urlPath);
    const headers = headersFor(urlPath, routes);
    if (!file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { ...headers, "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    res.writeHead(200, { ...headers, "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// Requests that left the served origin (only those the CSP let through get here): the pinned
// Plotly CDN file is answered with the vendored copy; anything else fails the page.
async function answerExternal(served, route) {
  const url = route.request().url();
  served.external.add(url);
  // plotly.js-dist-min@V/plotly.min.js or plotly.js-NAME-dist-min@V/plotly-NAME.min.js,
  // vendored as plotly-V.min.js or plotly-NAME-V.min.js.
  const m = url.match(/^https:\/\/cdn\.jsdelivr\.net\/npm\/plotly\.js-(?:([a-z]+)-)?dist-min@([^/]+)\/plotly(?:-[a-z]+)?\.min\.js$/);
  const local = m && path.join(VENDOR, `plotly-${m[1] ? m[1] + "-" : ""}${m[2]}.min.js`);
  if (local && fs.existsSync(local)) {
    await route.fulfill({
      status: 200, contentType: "text/javascript; charset=utf-8",
      headers: { "access-control-allow-origin": "*" }, body: fs.readFileSync(local),
    });
  } else {
    await route.abort("blockedbyclient");
  }
}

// Per page of a served output: the response carries config.json's headers and nothing the
// page did (load, drawing, clicking a point) violated the CSP. On the first page with charts,
// Plotly's PNG export runs under the CSP too.
async function checkServedPage(page, name, served) {
  const want = headersFor(`/${name}`, served.routes);
  const got = responseHeaders.get(page);
  const wrong = Object.keys(want).filter((k) => got[k] !== want[k]);
  check(Object.keys(want).length > 0 && wrong.length === 0,
    `${name}: served with config.json's ${Object.keys(want).length} headers${wrong.length ? ` (wrong: ${wrong.join(", ")})` : ""}`);
  const png = page.locator(".modebar-btn[data-title^='Download plot']").first();
  if (!served.pngDone && (await png.count()) > 0) {
    served.pngDone = true;
    await page.locator(".js-plotly-plot").first().hover();
    const dl = await Promise.all([page.waitForEvent("download", { timeout: 20000 }), png.click()])
      .then(([d]) => d, () => null);
    const bytes = dl ? fs.readFileSync(await dl.path()) : Buffer.alloc(0);
    check(bytes.subarray(1, 4).toString() === "PNG" && bytes.length > 1000,
      `${name}: Plotly's PNG export works under the CSP (${dl ? dl.suggestedFilename() : "no download"}, ${bytes.length} bytes)`);
  }
  const v = await cspViolations(page);
  check(v.length === 0, `${name}: no Content-Security-Policy violation${v.length ? ": " + v.join(" | ") : ""}`);
}

async function checkVercel(browser, out, site, filters) {
  console.log(`vercel ${out} (built from ${site})`);
  let config = null;
  try {
    config = JSON.parse(fs.readFileSync(path.join(out, "config.json"), "utf8"));
  } catch (e) {
    console.log(`  (config.json: ${e.message})`);
  }
  check(config !== null && config.version === 3, `config.json is Build Output API version 3 (${config && config.version})`);
  if (!config) return;
  const routes = Array.isArray(config.routes) ? config.routes : [];
  check(routes.length > 0 && routes[routes.length - 1].handle === "filesystem",
    `config.json's header routes are followed by the filesystem (${routes.length} routes)`);
  const staticDir = path.join(out, "static");
  const want = files(site);
  const got = fs.existsSync(staticDir) ? files(staticDir) : [];
  const missing = want.filter((f) => !got.includes(f));
  const extra = got.filter((f) => !want.includes(f));
  check(missing.length === 0 && extra.length === 0,
    `static/ holds the site's ${want.length} files${missing.length ? `; missing ${missing.join(", ")}` : ""}${extra.length ? `; extra ${extra.join(", ")}` : ""}`);
  const sitePages = pages(site);
  check(sitePages.includes("index.html") && sitePages.every((p) => got.includes(p)), `every page is in static/ (${sitePages.length})`);
  const differ = want.filter((f) => got.includes(f) && !fs.readFileSync(path.join(site, f)).equals(fs.readFileSync(path.join(staticDir, f))));
  check(differ.length === 0, `static/ files are byte-identical to the site's${differ.length ? ` (not: ${differ.join(", ")})` : ""}`);

  const csp = headersFor("/index.html", routes)["content-security-policy"];
  const same = sitePages.filter((p) => headersFor(`/${p}`, routes)["content-security-policy"] === csp);
  check(!!csp && same.length === sitePages.length, `config.json gives every page the same Content-Security-Policy (${csp})`);
  const scriptSrc = directive(csp, "script-src");
  check(scriptSrc.includes("'self'") && !scriptSrc.includes("'unsafe-inline'") && !scriptSrc.includes("'unsafe-eval'"),
    `script-src allows the site's own files, no inline or evaluated code (${scriptSrc.join(" ")})`);
  const inline = fs.existsSync(path.join(site, "assets")) &&
    fs.readdirSync(path.join(site, "assets")).some((f) => /^plotly-.*\.min\.js$/.test(f));
  const elsewhere = scriptSrc.filter((s) => s.includes("://"));
  check(inline ? elsewhere.length === 0 : elsewhere.length > 0,
    `--plotly ${inline ? "inline: script-src names no other origin" : "cdn: script-src names the CDN"} (${elsewhere.join(" ") || "none"})`);

  const server = await serve(staticDir, routes);
  const served = {
    base: `http://127.0.0.1:${server.address().port}/`, dir: staticDir, routes,
    external: new Set(), pngDone: false,
    route(r) { return answerExternal(this, r); },
  };
  try {
    await checkSite(browser, staticDir, { served });
    if (filters) await checkFilters(browser, staticDir, { served });
    const ext = [...served.external];
    check(inline ? ext.length === 0 : ext.length > 0 && ext.every((u) => elsewhere.some((s) => u.startsWith(s))),
      `scripts from elsewhere, all allowed by script-src: ${ext.join(", ") || "none"}`);
    // The policy must be live: code injected into a served page is blocked and reported.
    const page = await open(browser, path.join(staticDir, "index.html"), [], { served });
    const ran = await page.evaluate(() => {
      const s = document.createElement("script");
      s.textContent = "window.__injected = 1";
      document.head.appendChild(s);
      return window.__injected === 1;
    });
    await page.waitForFunction(() => window.__csp.length > 0, null, { timeout: 5000 }).catch(() => {});
    const v = await cspViolations(page);
    check(!ran && v.some((x) => x.startsWith("script-src")), `the CSP is enforced: an injected inline script is blocked (${v.join(" | ")})`);
    await page.close();
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

// With JavaScript off, every page says so and where the numbers are (summary.csv/json), and
// those links resolve.
async function checkNoScript(browser, dir) {
  const ctx = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1440, height: 1000 } });
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".html"))) {
    const page = await ctx.newPage();
    await page.route(/^(https?|wss?):/, (r) => r.abort("internetdisconnected"));
    await page.goto(pathToFileURL(path.join(dir, name)).href);
    const msg = await page.evaluate(() => {
      const el = document.querySelector("main noscript .noscript");
      if (!el) return null;
      const r = el.getBoundingClientRect();
      return { text: el.textContent, shown: r.height > 0 && r.top < window.innerHeight,
        links: [...el.querySelectorAll("a")].map((a) => a.getAttribute("href")) };
    });
    const good = msg && msg.shown && /JavaScript is off/.test(msg.text) &&
      msg.links.length >= 2 && msg.links.every((l) => fs.existsSync(path.join(dir, l)));
    check(good, `${dir}/${name}: with JavaScript off, the first screen says where the data is` +
      (good ? ` (${msg.links.join(", ")})` : ` (${JSON.stringify(msg)})`));
    await page.close();
  }
  await ctx.close();
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
  });
  try {
    for (const dir of a.site) await checkSite(browser, dir, { shots: a.shots ? path.join(a.shots, path.basename(dir)) : null });
    for (const dir of a.site) await checkPhone(browser, dir);
    for (const dir of a.site) await checkNoScript(browser, dir);
    if (a.hostile) await checkSite(browser, a.hostile, { hostile: true });
    if (a.filters) await checkFilters(browser, a.filters);
    if (a.scale) await checkScale(browser, a.scale, a.scaleWorkloads);
    // The fixture site has a history, so it must have the strip; others where they have one.
    for (const dir of a.site.filter((d) => d === a.filters ||
      fs.readFileSync(path.join(d, "index.html"), "utf8").includes("regressions-strip"))) {
      await checkOverview(browser, dir);
    }
    for (const [i, out] of a.vercel.entries()) {
      await checkVercel(browser, out, a.vercelFrom[i], a.vercelFilters.includes(out));
    }
    if (a.screenshot) {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
      await page.goto(pathToFileURL(path.join(a.screenshotSite, "index.html")).href);
      await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
      fs.mkdirSync(path.dirname(a.screenshot), { recursive: true });
      await page.screenshot({ path: a.screenshot });
      console.log(`  saved ${a.screenshot}`);
      await page.close();
    }
    if (a.report) await reportShots(browser, a.screenshotSite, a.report);
  } finally {
    await browser.close();
  }
  console.log(`browser: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
