// Typing as a student types (lab mode: `python -m sandbox`, headless Chromium): Enter always breaks the line
// with Python's indentation and completion is accepted with Tab (every exercise's reference solution typed key by
// key: session.test.mjs).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ensureBuilt, launchBrowser, startLabServer, withPage } from "./helpers.mjs";
import * as flows from "./flows.mjs";
import { clearEditor, popup } from "./keys.mjs";

ensureBuilt();
const lab = await startLabServer();

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
});
