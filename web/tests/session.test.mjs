// A student's session, scripted (Pyodide mode: web/serve.mjs with NumPy's wheel, headless Chromium): four
// students, Russian and English, desktop (1400x900) and phone (390x844), share the exercises between them. Each
// exercise's reference solution is typed key by key (Enter-driven indentation) and must come back exactly and
// pass Check. On one exercise each student first makes a classic mistake; its message (in the page's
// language) and its memory picture are asserted, the page is compared with a committed screenshot, and the
// student fixes it as the page suggests ("Apply fix") or by typing the solution, then passes Check.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startServer } from "../serve.mjs";
import { DIST, ensureBuilt, launchBrowser, numpyWheel, recordTimings, withPage } from "./helpers.mjs";
import * as flows from "./flows.mjs";
import { clearEditor, typeByKeys } from "./keys.mjs";
import { matchScreenshot } from "./screenshots.mjs";

ensureBuilt();

const DESKTOP = { width: 1400, height: 900 };
const PHONE = { width: 390, height: 844 };
export const STUDENTS = [
  { name: "en-phone", lang: "en", viewport: PHONE, exercises: ["transpose", "practice", "rmsnorm", "flash_attention"] },
  { name: "en-desktop", lang: "en", viewport: DESKTOP, exercises: ["strided_copy", "softmax_bwd", "matmul_act"] },
  { name: "ru-desktop", lang: "ru", viewport: DESKTOP, exercises: ["copy", "row_stats", "matmul"] },
  { name: "ru-phone", lang: "ru", viewport: PHONE, exercises: ["outer", "rmsnorm_bwd", "dropout"] },
];

const lastResult = (page) => page.evaluate(() => window.__sandbox.state.lastResult);

// One line of `text` replaced: the mistake a student makes (the line must be there, once).
function replaceLine(text, from, to) {
  assert.equal(text.split(from).length, 2, `the solution has \`${from}\` once`);
  return text.replace(from, to);
}

function assertLanguage(text, lang, what) {
  if (lang === "ru") assert.ok(flows.hasCyrillic(text), `${what} is in Russian: ${text}`);
  else assert.ok(!flows.hasCyrillic(text), `${what} has no Russian in English mode: ${text}`);
}

// The mistakes, by exercise: `make` turns the reference solution into the student's code, `op` is the button the
// student presses, `expect` asserts what the page says and draws, `fix` is how the student fixes it.
const MISTAKES = {
  // the load without its mask: the last program reads past the end of x
  copy: {
    make: (s) => replaceLine(s, "x = tl.load(x_ptr + offs, mask=mask)", "x = tl.load(x_ptr + offs)"),
    op: "run", fix: "apply",
    async expect(page, result, lang) {
      assert.equal(result.error?.type, "OutOfBoundsError", JSON.stringify(result.error));
      assertLanguage(await page.locator("#error").innerText(), lang, "the error");
      assert.match(await page.locator("#error .error-fix pre").innerText(), /tl\.load\(x_ptr \+ offs, mask=/);
      await assertFailedPicture(page, result, lang);
    },
  },
  // the transposed store reuses the load's mask: lanes of the last tiles write outside out
  transpose: {
    make: (s) => replaceLine(s, "mask=(offs_n[:, None] < N) & (offs_m[None, :] < M))", "mask=mask)"),
    op: "check", fix: "apply",
    async expect(page, result, lang) {
      const failed = result.tests.filter((t) => !t.passed);
      assert.ok(failed.length > 0, "a test fails");
      assert.equal(result.error?.type, "OutOfBoundsError", JSON.stringify(result.error));
      assertLanguage(await page.locator("#error").innerText(), lang, "the error");
      await assertFailedPicture(page, result, lang);
    },
  },
  // every program writes its share of dw to the same row: a race between programs
  rmsnorm_bwd: {
    make: (s) => replaceLine(s, "tl.store(dw_partial_ptr + pid * n_cols + cols, dw, mask=mask)",
      "tl.store(dw_partial_ptr + cols, dw, mask=mask)"),
    op: "check", fix: "apply",
    async expect(page, result, lang) {
      assert.ok(result.tests.some((t) => !t.passed), "a test fails");
      const text = await page.locator("#results").innerText();
      assertLanguage(text, lang, "the results");
      assert.match(text, lang === "ru" ? /гонк/i : /race/i, "the race is named");
      assert.match(text, /pid \* n_cols/, "the fix names the kernel's own stride");
    },
  },
  // the fp32 casts dropped: with bf16 inputs the row sums lose their precision
  softmax_bwd: {
    make: (s) => s.replaceAll(".to(tl.float32)", ""),
    op: "check", fix: "type",
    async expect(page, result, lang) {
      const failed = result.tests.filter((t) => !t.passed);
      assert.ok(failed.length > 0, "a test fails without the casts");
      const text = failed.map((t) => t.message).join("\n");
      assertLanguage(text, lang, "the failed tests' messages");
      assert.match(text, /bf16|fp16|float32|fp32/, "the message is about the dtype");
    },
  },
};

// The memory picture of the failed launch: it opens on the failing program (its linear index in the launch's
// grid), marked as the one that failed, and the tensor the error names counts every lane the error found
// outside it.
async function assertFailedPicture(page, result, lang) {
  const { tensor, offsets } = result.error.diagnostic.fields;
  const launch = result.launches.find((l) => l.error);
  assert.ok(launch, "the failed launch is listed");
  const [x, y, z] = result.error.program, [, gy, gz] = [...launch.grid, 1, 1];
  await flows.openMemory(page);
  const panel = page.locator("#memory-panel");
  assert.equal(await panel.getAttribute("data-program"), String((x * gy + y) * gz + z), "the failing program");
  assert.match(await page.locator("#mem-program-text").innerText(), lang === "ru" ? /здесь ошибка/ : /failed here/);
  const figure = panel.locator(`figure[data-tensor="${tensor}"]`);
  const caption = (await figure.locator("figcaption").innerText()).replace(/[\s,\u202f]/g, "");
  const counts = (lang === "ru" ? /(\d+)внетензораизних(\d+)вызвалиошибку/ : /(\d+)outsidethetensor(\d+)ofthemraised/)
    .exec(caption);
  assert.ok(counts, `the caption counts the lanes outside and those that raised: ${caption}`);
  assert.equal(Number(counts[2]), offsets.count, "every lane that raised is counted");
  assert.equal(Number(counts[1]), Number(await figure.getAttribute("data-outside")));
  assert.ok(Number(counts[1]) >= offsets.count);
  await figure.scrollIntoViewIfNeeded();
}

async function chooseLanguage(page, lang) {
  if (await page.evaluate(() => document.documentElement.lang) !== lang) {
    await page.click("#lang");
    await page.waitForFunction((l) => document.documentElement.lang === l, lang);
  }
}

async function press(page, op) {
  await (op === "run" ? flows.clickRun(page) : flows.clickCheck(page));
  return lastResult(page);
}

async function typeAndCheck(page, name, text) {
  await clearEditor(page);
  await typeByKeys(page, text, name);
  assert.equal(await flows.code(page), text, `${name}: the typed text comes back exactly`);
}

// Students work side by side, each in a browser of their own (their own storage), two at a time (typing is
// CPU-bound: four at once on two cores take longer than two by two), the longest first.
describe("a student's session (Pyodide)", { concurrency: 2 }, () => {
  let server;
  before(async () => { server = await startServer({ port: 0, packages: numpyWheel().packages }); });
  after(() => server?.server.close());

  test("the students share every exercise, one mistake each", () => {
    const { solutions } = JSON.parse(fs.readFileSync(path.join(DIST, "solutions.en.json"), "utf8"));
    assert.deepEqual(STUDENTS.flatMap((s) => s.exercises).sort(), Object.keys(solutions).sort());
    assert.deepEqual(Object.keys(MISTAKES).sort(),
      STUDENTS.map((s) => s.exercises.find((e) => MISTAKES[e])).sort(), "one mistake per student");
  });

  for (const student of STUDENTS) {
    test(`${student.name}: solves ${student.exercises.join(", ")} by keystrokes`, async (t) => {
      const browser = await launchBrowser();
      try {
        await withPage(t, browser.context, (page) => session(page, student, server.url));
      } finally {
        await browser.close();
      }
    });
  }
});

async function session(page, student, url) {
  const t0 = Date.now();
  await page.setViewportSize(student.viewport);
  await flows.openFresh(page, url);
  await chooseLanguage(page, student.lang);
  const { solutions } = JSON.parse(fs.readFileSync(path.join(DIST, `solutions.${student.lang}.json`), "utf8"));
  for (const id of student.exercises) {
    await flows.openExercise(page, id);
    const mistake = MISTAKES[id];
    if (mistake) {
      const wrong = mistake.make(solutions[id]);
      assert.notEqual(wrong, solutions[id]);
      await typeAndCheck(page, `${id} (mistake)`, wrong);
      await mistake.expect(page, await press(page, mistake.op), student.lang);
      await matchScreenshot(page, `${student.name}-${id}-mistake`);
      if (mistake.fix === "apply") {
        await page.locator("#results .apply-fix").first().click();
        await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: 120000 });
      } else {
        await typeAndCheck(page, id, solutions[id]);
      }
    } else {
      await typeAndCheck(page, id, solutions[id]);
    }
    const result = await press(page, "check");
    assert.equal(result.error, null, `${id}: ${JSON.stringify(result.error)}`);
    assert.equal(result.passed, true, `${id}: ${JSON.stringify(result.tests)}`);
  }
  await matchScreenshot(page, `${student.name}-passed`);
  recordTimings("timings-session.json", { what: `session ${student.name}`, wallMs: Date.now() - t0,
    exercises: student.exercises.length });
}
