// The error box from the bridge's Error (web/src/results.js), without a browser: the record's suggested edit
// shown as the fixed line with a button in the page's language, the edit made as minitriton's Edit.apply
// makes it, and Stop saying where the code was.
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeT, numberFormat } from "../src/i18n.js";
import { applyEdit, applyFix, errorHtml, errorText, fixedLines, suggestedEdit, testsHtml } from "../src/results.js";

const CODE = [
  "@triton.jit",
  "def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
  "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
  "    x = tl.load(x_ptr + offs)",
  "    tl.store(out_ptr + offs, x)",
  "",
].join("\n");
const EDIT = { line: 4, col: 28, end_line: 4, end_col: 28, text: ", mask=offs < n" };
const OOB = {
  type: "OutOfBoundsError", line: 4, col: 8, program: [3, 0, 0], program_text: "3", traceback: "",
  message: "tl.load читает за концом `x_ptr` (строка 4, программа 3). Закройте хвост маской: mask=offs < n.",
  diagnostic: { kind: "out_of_bounds", line: 4, suggestion: { kind: "mask_tail", fields: {}, edit: EDIT, reason: null } },
};
const LATIN_WORDS = /(?<![\w.`<])[A-Za-z]{2,}\s+[A-Za-z]{2,}(?![\w(])/;
const visible = (html) => html.replace(/<[^>]*>/g, " ").replace(/&[a-z]+;/g, " ");

test("an edit is made as minitriton's Edit.apply makes it", () => {
  assert.equal(applyEdit(CODE, EDIT).split("\n")[3], "    x = tl.load(x_ptr + offs, mask=offs < n)");
  const twoLines = { line: 4, col: 4, end_line: 5, end_col: 12, text: "y = 1\n    z" };
  assert.equal(applyEdit(CODE, twoLines), CODE.replace("x = tl.load(x_ptr + offs)\n    tl.store", "y = 1\n    z"));
  assert.equal(fixedLines(CODE, twoLines), "    y = 1\n    z(out_ptr + offs, x)");
  assert.equal(applyEdit(CODE, { ...EDIT, line: 9, end_line: 9 }), null);       // not this code's edit
  assert.equal(applyEdit(CODE, { ...EDIT, col: 99, end_col: 99 }), null);
});

test("the fix is offered as the fixed line and a button, in Russian on a Russian page", () => {
  const html = errorHtml(OOB, makeT("ru"), { code: CODE });
  assert.match(html, /Исправленная строка 4:/);
  assert.match(html, /x = tl\.load\(x_ptr \+ offs, mask=offs &lt; n\)/);
  assert.match(html, /<button type="button" class="apply-fix">Применить исправление<\/button>/);
  assert.doesNotMatch(visible(html).replace(OOB.type, ""), LATIN_WORDS);
  assert.match(errorHtml(OOB, makeT("en"), { code: CODE }), />Apply fix</);
});

test("no fix is offered without an edit or without the code it is about", () => {
  assert.doesNotMatch(errorHtml(OOB, makeT("ru")), /apply-fix/);
  const noEdit = { ...OOB, diagnostic: { ...OOB.diagnostic, suggestion: { kind: "mask_tail_generic", edit: null } } };
  assert.equal(suggestedEdit(noEdit), null);
  assert.doesNotMatch(errorHtml(noEdit, makeT("ru"), { code: CODE }), /apply-fix/);
  assert.equal(suggestedEdit({ ...OOB, diagnostic: null }), null);
});

test("the button makes the edit in the editor and runs the same op again, only on the same code", () => {
  const made = [];
  const editor = { code: CODE, applyEdit: (e) => { made.push(e); return true; } };
  const reruns = [];
  applyFix({ op: "check", code: CODE, result: { error: OOB } }, editor, (op) => reruns.push(op));
  assert.deepEqual([made, reruns], [[EDIT], ["check"]]);
  applyFix({ op: "run", code: CODE + "# edited since", result: { error: OOB } }, editor, (op) => reruns.push(op));
  assert.deepEqual([made.length, reruns], [1, ["check"]]);
});

test("a failed test's fix is offered under it and applied from it", () => {
  const tests = [{ id: "values", name: "значения", passed: true, message: "совпадает точно" },
    { id: "transposed_b", name: "B транспонирована", passed: false, message: "…", fix: { kind: "same_stride", edit: EDIT } }];
  const html = testsHtml(tests, makeT("ru"), { code: CODE });
  assert.equal((html.match(/class="apply-fix"/g) || []).length, 1);
  assert.match(html, /<button type="button" class="apply-fix" data-test="transposed_b">Применить исправление<\/button>/);
  assert.doesNotMatch(testsHtml(tests, makeT("ru")), /apply-fix/);
  const made = [], reruns = [];
  const editor = { code: CODE, applyEdit: (e) => { made.push(e); return true; } };
  applyFix({ op: "check", code: CODE, result: { error: null, tests } }, editor, (op) => reruns.push(op), "transposed_b");
  assert.deepEqual([made, reruns], [[EDIT], ["check"]]);
  applyFix({ op: "check", code: CODE, result: { error: null, tests } }, editor, (op) => reruns.push(op), "values");
  assert.deepEqual([made.length, reruns.length], [1, 1]);    // a passing test has no fix
});

test("Stop says where the code was; a Stop between ops says only that it stopped", () => {
  const stop = { type: "KeyboardInterrupt", message: "остановлено в строке 14, программа 3", line: 14,
    program: [3, 0, 0], program_text: "3", traceback: "", diagnostic: { kind: "stopped", suggestion: null } };
  const html = errorHtml(stop, makeT("ru"));
  assert.match(html, /<strong>Остановлено<\/strong>/);
  assert.match(html, /строка 14/);
  assert.match(html, /программа 3/);
  assert.match(html, /остановлено в строке 14, программа 3/);
  assert.doesNotMatch(visible(html), /KeyboardInterrupt|[A-Za-z]{3,}/);
  for (const type of ["Stopped", "TimeLimit"]) {   // the lab server's: a killed worker, its time limit
    assert.match(errorHtml({ type, message: "остановлено", line: null, program: null }, makeT("ru")), /<strong>Остановлено</);
  }
  const between = { type: "KeyboardInterrupt", message: "Traceback ... KeyboardInterrupt", line: null, program: null };
  assert.equal(errorText(between, makeT("ru")), "Остановлено.");
  assert.equal(errorText(between, makeT("en")), "Stopped.");
});

test("a failed test's message renders its `code` as the statement does, and stays escaped", () => {
  const tests = [{ id: "tail", name: "n = 98,432", passed: false,
    message: "tl.load reads past the end of `x_ptr` (`<b>` stays text) <img src=x onerror=alert(1)>\nmask `offs < n`" }];
  const html = testsHtml(tests, makeT("en"));
  assert.match(html, /<summary class="message">tl\.load reads past the end of <code>x_ptr<\/code> \(<code>&lt;b&gt;<\/code> stays text\) &lt;img/);
  assert.match(html, /<pre class="message">mask <code>offs &lt; n<\/code><\/pre>/);
  assert.doesNotMatch(html, /<img|<b>|`/);
  assert.match(errorHtml(OOB, makeT("ru")), /за концом <code>x_ptr<\/code>/);
});

test("numbers: the rule of minitriton's messages, one format per language", () => {
  const numbers = [9600, 10000, 98432, -123456, 1000000];
  const S = "\u202f";
  assert.deepEqual(numbers.map((n) => numberFormat("ru").format(n)), ["9600", `10${S}000`, `98${S}432`, `-123${S}456`, `1${S}000${S}000`]);
  assert.deepEqual(numbers.map((n) => numberFormat("en").format(n)), ["9600", "10,000", "98,432", "-123,456", "1,000,000"]);
  assert.equal(numberFormat("ru", { fractionDigits: 2 }).format(0.337), "0.34");   // as Python's "p = 0.5"
  assert.equal(numberFormat("en", { fractionDigits: 2 }).format(12345.5), "12,345.50");
  assert.equal(numberFormat("en").format(1.23456), "1.235");
  assert.equal(numberFormat("ru").format(3e-7), "3e-7");
});
