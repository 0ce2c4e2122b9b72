#!/usr/bin/env bash
# Turns a rendered site (scripts/ci/publish.sh SITE) into a Vercel prebuilt output folder
# (Build Output API v3) that `vercel deploy --prebuilt` uploads as it is: SITE copied to
# OUT/static/, and OUT/config.json with `"version": 3` and one route per header rule of
# vercel.json, so the headers live in one place and Vercel serves them on every file.
#
# The Content-Security-Policy's script-src in vercel.json lists every script the dashboard may
# load from elsewhere (the pinned Plotly file on its CDN, for `--plotly cdn`) beside 'self'.
# The output keeps only the sources some page actually loads a script from, so a site rendered
# with `--plotly inline` allows its own files only. The script fails when a page would break
# under the policy: a script that no source of script-src allows, or inline code that runs
# (an inline script or an on* attribute; the embedded `application/json` data blocks do not
# run and need no permission).
#
# Needs python3 only: no network, no Vercel account, no token.
# Usage: scripts/ci/vercel-prebuilt.sh SITE OUT     (OUT is usually DIR/.vercel/output)
#   scripts/ci/publish.sh site && scripts/ci/vercel-prebuilt.sh site .vercel/output
set -euo pipefail
site="${1:?usage: scripts/ci/vercel-prebuilt.sh SITE OUT}"
out="${2:?usage: scripts/ci/vercel-prebuilt.sh SITE OUT}"
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$site/index.html" ] || { echo "vercel-prebuilt: $site/index.html not found; render the site first (scripts/ci/publish.sh $site)" >&2; exit 1; }
site=$(cd "$site" && pwd)
out=$(realpath -m "$out")
# OUT is emptied first: it must neither hold SITE nor lie inside it.
case "$site/" in "$out"/*) echo "vercel-prebuilt: OUT ($out) must not contain SITE" >&2; exit 1 ;; esac
case "$out/" in "$site"/*) echo "vercel-prebuilt: OUT ($out) must lie outside SITE" >&2; exit 1 ;; esac
rm -rf "$out"
mkdir -p "$out/static"
cp -a "$site/." "$out/static/"
# Deployed files must be world-readable (the dashboard's atomic writes create 0600 files).
chmod -R a+rX "$out"

python3 - "$repo/vercel.json" "$out" <<'PY'
import json, re, sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

vercel_json, out = Path(sys.argv[1]), Path(sys.argv[2])
static = out / "static"
conf = json.loads(vercel_json.read_text())


def fail(msg):
    sys.exit(f"vercel-prebuilt: {msg}")


class Scripts(HTMLParser):
    """Collects a page's scripts from other origins, and inline code that would run."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.external, self.inline, self._open = set(), [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in a:
            if name.lower().startswith("on"):
                self.inline.append(f"an {name}= attribute on <{tag}> (line {self.getpos()[0]})")
        if tag != "script":
            return
        kind = (a.get("type") or "text/javascript").lower()
        if a.get("src"):
            if urlsplit(a["src"]).scheme:
                self.external.add(a["src"])
        elif kind in ("module", "text/javascript", "application/javascript"):
            self._open = self.getpos()[0]

    def handle_data(self, data):
        if self._open and data.strip():
            self.inline.append(f"an inline script (line {self._open})")

    def handle_endtag(self, tag):
        if tag == "script":
            self._open = None


def allows(source, url):
    """CSP source-expression matching for scheme://host[/path] sources (no wildcards)."""
    s, u = urlsplit(source), urlsplit(url)
    if (s.scheme, s.netloc) != (u.scheme, u.netloc):
        return False
    if not s.path or s.path == "/":
        return True
    return u.path.startswith(s.path) if s.path.endswith("/") else u.path == s.path


external = {}
for page in sorted(static.rglob("*.html")):
    p = Scripts()
    p.feed(page.read_text(encoding="utf-8"))
    rel = page.relative_to(static).as_posix()
    if p.inline:
        fail(f"{rel} has {p.inline[0]}; the Content-Security-Policy allows script files only")
    for url in p.external:
        external.setdefault(url, rel)


def tailor_csp(value):
    """script-src keeps its keywords and the sources that some page's scripts need."""
    directives = [d.split() for d in value.split(";") if d.strip()]
    if "script-src" not in [d[0].lower() for d in directives]:
        fail("vercel.json's Content-Security-Policy has no script-src")
    result = []
    for name, *sources in directives:
        if name.lower() == "script-src":
            if {"'unsafe-inline'", "'unsafe-eval'"} & set(sources):
                fail(f"script-src must not allow inline or evaluated code: {' '.join(sources)}")
            urls = [s for s in sources if "://" in s]
            for url, page in sorted(external.items()):
                if not any(allows(s, url) for s in urls):
                    fail(f"{page} loads {url}, which vercel.json's script-src does not allow ({' '.join(sources)})")
            sources = [s for s in sources if s not in urls or any(allows(s, u) for u in external)]
        result.append(" ".join([name, *sources]))
    return "; ".join(result)


def source_to_regex(source):
    """A vercel.json `source` (literal path text and regex groups) as a route's `src` regex."""
    if not source.startswith("/") or ":" in source:
        fail(f"header source {source!r}: only literal paths and (regex) groups are supported")
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(source):
        if ch == "(":
            if depth == 0:
                parts.append(re.escape(source[start:i]))
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                parts.append(source[start : i + 1])
                start = i + 1
    if depth:
        fail(f"header source {source!r}: unbalanced parentheses")
    parts.append(re.escape(source[start:]))
    return "^" + "".join(parts) + "$"


routes, csp_seen = [], False
for rule in conf.get("headers", []):
    headers = {}
    for h in rule["headers"]:
        value = h["value"]
        if h["key"].lower() == "content-security-policy":
            value, csp_seen = tailor_csp(value), True
        headers[h["key"]] = value
    routes.append({"src": source_to_regex(rule["source"]), "headers": headers, "continue": True})
if not csp_seen:
    fail("vercel.json sets no Content-Security-Policy header")
# After the header routes, requests are answered from static/.
routes.append({"handle": "filesystem"})
(out / "config.json").write_text(json.dumps({"version": 3, "routes": routes}, indent=2) + "\n")
pages = sum(1 for _ in static.rglob("*.html"))
print(f"vercel-prebuilt: {out}: {pages} pages, {len(routes) - 1} header route(s), "
      f"scripts from elsewhere: {', '.join(sorted(external)) or 'none'}")
PY
