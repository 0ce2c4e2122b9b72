// The history page in headless Chromium (Debian's /usr/bin/chromium via playwright-core): opens
// SITE/history.html from file://, scrolls every kind's section into view (each loads its data
// file on demand) and waits until every small chart is drawn with a legend. Prints the time to
// the first chart and to the whole page, fails on a console error or an undrawn chart, and
// saves full-page screenshots when asked.
//
// usage: node history.mjs --site DIR [--shot-prefix FILE_PREFIX] [--widths 1440,390]
//   [--calibration 1]  (the site has artifacts/calibration.json: check its table too)
import { chromium } from "playwright-core";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
if (!args.site) throw new Error("usage: node history.mjs --site DIR [--shot-prefix P] [--widths 1440,390]");
const widths = (args.widths || "1440").split(",").map(Number);
const url = pathToFileURL(path.resolve(args.site, "history.html")).href;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
let failed = 0;
for (const width of widths) {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  const t0 = Date.now();
  await page.goto(url, { waitUntil: "load" });
  const specs = await page.evaluate(() => {
    const d = JSON.parse(document.getElementById("opbench-data").textContent).history;
    return d ? d.kinds.map((k) => ({ id: k.id, charts: k.charts.map((c) => c.id) })) : [];
  });
  const drawn = (ids) => page.evaluate((ids) => ids.every((id) => {
    const el = document.getElementById(id);
    return el && el.data && el.data.some((t) => t.x && t.x.length) && el.querySelector(".legend");
  }), ids);
  let first = null;
  for (const k of specs) {
    await page.evaluate((id) => document.getElementById(id).scrollIntoView(), k.id);
    await page.waitForFunction((ids) => ids.every((id) => {
      const el = document.getElementById(id);
      return el && el.data;
    }), k.charts, { timeout: 20000 }).catch(() => {});
    if (first === null) first = Date.now() - t0;
  }
  const all = Date.now() - t0;
  const ids = specs.flatMap((k) => k.charts);
  const ok = ids.length > 0 && (await drawn(ids));
  const legends = await page.evaluate((ids) => ids.map((id) => {
    const el = document.getElementById(id);
    return el ? el.querySelectorAll(".legend .traces").length : 0;
  }), ids);
  console.log(`history page at ${width}px: ${ids.length} charts in ${specs.length} kinds; ` +
    `first kind drawn ${first} ms, all drawn ${all} ms; legend entries per chart ` +
    `${Math.min(...legends)}-${Math.max(...legends)}`);
  if (!ok) { failed += 1; console.log("  FAIL  a chart is not drawn with points and a legend"); }
  if (legends.some((n) => n > 10)) { failed += 1; console.log("  FAIL  a legend has more than 10 entries"); }
  // The normalised view: every line is 1 at its baseline (the oldest commit shown).
  if (ids.length) {
    await page.check("#hist-normalise");
    const ones = await page.evaluate((id) => {
      const el = document.getElementById(id);
      return el.data.filter((t) => t.name && t.mode && t.mode.startsWith("lines") && t.line.width === 2)
        .map((t) => Math.abs(t.y[0] - 1) < 1e-9);
    }, ids[0]);
    if (!ones.length || !ones.every(Boolean)) {
      failed += 1;
      console.log(`  FAIL  normalised lines of ${ids[0]} do not start at 1: ${ones}`);
    }
    await page.uncheck("#hist-normalise");
  }
  // The gate's calibration (artifacts/calibration.json): every row says its false alarms as
  // "N of M (P%)" and a caught share per plant, the false alarms in view at this width.
  if (args.calibration === "1") {
    const cal = await page.evaluate(() => {
      const rows = [...document.querySelectorAll("#t-calibration tbody tr")];
      const heads = [...document.querySelectorAll("#t-calibration thead th")].map((th) => th.textContent);
      const col = heads.indexOf("false alarms");
      return {
        rows: rows.length,
        heads,
        bad: rows.map((r) => r.cells[col]?.textContent || "").filter((t) => !/^\d+ of \d+ \(\d+%\)$/.test(t)),
        right: rows.length ? rows[0].cells[col].getBoundingClientRect().right : 0,
      };
    });
    const inView = cal.right <= width;
    console.log(`  calibration table: ${cal.rows} rows; false alarms column ends at ${Math.round(cal.right)} px`);
    if (!cal.rows || cal.bad.length || !cal.heads.some((h) => h.startsWith("5% slower")) || !inView) {
      failed += 1;
      console.log(`  FAIL  calibration table: ${JSON.stringify(cal)}`);
    }
  }
  if (errors.length) { failed += 1; console.log(`  FAIL  console errors: ${errors.join(" | ")}`); }
  if (args["shot-prefix"]) {
    await page.evaluate(() => window.scrollTo(0, 0));
    const file = `${args["shot-prefix"]}-${width}.png`;
    await page.screenshot({ path: file, fullPage: true });
    const top = `${args["shot-prefix"]}-${width}-top.png`;
    await page.screenshot({ path: top });
    const fig = `${args["shot-prefix"]}-${width}-chart.png`;
    await page.locator("figure.small").first().screenshot({ path: fig });
    console.log(`  screenshots ${file} ${top} ${fig}`);
  }
  await page.close();
}
await browser.close();
console.log(failed ? `history page: ${failed} failed` : "history page: ok");
process.exit(failed ? 1 : 0);
