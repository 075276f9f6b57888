// The module worker that owns Pyodide. No lesson logic here: it boots Python, loads numpy and our wheel
// (minitriton + kernels + sandbox), then forwards {op, request} to sandbox.bridge.handle and posts the
// JSON answer back. Pyodide's ES module build needs a *module* worker (a classic one fails with "Classic web
// workers are not supported").
//
// Messages in:  {type: "init", lockUrl, packageBaseUrl, wheelUrl, wheelName, interruptBuffer?}
//               {type: "call", id, op, request}
// Messages out: {type: "progress", stage: "python"|"numpy"|"minitriton"|"ready", ms}
//               {type: "ready", ms, python, numpy, marks}  (marks: ms since the worker started, per step)
//               {type: "fatal", stage, message}        (boot failed: the page shows it and keeps the editor)
//               {type: "result", id, result}           (result is the bridge's JSON, parsed)
import { loadPyodide } from "./pyodide/pyodide.mjs";

const t0 = performance.now();
const since = () => Math.round(performance.now() - t0);
const post = (msg) => self.postMessage(msg);

let bridge = null;   // sandbox.bridge.handle, a PyProxy
let booting = null;

// The build's snapshot of Pyodide right after Python started (build.mjs), or null when there is none: a
// restore skips Python's own start-up.
async function fetchSnapshot() {
  try {
    const response = await fetch(new URL("./pyodide/snapshot.bin.gz", import.meta.url));
    if (!response.ok) return null;
    const inflated = response.body.pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(inflated).arrayBuffer());
  } catch {
    return null;
  }
}

async function boot(init) {
  let stage = "python";
  const marks = {};   // ms since the worker started, per step: in the "ready" message (web/measure.mjs shows them)
  const mark = (name) => { marks[name] = since(); };
  try {
    post({ type: "progress", stage, ms: since() });
    // Our lock lists the wheel by a path relative to the site; numpy's entry stays relative, so it comes
    // from packageBaseUrl (the CDN, or a local folder). Make ours absolute so both resolve. The lock is
    // fetched while Pyodide boots (loadPyodide takes a promise).
    const lockReady = fetch(init.lockUrl).then((r) => r.json()).then((lock) => {
      const ours = lock.packages[init.wheelName];
      if (!ours) throw new Error(`the lock file has no entry "${init.wheelName}" (rebuild the site)`);
      ours.file_name = init.wheelUrl;
      mark("lock");
      return lock;
    });
    const errors = [];
    const options = {
      indexURL: new URL("./pyodide/", import.meta.url).href,
      lockFileContents: lockReady,
      packageBaseUrl: init.packageBaseUrl,
      stdout: () => {},
      stderr: (line) => errors.push(line),
    };
    let py = null;
    const snapshot = await fetchSnapshot();
    if (snapshot) {
      try {
        py = await loadPyodide({ ...options, _loadSnapshot: snapshot });
        mark("snapshot");
      } catch (e) {
        console.warn(`Python's snapshot did not load (${e.message}); starting Python instead`);
      }
    }
    py ??= await loadPyodide(options);
    const lock = await lockReady;
    mark("python");
    if (init.interruptBuffer) py.setInterruptBuffer(init.interruptBuffer);

    // NumPy and our wheel load together (downloads and NumPy's compiled modules in parallel). loadPackage
    // does not throw when a download fails: it reports through errorCallback and resolves, so check
    // loadedPackages, NumPy first.
    stage = "numpy";
    post({ type: "progress", stage, ms: since() });
    const messages = [];
    await py.loadPackage(["numpy", init.wheelName], { messageCallback: () => {}, errorCallback: (m) => messages.push(m) });
    for (const name of ["numpy", init.wheelName]) {
      if (!(name in py.loadedPackages)) {
        const why = messages.concat(errors).join("\n") || "no error reported";
        const url = new URL(lock.packages[name].file_name, init.packageBaseUrl).href;
        if (name !== "numpy") stage = "minitriton";
        throw new Error(`${name} did not load from ${url}\n${why}`);
      }
    }
    mark("packages");
    stage = "minitriton";
    post({ type: "progress", stage, ms: since() });
    const mod = py.pyimport("sandbox.bridge");
    bridge = mod.handle;
    mark("imported");
    const versions = JSON.parse(py.runPython(
      "import json, sys, numpy; json.dumps({'python': sys.version.split()[0], 'numpy': numpy.__version__})"));
    post({ type: "progress", stage: "ready", ms: since() });
    post({ type: "ready", ms: since(), ...versions, marks });
  } catch (e) {
    post({ type: "fatal", stage, message: String(e && e.message ? e.message : e) });
    throw e;
  }
}

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    booting = boot(data).catch(() => {});
    return;
  }
  if (data.type !== "call") return;
  await booting;
  if (!bridge) {
    post({ type: "result", id: data.id, result: { error: { type: "NotReady", message: "Python did not start" } } });
    return;
  }
  let result;
  try {
    result = JSON.parse(bridge(data.op, JSON.stringify(data.request)));
  } catch (e) {
    // The bridge never raises, except for a KeyboardInterrupt from Stop (the interrupt buffer).
    const message = String(e && e.message ? e.message : e);
    const type = /KeyboardInterrupt/.test(message) ? "KeyboardInterrupt" : "WorkerError";
    result = { error: { type, message, line: null, col: null, program: null, traceback: message } };
  }
  post({ type: "result", id: data.id, result });
};
