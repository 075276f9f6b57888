// What lets the page's Python start fast, made at build time under Node with the Pyodide the site ships:
//   - makeSnapshot(): Pyodide's memory right after Python started (Pyodide's experimental snapshot API),
//     gzipped. The worker restores it instead of starting Python. The snapshot carries the build id of the
//     Pyodide files it came from (a mismatch fails the restore, and the worker then starts Python). Only the
//     interpreter is in it: NumPy's compiled modules are separate WebAssembly modules a snapshot cannot hold.
//   - addBytecode(wheel, numpyWheel): our wheel plus the bytecode (.pyc) Pyodide's Python 3.13 would compile
//     at import time: for our packages, and for the NumPy modules importing sandbox.bridge loads (NumPy's
//     Pyodide wheel ships sources only). Hash-based, unchecked pycs (PEP 552): Python uses them without
//     looking at the sources' timestamps, which the wheels do not keep. NumPy's are compiled from the very
//     wheel whose sha256 the lock pins, so they cannot disagree with the sources the page loads.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";
import { PYODIDE_DIR } from "./pyodide-packages.mjs";

async function startPyodide(options = {}) {
  const { loadPyodide } = await import(pathToFileURL(path.join(PYODIDE_DIR, "pyodide.mjs")).href);
  return loadPyodide({ indexURL: PYODIDE_DIR + path.sep, env: { HOME: "/home/pyodide" }, stdout: () => {},
    stderr: () => {}, ...options });
}

export async function makeSnapshot() {
  const py = await startPyodide({ _makeSnapshot: true });
  py.runPython("import os; os.environ.pop('_', None)");   // Emscripten's program name: this build's script path
  return zlib.gzipSync(py.makeMemorySnapshot(), { level: 6 });
}

const ADD_BYTECODE = `
import base64, hashlib, importlib.util, os, py_compile, sys, tempfile, zipfile

src, dst, ours = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
site = tempfile.mkdtemp()   # in Pyodide's in-memory file system
pyc = os.path.join(tempfile.mkdtemp(), "module.pyc")
with zipfile.ZipFile(src) as z:
    z.extractall(site)
sys.path.insert(0, site)
from sandbox import bridge
bridge.handle("exercises", '{"lang": "en"}')

files = {}  # path in the wheel -> source file
for pkg in ours:
    for root, _, names in os.walk(os.path.join(site, pkg)):
        for n in names:
            if n.endswith(".py"):
                full = os.path.join(root, n)
                files[os.path.relpath(full, site)] = full
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None) or ""
    if f.endswith(".py") and "/site-packages/numpy/" in f:
        files[f.split("/site-packages/", 1)[1]] = f

with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    record_name = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
    record = zin.read(record_name).decode().splitlines()
    for info in zin.infolist():
        if info.filename != record_name:
            zout.writestr(info, zin.read(info.filename))
    for rel, full in sorted(files.items()):
        py_compile.compile(full, cfile=pyc, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        data = open(pyc, "rb").read()
        arc = importlib.util.cache_from_source(rel)
        zout.writestr(zipfile.ZipInfo(arc, (1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.insert(-1, f"{arc},sha256={digest},{len(data)}")
    zout.writestr(record_name, "\\n".join(record) + "\\n")
print(len(files))
`;

// A copy of `wheelFile` at `outFile` with the bytecode; resolves to the number of .pyc files added.
export async function addBytecode(wheelFile, numpyWheel, outFile, packages) {
  const py = await startPyodide();
  const errors = [];
  await py.loadPackage([numpyWheel], { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
  if (!("numpy" in py.loadedPackages)) throw new Error(`numpy did not load from ${numpyWheel}: ${errors.join("\n")}`);
  const [inWheel, outWheel] = [`${py.FS.cwd()}/in.whl`, `${py.FS.cwd()}/out.whl`];   // Pyodide's in-memory home
  py.FS.writeFile(inWheel, fs.readFileSync(wheelFile));
  py.globals.set("_argv", py.toPy(["-", inWheel, outWheel, packages.join(",")]));
  let out = "";
  py.setStdout({ batched: (line) => { out += line; } });
  py.runPython(`import sys\nsys.argv = list(_argv)\n${ADD_BYTECODE}`);
  fs.writeFileSync(outFile, py.FS.readFile(outWheel));
  return Number(out.trim());
}
