// Real-browser test of the rendered dashboard: opens every page from file:// in headless
// Chromium (Debian's /usr/bin/chromium, driven by playwright-core), fails on any console
// error, failed request or JavaScript dialog, checks that every chart the page's data promises
// was drawn with points, changes a filter and checks that the plotted points change and that
// the view survives a reload from its URL, and checks that hostile artifact text stays text.
//
// usage: node check.mjs --site DIR [--site DIR ...] [--hostile DIR] [--filters DIR]
//                       [--screenshot FILE --screenshot-site DIR] [--shots DIR]
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const EVIL = "</script><img src=x onerror=alert(1)>";
const FLAGS = [
  "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];

function parseArgs(argv) {
  const a = { site: [], hostile: null, filters: null, screenshot: null, screenshotSite: null, shots: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`flag ${k} needs a value`);
    if (k === "--site") a.site.push(v);
    else if (k === "--hostile") a.hostile = v;
    else if (k === "--filters") a.filters = v;
    else if (k === "--screenshot") a.screenshot = v;
    else if (k === "--screenshot-site") a.screenshotSite = v;
    else if (k === "--shots") a.shots = v;
    else throw new Error(`unknown flag ${k}`);
  }
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

async function open(browser, file, problems) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on("dialog", (d) => { problems.push(`dialog opened: ${d.message()}`); d.dismiss(); });
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
  return page;
}

async function checkSite(browser, dir, opts) {
  console.log(`site ${dir}`);
  for (const name of pages(dir)) {
    const problems = [];
    const page = await open(browser, path.join(dir, name), problems);
    const want = await expectedCharts(page);
    const got = await plotted(page);
    for (const id of want) {
      const g = got[id];
      check(g && g.traces > 0 && g.points > 0, `${name}: chart ${id} drawn (${g ? g.points : 0} points)`);
    }
    // Charts whose points open a run: a real mouse click on a drawn marker fills the panel.
    const clickable = await page.$$eval(".click-details", (ds) => ds.map((d) => d.id.replace(/^details-/, "")));
    for (const id of clickable.slice(0, 1)) {
      const marker = page.locator(`#${id} .scatterlayer .trace .points path`).first();
      check((await marker.count()) > 0, `${name}: chart ${id} has markers to click`);
      if (!(await marker.count())) continue;
      await marker.scrollIntoViewIfNeeded();
      const box = await marker.boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      await page.waitForFunction((i) => document.getElementById(`details-${i}`).getAttribute("data-shown") === "1",
        id, { timeout: 10000 }).catch(() => {});
      const text = await page.$eval(`#details-${id}`, (d) => d.innerText);
      check(/run\s/.test(text) && /commit/.test(text) && /GPU/.test(text),
        `${name}: clicking a point of ${id} shows its run (${text.split("\n").slice(0, 2).join(" | ")})`);
    }
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
    check(problems.length === 0, `${name}: no console error, failed request or dialog${problems.length ? ": " + problems.join(" | ") : ""}`);
    await page.close();
  }
}

// Change one filter on every page that has one: points must change, stay > 0, land in the URL,
// and the URL alone must restore the same view.
async function checkFilters(browser, dir) {
  console.log(`filters ${dir}`);
  let pagesWithFilters = 0;
  for (const name of pages(dir)) {
    const problems = [];
    const page = await open(browser, path.join(dir, name), problems);
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
    const url = page.url();
    check(url.includes(`#`) && decodeURIComponent(url).includes(`${pick.dim}=${value}`), `${name}: the filter is in the URL (${url.split("#")[1]})`);
    // A fresh tab from the shared URL shows the same view.
    const p2 = await open(browser, path.join(dir, name), problems);
    await p2.goto(url);
    await p2.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
    const restored = await plotted(p2);
    const sel = await p2.$eval(`select[data-dim='${pick.dim}']`, (s) => s.value);
    check(sel === value && total(restored) === total(after), `${name}: the shared URL restores the view (${total(restored)} points)`);
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
    check(problems.length === 0, `${name}: no console error while filtering${problems.length ? ": " + problems.join(" | ") : ""}`);
    await p2.close();
    await page.close();
  }
  check(pagesWithFilters > 0, `filters exercised on ${pagesWithFilters} pages`);
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
    if (a.hostile) await checkSite(browser, a.hostile, { hostile: true });
    if (a.filters) await checkFilters(browser, a.filters);
    if (a.screenshot) {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
      await page.goto(pathToFileURL(path.join(a.screenshotSite, "index.html")).href);
      await page.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
      fs.mkdirSync(path.dirname(a.screenshot), { recursive: true });
      await page.screenshot({ path: a.screenshot });
      console.log(`  saved ${a.screenshot}`);
      await page.close();
    }
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
