// The built site (web/dist): our wheel in Pyodide's lock with the right hash and dependencies, Pyodide's
// core files as npm ships them, the numpy base URL, the service worker's precache list.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { PYODIDE_FILES, addWheelToLock } from "../build.mjs";
import { DIST, PYTHON, ROOT, WEB, ensureBuilt } from "./helpers.mjs";

ensureBuilt();
const read = (p) => fs.readFileSync(path.join(DIST, p));
const config = JSON.parse(read("config.json"));
const lock = JSON.parse(read("pyodide/pyodide-lock.json"));
const npmLock = JSON.parse(fs.readFileSync(path.join(WEB, "node_modules/pyodide/pyodide-lock.json"), "utf8"));
const sha = (buf) => createHash("sha256").update(buf).digest("hex");

// 0.29.1: the newest Pyodide whose lock names the NumPy build a registry package carries (web/README.md)
const PYODIDE = "0.29.1";

test("Pyodide's version is the pinned one and its core files are copied unchanged", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(WEB, "package.json"), "utf8"));
  assert.equal(pkg.dependencies.pyodide, PYODIDE);
  assert.equal(config.pyodideVersion, PYODIDE);
  for (const f of PYODIDE_FILES) {
    assert.equal(sha(read(`pyodide/${f}`)), sha(fs.readFileSync(path.join(WEB, "node_modules/pyodide", f))), f);
  }
});

test(`numpy comes from the official CDN for ${PYODIDE} unless the build says otherwise`, () => {
  assert.equal(config.packageBaseUrl, `https://cdn.jsdelivr.net/pyodide/v${PYODIDE}/full/`);
  assert.deepEqual(lock.packages.numpy, npmLock.packages.numpy, "numpy's lock entry (and sha256) is Pyodide's own");
});

test("our wheel is in the lock: hash, imports and dependencies match the file", () => {
  const entry = lock.packages[config.wheel.name];
  assert.ok(entry, `lock has ${config.wheel.name}`);
  const wheel = read(config.wheel.file);
  assert.equal(entry.sha256, sha(wheel), "the sha256 Chromium will check is the file's");
  assert.equal(entry.file_name, config.wheel.file);
  assert.match(path.basename(entry.file_name), /^minitriton-[\d.]+-py3-none-any\.whl$/);
  assert.deepEqual(entry.depends, ["numpy"]);
  assert.equal(entry.package_type, "package");
  assert.equal(entry.install_dir, "site");
  // imports = the top-level packages actually in the wheel (read back with Python's zipfile)
  const names = JSON.parse(execFileSync(PYTHON, ["-c",
    "import json, sys, zipfile; print(json.dumps(zipfile.ZipFile(sys.argv[1]).namelist()))", path.join(DIST, config.wheel.file)]));
  const tops = [...new Set(names.filter((n) => /^[^/]+\/__init__\.py$/.test(n)).map((n) => n.split("/")[0]))].sort();
  assert.deepEqual(entry.imports, tops);
  assert.ok(tops.includes("minitriton"));
  // every Python package of the repo that the page needs is shipped
  for (const pkg of ["minitriton", "kernels", "sandbox"]) {
    if (fs.existsSync(path.join(ROOT, pkg, "__init__.py"))) assert.ok(tops.includes(pkg), `${pkg} is in the wheel`);
  }
  assert.ok(!names.some((n) => n.startsWith("tests/")), "no tests in the wheel");
  // bytecode: Python 3.13's (Pyodide's), for modules of the wheel or of NumPy only, one per source
  const pycs = names.filter((n) => n.includes("__pycache__"));
  for (const n of pycs) {
    assert.match(n, /^(minitriton|kernels|sandbox|numpy)\/(.+\/)?__pycache__\/[^/]+\.cpython-313\.pyc$/, n);
    const source = n.replace(/__pycache__\/([^/]+)\.cpython-313\.pyc$/, "$1.py");
    assert.ok(n.startsWith("numpy/") || names.includes(source), `${n} has its source ${source}`);
  }
  assert.ok(pycs.some((n) => n.startsWith("minitriton/")) && pycs.some((n) => n.startsWith("numpy/")), "bytecode shipped");
  // PEP 552 flags = 1: hash-based and unchecked, so the sources' timestamps (not kept by wheels) do not matter
  const flags = JSON.parse(execFileSync(PYTHON, ["-c", `import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps(sorted({int.from_bytes(z.read(n)[4:8], "little") for n in z.namelist() if n.endswith(".pyc")})))`,
  path.join(DIST, config.wheel.file)]));
  assert.deepEqual(flags, [1]);
  // nothing else in Pyodide's lock changed
  const others = Object.keys(lock.packages).filter((k) => k !== config.wheel.name);
  assert.deepEqual(others.sort(), Object.keys(npmLock.packages).sort());
  assert.deepEqual(lock.info, npmLock.info);
});

test("addWheelToLock refuses a dependency Pyodide does not have", () => {
  const info = { name: "demo_pkg", version: "1.0", imports: ["demo_pkg"], depends: ["numpy", "not-a-pyodide-package"] };
  assert.throws(() => addWheelToLock(npmLock, info, "w/demo_pkg-1.0-py3-none-any.whl", "00"),
    /demo_pkg depends on not-a-pyodide-package, which is not in Pyodide's lock/);
  const ok = addWheelToLock(npmLock, { ...info, depends: ["NumPy"] }, "w/demo_pkg-1.0-py3-none-any.whl", "ab");
  assert.deepEqual(ok.packages["demo-pkg"].depends, ["numpy"]);
  assert.equal(ok.packages["demo-pkg"].name, "demo_pkg");
  assert.equal(npmLock.packages["demo-pkg"], undefined, "the input lock is not modified");
});

test("the service worker precaches every served file of this build", () => {
  const sw = read("sw.js").toString();
  assert.ok(sw.includes(`"minitriton-${config.buildId}"`), "cache named by the build id");
  const list = JSON.parse(/const PRECACHE = (\[.*\]);/.exec(sw)[1]);
  for (const f of list.filter((x) => x !== "./")) assert.ok(fs.existsSync(path.join(DIST, f)), f);
  for (const f of ["app.js", "worker.mjs", "style.css", "config.json", "pyodide/pyodide.asm.wasm", "pyodide/pyodide-lock.json", config.wheel.file]) {
    assert.ok(list.includes(f), `${f} is precached`);
  }
  for (const lang of config.exercises) assert.ok(list.includes(`exercises.${lang}.json`));
});

test("the pre-rendered exercises match the bridge's answer", (t) => {
  if (!config.exercises.length) { t.skip("sandbox.bridge was not importable at build time"); return; }
  for (const lang of config.exercises) {
    const built = JSON.parse(read(`exercises.${lang}.json`));
    const live = JSON.parse(execFileSync(PYTHON, ["-c",
      `import sys; sys.path.insert(0, sys.argv[1]); from sandbox import bridge; print(bridge.handle("exercises", '{"lang": "${lang}"}'))`, ROOT]));
    assert.deepEqual(built, live, `exercises.${lang}.json is stale: rebuild with node web/build.mjs`);
    assert.ok(built.exercises.length >= 1);
  }
});
