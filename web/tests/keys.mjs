// Typing as a student types: the editor cleared with keys, a text typed line by line with Enter-driven
// indentation (shared by the typing and the student-session tests).
import assert from "node:assert/strict";
import * as flows from "./flows.mjs";

export const caret = (page) => page.evaluate(() => window.__sandbox.caret);
export const popup = (page) => page.locator(".cm-tooltip-autocomplete");

export async function clearEditor(page) {
  await page.click(".cm-content");
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  assert.equal(await flows.code(page), "");
}

// `text` typed line by line as a student types it: Enter between lines (after a word, once the completion popup
// is there where it opens), each line's text without its leading spaces. Enter's indentation is the line's own,
// except at a block's end (less indented than the line before, which Python cannot guess), where Backspace takes
// it back a level at a time. Returns the count of lines whose indentation Enter gave and of those dedented.
export async function typeByKeys(page, text, name) {
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
