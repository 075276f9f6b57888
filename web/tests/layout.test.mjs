// The page as a student sees it on a 390x844 phone and a 1400x900 desktop, in both languages, against
// `python -m sandbox`: the task on the first screen (the exercise list folded behind a picker), the result of
// Run/Check brought into view, nothing scrolling sideways (a long error, the memory picture), long titles cut
// with the whole title on hover, test messages with their `code` rendered, one number format per language,
// and a load with no failed request.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ensureBuilt, launchBrowser, loadProblems, startLabServer, waitReady, withPage } from "./helpers.mjs";
import * as flows from "./flows.mjs";

ensureBuilt();
const lab = await startLabServer();
const NNBSP = "\u202f";
const PHONE = { width: 390, height: 844 };

// How a language writes 98432: the one format of the page and of Python's messages.
const grouped = (lang, digits) => digits.replace(/\B(?=(\d{3})+$)/g, lang === "en" ? "," : NNBSP);

// Numbers written in another format than the language's: digit groups by other signs or under 10 000 ("8,192"),
// or none from 10 000 on.
function foreignNumbers(text, lang) {
  const wrong = lang === "en" ? /\d[\u00a0\u202f ]\d{3}(?!\d)|(?<![\d,.])\d,\d{3}(?![\d,])/g   // "98 432", "8,192"
    : /\d[,\u00a0 ]\d{3}(?!\d)|(?<![\d\u202f])\d\u202f\d{3}(?![\d\u202f])/g;   // "98,432", "98 432" with another space, "8 192"
  const ungrouped = /(?<![\d.,\u202fe\[×-])\d{5,}(?![\d.])/g;   // "98432"; a shape ("fp32 [98432]") is code
  return [...text.matchAll(wrong), ...text.matchAll(ungrouped)].map((m) => m[0]);
}

// The element's box against the viewport: its top on the screen.
const topOf = (page, selector) => page.evaluate((s) => document.querySelector(s).getBoundingClientRect().top, selector);
const pageWidth = (page) => page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth));

// The results pane's text a student reads, without what their own code printed.
const resultsText = (page) => page.evaluate(() =>
  [...document.getElementById("results").children].filter((el) => el.id !== "output" && el.checkVisibility())
    .map((el) => el.innerText).join("\n"));

async function assertOnScreen(page, selector, what) {
  const top = await topOf(page, selector);
  assert.ok(top >= -1 && top < PHONE.height * 0.5, `${what} starts at y=${top} of ${PHONE.height}`);
}

describe("the page as a student sees it: phone and desktop, both languages", () => {
  let browser;
  before(async () => { browser = await launchBrowser(); });
  after(async () => { await browser?.close(); await lab.stop?.(); });
  const it = (name, body) => test(name, (t) => withPage(t, browser.context, body));
  const at = (lang) => { const u = new URL(lab.url); u.searchParams.set("lang", lang); return u.href; };

  for (const lang of ["ru", "en"]) {
    it(`a 390x844 phone (${lang}): task on the first screen, results brought into view, nothing sideways`, async (page) => {
      await page.setViewportSize(PHONE);
      await flows.openFresh(page, at(lang));
      const list = await flows.exercises(page);
      // the list is folded behind the picker, which names the exercise; the task starts on the first screen
      assert.equal(await page.locator("#exercise-list").isVisible(), false);
      assert.match(await page.locator("#ex-picker").innerText(), new RegExp(`1\\D+${list.length}\\D+${list[0].title.slice(0, 12)}`));
      const heading = await page.locator("#statement h2").boundingBox();
      assert.ok(heading.y >= 0 && heading.y + heading.height <= PHONE.height / 3, `the task heading at y=${heading.y}`);
      // one tap opens the list, a second picks an exercise and folds it again
      await page.click("#ex-picker");
      await page.click(`#exercise-list a[data-id="${list[2].id}"]`);
      assert.equal(await page.locator("#exercise-list").isVisible(), false);
      assert.equal(await page.locator("#statement h2").innerText(), list[2].title);
      assert.ok((await topOf(page, "#statement h2")) < PHONE.height / 3);
      await page.click("#ex-picker");
      await page.click(`#exercise-list a[data-id="${list[0].id}"]`);

      // Run the solution: the output and the counters come into view; the memory picture fits the width
      await flows.loadSolution(page);
      await flows.clickRun(page);
      await assertOnScreen(page, "#output-heading", "the output after Run");
      assert.match(await page.locator("#run-status").innerText(), /^\d+\.\d\d (с|s)$/, "seconds with a decimal point");
      const launches = await page.evaluate(() => window.__sandbox.state.lastResult.launches);
      const k = launches.findIndex((L) => L.tensors.x_ptr?.totals.loaded_bytes >= 10000);
      assert.ok(k >= 0, "a launch whose counters need digit groups");
      const loaded = launches[k].tensors.x_ptr.totals.loaded_bytes;
      const cell = page.locator("table.counters").nth(k).locator("tbody tr", { has: page.locator('th code:text-is("x_ptr")') })
        .locator("td").first();
      assert.equal((await cell.innerText()).split("\n")[0], grouped(lang, String(loaded)));
      await page.click("#memory");
      await page.waitForFunction(() => !document.body.dataset.busy && document.querySelector("#memory-panel figure"), null, { timeout: 60000 });
      assert.ok(await pageWidth(page) <= PHONE.width, `the page is ${await pageWidth(page)} px wide with the memory picture`);
      assert.deepEqual(foreignNumbers(await resultsText(page), lang), []);

      // the load without its mask, edited as a student edits: Check's failures come into view, with their code
      await page.locator(".cm-line", { hasText: "tl.load(x_ptr + offs, mask=mask)" }).click();
      await page.keyboard.press("End");
      for (let i = 0; i < ", mask=mask)".length; i++) await page.keyboard.press("Backspace");
      await page.keyboard.type(")");
      assert.match(await flows.code(page), /tl\.load\(x_ptr \+ offs\)\n/);
      await page.evaluate(() => scrollTo(0, 0));
      await flows.clickCheck(page);
      const first = await page.locator("#error").isVisible() ? "#error" : "#tests-heading";   // the results' top
      await assertOnScreen(page, first, `the results (${first}) after Check`);
      const failed = page.locator("#tests li.fail").first();
      assert.equal(await failed.locator(".message code", { hasText: /^x_ptr$/ }).count() >= 1, true, "`x_ptr` is rendered as code");
      const message = await failed.innerText();
      assert.ok(!message.includes("`"), `no backticks shown: ${message}`);
      assert.ok(message.includes(grouped(lang, "98432")), `98432 as ${lang} writes it: ${message}`);
      const afterCheck = await resultsText(page);
      assert.deepEqual(foreignNumbers(afterCheck, lang), [], afterCheck);

      // Run: the error box comes into view
      await page.evaluate(() => scrollTo(0, 0));
      await flows.clickRun(page);
      await assertOnScreen(page, "#error", "the error box after Run");
      assert.match(await page.locator("#error .error-message").first().innerText(), /x_ptr/);
      assert.equal(await page.locator("#error .error-message").first().locator("code", { hasText: /^x_ptr$/ }).count() >= 1, true);

      // a long error with no spaces to break at: still nothing sideways, and in view
      await page.locator(".cm-content").click();
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Enter");
      await page.keyboard.type(`raise RuntimeError("${"no_space_to_break_at_".repeat(30)}`);
      await page.keyboard.press("End");
      await page.evaluate(() => scrollTo(0, 0));
      await flows.clickRun(page);
      await assertOnScreen(page, "#error", "a long error after Run");
      assert.match(await page.locator("#error").innerText(), /RuntimeError/);
      assert.ok(await pageWidth(page) <= PHONE.width, `the page is ${await pageWidth(page)} px wide with a long error`);
      await page.click("#lang");
      await page.waitForFunction(() => !document.body.dataset.busy
        && document.getElementById("results").dataset.lang === document.documentElement.lang, null, { timeout: 60000 });
      assert.ok(await pageWidth(page) <= PHONE.width, "nothing sideways in the other language either");
    });

    it(`1400x900 (${lang}): long titles wrap or end in "…" inside the sidebar, the whole title on hover`, async (page) => {
      await page.setViewportSize({ width: 1400, height: 900 });
      await flows.openFresh(page, at(lang));
      const list = await flows.exercises(page);
      const shown = await page.evaluate(() => {
        const nav = document.getElementById("exercises");
        const right = nav.getBoundingClientRect().right;
        return { nav: [nav.scrollWidth, nav.clientWidth], links: [...document.querySelectorAll("#exercise-list a")].map((a) => {
          const s = a.querySelector(".ex-title"), lineHeight = parseFloat(getComputedStyle(s).lineHeight);
          return { id: a.dataset.id, title: a.title, right: s.getBoundingClientRect().right, navRight: right,
            cut: s.scrollWidth > s.clientWidth, ellipsis: getComputedStyle(s).textOverflow === "ellipsis",
            lines: Math.round(s.getBoundingClientRect().height / lineHeight) };
        }) };
      });
      assert.ok(shown.nav[0] <= shown.nav[1], `the sidebar scrolls sideways: ${shown.nav}`);
      for (const [i, l] of shown.links.entries()) {
        assert.equal(l.title, list[i].title, "the whole title on hover");
        assert.ok(l.right <= l.navRight + 0.5, `${l.id}'s title runs past the sidebar`);
        if (l.cut) assert.ok(l.ellipsis, `${l.id}'s title is cut without "…"`);
      }
      if (lang === "ru") {
        const transpose = shown.links.find((l) => l.id === "transpose");
        assert.equal(transpose.title, "Двумерные тайлы: транспонирование");
        assert.ok(transpose.lines >= 2 || transpose.cut, "the long title wraps or is cut with …");
      }
      await page.hover('#exercise-list a[data-id="transpose"]');
      assert.equal(await page.locator('#exercise-list a[data-id="transpose"]').getAttribute("title"), list.find((e) => e.id === "transpose").title);
    });
  }

  it("a load in lab mode: no console error, no failed request, with the token or without", async (page) => {
    const problems = loadProblems(page);
    await page.goto(at("ru"));
    await waitReady(page);
    const noToken = new URL(lab.url);
    noToken.search = "?lang=en";
    await page.goto(noToken.href);
    await page.waitForFunction(() => document.body.dataset.stage === "failed");
    assert.match(await page.locator("#boot").innerText(), /no \?token=/);
    assert.deepEqual(problems, []);
  });
});
