// The page's behaviour in Pyodide mode (web/serve.mjs, cross-origin isolated). Always: when Python cannot
// start (no NumPy here), the statement, hints and the solution still work and Ctrl+Enter says why nothing
// runs. With NumPy's official Pyodide wheel (web/pyodide-packages/, filled by tools/setup.sh; PYODIDE_PACKAGES=
// /folder overrides): the flows of the page's defects, as in lab mode.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { before, describe } from "node:test";
import { verifiedNumpy } from "../pyodide-packages.mjs";
import { ensureBuilt, loadProblems, numpyWheel, pyodideSite, waitReady } from "./helpers.mjs";
import * as flows from "./flows.mjs";

ensureBuilt();
const { file: numpyFile, packages: PACKAGES } = numpyWheel();
// Never skipped in CI (tools/setup.sh fetches the wheel there); elsewhere without the wheel, skipped with why.
const numpySkip = process.env.CI !== "true" && !fs.existsSync(path.join(PACKAGES, numpyFile))
  ? `no ${numpyFile} in ${PACKAGES}: run node web/pyodide-packages.mjs` : false;

describe("Pyodide mode when Python does not start", () => {
  const site = pyodideSite();
  const it = site.it;

  it("hints and the solution are text: they work without Python; Ctrl+Enter says why nothing runs", async (page) => {
    await page.goto(`${site.server.pageUrl}&sw=0&lang=ru`);
    await page.waitForFunction(() => document.body.dataset.stage === "failed", null, { timeout: 120000 });
    const ex = (await flows.exercises(page))[0];
    assert.ok((await page.locator("#statement").innerText()).length > 20);
    assert.equal(await page.locator("#hint").isEnabled(), true);
    assert.equal(await page.locator("#solution").isEnabled(), true);
    await page.click("#hint");
    await page.locator("#hints .hint").first().waitFor();
    assert.match(await page.locator("#hints .hint h3").first().innerText(), new RegExp(`1\\D+${ex.hints}`));
    await flows.loadSolution(page);
    assert.notEqual(await flows.code(page), ex.starter, "the solution replaced the starter");
    await page.click(".cm-content");
    await page.keyboard.press("Control+Enter");
    assert.match(await page.locator("#run-status").innerText(), /Запустить нельзя: Python не запустился/);
    await page.click("#lang");
    assert.match(await page.locator("#boot").innerText(), /NumPy for Pyodide could not be loaded/);
    assert.match(await page.locator("#run-status").innerText(), /Cannot run: Python did not start/);
  });

  it("a 390 px phone: no sideways scrolling while Python loads or fails", async (page) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${site.server.pageUrl}&sw=0`);
    await page.waitForFunction(() => document.body.dataset.stage === "failed", null, { timeout: 120000 });
    await page.click("#hint");
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390);
  });
});

describe("Pyodide mode with NumPy: the page's flows", { skip: numpySkip }, () => {
  before(() => verifiedNumpy(PACKAGES));   // the file the lock names, with the lock's sha256
  const site = pyodideSite(PACKAGES);
  const it = site.it;
  const url = () => `${site.server.pageUrl}&sw=0`;

  it("a load on `/`: no console error, no failed request; the boot strip's … only on the stage in progress", async (page) => {
    const problems = loadProblems(page);
    // every state of the boot strip, as the page draws it
    await page.addInitScript(() => {
      window.__strips = [];
      new MutationObserver(() => {
        const stages = document.getElementById("stages");
        if (stages) window.__strips.push([...stages.children].map((li) => [li.className, li.textContent]));
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    for (const lang of ["ru", "en"]) {
      await page.goto(`${site.server.url}?lang=${lang}`);
      await waitReady(page);
      const strips = await page.evaluate(() => window.__strips);
      assert.ok(strips.some((s) => s.some(([cls]) => cls === "active")), "a stage was seen in progress");
      for (const strip of strips) {
        for (const [cls, text] of strip) {
          assert.equal(/…/.test(text), cls === "active", `a ${cls || "waiting"} stage reads "${text}"`);
        }
      }
      assert.ok(strips.at(-1).every(([cls]) => cls === "done"), JSON.stringify(strips.at(-1)));
    }
    assert.deepEqual(problems, []);
  });
  it("Python indentation", async (page) => { await flows.openFresh(page, url()); await flows.flowIndent(page); });
  it("a language switch re-renders the results", async (page) => {
    await flows.openFresh(page, url());
    await flows.flowLanguageRerender(page);
  });
  it("no false 'starter changed' across languages", async (page) => {
    await flows.openFresh(page, url());
    await flows.flowStarterAcrossLanguages(page);
  });
  it("a run's result lands in its own exercise", async (page) => {
    await flows.openFresh(page, url());
    await flows.flowResultStaysWithExercise(page);
  });
  it("progress is remembered", async (page) => { await flows.openFresh(page, url()); await flows.flowProgress(page); });
  it("hints one at a time", async (page) => { await flows.openFresh(page, url()); await flows.flowHintsOneAtATime(page); });
  it("a failing Check draws its memory picture", async (page) => {
    await flows.openFresh(page, url());
    await flows.flowFailedPicture(page);
  });
  it("memory picture: a 3-D tensor as blocks", async (page) => {
    await flows.openFresh(page, url());
    await flows.flowMemoryBlocks(page, "flash_attention");
  });
});
