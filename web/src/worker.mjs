// The module worker that owns Pyodide. No lesson logic here: it boots Python, loads numpy and our wheel
// (minitriton + kernels + sandbox), then forwards {op, request} to sandbox.bridge.handle and posts the
// JSON answer back. Pyodide 314 needs a *module* worker (a classic one fails with "Classic web workers are
// not supported").
//
// Messages in:  {type: "init", lockUrl, packageBaseUrl, wheelUrl, wheelName, interruptBuffer?}
//               {type: "call", id, op, request}
// Messages out: {type: "progress", stage: "python"|"numpy"|"minitriton"|"ready", ms}
//               {type: "ready", ms, python, numpy}
//               {type: "fatal", stage, message}        (boot failed: the page shows it and keeps the editor)
//               {type: "result", id, result}           (result is the bridge's JSON, parsed)
import { loadPyodide } from "./pyodide/pyodide.mjs";

const t0 = performance.now();
const since = () => Math.round(performance.now() - t0);
const post = (msg) => self.postMessage(msg);

let bridge = null;   // sandbox.bridge.handle, a PyProxy
let booting = null;

async function boot(init) {
  let stage = "python";
  try {
    post({ type: "progress", stage, ms: since() });
    // Our lock lists the wheel by a path relative to the site; numpy's entry stays relative, so it comes
    // from packageBaseUrl (the CDN, or a local folder). Make ours absolute so both resolve.
    const lock = await (await fetch(init.lockUrl)).json();
    const ours = lock.packages[init.wheelName];
    if (!ours) throw new Error(`the lock file has no entry "${init.wheelName}" (rebuild the site)`);
    ours.file_name = init.wheelUrl;
    const errors = [];
    const py = await loadPyodide({
      indexURL: new URL("./pyodide/", import.meta.url).href,
      lockFileContents: lock,
      packageBaseUrl: init.packageBaseUrl,
      stdout: () => {},
      stderr: (line) => errors.push(line),
    });
    if (init.interruptBuffer) py.setInterruptBuffer(init.interruptBuffer);

    // loadPackage does not throw when a download fails: it reports through errorCallback and resolves.
    // So check loadedPackages after each step.
    const load = async (name) => {
      const messages = [];
      await py.loadPackage([name], { messageCallback: () => {}, errorCallback: (m) => messages.push(m) });
      if (!(name in py.loadedPackages)) {
        const why = messages.concat(errors).join("\n") || "no error reported";
        const url = new URL(lock.packages[name].file_name, init.packageBaseUrl).href;
        throw new Error(`${name} did not load from ${url}\n${why}`);
      }
    };
    stage = "numpy";
    post({ type: "progress", stage, ms: since() });
    await load("numpy");
    stage = "minitriton";
    post({ type: "progress", stage, ms: since() });
    await load(init.wheelName);
    const mod = py.pyimport("sandbox.bridge");
    bridge = mod.handle;
    const versions = JSON.parse(py.runPython(
      "import json, sys, numpy; json.dumps({'python': sys.version.split()[0], 'numpy': numpy.__version__})"));
    post({ type: "progress", stage: "ready", ms: since() });
    post({ type: "ready", ms: since(), ...versions });
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
