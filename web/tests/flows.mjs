// The user flows, shared by the lab-mode and the Pyodide-mode tests. Each takes a page already on the site.
import assert from "node:assert/strict";
import { waitReady } from "./helpers.mjs";

export const OOB_SNIPPET = [
  "import numpy as _np",
  "import triton as _triton",
  "import triton.language as _tl",
  "",
  "",
  "@_triton.jit",
  "def _oob_kernel(x_ptr, BLOCK: _tl.constexpr):",
  "    offs = _tl.program_id(0) * BLOCK + _tl.arange(0, BLOCK)",
  "    _tl.store(x_ptr + offs, _tl.load(x_ptr + offs) + 1)",
  "",
  "",
  "_oob_kernel[(2,)](_np.zeros(100, _np.float32), BLOCK=64)",
  "",
];
const OOB_LINE = 9;   // the tl.store(tl.load(...)) line within the snippet (1-based)

export const code = (page) => page.evaluate(() => window.__sandbox.code);
export const setCode = (page, text) => page.evaluate((s) => window.__sandbox.setCode(s), text);

// A fresh page on `url` with empty storage, ready to run. The storage is cleared from a small file of the same
// origin, so that Python starts once, in the page the test uses.
export async function openFresh(page, url) {
  await page.goto(new URL("config.json", url).href);
  await page.evaluate(() => localStorage.clear());
  await page.goto(url);
  await waitReady(page);
  await page.locator("#exercise-list a").first().waitFor({ state: "attached" });   // folded on a phone
}

export async function exercises(page) {
  return page.evaluate(() => window.__sandbox.state.exercises.map((e) => ({
    id: e.id, title: e.title, starter: e.starter, hints: e.hints, tests: e.tests, starter_hash: e.starter_hash })));
}

// As a student picks it: on a narrow screen the list is folded behind the picker, which is tapped first.
export async function openExercise(page, id) {
  const link = page.locator(`#exercise-list a[data-id="${id}"]`);
  if (!await link.isVisible() && await page.locator("#ex-picker").isVisible()) await page.click("#ex-picker");
  await link.click();
  await page.waitForFunction((x) => window.__sandbox.state.current?.id === x, id);
}

const CYRILLIC = /[а-яё]/i;
export const hasCyrillic = (text) => CYRILLIC.test(text);

async function acceptNextDialog(page, accept = true) {
  page.once("dialog", (d) => (accept ? d.accept() : d.dismiss()));
}

export async function loadSolution(page) {
  await acceptNextDialog(page);
  const before = await page.evaluate(() => window.__sandbox.state.replacements || 0);
  await page.click("#solution");
  await page.waitForFunction((b) => (window.__sandbox.state.replacements || 0) > b, before);
  return code(page);
}

async function finished(page) {
  await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: 120000 });
}

export async function clickRun(page) {
  await page.click("#run");
  await finished(page);
}

export async function clickCheck(page) {
  await page.click("#check");
  await finished(page);
}

// type + run: keyboard typing at the top of the solution, then Ctrl+Enter; the print and counters show.
export async function flowTypeAndRun(page) {
  await loadSolution(page);
  await page.click(".cm-content");
  await page.keyboard.press("Control+Home");
  await page.keyboard.type('print("hello from the editor", 6 * 7)');
  await page.keyboard.press("Enter");
  assert.match(await code(page), /^print\("hello from the editor", 6 \* 7\)\n/);
  await page.keyboard.press("Control+Enter");
  await page.waitForFunction(() => document.body.dataset.busy === "1" || document.getElementById("output").textContent, null, { timeout: 5000 });
  await finished(page);
  const out = await page.locator("#output").innerText();
  assert.match(out, /hello from the editor 42/);
  assert.equal(await page.locator("#error").isHidden(), true, await page.locator("#error").innerText().catch(() => ""));
  const launches = await page.evaluate(() => window.__sandbox.state.lastResult.launches);
  assert.ok(launches.length >= 1, "Run should launch the kernel at least once (the exercise's demo)");
  const first = page.locator("table.counters").first();
  await first.waitFor();
  assert.equal(await first.getAttribute("data-kernel"), launches[0].kernel);
  // the counters table shows the record's numbers (stored bytes of the first tensor that stored anything)
  const [name, info] = Object.entries(launches[0].tensors).find(([, v]) => v.totals.stored_bytes > 0);
  const row = first.locator("tbody tr", { has: page.locator(`th code:text-is("${name}")`) });
  const stored = (await row.locator("td").nth(1).innerText()).split("\n")[0].replace(/[\s\u00a0\u202f]/g, "");
  assert.equal(stored, String(info.totals.stored_bytes));
}

// check: the solution passes every test; the starter does not.
export async function flowCheck(page) {
  const solution = await loadSolution(page);
  await clickCheck(page);
  const result = await page.evaluate(() => window.__sandbox.state.lastResult);
  assert.equal(result.error, null, JSON.stringify(result.error));
  assert.equal(result.passed, true, JSON.stringify(result.tests));
  const n = result.tests.length;
  assert.ok(n >= 1);
  assert.equal(await page.locator("#tests li.pass").count(), n);
  assert.match(await page.locator("#summary").innerText(), new RegExp(`${n}\\D+${n}`));
  // back to the starter: Check fails, and says why (a failed test with a message, or an error)
  await acceptNextDialog(page);
  await page.click("#reset");
  const ex = (await exercises(page))[0];
  assert.equal(await code(page), ex.starter);
  assert.notEqual(solution, ex.starter);
  await clickCheck(page);
  const bad = await page.evaluate(() => window.__sandbox.state.lastResult);
  assert.equal(bad.passed, false);
  const failedWithMessage = (bad.tests || []).some((x) => !x.passed && x.message);
  assert.ok(failedWithMessage || bad.error, `the starter should fail with a message: ${JSON.stringify(bad).slice(0, 500)}`);
  if (failedWithMessage) {
    assert.ok(await page.locator("#tests li.fail").count() >= 1);
    assert.ok(await page.locator("#tests li.fail").first().locator(".message").first().isVisible(), "the first failure's message shows");
    assert.ok(await page.locator("#tests li.fail details[open]").count() <= 1, "at most the first failure is unfolded");
    for (const x of bad.tests.filter((y) => !y.passed && y.message)) {
      const head = x.message.split("\n")[0].replaceAll("`", "").trim();   // `code` is shown as code
      const shown = await page.locator(`#tests li[data-id="${x.id}"]`).innerText();
      assert.equal(shown.split(head).length - 1, 1, `the first line of ${x.id}'s message is shown once: ${shown}`);
    }
  } else {
    assert.equal(await page.locator("#error").isVisible(), true);
  }
}

export async function flowHint(page) {
  const ex = (await exercises(page))[0];
  assert.ok(ex.hints >= 1, "the exercise has hints");
  await page.click("#hint");
  const first = page.locator("#hints .hint").first();
  await first.waitFor();
  const heading = await first.locator("h3").innerText();
  assert.match(heading, new RegExp(`1\\D+${ex.hints}`));
  assert.ok((await first.innerText()).length > heading.length + 3, "the hint has a text");
  if (ex.hints >= 2) {
    await page.click("#hint");
    await page.locator("#hints .hint").nth(1).waitFor();
    assert.match(await page.locator("#hints .hint h3").nth(1).innerText(), new RegExp(`2\\D+${ex.hints}`));
  }
}

export async function flowReset(page) {
  const ex = (await exercises(page))[0];
  await setCode(page, ex.starter + "\n# my change\n");
  await acceptNextDialog(page, false);           // cancel: nothing changes
  await page.click("#reset");
  assert.match(await code(page), /# my change/);
  await acceptNextDialog(page, true);            // confirm: the starter is back
  await page.click("#reset");
  assert.equal(await code(page), ex.starter);
  await page.click("#undo");                     // one undo
  assert.match(await code(page), /# my change/);
}

export async function flowAutosave(page) {
  const list = await exercises(page);
  await page.click(".cm-content");
  await page.keyboard.press("Control+End");
  await page.keyboard.type("\n# autosaved marker 1729");
  const typed = await code(page);
  await page.reload();
  await waitReady(page);
  await page.locator("#exercise-list a").first().waitFor();
  assert.equal(await code(page), typed, "the code survives a reload");
  if (list.length >= 2) {                        // saved per exercise
    await page.click(`#exercise-list a[data-id="${list[1].id}"]`);
    assert.equal(await code(page), list[1].starter);
    await page.click(`#exercise-list a[data-id="${list[0].id}"]`);
    assert.equal(await code(page), typed);
  }
}

// stop a `while True:` loop; afterwards Run works again. Returns the stop latency (click -> UI idle), ms.
export async function flowStop(page) {
  await setCode(page, 'print("start")\nwhile True:\n    pass\n');
  await page.click("#run");
  await page.locator("#stop").waitFor({ state: "visible" });
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => document.body.dataset.busy), "1", "still running before Stop");
  const t0 = Date.now();
  await page.click("#stop");
  await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: 10000 });
  const latency = Date.now() - t0;
  const status = await page.locator("#run-status").innerText();
  const err = await page.evaluate(() => window.__sandbox.state.lastResult?.error?.type);
  assert.ok(/Остановлено|Stopped/.test(status) || err === "KeyboardInterrupt", `status after Stop: ${status} / ${err}`);
  if (err === "KeyboardInterrupt") {   // Python was interrupted, not replaced: the error box says where the code was
    assert.match(await page.locator("#error").innerText(), /(строк[аеи]|line) [23]\b/);
  }
  await waitReady(page);                        // a terminated worker boots again
  await setCode(page, 'print("alive", 1 + 1)\n');
  await clickRun(page);
  assert.match(await page.locator("#output").innerText(), /alive 2/);
  return latency;
}

// an out-of-bounds store is reported at the student's line, with the program id, and the line is highlighted.
export async function flowErrorLine(page) {
  const solution = await loadSolution(page);
  const text = solution.replace(/\n*$/, "\n\n\n") + OOB_SNIPPET.join("\n");
  const line = solution.replace(/\n*$/, "\n\n\n").split("\n").length - 1 + OOB_LINE;
  assert.match(text.split("\n")[line - 1], /_tl\.store\(x_ptr \+ offs/);
  await setCode(page, text);
  await clickRun(page);
  const err = await page.evaluate(() => window.__sandbox.state.lastResult.error);
  assert.ok(err, "an error is reported");
  assert.equal(err.type, "OutOfBoundsError", err.message);
  assert.equal(err.line, line, `error line ${err.line}, expected ${line}: ${err.message}`);
  assert.deepEqual(err.program.slice(0, 1), [1]);
  assert.match(err.message, /x_ptr/);
  const head = await page.locator("#error .error-head").innerText();
  assert.match(head, new RegExp(`(строка|line) ${line}`));
  assert.match(head, /(программа|program) 1(?!\d)/, "the program as the message writes it");
  // the highlighted editor line is that line
  const highlighted = await page.locator(".cm-error-line").innerText();
  assert.equal(highlighted.trim(), text.split("\n")[line - 1].trim());
}

// the first exercise's solution without its load mask: the error offers the fix as the fixed line, underlines the
// failing span, and "Apply fix" makes the edit in the editor and runs again, cleanly (in Russian: no English).
export async function flowApplyFix(page) {
  const solution = await loadSolution(page);
  const broken = solution.replace("x = tl.load(x_ptr + offs, mask=mask)", "x = tl.load(x_ptr + offs)");
  assert.notEqual(broken, solution, "the first exercise loads x with a mask");
  const line = broken.split("\n").findIndex((l) => l.includes("x = tl.load(x_ptr + offs)")) + 1;
  await setCode(page, broken);
  await clickRun(page);
  const err = await page.evaluate(() => window.__sandbox.state.lastResult.error);
  assert.equal(err?.type, "OutOfBoundsError", err?.message);
  assert.equal(err.diagnostic.suggestion.edit.line, line);
  const shown = await page.locator("#error .error-fix pre").innerText();
  assert.match(shown, /x = tl\.load\(x_ptr \+ offs, mask=/);
  assert.match(await page.locator(".cm-error-span").innerText(), /tl\.load\(x_ptr \+ offs\)/);
  const button = page.locator("#error .apply-fix");
  if (await page.evaluate(() => document.documentElement.lang) === "ru") {
    assert.equal(await button.innerText(), "Применить исправление");
  }
  await button.click();
  await page.waitForFunction(() => !document.body.dataset.busy && window.__sandbox.state.lastResult?.ok, null,
    { timeout: 120000 });
  assert.equal((await code(page)).split("\n")[line - 1], shown.trimEnd(), "the editor holds the line that was shown");
  assert.equal(await page.locator("#error").isHidden(), true);
}

// ---------- the memory picture ----------
const COLORS = { loaded: [0x2f, 0x7f, 0xd1], stored: [0xf0, 0x8a, 0x24], both: [0x8a, 0x4f, 0xbf], masked: [0x9a, 0xa3, 0xad],
  other: [0xc6, 0xd3, 0xe1], none: [0xe8, 0xeb, 0xef], border: [0x1d, 0x23, 0x2b], failed: [0xe0, 0x20, 0x1b] };
const memoryData = (page) => page.evaluate(() => window.__sandbox.state.views.get(window.__sandbox.state.current.id).memory?.data);
const offsetsOf = (runs) => { const out = []; for (let i = 0; i + 1 < (runs?.length ?? 0); i += 2) for (let o = runs[i]; o < runs[i] + runs[i + 1]; o++) out.push(o); return out; };

// The colour name at element `offset`'s cell of tensor `name` (sampled from the canvas at the cell's centre).
export async function cellColour(page, name, offset) {
  const rgb = await page.evaluate(([n, o]) => {
    const c = window.__sandbox.memoryCell(n, o);
    if (!c) return null;
    const canvas = document.querySelector(`#memory-panel figure[data-tensor="${n}"] canvas`);
    return [...canvas.getContext("2d").getImageData(Math.floor(c.canvasX), Math.floor(c.canvasY), 1, 1).data];
  }, [name, offset]);
  if (!rgb) return null;
  if (rgb[3] === 0) return "blank";
  return Object.entries(COLORS).find(([, c]) => c.every((v, i) => v === rgb[i]))?.[0] ?? `rgb(${rgb})`;
}

export async function openMemory(page) {
  await page.click("#memory");
  await finished(page);
  await page.locator("#memory-panel figure.tensor").first().waitFor();
  return memoryData(page);
}

// Program `index`'s picture: every element it loaded is drawn loaded (or both), one loaded only by another
// program is drawn as another's, and the figure counts match the bridge's.
async function checkProgramColours(page, d, index) {
  await page.waitForFunction((i) => document.getElementById("memory-panel").dataset.program === String(i), index);
  const prog = d.programs[index];
  for (const name of Object.keys(d.tensors)) {
    const mine = offsetsOf(prog.tensors[name].loaded);
    const fig = page.locator(`#memory-panel figure[data-tensor="${name}"]`);
    assert.equal(Number(await fig.getAttribute("data-loaded")), mine.length, `${name}: loaded count of program ${index}`);
    if (!mine.length || d.tensors[name].shape.reduce((a, b) => a * b, 1) > 20000) continue;
    for (const o of [mine[0], mine[mine.length - 1]]) {
      assert.ok(["loaded", "both"].includes(await cellColour(page, name, o)), `${name}[${o}] is drawn as loaded by program ${index}`);
    }
    const mineSet = new Set(mine);
    const theirs = d.programs.filter((p) => p !== prog).flatMap((p) => offsetsOf(p.tensors[name].loaded)).find((o) => !mineSet.has(o));
    if (theirs !== undefined) assert.equal(await cellColour(page, name, theirs), "other", `${name}[${theirs}] belongs to another program`);
  }
}

// The picture of a Run's launch: every program traced, scrubbed with the slider's arrow keys and the buttons;
// hovering an element names the programs that loaded it; then a launch of a Check picked from the list.
export async function flowMemory(page) {
  await loadSolution(page);
  await clickRun(page);
  const launches = await page.evaluate(() => window.__sandbox.state.lastResult.launches);
  const d = await openMemory(page);
  assert.equal(d.launch.kernel, launches[0].kernel);
  assert.equal(d.programs.length, launches[0].num_programs, "every program is traced");
  assert.equal(await page.locator("#memory-panel figure.tensor").count(), Object.keys(d.tensors).length);
  assert.equal(await page.locator("#mem-program").getAttribute("max"), String(d.programs.length - 1));
  assert.equal(await page.locator("#mem-steps").isVisible(), d.programs.some((p) => p.steps?.length), "a step slider only with steps");
  await checkProgramColours(page, d, 0);
  if (d.programs.length >= 2) {
    await page.focus("#mem-program");
    await page.keyboard.press("ArrowRight");
    await checkProgramColours(page, d, 1);
    await page.keyboard.press("End");
    await checkProgramColours(page, d, d.programs.length - 1);
    await page.click("#mem-prev");
    await checkProgramColours(page, d, d.programs.length - 2);
  }
  // hover: the element's index and the programs that loaded it
  const name = Object.keys(d.tensors).find((n) => d.programs.some((p) => p.tensors[n].loaded.length));
  const owner = d.programs.findIndex((p) => p.tensors[name].loaded.length);
  const off = offsetsOf(d.programs[owner].tensors[name].loaded)[0];
  const at = await page.evaluate(([n, o]) => window.__sandbox.memoryCell(n, o), [name, off]);
  await page.mouse.move(at.x, at.y);
  const tip = page.locator("#memory-panel .mem-tip");
  await tip.waitFor({ state: "visible" });
  const text = await tip.innerText();
  assert.ok(text.includes(`${name}[`), text);
  const grid = d.launch.grid, dims = grid[2] > 1 ? 3 : grid[1] > 1 ? 2 : 1;
  const p = d.programs[owner].program.slice(0, dims);
  assert.ok(text.includes(dims === 1 ? String(p[0]) : `(${p.join(", ")})`), `the tooltip names program ${p}: ${text}`);
  assert.match(await tip.locator('[data-kind="loaded"]').innerText(), /\d/);
  // a Check's launch, picked in the list: the one with the most programs
  await clickCheck(page);
  const checked = await page.evaluate(() => window.__sandbox.state.lastResult.launches);
  const k = checked.reduce((best, L, i) => (L.num_programs > checked[best].num_programs ? i : best), 0);
  await openMemory(page);
  await page.selectOption("#mem-launch", String(k));
  await page.waitForFunction((kk) => window.__sandbox.state.views.get(window.__sandbox.state.current.id).memory?.launch === kk
    && !document.body.dataset.busy, k);
  const dc = await memoryData(page);
  assert.equal(dc.source, "check");
  assert.equal(dc.launch.test, checked[k].test);
  assert.equal(dc.programs.length, checked[k].num_programs);
  await page.focus("#mem-program");
  await page.keyboard.press("End");
  await checkProgramColours(page, dc, dc.programs.length - 1);
  assert.ok((await page.locator("#memory-panel table.traffic").innerText()).length > 10, "the traffic table is shown");
  // the panel follows a language switch (its labels, columns and the launch list)
  await page.click("#lang");
  await page.waitForFunction(() => document.getElementById("results").dataset.lang === "en" && !document.body.dataset.busy,
    null, { timeout: 120000 });
  const panel = await page.locator("#memory-panel").innerText();
  assert.ok(!hasCyrillic(panel), `the memory panel is still Russian: ${panel.match(/.{0,40}[а-яё].{0,40}/i)?.[0]}`);
  assert.equal(await page.locator("#mem-launch").inputValue(), String(k), "the same launch stays pictured");
}

// The copy exercise with its load mask deleted by keyboard: Check fails in program 96 of the "tail" launch
// (n = 98 432, BLOCK = 1024: its lanes 128…1023 point past the end). The counters stand at the failure and
// the picture opens on that program, its outside lanes drawn and counted; the band of a program of this
// large tensor can be seen, and the tooltip covers no caption. On a Russian page at 1400×900.
export async function flowFailedPicture(page) {
  await page.setViewportSize({ width: 1400, height: 900 });
  await openExercise(page, "copy");
  await loadSolution(page);
  const masked = "x = tl.load(x_ptr + offs, mask=mask)";
  await page.locator(".cm-line", { hasText: masked }).click();
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowLeft");
  for (let i = 0; i < ", mask=mask".length; i++) await page.keyboard.press("Backspace");
  assert.ok((await code(page)).includes("x = tl.load(x_ptr + offs)\n"), "the mask is gone");
  await clickCheck(page);
  const results = await page.locator("#results").innerText();
  assert.doesNotMatch(results, /Ядро не запускалось|No kernel was launched/);
  const note = page.locator("#counters .launch-failed");
  assert.ok(await note.count() >= 1, "a failed launch is listed with its counters");
  assert.match(await note.first().innerText(), /OutOfBoundsError.*программе 96.*до этой ошибки/);
  await openMemory(page);
  const panel = page.locator("#memory-panel");
  assert.equal(await panel.getAttribute("data-program"), "96", "the picture opens on the failing program");
  assert.match(await page.locator("#mem-program-text").innerText(), /^96 .*здесь ошибка/);
  assert.match(await page.locator("#mem-failed").innerText(), /программе 96/);
  assert.match(await panel.locator(".legend").innerText(), /вызвавшая ошибку/);
  const n = 98432, block = 1024, outside = 97 * block - n;                 // 896 lanes past the end
  const x = panel.locator('figure[data-tensor="x_ptr"]');
  assert.equal(await x.getAttribute("data-outside"), String(outside));
  const caption = await x.locator("figcaption").innerText();
  assert.match(caption.replace(/\s/g, ""), new RegExp(`${outside}внетензора,изних${outside}вызвалиошибку`));
  assert.equal(await cellColour(page, "x_ptr", n), "failed", "the first lane past the end, drawn below the tensor");
  assert.equal(await cellColour(page, "x_ptr", n + 64), "failed");
  assert.equal(await cellColour(page, "x_ptr", n - 1), "loaded");
  // a program in the middle: its 1024 elements are one thin row of this 98 432-element picture, framed
  await page.focus("#mem-program");
  await page.keyboard.press("Home");
  for (let i = 0; i < 50; i++) await page.keyboard.press("ArrowRight");
  assert.equal(await panel.getAttribute("data-program"), "50");
  assert.equal(await x.getAttribute("data-outside"), "0");
  const [bx, by, bw, bh] = (await x.getAttribute("data-band")).split(",").map(Number);
  assert.ok(bw >= 6 && bh >= 6, `the band is ${bw}×${bh} px`);
  const edge = await page.evaluate(([px, py]) => [...document.querySelector('#memory-panel figure[data-tensor="x_ptr"] canvas')
    .getContext("2d").getImageData(px, py, 1, 1).data.slice(0, 3)], [bx + Math.floor(bw / 2), by]);
  assert.deepEqual(edge, COLORS.border, "the band's frame is drawn");
  assert.equal(await cellColour(page, "x_ptr", 50 * block + 5), "loaded");
  // hover the last elements of x_ptr (the next tensor's caption lies just below) and the first of out_ptr
  const boxes = () => page.evaluate(() => ({
    tip: document.querySelector("#memory-panel .mem-tip").getBoundingClientRect().toJSON(),
    captions: [...document.querySelectorAll("#memory-panel figcaption")].map((c) => c.getBoundingClientRect().toJSON()) }));
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  for (const [name, offset] of [["x_ptr", n - 1], ["x_ptr", n - 40], ["out_ptr", 0], ["out_ptr", 70]]) {
    await panel.locator(`figure[data-tensor="${name}"] canvas`).scrollIntoViewIfNeeded();
    const at = await page.evaluate(([nm, o]) => window.__sandbox.memoryCell(nm, o), [name, offset]);
    await page.mouse.move(at.x, at.y);
    await page.locator("#memory-panel .mem-tip").waitFor({ state: "visible" });
    assert.ok((await page.locator("#memory-panel .mem-tip").innerText()).startsWith(`${name}[`), "the tooltip of the hovered tensor");
    const { tip, captions } = await boxes();
    for (const c of captions) assert.ok(!meets(tip, c), `hovering ${name}[${offset}]: the tooltip ${JSON.stringify(tip)} covers a caption ${JSON.stringify(c)}`);
  }
}

// A 3-D tensor is drawn as one block per leading index, with a border between blocks and a label for each.
export async function flowMemoryBlocks(page, exerciseId) {
  await openExercise(page, exerciseId);
  await loadSolution(page);
  await clickRun(page);
  const d = await openMemory(page);
  const [name, info] = Object.entries(d.tensors).find(([, i]) => i.shape.length >= 3);
  const blocks = info.shape.slice(0, -2).reduce((a, b) => a * b, 1);
  const fig = page.locator(`#memory-panel figure[data-tensor="${name}"]`);
  assert.equal(await fig.getAttribute("data-blocks"), String(blocks));
  assert.equal(await fig.locator(".tick-block").count(), blocks);
  assert.match(await fig.locator(".tick-block").nth(1).innerText(), /^\[1, :, :\]$/);
  assert.ok(await fig.locator(".tick-col").count() >= 2 && await fig.locator(".tick-row").count() >= 2 * blocks, "axes");
  // the border between blocks: a pixel halfway between the last row of block 0 and the first of block 1
  const border = await page.evaluate(([n, rowLen, blockLen]) => {
    const a = window.__sandbox.memoryCell(n, blockLen - rowLen), b = window.__sandbox.memoryCell(n, blockLen);
    const canvas = document.querySelector(`#memory-panel figure[data-tensor="${n}"] canvas`);
    const ys = [];
    for (let y = Math.ceil(a.canvasY) + 1; y < b.canvasY; y++) ys.push([...canvas.getContext("2d").getImageData(Math.floor(a.canvasX), y, 1, 1).data.slice(0, 3)]);
    return ys;
  }, [name, info.shape[info.shape.length - 1], info.shape[info.shape.length - 1] * info.shape[info.shape.length - 2]]);
  assert.ok(border.some((rgb) => rgb.every((v, i) => v === COLORS.border[i])), `a border between blocks: ${JSON.stringify(border)}`);
}

export async function flowLanguage(page) {
  assert.match(await page.locator("#run").innerText(), /Запустить/);
  await page.click("#lang");
  await page.waitForFunction(() => document.documentElement.lang === "en");
  assert.match(await page.locator("#run").innerText(), /^Run/);
  assert.match(await page.locator("#check").innerText(), /^Check/);
  await page.reload();
  await waitReady(page);
  assert.match(await page.locator("#run").innerText(), /^Run/, "the language choice is kept");
  await page.click("#lang");
  await page.waitForFunction(() => document.documentElement.lang === "ru");
}

// Check the reference solution of every exercise; returns [{id, ms, passed, tests}].
// every exercise: its reference solution passes Check, its starter does not
export async function checkAllSolutions(page) {
  const list = await exercises(page);
  const out = [];
  for (const ex of list) {
    await page.click(`#exercise-list a[data-id="${ex.id}"]`);
    await page.waitForFunction((id) => window.__sandbox.state.current?.id === id, ex.id);
    await loadSolution(page);
    const t0 = Date.now();
    await clickCheck(page);
    const ms = Date.now() - t0;
    const r = await page.evaluate(() => window.__sandbox.state.lastResult);
    const counters = await page.locator("#counters").innerText();
    if (!r.launches?.length) assert.match(counters, /не записывают счётчики|do not record counters/, `${ex.id}: ${counters}`);
    else assert.equal(await page.locator("#counters table.counters").count(), r.launches.length);
    // the starter, Checked as it is, fails (an exercise whose starter passes teaches nothing)
    await setCode(page, ex.starter);
    await clickCheck(page);
    const bad = await page.evaluate(() => window.__sandbox.state.lastResult);
    out.push({ id: ex.id, ms, passed: r.passed, tests: r.tests?.length ?? 0, error: r.error?.message?.slice(0, 300) ?? null, bridgeSeconds: r.seconds, starterPassed: bad.passed });
  }
  return out;
}

// saved code made from an older starter is kept, and the page says the starter changed
export async function flowStarterChanged(page) {
  const ex = (await exercises(page))[0];
  const url = page.url();
  await page.goto(new URL("config.json", url).href);   // same origin, without the app (which saves on unload)
  await page.evaluate((id) => localStorage.setItem(`minitriton:code:${id}`,
    JSON.stringify({ code: "x = 1  # from an older starter\n", starterHash: "0", saved: Date.now() })), ex.id);
  await page.goto(url);
  await waitReady(page);
  await page.locator("#exercise-list a").first().waitFor();
  assert.equal(await code(page), "x = 1  # from an older starter\n");
  assert.equal(await page.locator("#starter-changed").isVisible(), true);
  page.once("dialog", (d) => d.accept());
  await page.click("#reset");
  assert.equal(await code(page), ex.starter);
  assert.equal(await page.locator("#starter-changed").isVisible(), false);
}

// Python indentation: Enter keeps a kernel body's 4 spaces (even after a line ending in a comment), Enter
// after ":" indents by 4, Tab inserts 4 spaces, and a typed line runs without an IndentationError.
export async function flowIndent(page) {
  const ex = (await exercises(page)).find((e) => /\n {4}\S.*#/.test(e.starter)) ?? (await exercises(page))[0];
  await openExercise(page, ex.id);
  const lines = ex.starter.split("\n");
  const at = lines.findIndex((l) => /^ {4}\S.*#/.test(l)) + 1;       // a body line with a trailing comment
  assert.ok(at > 0, "a body line with a comment");
  await page.click(".cm-content");
  await page.keyboard.press("Control+Home");
  for (let i = 1; i < at; i++) await page.keyboard.press("ArrowDown");
  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  await page.keyboard.type("x_typed = 1");
  let text = (await code(page)).split("\n");
  assert.equal(text[at], "    x_typed = 1", `line ${at + 1}: ${JSON.stringify(text[at])}`);
  await page.keyboard.press("Enter");
  await page.keyboard.type("if x_typed:");
  await page.keyboard.press("Enter");
  await page.keyboard.type("x_typed = 2");
  text = (await code(page)).split("\n");
  assert.equal(text[at + 2], "        x_typed = 2", "Enter after ':' indents by 4 more");
  await page.keyboard.press("Enter");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.type("pass");
  await page.keyboard.press("Home");
  await page.keyboard.press("Tab");
  text = (await code(page)).split("\n");
  assert.equal(text[at + 3], "        pass", "Shift+Tab dedents by 4, Tab indents by 4");
  await clickRun(page);
  const err = await page.evaluate(() => window.__sandbox.state.lastResult.error);
  assert.ok(!err || !/IndentationError|SyntaxError|TabError/.test(err.type), JSON.stringify(err));
}

// A Check's results in Russian, then English: the tests, their messages, the output, the counters and the
// run status are all re-rendered in English (Python is asked again), and back.
export async function flowLanguageRerender(page) {
  const list = await exercises(page);
  await clickCheck(page);                         // the starter: failures with messages
  const ru = await page.evaluate(() => window.__sandbox.state.lastResult);
  assert.equal(ru.passed, false);
  assert.ok(hasCyrillic(await page.locator("#tests").innerText()));
  const ruStatus = await page.locator("#run-status").innerText();
  assert.match(ruStatus, /с$/);
  await page.click("#lang");
  await page.waitForFunction(() => document.getElementById("results").dataset.lang === "en" && !document.body.dataset.busy,
    null, { timeout: 120000 });
  const en = await page.evaluate(() => window.__sandbox.state.lastResult);
  for (const id of ["tests", "summary", "output", "counters", "run-status", "error"]) {
    const text = await page.locator("#" + id).innerText();
    assert.ok(!hasCyrillic(text), `#${id} is still Russian after the switch: ${text.slice(0, 300)}`);
  }
  const names = await page.locator("#tests li .name").allInnerTexts();
  const enList = await page.evaluate(() => window.__sandbox.state.exercises);
  assert.deepEqual(names, enList.find((e) => e.id === list[0].id).tests);
  assert.deepEqual(en.tests.map((x) => x.passed), ru.tests.map((x) => x.passed), "the same verdicts");
  assert.match(await page.locator("#run-status").innerText(), / s$/);
  assert.match(await page.locator("#summary").innerText(), /^Check #1: /);
  await page.click("#lang");
  await page.waitForFunction(() => document.getElementById("results").dataset.lang === "ru" && !document.body.dataset.busy,
    null, { timeout: 120000 });
  assert.ok(hasCyrillic(await page.locator("#tests").innerText()));
  assert.match(await page.locator("#summary").innerText(), /^Проверка №1: /);
}

// Code edited on a Russian page does not look like an old starter on the English page.
export async function flowStarterAcrossLanguages(page) {
  const [a, b] = await exercises(page);
  await openExercise(page, a.id);
  await page.click(".cm-content");
  await page.keyboard.press("Control+End");
  await page.keyboard.type("\n# edited on the Russian page");
  await openExercise(page, b.id);
  await page.click("#lang");
  await page.waitForFunction(() => document.documentElement.lang === "en");
  await page.waitForFunction((id) => window.__sandbox.state.exercises.find((e) => e.id === id)?.title
    !== undefined && !/[а-яё]/i.test(window.__sandbox.state.exercises[0].title), a.id);
  await openExercise(page, a.id);
  assert.match(await code(page), /# edited on the Russian page/);
  assert.equal(await page.locator("#starter-changed").isVisible(), false, "no false 'starter changed'");
  // code still equal to the starter follows the language: b's starter is now the English one
  await openExercise(page, b.id);
  const enB = (await exercises(page)).find((e) => e.id === b.id);
  assert.equal(await code(page), enB.starter);
}

// A Run that is still going when the student opens another exercise lands in its own exercise.
export async function flowResultStaysWithExercise(page) {
  const [a, b] = await exercises(page);
  await openExercise(page, a.id);
  // a busy wait rather than time.sleep, which Pyodide's worker cannot block in
  await setCode(page, 'import time\nprint("slow run starts")\nt = time.time()\nwhile time.time() - t < 3:\n    pass\nprint("slow run ends")\n');
  await page.click("#run");
  await page.waitForFunction(() => document.body.dataset.busy === "1");
  await page.waitForTimeout(300);
  await openExercise(page, b.id);
  assert.match(await page.locator("#run-status").innerText(), new RegExp(a.title.slice(0, 12).replace(/[()[\]]/g, ".")));
  await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: 60000 });
  assert.equal((await page.locator("#output").innerText()).trim(), "", "the other exercise's output is not shown here");
  assert.equal(await page.locator("#run-status").innerText(), "");
  assert.equal(await page.locator("#counters").innerText(), "");
  await openExercise(page, a.id);
  assert.match(await page.locator("#output").innerText(), /slow run starts\nslow run ends/);
  assert.match(await page.locator("#run-status").innerText(), /\d/);
}

// Passing every test marks the exercise solved, in the list and after a reload; Erase all forgets it.
export async function flowProgress(page) {
  const [a] = await exercises(page);
  assert.equal(await page.locator("#exercise-list li.solved").count(), 0);
  await clickCheck(page);                              // the starter fails: not solved
  assert.equal(await page.locator("#exercise-list li.solved").count(), 0);
  await loadSolution(page);
  await clickCheck(page);
  const item = page.locator(`#exercise-list li:has(a[data-id="${a.id}"])`);
  assert.equal(await item.getAttribute("class"), "solved");
  assert.equal((await item.locator(".mark").innerText()).trim(), "✓");
  const n = (await exercises(page)).length;
  assert.match(await page.locator("#progress").innerText(), new RegExp(`1\\D+${n}`));
  await page.reload();
  await waitReady(page);
  await page.locator("#exercise-list li.solved").waitFor();
  assert.equal(await page.locator(`#exercise-list li.solved a[data-id="${a.id}"]`).count(), 1);
  page.once("dialog", (d) => d.accept());
  await page.click("#erase");
  assert.equal(await page.locator("#exercise-list li.solved").count(), 0);
  assert.equal(await code(page), a.starter);
}

// Hints come one at a time, each scrolled into view, and stay shown after a reload.
export async function flowHintsOneAtATime(page) {
  const ex = (await exercises(page))[0];
  assert.ok(ex.hints >= 2);
  for (let k = 1; k <= ex.hints; k++) {
    await page.click("#hint");
    await page.locator("#hints .hint").nth(k - 1).waitFor();
    assert.equal(await page.locator("#hints .hint").count(), k);
    const last = page.locator("#hints .hint").last();
    assert.match(await last.locator("h3").innerText(), new RegExp(`${k}\\D+${ex.hints}`));
    const box = await last.boundingBox();
    const task = await page.locator("#task").boundingBox();
    const vh = page.viewportSize().height;
    assert.ok(box.y >= 0 && box.y < vh && box.y >= task.y - 1 && box.y < task.y + task.height,
      `hint ${k} is in view: y=${box.y}, task ${task.y}…${task.y + task.height}, viewport ${vh}`);
  }
  assert.equal(await page.locator("#hint").isDisabled(), true, "no hint left");
  await page.reload();
  await waitReady(page);
  await page.locator("#hints .hint").first().waitFor();
  assert.equal(await page.locator("#hints .hint").count(), ex.hints);
}
