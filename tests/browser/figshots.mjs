// Dev helper: screenshots of single figures for a visual check.
// usage: node figshots.mjs SITE_DIR OUT_DIR page.html:figure-id ...
import { chromium } from "playwright-core";
import path from "node:path";
import { pathToFileURL } from "node:url";
const [site, out, ...specs] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"] });
for (const spec of specs) {
  const [page, id] = spec.split(":");
  const p = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  await p.goto(pathToFileURL(path.join(site, page)).href);
  await p.waitForSelector("body[data-rendered='1']");
  await p.locator(`#fig-${id}`).screenshot({ path: path.join(out, `${id}.png`) });
  await p.close();
}
await browser.close();
