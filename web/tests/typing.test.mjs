// Typing as a student types (lab mode: `python -m sandbox`, headless Chromium): Enter always breaks the line
// with Python's indentation, completion is accepted with Tab, and every exercise's reference solution typed key
// by key comes back exactly and passes Check.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { DIST, ensureBuilt, launchBrowser, recordTimings, startLabServer, withPage } from "./helpers.mjs";
import * as flows from "./flows.mjs";

ensureBuilt();
const lab = await startLabServer();

const caret = (page) => page.evaluate(() => window.__sandbox.caret);
const popup = (page) => page.locator(".cm-tooltip-autocomplete");

async function clearEditor(page) {
  await page.click(".cm-content");
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  assert.equal(await flows.code(page), "");
}

// `text` typed line by line as a student types it: Enter between lines (after a word, once the completion popup
// is there where it opens), each line's text without its leading spaces. Enter's indentation is the line's own,
// except at a block's end (less indented than the line before, which Python cannot guess), where Backspace takes
// it back a level at a time. Returns the count of lines whose indentation Enter gave and of those dedented.
async function typeByKeys(page, text, name) {
  const count = { kept: 0, dedented: 0 };
  const lines = text.split("\n");
  let above = 0;                                      // the indentation of the last line with text
  for (let i = 0; i < lines.length; i++) {
    // after a word, Enter only once the completion popup a student would see has come (or not)
    if (i > 0 && /\w$/.test(lines[i - 1])) {
      const settled = await page.waitForFunction((typed) => {
        const { before, completion } = window.__sandbox.caret;
        return before === typed && completion !== "pending" && (completion ?? "none");
      }, lines[i - 1], { polling: 10 });
      // CodeMirror ignores accepting keys for 75 ms after the popup opens (interactionDelay); a student's Enter
      // comes later than that
      if (await settled.jsonValue() === "active") await page.waitForTimeout(100);
    }
    if (i > 0) await page.keyboard.press("Enter");
    let { line, before } = await caret(page);
    assert.equal(line, i + 1, `${name}: Enter starts line ${i + 1}`);
    assert.match(before, /^ *$/, `${name}: line ${i + 1} starts with its indentation only`);
    if (lines[i] === "" && i < lines.length - 1) { count.kept++; continue; }   // the next Enter clears it
    const want = /^ */.exec(lines[i])[0].length;
    assert.ok(before.length >= want, `${name}: line ${i + 1} needs ${want} spaces, Enter gave ${before.length}`);
    if (before.length > want) {
      assert.ok(want < above, `${name}: line ${i + 1} is not a block's end, yet Enter gave ${before.length} spaces, not ${want}`);
      count.dedented++;
      while (before.length > want) {
        await page.keyboard.press("Backspace");
        ({ before } = await caret(page));
      }
      assert.equal(before.length, want, `${name}: Backspace dedents line ${i + 1} to ${want}`);
    } else count.kept++;
    if (lines[i].length > want) await page.keyboard.type(lines[i].slice(want));
    if (lines[i].trim()) above = want;
  }
  return count;
}

describe("typing in the editor (lab mode)", () => {
  let browser;
  before(async () => { browser = await launchBrowser(); });
  after(async () => { await browser?.close(); await lab.stop?.(); });
  const it = (name, body) => test(name, (t) => withPage(t, browser.context, body));

  it("Enter after an identifier breaks the line with the popup open; Tab accepts a completion", async (page) => {
    await flows.openFresh(page, lab.url);
    await clearEditor(page);
    await page.keyboard.type("offsets = 1");
    await page.keyboard.press("Enter");
    await page.keyboard.type("x = offs");
    await popup(page).waitFor();
    assert.match(await popup(page).innerText(), /offsets/);
    await page.keyboard.press("Enter");
    assert.equal(await flows.code(page), "offsets = 1\nx = offs\n", "Enter is a line break, not the completion");
    await page.keyboard.type("y = offs");
    await popup(page).waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await flows.code(page), "offsets = 1\nx = offs\ny = offsets", "Tab accepts the completion");
    // the word already typed is not offered again: no popup after "offsets"
    await page.keyboard.press("Enter");
    await page.keyboard.type("z = offsets");
    await page.waitForTimeout(400);
    assert.equal(await popup(page).count(), 0, "no popup offering the word already typed");
    // Tab with no popup indents, Enter after ":" indents one level
    await page.keyboard.press("Enter");
    await page.keyboard.type("if z:");
    await page.keyboard.press("Enter");
    await page.keyboard.type("w = offs");
    await popup(page).waitFor();
    await page.keyboard.press("Enter");
    assert.equal((await flows.code(page)).split("\n").slice(4).join("\n"), "if z:\n    w = offs\n    ");
  });

  it("every exercise's reference solution typed key by key comes back exactly and passes Check", async (page) => {
    const t0 = Date.now();
    await flows.openFresh(page, lab.url);
    const lang = await page.evaluate(() => window.__sandbox.state.lang);
    const { solutions } = JSON.parse(fs.readFileSync(path.join(DIST, `solutions.${lang}.json`), "utf8"));
    const list = await flows.exercises(page);
    assert.deepEqual(Object.keys(solutions).sort(), list.map((e) => e.id).sort(), "a reference solution per exercise");
    const total = { kept: 0, dedented: 0 };
    for (const ex of list) {
      await flows.openExercise(page, ex.id);
      await clearEditor(page);
      const count = await typeByKeys(page, solutions[ex.id], ex.id);
      for (const k in total) total[k] += count[k];
      assert.equal(await flows.code(page), solutions[ex.id], `${ex.id}: the typed text is the reference`);
      await flows.clickCheck(page);
      const result = await page.evaluate(() => window.__sandbox.state.lastResult);
      assert.equal(result.error, null, `${ex.id}: ${JSON.stringify(result.error)}`);
      assert.equal(result.passed, true, `${ex.id}: ${JSON.stringify(result.tests)}`);
    }
    recordTimings("timings-typing.json", { what: "every solution typed and checked (lab)", wallMs: Date.now() - t0,
      exercises: list.length, lines: total });
  });
});
