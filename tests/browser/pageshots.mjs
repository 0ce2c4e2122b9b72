// Dev helper: a screenshot of every chart of a rendered site's pages at 1440 and 390 px
// (OUT_DIR/<page>-<width>-<figure id>.png), for a visual check of each one (report/ keeps only
// the first screen of each page).
// usage: node pageshots.mjs SITE_DIR OUT_DIR [page.html ...]
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
const [site, out, ...names] = process.argv.slice(2);
const pages = names.length ? names : fs.readdirSync(site).filter((f) => f.endsWith(".html"));
fs.mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"] });
for (const name of pages) {
  for (const width of [1440, 390]) {
    const p = await browser.newPage({ viewport: { width, height: 1000 } });
    await p.route(/^(https?|wss?):/, (r) => r.abort("internetdisconnected"));
    await p.goto(pathToFileURL(path.join(site, name)).href);
    await p.waitForSelector("body[data-rendered='1']", { timeout: 60000 });
    const ids = await p.$$eval("figure.chart", (fs) => fs.filter((f) => !f.hidden).map((f) => f.id));
    for (const id of ids) {
      await p.locator(`#${id}`).screenshot({ path: path.join(out, `${name.replace(/\.html$/, "")}-${width}-${id}.png`) });
    }
    await p.close();
  }
}
await browser.close();
