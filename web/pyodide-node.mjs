// `python` inside Pyodide under Node: the Pyodide the site ships (node_modules/pyodide), NumPy's official
// Pyodide wheel from web/pyodide-packages/ (its sha256 checked against Pyodide's lock here, since Node's
// loadPackage checks nothing), and this repository mounted at its own path (NODEFS) as the working
// directory and the first entry of sys.path. So the repo's code runs as it does in the student's browser:
// wasm32, 32-bit np.intp, no threads, no subprocesses.
//
// Usage: node web/pyodide-node.mjs [--test-tools] [--packages=DIR] -m MODULE [ARGS...]
//        node web/pyodide-node.mjs [--test-tools] [--packages=DIR] -c CODE [ARGS...]
//   --test-tools  also install pytest, hypothesis and their dependencies (pyodide-test-requirements.txt)
//   --packages    the folder holding the wheels (default web/pyodide-packages, filled by pyodide-packages.mjs)
// The exit status is Python's (SystemExit's code). Environment variables pass through, except HOME and
// PYTHONPATH.
// Example: node web/pyodide-node.mjs --test-tools -m pytest tests -q -m "not interpreter and not torch"
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PACKAGES_DIR, PYODIDE_DIR, testRequirements, testWheels, verifiedNumpy } from "./pyodide-packages.mjs";

const WEB = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.dirname(WEB);

// Boot Pyodide with numpy (and the test tools if asked), the repo mounted and importable.
export async function bootPyodide({ testTools = false, packages = PACKAGES_DIR } = {}) {
  const numpyWheel = verifiedNumpy(packages);
  const wheels = [numpyWheel];
  if (testTools) {
    const found = testWheels(packages);
    for (const r of testRequirements()) {
      if (!found.has(r.name)) throw new Error(`${packages} has no ${r.name}==${r.version} wheel with the required hash`);
      wheels.push(found.get(r.name));
    }
  }
  const { loadPyodide } = await import(pathToFileURL(path.join(PYODIDE_DIR, "pyodide.mjs")).href);
  // Host paths mean nothing inside Pyodide's file system (except the repo, mounted below): no PYTHONPATH.
  const env = { ...process.env, HOME: "/home/pyodide" };
  delete env.PYTHONPATH;
  const py = await loadPyodide({ indexURL: PYODIDE_DIR + path.sep, env, stdout: () => {}, stderr: () => {} });
  // Raw writes: progress output without newlines (pytest's dots) shows as it comes.
  const raw = (fd) => ({ write: (buf) => { fs.writeSync(fd, buf); return buf.length; } });
  py.setStdout(raw(1));
  py.setStderr(raw(2));
  const errors = [];
  await py.loadPackage(wheels, { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
  if (!("numpy" in py.loadedPackages)) throw new Error(`numpy did not load: ${errors.join("\n")}`);
  py.FS.mkdirTree(ROOT);
  py.FS.mount(py.FS.filesystems.NODEFS, { root: ROOT }, ROOT);
  py.runPython(`import importlib, os, sys
os.chdir(${JSON.stringify(ROOT)})
sys.path.insert(0, ${JSON.stringify(ROOT)})
sys.path_importer_cache.clear()  # folders looked up before the mount
importlib.invalidate_caches()`);
  // web/ holds the pytest plugin for wasm32 (wasm32_pytest_plugin.py)
  if (testTools) py.runPython(`import sys; sys.path.append(${JSON.stringify(WEB)})`);
  return py;
}

// Run `python -m MODULE ARGS` or `python -c CODE ARGS` inside `py`; resolves to the exit status.
export function runPython(py, { module, code, args = [] }) {
  py.globals.set("_mt_request", py.toPy({ module, code, args }));
  return py.runPython(`
def _mt_main(request):
    import runpy, sys, traceback
    sys.argv = [request["module"] or "-c", *request["args"]]
    try:
        if request["module"]:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        else:
            exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0
_mt_main(_mt_request)
`);
}

function parseArgs(argv) {
  const opts = { testTools: false, packages: PACKAGES_DIR };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--test-tools") opts.testTools = true;
    else if (a.startsWith("--packages=")) opts.packages = path.resolve(a.slice("--packages=".length));
    else break;
  }
  if (argv[i] === "-m" && argv[i + 1]) return { opts, run: { module: argv[i + 1], args: argv.slice(i + 2) } };
  if (argv[i] === "-c" && argv[i + 1] !== undefined) return { opts, run: { code: argv[i + 1], args: argv.slice(i + 2) } };
  throw new Error("usage: node web/pyodide-node.mjs [--test-tools] [--packages=DIR] (-m MODULE | -c CODE) [ARGS...]");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  try {
    const py = await bootPyodide(parsed.opts);
    process.exitCode = runPython(py, parsed.run);
  } catch (e) {
    console.error(`[pyodide-node] ${e.message}`);
    process.exitCode = 1;
  }
}
