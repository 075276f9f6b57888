// Pyodide mode: the static page (web/serve.mjs, cross-origin isolated) boots Pyodide in a module worker.
// Without NumPy: the worker boots Python from the local files, a numpy load that fails is reported clearly
// (loadPackage does not throw), our wheel installs by name, and the site works offline after the first load.
// With NumPy's official Pyodide wheel (web/pyodide-packages/, filled by pyodide-packages.mjs from a registry
// package and checked against Pyodide's lock; PYODIDE_PACKAGES=/folder overrides): every user flow, and the
// whole page (NumPy included, on a plain `/`) offline after the first visit, in a fresh tab. Nothing here
// reaches the network.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { before, describe } from "node:test";
import { verifiedNumpy } from "../pyodide-packages.mjs";
import { DIST, ensureBuilt, numpyWheel, pyodideSite, recordTimings, waitReady } from "./helpers.mjs";
import * as flows from "./flows.mjs";

ensureBuilt();
const { lock, file: numpyFile, packages: PACKAGES } = numpyWheel();

describe("Pyodide core in a module worker (no numpy needed)", () => {
  const site = pyodideSite();
  const it = site.it;

  it("boots Python in the worker and reports a failed numpy load clearly", async (page) => {
    const t0 = Date.now();
    await page.goto(site.server.pageUrl);
    assert.equal(await page.evaluate(() => crossOriginIsolated), true, "serve.mjs sends COOP/COEP");
    await page.waitForFunction(() => document.body.dataset.stage === "failed", null, { timeout: 120000 });
    const wall = Date.now() - t0;
    const timings = await page.evaluate(() => window.__sandbox.timings);
    // Python itself started: the numpy stage was reached, which the worker posts after loadPyodide resolved
    assert.ok(timings.stages.numpy > 0, JSON.stringify(timings));
    assert.equal(await page.locator('#stages li[data-stage="python"]').getAttribute("class"), "done");
    assert.equal(await page.locator('#stages li[data-stage="numpy"]').getAttribute("class"), "failed");
    const text = await page.locator("#boot").innerText();
    assert.match(text, /NumPy/);
    assert.ok(text.includes(`${site.server.url}packages/`), `the message names the package URL: ${text}`);
    assert.ok(text.includes(numpyFile), `the details name the missing wheel: ${text}`);
    // the editor stays usable, Run stays off
    assert.equal(await page.locator("#run").isDisabled(), true);
    await page.click(".cm-content");
    await page.keyboard.type("# still editable");
    assert.match(await flows.code(page), /# still editable/);
    recordTimings("timings-pyodide.json", {
      what: "page open to Pyodide core booted (numpy stage reached), Chromium", pageMs: timings.stages.numpy, wallMs: wall,
    });
  });

  // Our wheel by name from the site's lock, sha256-checked by Chromium, from a worker like the page's.
  // numpy is missing here, so only the install is checked (importing minitriton needs numpy).
  it("our wheel installs by name from the site's lock file", async (page) => {
    fs.writeFileSync(path.join(site.packages, "wheel-probe.mjs"), `
      import { loadPyodide } from "../pyodide/pyodide.mjs";
      const cfg = await (await fetch("../config.json")).json();
      const lock = await (await fetch("../pyodide/pyodide-lock.json")).json();
      lock.packages[cfg.wheel.name].file_name = new URL("../" + cfg.wheel.file, location.href).href;
      const py = await loadPyodide({ indexURL: new URL("../pyodide/", location.href).href, lockFileContents: lock,
        packageBaseUrl: new URL("./", location.href).href });
      const errors = [];
      await py.loadPackage([cfg.wheel.name], { errorCallback: (m) => errors.push(m), messageCallback: () => {} });
      const files = py.runPython(\`
import importlib.metadata as md, json
d = md.distribution("${"${cfg.wheel.name}"}")
json.dumps({"version": d.version, "files": sorted(str(f) for f in d.files if str(f).endswith(".py"))})\`);
      postMessage({ loaded: Object.keys(py.loadedPackages), errors, ...JSON.parse(files) });
    `);
    await page.goto(site.server.url + "packages/none.html").catch(() => {});
    const result = await page.evaluate(() => new Promise((resolve, reject) => {
      const w = new Worker("/packages/wheel-probe.mjs", { type: "module" });
      w.onmessage = (e) => resolve(e.data);
      w.onerror = (e) => reject(new Error(e.message || "worker error"));
    }));
    const config = JSON.parse(fs.readFileSync(path.join(DIST, "config.json"), "utf8"));
    assert.ok(result.loaded.includes(config.wheel.name), JSON.stringify(result));
    assert.ok(!result.loaded.includes("numpy"), "numpy is not available in this test");
    assert.ok(result.errors.some((m) => /numpy/.test(m)), `numpy's failure is reported: ${result.errors}`);
    for (const f of ["minitriton/__init__.py", "minitriton/language/__init__.py"]) assert.ok(result.files.includes(f), f);
    for (const pkg of ["kernels", "sandbox"]) {
      if (config.wheel.imports.includes(pkg)) assert.ok(result.files.includes(`${pkg}/__init__.py`), pkg);
    }
    if (config.wheel.imports.includes("sandbox")) assert.ok(result.files.includes("sandbox/bridge.py"));
  });

  it("works offline after the first load (service worker)", async (page) => {
    await page.goto(site.server.pageUrl);
    await page.waitForFunction(() => document.body.dataset.stage === "failed", null, { timeout: 120000 });
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 30000 });
    await site.browser.context.setOffline(true);
    try {
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.stage === "failed" || document.body.dataset.ready === "1",
        null, { timeout: 120000 });
      const timings = await page.evaluate(() => window.__sandbox.timings);
      assert.ok(timings.stages.numpy > 0, `Python booted offline from the cache: ${JSON.stringify(timings)}`);
      assert.match(await page.locator("#title").innerText(), /minitriton/);
      assert.equal(await page.evaluate(() => !!navigator.serviceWorker.controller), true);
    } finally {
      await site.browser.context.setOffline(false);
    }
  });
});

describe("Pyodide with numpy: the user flows", () => {
  before(() => verifiedNumpy(PACKAGES));   // the file the lock names, with the lock's sha256 (Chromium checks it again)
  const site = pyodideSite(PACKAGES);
  const it = site.it;
  const url = () => `${site.server.pageUrl}&sw=0`;

  it("the page gets ready: Python, NumPy, minitriton", async (page) => {
    const t0 = Date.now();
    await page.goto(url());
    await waitReady(page, 180000);
    const timings = await page.evaluate(() => window.__sandbox.timings);
    recordTimings("timings-pyodide.json", { what: "page open to ready (Pyodide + numpy + wheel)", wallMs: Date.now() - t0, ...timings });
    assert.equal(await page.evaluate(() => window.__sandbox.mode), "pyodide");
    assert.equal(await page.locator("#run").isEnabled(), true);
    const info = await page.evaluate(() => window.__sandbox.state.info);
    assert.equal(info?.numpy, lock.packages.numpy.version, JSON.stringify(info));
  });
  it("type and run", async (page) => { await flows.openFresh(page, url()); await flows.flowTypeAndRun(page); });
  it("check", async (page) => { await flows.openFresh(page, url()); await flows.flowCheck(page); });
  it("hint", async (page) => { await flows.openFresh(page, url()); await flows.flowHint(page); });
  it("reset", async (page) => { await flows.openFresh(page, url()); await flows.flowReset(page); });
  it("autosave across reload", async (page) => { await flows.openFresh(page, url()); await flows.flowAutosave(page); });
  it("stop a while True: loop (interrupt buffer)", async (page) => {
    await flows.openFresh(page, url());
    const ms = await flows.flowStop(page);
    recordTimings("timings-pyodide.json", { what: "Stop click to idle (Pyodide, interrupt buffer)", wallMs: ms });
  });
  it("an error mapped to its line", async (page) => { await flows.openFresh(page, url()); await flows.flowErrorLine(page); });
  it("memory picture", async (page) => { await flows.openFresh(page, url()); await flows.flowMemory(page); });
  // every exercise's solution passing Check on Pyodide: session.test.mjs (typed key by key)
});

describe("Pyodide with numpy: offline after the first visit", () => {
  const site = pyodideSite(PACKAGES);

  // A plain `/` (no ?packages=): serve.mjs's config.json names its own /packages/, so NumPy comes from the
  // server; offline, a fresh tab gets everything from the service worker's cache.
  site.it("a plain / loads NumPy from the server; offline, a fresh tab gets the page, Python, NumPy and minitriton from the cache", async (page) => {
    const requests = [];
    const record = (r) => requests.push(r.url());
    site.browser.context.on("request", record);
    let fresh = null;
    try {
      await page.goto(site.server.url);
      await waitReady(page, 180000);
      assert.ok(requests.includes(`${site.server.url}packages/${numpyFile}`), requests.join("\n"));
      assert.deepEqual(requests.filter((u) => /^https?:/.test(u) && !u.startsWith(site.server.url)), [], "nothing from outside");
      await page.evaluate(() => navigator.serviceWorker.ready);
      await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 30000 });
      await site.browser.context.setOffline(true);
      fresh = await site.browser.context.newPage();
      await fresh.goto(site.server.url);
      await waitReady(fresh, 180000);
      assert.equal(await fresh.evaluate(() => !!navigator.serviceWorker.controller), true);
      await flows.loadSolution(fresh);
      await flows.clickCheck(fresh);
      const result = await fresh.evaluate(() => window.__sandbox.state.lastResult);
      assert.equal(result.passed, true, JSON.stringify(result).slice(0, 500));
    } finally {
      site.browser.context.off("request", record);
      await fresh?.close().catch(() => {});
      await site.browser.context.setOffline(false);
    }
  });
});
