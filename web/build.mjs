// Builds the static site into web/dist/:
//   app.js (esbuild bundle: the UI + CodeMirror 6), worker.mjs (module worker owning Pyodide),
//   index.html, style.css, sw.js (offline cache, versioned by the build id),
//   pyodide/ (Pyodide's core files copied from node_modules/pyodide, a lock file that also lists our wheel, and
//   snapshot.bin.gz: Pyodide's memory after Python started, which the worker restores instead of booting),
//   wheels/<sha12>/minitriton-*.whl (minitriton + kernels + sandbox, built with pip from a generated pyproject,
//   plus Python 3.13 bytecode for them and for the NumPy modules they import: boot-assets.mjs),
//   config.json (package base URL for numpy, the wheel's name, the build id),
//   exercises.<lang>.json (the exercise list rendered by sandbox.bridge under CPython, so the lesson shows
//   before Pyodide is ready) and solutions.<lang>.json (skipped with a note when sandbox/ is not importable).
// It also writes the memory picture's viewer that minitriton ships (minitriton/picture/viewer.js and
// viewer.css: src/picture.js and src/picture.css bundled; committed, so the same sources must give the same
// bytes: web/tests/picture.test.mjs compares them); `--viewer` writes only those.
//
// Usage: node build.mjs [--packages=URL] [--python=PATH] [--if-changed] [--viewer]
//   --packages  the default package base URL for numpy (default: the official Pyodide CDN for the pinned
//               version); the page's ?packages=URL parameter overrides it at run time.
//   --python    the Python used to build the wheel (default: ../.venv/bin/python, else python3).
//   --if-changed  do nothing when dist/ was built from the same inputs (the page's sources, the npm lock,
//               the repo's Python packages, pyproject.toml) and the same options; tools/setup.sh uses it.
//
// Our wheel goes into Pyodide's lock file by a few lines of Node below, not `pyodide lockfile add-wheels`:
// pyodide-build 0.39 needs Python >= 3.12, the project's .venv is 3.11, and the 0.25.1 that pip resolves on
// 3.11 crashes at start. The entry written is the one add-wheels writes (name, version, file_name, sha256,
// imports, depends, package_type, install_dir); Chromium checks the sha256 when it loads the wheel.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { addBytecode, makeSnapshot } from "./boot-assets.mjs";
import { PACKAGES_DIR, verifiedNumpy } from "./pyodide-packages.mjs";

const WEB = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(WEB);
const DIST = path.join(WEB, "dist");
const PYODIDE_DIR = path.join(WEB, "node_modules", "pyodide");
export const PYODIDE_FILES = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"];
export const SNAPSHOT = "pyodide/snapshot.bin.gz";

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a} (usage: node build.mjs [--packages=URL] [--python=PATH])`);
  return [m[1], m[2] ?? "1"];
}));

function defaultPython() {
  const venv = path.join(ROOT, ".venv", "bin", "python");
  return fs.existsSync(venv) ? venv : "python3";
}

// The memory picture's viewer, for minitriton/picture/page.py to inline into its pages: one script (an IIFE,
// since the page inlines it) and one stylesheet, minified, no source map, written to `outDir`.
export const VIEWER_DIR = path.join(ROOT, "minitriton", "picture");
export async function buildViewer(outDir = VIEWER_DIR) {
  const common = { bundle: true, minify: true, write: false, logLevel: "warning", legalComments: "none", charset: "utf8" };
  const [js] = (await build({ ...common, entryPoints: [path.join(WEB, "src", "picture.js")], format: "iife",
    target: "es2022" })).outputFiles;
  const [css] = (await build({ ...common, entryPoints: [path.join(WEB, "src", "picture.css")] })).outputFiles;
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, bytes] of [["viewer.js", js.contents], ["viewer.css", css.contents]]) {
    const file = path.join(outDir, name);
    if (fs.existsSync(file) && Buffer.from(bytes).equals(fs.readFileSync(file))) continue;
    // renamed into place: a page being written from the old file meanwhile never reads half of the new one
    const partial = `${file}.${process.pid}.partial`;
    fs.writeFileSync(partial, bytes);
    fs.renameSync(partial, file);
  }
}

const sha256 = (file) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");
const log = (...a) => console.log("[build]", ...a);

function copyTree(src, dst) {
  fs.cpSync(src, dst, {
    recursive: true,
    filter: (p) => !/(^|\/)(__pycache__|.*\.egg-info)$/.test(p) && !p.endsWith(".pyc"),
  });
}

// The site's wheel holds the packages the page imports. The root pyproject.toml publishes minitriton alone, so
// the wheel is built from a clean copy of these packages with a pyproject.toml written here (the root's
// name, version, Python and dependencies; every package listed), and a stale build/ folder cannot leak
// removed modules.
const SITE_PACKAGES = ["minitriton", "kernels", "sandbox"];

function buildWheel(python) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mt-wheel-"));
  const src = path.join(tmp, "src");
  const out = path.join(tmp, "out");
  fs.mkdirSync(src);
  for (const pkg of SITE_PACKAGES) {
    if (!fs.existsSync(path.join(ROOT, pkg, "__init__.py"))) throw new Error(`${pkg}/ is not a package in ${ROOT}`);
    copyTree(path.join(ROOT, pkg), path.join(src, pkg));
  }
  execFileSync(python, ["-c", `
import json, sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
q = json.dumps
lines = ['[build-system]', 'requires = ["setuptools>=68", "wheel"]', 'build-backend = "setuptools.build_meta"', '',
         '[project]', f'name = {q(project["name"])}', f'version = {q(project["version"])}',
         f'requires-python = {q(project.get("requires-python", ">=3.11"))}',
         f'dependencies = {q(project.get("dependencies", []))}', '',
         '[tool.setuptools.packages.find]', f'include = {q([p + "*" for p in sys.argv[3:]])}', '']
open(sys.argv[2], "w").write(chr(10).join(lines))
`, path.join(ROOT, "pyproject.toml"), path.join(src, "pyproject.toml"), ...SITE_PACKAGES]);
  let isolation = ["--no-build-isolation"];
  try {
    execFileSync(python, ["-c", "import setuptools, wheel"], { stdio: "ignore" });
  } catch {
    isolation = [];  // let pip fetch the build backend
  }
  try {
    execFileSync(python, ["-m", "pip", "wheel", "-q", "--no-deps", ...isolation, "-w", out, src],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" } });
  } catch (e) {
    process.stderr.write(String(e.stdout || "") + String(e.stderr || ""));
    throw new Error(`pip wheel failed (${python})`);
  }
  const wheels = fs.readdirSync(out).filter((f) => f.endsWith(".whl"));
  if (wheels.length !== 1) throw new Error(`expected one wheel, got ${wheels.join(", ") || "none"}`);
  return { tmp, file: path.join(out, wheels[0]) };
}

// Name, version, dependencies and top-level import names of a wheel (read with Python's zipfile).
function wheelInfo(python, file) {
  const script = `
import json, re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
text = z.read(meta).decode()
field = lambda k: [l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith(k + ":")]
deps = []
for req in field("Requires-Dist"):
    if "extra ==" in req.replace("extra==", "extra =="):
        continue
    deps.append(re.match(r"[A-Za-z0-9_.-]+", req).group(0))
tops = sorted({n.split("/")[0] for n in names if n.count("/") == 1 and n.endswith("/__init__.py")})
print(json.dumps({"name": field("Name")[0], "version": field("Version")[0], "depends": deps, "imports": tops}))
`;
  return JSON.parse(execFileSync(python, ["-c", script, file], { encoding: "utf8" }));
}

const normalize = (name) => name.toLowerCase().replace(/[-_.]+/g, "-");

// The lock-file edit `pyodide lockfile add-wheels` does, for one pure-Python wheel.
export function addWheelToLock(lock, info, fileName, sha) {
  const depends = info.depends.map(normalize);
  for (const d of depends) {
    if (!lock.packages[d]) throw new Error(`${info.name} depends on ${d}, which is not in Pyodide's lock`);
  }
  const key = normalize(info.name);
  return {
    ...lock,
    packages: {
      ...lock.packages,
      [key]: {
        name: info.name, version: info.version, file_name: fileName, install_dir: "site", sha256: sha,
        package_type: "package", imports: info.imports, depends, unvendored_tests: false, tool: {},
      },
    },
  };
}

function bridgeOp(python, op, lang) {
  const script = `
import sys
sys.path.insert(0, sys.argv[1])
from sandbox import bridge
print(bridge.handle("${op}", '{"lang": "${lang}"}'))
`;
  const out = execFileSync(python, ["-c", script, ROOT], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const data = JSON.parse(out);
  if (!data[op]) throw new Error(`sandbox.bridge ${op} gave ${out.slice(0, 300)}`);
  return data;
}

// A hash of everything the build reads, for --if-changed.
function inputsHash(options) {
  const h = createHash("sha256").update(JSON.stringify(options));
  const add = (p) => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const e of fs.readdirSync(p).sort()) {
        if (e === "__pycache__" || e.endsWith(".egg-info") || e === "node_modules") continue;
        add(path.join(p, e));
      }
    } else if (/\.(py|toml|cfg|txt|md|mjs|js|css|html|json)$/.test(p)) {
      h.update(path.relative(ROOT, p)).update(fs.readFileSync(p));
    }
  };
  for (const f of ["build.mjs", "index.html", "style.css", "sw.js", "package-lock.json", "src"]) add(path.join(WEB, f));
  for (const e of [...SITE_PACKAGES, "pyproject.toml"]) add(path.join(ROOT, e));
  return h.digest("hex");
}

async function main() {
  const t0 = Date.now();
  const python = args.python ?? defaultPython();
  const pyodideVersion = JSON.parse(fs.readFileSync(path.join(PYODIDE_DIR, "package.json"), "utf8")).version;
  const packageBaseUrl = args.packages ?? `https://cdn.jsdelivr.net/pyodide/v${pyodideVersion}/full/`;
  await buildViewer();    // first: the wheel and the stamp below read minitriton/
  if (args.viewer) return log(`viewer written to ${path.relative(ROOT, VIEWER_DIR)}/`);
  const stampFile = path.join(DIST, ".inputs");
  // NumPy's Pyodide wheel (pyodide-packages.mjs), for the bytecode of the NumPy modules the page imports
  let numpyWheel = null;
  try {
    numpyWheel = verifiedNumpy(process.env.PYODIDE_PACKAGES || PACKAGES_DIR);
  } catch (e) {
    log(`no bytecode in the wheel: ${e.message}`);
  }
  const stamp = inputsHash({ packageBaseUrl, python, numpyWheel });
  if (args["if-changed"] && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === stamp) {
    log("dist/ is up to date");
    return;
  }

  fs.rmSync(DIST, { recursive: true, force: true });
  fs.mkdirSync(path.join(DIST, "pyodide"), { recursive: true });

  // 1. Our wheel (with the bytecode Pyodide would compile at import), in a folder named by its hash (the
  //    service worker caches wheels by URL).
  const { tmp, file: sourceWheel } = buildWheel(python);
  let file = sourceWheel;
  if (numpyWheel) {
    file = path.join(tmp, "bytecode", path.basename(sourceWheel));
    fs.mkdirSync(path.dirname(file));
    const n = await addBytecode(sourceWheel, numpyWheel, file, SITE_PACKAGES);
    log(`bytecode for ${n} modules (ours and the NumPy modules the page imports)`);
  }
  const info = wheelInfo(python, file);
  const sha = sha256(file);
  const wheelName = path.basename(file);
  const wheelRel = `wheels/${sha.slice(0, 12)}/${wheelName}`;
  fs.mkdirSync(path.dirname(path.join(DIST, wheelRel)), { recursive: true });
  fs.copyFileSync(file, path.join(DIST, wheelRel));
  fs.rmSync(tmp, { recursive: true, force: true });
  const missing = SITE_PACKAGES.filter((pkg) => !info.imports.includes(pkg));
  if (missing.length) throw new Error(`the wheel lacks ${missing.join(", ")}`);
  log(`wheel ${wheelName} (${info.imports.join(", ")}; depends ${info.depends.join(", ") || "nothing"})`);

  // 2. Pyodide's core files and the lock with our wheel. The worker makes the wheel's file_name absolute
  //    at run time, so numpy can come from another base URL (the CDN or a local folder).
  for (const f of PYODIDE_FILES) fs.copyFileSync(path.join(PYODIDE_DIR, f), path.join(DIST, "pyodide", f));
  const lock = JSON.parse(fs.readFileSync(path.join(PYODIDE_DIR, "pyodide-lock.json"), "utf8"));
  const ourLock = addWheelToLock(lock, info, wheelRel, sha);
  fs.writeFileSync(path.join(DIST, "pyodide", "pyodide-lock.json"), JSON.stringify(ourLock));
  fs.writeFileSync(path.join(DIST, SNAPSHOT), await makeSnapshot());

  // 3. The exercises, pre-rendered so the lesson shows at once, and their solutions (Solution is text: it
  //    works while Python is not up).
  const langs = [];
  for (const lang of ["ru", "en"]) {
    try {
      fs.writeFileSync(path.join(DIST, `exercises.${lang}.json`), JSON.stringify(bridgeOp(python, "exercises", lang)));
      fs.writeFileSync(path.join(DIST, `solutions.${lang}.json`), JSON.stringify(bridgeOp(python, "solutions", lang)));
      langs.push(lang);
    } catch (e) {
      log(`exercises.${lang}.json skipped (sandbox.bridge not usable: ${String(e.stderr || e.message).trim().split("\n").pop()})`);
    }
  }

  // 4. The page.
  await build({
    entryPoints: [path.join(WEB, "src", "app.js")], bundle: true, format: "esm", minify: true,
    sourcemap: true, target: "es2022", outfile: path.join(DIST, "app.js"), logLevel: "warning",
  });
  await build({
    entryPoints: [path.join(WEB, "src", "worker.mjs")], bundle: true, format: "esm", minify: false,
    target: "es2022", outfile: path.join(DIST, "worker.mjs"), external: ["./pyodide/pyodide.mjs"],
    logLevel: "warning",
  });
  fs.copyFileSync(path.join(WEB, "index.html"), path.join(DIST, "index.html"));
  fs.copyFileSync(path.join(WEB, "style.css"), path.join(DIST, "style.css"));

  // 5. Build id = hash of everything served; it names the service worker's cache.
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (!p.endsWith(".map")) files.push(path.relative(DIST, p).split(path.sep).join("/"));
    }
  };
  walk(DIST);
  files.sort();
  const h = createHash("sha256");
  for (const f of files) h.update(f).update(fs.readFileSync(path.join(DIST, f)));
  const buildId = h.digest("hex").slice(0, 16);
  const config = {
    buildId, pyodideVersion, packageBaseUrl,
    wheel: { name: normalize(info.name), file: wheelRel, sha256: sha, imports: info.imports },
    exercises: langs,
  };
  fs.writeFileSync(path.join(DIST, "config.json"), JSON.stringify(config, null, 1));
  const precache = ["./", "config.json", ...files.filter((f) => f !== "index.html")];
  const sw = fs.readFileSync(path.join(WEB, "sw.js"), "utf8")
    .replace("__BUILD_ID__", buildId)
    .replace("__PRECACHE__", JSON.stringify(precache));
  fs.writeFileSync(path.join(DIST, "sw.js"), sw);
  fs.writeFileSync(stampFile, stamp);
  log(`dist/ ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: build ${buildId}, numpy from ${packageBaseUrl}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => { console.error("[build] FAILED:", e.message); process.exit(1); });
}
