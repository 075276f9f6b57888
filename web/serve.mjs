// Serves web/dist on 127.0.0.1 (one command: `node web/serve.mjs`, after `node web/build.mjs`).
// Sends COOP/COEP, so the page is cross-origin isolated and Stop can use Pyodide's interrupt buffer.
//
// Usage: node serve.mjs [--port=P] [--packages=DIR] [--dist=DIR]
//   --port      0 (default 8000) picks a free port
//   --packages  a local folder of Pyodide packages (numpy's wheel) served at /packages/; the printed URL then
//               carries ?packages=/packages/ so numpy comes from there instead of the CDN
// Prints one line: "serving http://127.0.0.1:P/[?packages=/packages/]".
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

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
  const args = Object.fromEntries(process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)=(.*)$/.exec(a);
    if (!m) { console.error(`usage: node serve.mjs [--port=P] [--packages=DIR] [--dist=DIR]`); process.exit(2); }
    return [m[1], m[2]];
  }));
  const dist = args.dist ?? path.join(WEB, "dist");
  if (!fs.existsSync(path.join(dist, "index.html"))) {
    console.error(`no site in ${dist}: build it first with \`node web/build.mjs\``);
    process.exit(1);
  }
  const { pageUrl } = await startServer({ port: Number(args.port ?? 8000), dist, packages: args.packages ?? process.env.PYODIDE_PACKAGES ?? null });
  console.log(`serving ${pageUrl}`);
}
