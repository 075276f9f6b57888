// One interface for the UI, two back ends:
//   WorkerTransport: Pyodide in a module worker (the static page; offline once cached).
//   LabTransport:    a local Python process (`python -m sandbox`), POST /api/<op> with the token.
// Both expose: start(onProgress) -> Promise<info>, call(op, request) -> Promise<result JSON>,
// stop() -> Promise<void> (ends a running call within a second), and `mode`.

export class StoppedError extends Error {
  constructor(reason) { super(reason); this.name = "StoppedError"; }
}

export class WorkerTransport {
  constructor({ workerUrl, init }) {
    this.mode = "pyodide";
    this.workerUrl = workerUrl;
    this.init = init;                         // {lockUrl, packageBaseUrl, wheelUrl, wheelName}
    this.pending = new Map();                 // id -> {resolve, reject}
    this.nextId = 1;
    this.onProgress = () => {};
    this.onRestart = () => {};                // called after a crashed worker was replaced
    this.booted = false;
    this.ready = null;
    this.isolated = typeof crossOriginIsolated !== "undefined" && crossOriginIsolated
      && typeof SharedArrayBuffer !== "undefined";
  }

  start(onProgress) {
    if (onProgress) this.onProgress = onProgress;
    this.worker = new Worker(this.workerUrl, { type: "module" });
    this.interrupt = this.isolated ? new Uint8Array(new SharedArrayBuffer(1)) : null;
    const worker = this.worker;
    this.ready = new Promise((resolve, reject) => {
      worker.onmessage = ({ data }) => {
        if (worker !== this.worker) return;   // a message from a worker we already replaced
        if (data.type === "progress") this.onProgress({ stage: data.stage, ms: data.ms });
        else if (data.type === "ready") { this.booted = true; resolve(data); }
        else if (data.type === "fatal") reject(Object.assign(new Error(data.message), { stage: data.stage }));
        else if (data.type === "result") {
          const p = this.pending.get(data.id);
          if (p) { this.pending.delete(data.id); p.resolve(data.result); }
        }
      };
      worker.onerror = (e) => {
        if (worker !== this.worker) return;
        reject(new Error(`worker failed: ${e.message || "could not start"}`));
        this._failPending(new Error(`worker crashed: ${e.message || "unknown error"}`));
        // A worker that had booted and then died (e.g. out of memory): boot a new one. The code is safe
        // in localStorage; a worker that never booted is not retried (its failure would repeat).
        if (this.booted) { this.booted = false; worker.terminate(); this.start(); this.onRestart(); }
      };
    });
    this.ready.catch(() => {});
    worker.postMessage({ type: "init", ...this.init, interruptBuffer: this.interrupt });
    return this.ready;
  }

  async call(op, request) {
    await this.ready;
    const id = this.nextId++;
    if (this.interrupt) this.interrupt[0] = 0;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: "call", id, op, request });
    });
  }

  get busy() { return this.pending.size > 0; }

  _failPending(err) {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  // Stop: when cross-origin isolated, ask Python to raise KeyboardInterrupt (SIGINT = 2 in the buffer) and
  // give it 400 ms; otherwise, or if it does not come back, terminate the worker and boot a new one.
  async stop(reason = "stopped") {
    if (!this.busy) return;
    if (this.interrupt) {
      this.interrupt[0] = 2;
      const deadline = performance.now() + 400;
      while (this.busy && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (!this.busy) return;
    }
    this.worker.terminate();
    this.booted = false;
    this._failPending(new StoppedError(reason));
    this.start();
  }
}

export class LabTransport {
  constructor({ base = "", token }) {
    this.mode = "lab";
    this.base = base;
    this.token = token;
    this.controllers = new Set();
  }

  // Ready once the server accepts the token (POST /api/info). A refusal rejects with stage "token" (and the
  // server's reason); no answer at all with stage "network".
  start(onProgress) {
    this.ready = (async () => {
      const info = await this.call("info", {});
      if (info?.error) {
        const e = new Error(info.error.message || info.error.type);
        throw Object.assign(e, { stage: info.error.type === "NetworkError" ? "network" : "token", error: info.error });
      }
      if (onProgress) onProgress({ stage: "ready", ms: 0 });
      return { python: `CPython ${info.python ?? ""} (lab)`, numpy: "" };
    })();
    this.ready.catch(() => {});
    return this.ready;
  }

  get busy() { return this.controllers.size > 0; }

  // The bridge's JSON, or {error} with a `key` of the page's messages when the server did not answer in JSON.
  async call(op, request) {
    const controller = new AbortController();
    this.controllers.add(controller);
    try {
      const response = await fetch(`${this.base}/api/${op}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Token": this.token },
        body: JSON.stringify(request),
        signal: controller.signal,
      });
      const text = await response.text();
      let data;
      try { data = JSON.parse(text); } catch { data = null; }
      if (!response.ok && !(data && data.error)) {
        return { error: { type: "HTTPError", key: "httpError", vars: { status: response.status, detail: text.slice(0, 300) },
          message: `${response.status} ${response.statusText}` } };
      }
      return data ?? { error: { type: "HTTPError", key: "notJson", vars: { detail: text.slice(0, 300) }, message: text.slice(0, 300) } };
    } catch (e) {
      if (controller.signal.aborted) throw new StoppedError(String(controller.signal.reason || "stopped"));
      return { error: { type: "NetworkError", key: "labUnreachable", vars: { detail: e.message }, message: e.message } };
    } finally {
      this.controllers.delete(controller);
    }
  }

  // Stop: the server interrupts the run, whose answer then says where the code was (or kills it after a
  // second); a call that has not come back once the server has stopped it is cut here.
  async stop(reason = "stopped") {
    if (!this.busy) return;
    try {
      await fetch(`${this.base}/api/stop`, {
        method: "POST", headers: { "Content-Type": "application/json", "X-Token": this.token }, body: "{}",
      });
      const deadline = performance.now() + 400;
      while (this.busy && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    } catch { /* the server may be gone; the call is cut anyway */ }
    for (const c of this.controllers) c.abort(reason);
  }
}
