// Lab mode: the page talks to `python -m sandbox` (a local CPython), driven in headless Chromium. The flows that
// do not depend on where Python runs (hints, reset, autosave, indentation, the language switch's re-rendering,
// progress, a 3-D picture) run once, in Pyodide mode (pyodide.test.mjs, ui-pyodide.test.mjs); here, what goes
// through the lab server: run, check, stop, errors and their fixes, the picture's op, the GPU, the token.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ensureBuilt, launchBrowser, recordTimings, startLabServer, waitReady, withPage } from "./helpers.mjs";
import * as flows from "./flows.mjs";

ensureBuilt();
const lab = await startLabServer();

describe("lab mode (python -m sandbox)", () => {
  let browser;
  before(async () => { browser = await launchBrowser(); });
  after(async () => { await browser?.close(); await lab.stop?.(); });
  const it = (name, body) => test(name, (t) => withPage(t, browser.context, body));

  it("the page loads, lists the exercises and gets ready", async (page) => {
    const t0 = Date.now();
    await page.goto(lab.url);
    await waitReady(page);
    const ready = Date.now() - t0;
    assert.equal(await page.evaluate(() => window.__sandbox.mode), "lab");
    assert.ok(await page.locator("#exercise-list a").count() >= 1);
    assert.ok((await page.locator("#statement").innerText()).length > 20, "the statement is shown");
    const ex = (await flows.exercises(page))[0];
    assert.equal(await flows.code(page), ex.starter, "the editor holds the starter");
    assert.equal(await page.locator("#run").isEnabled(), true);
    assert.equal(await page.locator("#gpu").isVisible(), true, "Run on GPU is offered in lab mode");
    const timings = await page.evaluate(() => window.__sandbox.timings);
    recordTimings("timings-lab.json", { what: "page open to ready (lab)", wallMs: ready, pageMs: timings.ready });
  });

  it("type and run: prints and counters", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.flowTypeAndRun(page);
  });

  it("check: the solution passes, the starter fails with a message", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.flowCheck(page);
  });

  it("saved code from an older starter is kept and flagged", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.flowStarterChanged(page);
  });

  it("stop ends a while True: loop", async (page) => {
    await flows.openFresh(page, lab.url);
    const ms = await flows.flowStop(page);
    recordTimings("timings-lab.json", { what: "Stop click to idle (lab)", wallMs: ms });
  });

  it("an out-of-bounds error points at the student's line and program", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.flowErrorLine(page);
  });

  it("an error's fix is offered as an edit, applied and run again", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.flowApplyFix(page);
  });

  it("memory picture: every program of any launch, scrubbed, with hover", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.flowMemory(page);
  });

  it("Russian first, English switch", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.flowLanguage(page);
  });

  it("run on GPU answers (a comparison, or why it is unavailable)", async (page) => {
    await flows.openFresh(page, lab.url);
    await flows.loadSolution(page);
    await page.click("#gpu");
    await page.locator("#gpu-result").waitFor({ state: "visible", timeout: 120000 });
    assert.ok((await page.locator("#gpu-result").innerText()).trim().length > 5);
  });

  it("every exercise's reference solution passes Check and its starter fails", async (page) => {
    await flows.openFresh(page, lab.url);
    const results = await flows.checkAllSolutions(page);
    recordTimings("timings-lab.json", { what: "Check of each reference solution (lab)", results });
    for (const r of results) assert.equal(r.passed, true, `${r.id}: ${r.error ?? ""}`);
    for (const r of results) assert.equal(r.starterPassed, false, `${r.id}: the starter passes Check`);
  });

  it("the server refuses requests without the token", async (page) => {
    const origin = new URL(lab.url).origin;
    await page.goto(lab.url);
    const status = await page.evaluate(async (o) => (await fetch(`${o}/api/exercises`, { method: "POST", body: "{}" })).status, origin);
    assert.equal(status, 403);
  });
});
