// Serves web/dist on 127.0.0.1 (one command: `node web/serve.mjs`, after `bash tools/setup.sh`).
// Sends COOP/COEP, so the page is cross-origin isolated and Stop can use Pyodide's interrupt buffer.
//
// Usage: node serve.mjs [--port=P] [--packages=DIR | --cdn] [--dist=DIR]
//   --port      0 (default 8000) picks a free port
//   --packages  a folder of Pyodide packages (numpy's wheel) served at /packages/; by default
//               web/pyodide-packages/ (or $PYODIDE_PACKAGES) when it holds the NumPy wheel the site's lock
//               names, with the lock's sha256 (tools/setup.sh puts it there)
//   --cdn       NumPy from the build's package base URL (the Pyodide CDN) even when the folder is there
// With a packages folder the page's config.json names /packages/ as the package base URL, so every tab on `/`
// (a fresh one included, and offline after the first visit) loads NumPy from this server.
// Prints "serving http://127.0.0.1:P/", then one line saying where NumPy comes from.
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PACKAGES_DIR } from "./pyodide-packages.mjs";

const WEB = path.dirname(fileURLToPath(import.meta.url));
const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8", ".json": "application/json; charset=utf-8", ".wasm": "application/wasm",
  ".zip": "application/zip", ".whl": "application/zip", ".map": "application/json", ".svg": "image/svg+xml",
  ".png": "image/png", ".txt": "text/plain; charset=utf-8",
};

function fileFor(root, urlPath) {
  const rel = decodeURIComponent(urlPath).replace(/^\/+/, "");
  const full = path.resolve(root, rel);
  if (full !== root && !full.startsWith(root + path.sep)) return null;   // no escaping the root
  try {
    const st = fs.statSync(full);
    if (st.isDirectory()) return fileFor(root, path.posix.join(urlPath, "index.html"));
    return full;
  } catch { return null; }
}

// Whether `dir` holds the NumPy wheel the site in `dist` loads: {ok: true, file} or {ok: false, why}.
export function numpyIn(dir, dist = path.join(WEB, "dist")) {
  let entry;
  try {
    entry = JSON.parse(fs.readFileSync(path.join(dist, "pyodide", "pyodide-lock.json"), "utf8")).packages.numpy;
  } catch {
    return { ok: false, why: `${dist} has no pyodide/pyodide-lock.json naming numpy` };
  }
  const file = path.join(dir, entry.file_name);
  if (!fs.existsSync(file)) return { ok: false, why: `${file} is missing` };
  const sha = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
  if (sha !== entry.sha256) return { ok: false, why: `${file} has sha256 ${sha}, the lock says ${entry.sha256}` };
  return { ok: true, file };
}

export function startServer({ port = 8000, dist = path.join(WEB, "dist"), packages = null, host = "127.0.0.1", isolate = true } = {}) {
  const distRoot = path.resolve(dist);
  const pkgRoot = packages ? path.resolve(packages) : null;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://localhost");
    let file = null;
    if (req.method !== "GET" && req.method !== "HEAD") { res.writeHead(405).end(); return; }
    if (pkgRoot && url.pathname.startsWith("/packages/")) file = fileFor(pkgRoot, url.pathname.slice("/packages".length));
    else file = fileFor(distRoot, url.pathname);
    const headers = isolate ? {
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cross-Origin-Embedder-Policy": "require-corp",
      "Cross-Origin-Resource-Policy": "same-origin",
      "X-Content-Type-Options": "nosniff",
    } : { "X-Content-Type-Options": "nosniff" };
    if (!file) { res.writeHead(404, { ...headers, "Content-Type": "text/plain" }).end(`not found: ${url.pathname}\n`); return; }
    const type = TYPES[path.extname(file)] || "application/octet-stream";
    if (pkgRoot && file === path.join(distRoot, "config.json")) {
      // The page's package base URL: this server's /packages/, as the browser addresses this server.
      const config = JSON.parse(fs.readFileSync(file, "utf8"));
      config.packageBaseUrl = `http://${req.headers.host || `${host}:${server.address().port}`}/packages/`;
      const body = Buffer.from(JSON.stringify(config, null, 1));
      res.writeHead(200, { ...headers, "Content-Type": type, "Content-Length": body.length, "Cache-Control": "no-cache" });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    const cache = /\/(pyodide|wheels)\/|\.whl$/.test(url.pathname) ? "max-age=3600" : "no-cache";
    res.writeHead(200, { ...headers, "Content-Type": type, "Content-Length": fs.statSync(file).size, "Cache-Control": cache });
    if (req.method === "HEAD") { res.end(); return; }
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const url = `http://${host}:${server.address().port}/`;
      resolve({ server, url, pageUrl: pkgRoot ? `${url}?packages=/packages/` : url });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const usage = "usage: node serve.mjs [--port=P] [--packages=DIR | --cdn] [--dist=DIR]";
  const args = Object.fromEntries(process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m || (m[2] === undefined) !== (m[1] === "cdn")) { console.error(usage); process.exit(2); }
    return [m[1], m[2] ?? true];
  }));
  const dist = args.dist ?? path.join(WEB, "dist");
  if (!fs.existsSync(path.join(dist, "index.html"))) {
    console.error(`no site in ${dist}: build it first with \`node web/build.mjs\``);
    process.exit(1);
  }
  let packages = args.packages ?? null;
  let note;
  const remote = () => {
    let base = "the build's package base URL";
    try { base = JSON.parse(fs.readFileSync(path.join(dist, "config.json"), "utf8")).packageBaseUrl; } catch { /* no config */ }
    return `NumPy from ${base}: the page needs the internet`;
  };
  if (packages) {
    note = `NumPy from ${packages} (at /packages/)`;
  } else if (args.cdn) {
    note = `${remote()} (--cdn)`;
  } else {
    const dir = process.env.PYODIDE_PACKAGES || PACKAGES_DIR;
    const found = numpyIn(dir, dist);
    if (found.ok) {
      packages = dir;
      const shown = path.relative(process.cwd(), dir);
      note = `NumPy from ${shown && !shown.startsWith("..") ? shown : dir}/ (at /packages/): works offline, no CDN`;
    } else {
      note = `${remote()} (${found.why}: \`node web/pyodide-packages.mjs\` fetches the wheel)`;
    }
  }
  const { url } = await startServer({ port: Number(args.port ?? 8000), dist, packages });
  console.log(`serving ${url}`);
  console.log(`  ${note}`);
}
