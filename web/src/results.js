// The result panes as HTML, from the bridge's JSON and the page's words: the error box, the tests, the
// counters and generic tables (traffic, the GPU comparison). Pure functions of their inputs, so a language
// switch re-renders them from the same data.
import { columnLabel } from "./i18n.js";
import { escapeHtml, renderInline } from "./markdown.js";

// A program id as the messages write it: 96 on a 1-D grid, (1, 5) otherwise.
export function programText(p) {
  if (!Array.isArray(p)) return String(p);
  return p.length === 1 ? String(p[0]) : `(${p.join(", ")})`;
}

// A launch grid as Triton writes it: (4,) or (3, 3); trailing 1s of the record's [x, y, z] dropped.
export function gridText(grid) {
  const g = [...(grid || [1])];
  while (g.length > 1 && g[g.length - 1] === 1) g.pop();
  return g.length === 1 ? `(${g[0]},)` : `(${g.join(", ")})`;
}

// The text of an error: the page's own words for the page's, the network's and the lab server's refusals;
// Python's errors arrive already in the page's language.
export function errorText(err, t) {
  if (err.key) return t(err.key, err.vars || {});
  if (err.type === "Forbidden") {
    const key = { token: "tokenRefused", origin: "originRefused", host: "hostRefused" }[err.reason];
    return key ? t(key, { detail: err.message || "" }) : t("httpError", { status: 403, detail: err.message || "" });
  }
  if (err.type === "TooLarge") return t("tooLarge");
  // Stop, through Pyodide's interrupt buffer: the bridge says where the code was; a Stop that came between
  // two ops (the worker's own answer) knows no line.
  if (err.type === "KeyboardInterrupt") return err.line || err.diagnostic ? String(err.message ?? "") : t("stopped");
  if (err.type === "NotReady") return t("notReadyFailed");
  return String(err.message ?? "");
}

// The run status line: {key, vars} of the page's messages, or {error}; seconds in the page's number format.
export function statusText(s, t, fmtSeconds) {
  if (!s) return "";
  if (s.error) return errorText(s.error, t);
  const vars = { ...(s.vars || {}) };
  if (s.key === "seconds") vars.s = fmtSeconds.format(vars.s);
  return t(s.key, vars);
}

// The error box: what (the type; the page's "Stopped" for a Stop or a time limit), where (a link to the line, the program), the message,
// (Markdown, as the tests' messages), the suggested fix when it is an edit of the learner's code (the fixed line and a button that applies it),
// and the traceback folded. `code` is the code the error is about: the fix is offered only while the editor
// still holds it.
export function errorHtml(err, t, { code = null } = {}) {
  const where = [];
  if (err.line) where.push(`<a href="#" class="goto-line" data-line="${err.line}">${escapeHtml(t("errorAt", { line: err.line }))}</a>`);
  if (err.program) where.push(escapeHtml(t("programId", { p: err.program_text ?? programText(err.program) })));
  const stopped = ["KeyboardInterrupt", "Stopped", "TimeLimit"].includes(err.type);   // the lab server's too
  const what = stopped ? t("stoppedHead") : err.type || "Error";
  return `<div class="error-head"><strong>${escapeHtml(what)}</strong>`
    + `${where.length ? ` · ${where.join(" · ")}` : ""}</div>`
    + `<pre class="error-message">${renderInline(errorText(err, t))}</pre>`
    + fixHtml(err, t, code)
    + (err.traceback ? `<details><summary>${escapeHtml(t("traceback"))}</summary><pre>${escapeHtml(err.traceback)}</pre></details>` : "");
}

// The suggested edit of an error's record or of a failed test's fix: {line, col, end_line, end_col, text},
// lines 1-based and columns 0-based, as minitriton's Edit; null when there is none.
export function suggestedEdit(err) {
  const edit = (err?.diagnostic?.suggestion ?? err?.fix)?.edit;   // an error's record, or a failed test's fix
  return edit && Number.isInteger(edit.line) && Number.isInteger(edit.end_line) && typeof edit.text === "string" ? edit : null;
}

// `code` with the edit made (minitriton's Edit.apply), or null when the edit does not fit the code.
export function applyEdit(code, edit) {
  const lines = code.split(/(?<=\n)/);
  if (!edit || edit.line < 1 || edit.end_line < edit.line || edit.end_line > lines.length) return null;
  const first = lines[edit.line - 1], last = lines[edit.end_line - 1];
  if (edit.col > first.replace(/\n$/, "").length || edit.end_col > last.replace(/\n$/, "").length) return null;
  return lines.slice(0, edit.line - 1).join("") + first.slice(0, edit.col) + edit.text
    + last.slice(edit.end_col) + lines.slice(edit.end_line).join("");
}

// The lines an edit touches, as they read once it is made.
export function fixedLines(code, edit) {
  const fixed = applyEdit(code, edit);
  if (fixed == null) return null;
  const added = edit.text.split("\n").length - 1 - (edit.end_line - edit.line);
  return fixed.split("\n").slice(edit.line - 1, edit.end_line + added).join("\n");
}

// The fix button's action: the suggested edit (of the error, or of the test `testId`) made in the editor (one
// undoable change) while the editor still holds the code it is about, then the same op again.
export function applyFix(view, editor, rerun, testId = null) {
  const edit = suggestedEdit(testId ? view?.result?.tests?.find((x) => x.id === testId) : view?.result?.error);
  if (edit && view.code === editor.code && editor.applyEdit(edit)) rerun(view.op === "check" ? "check" : "run");
}

function fixHtml(err, t, code, testId = null) {
  const edit = suggestedEdit(err);
  const lines = edit && code != null ? fixedLines(code, edit) : null;
  if (lines == null) return "";
  const test = testId == null ? "" : ` data-test="${escapeHtml(testId)}"`;
  return `<div class="error-fix"><span class="muted">${escapeHtml(t("fixedLine", { line: edit.line }))}</span>`
    + `<pre class="error-message"><code>${escapeHtml(lines)}</code></pre>`
    + `<button type="button" class="apply-fix"${test}>${escapeHtml(t("applyFix"))}</button></div>`;
}

// One line per test; a failure's first line is its summary and the rest unfolds under it (the first failure
// unfolded), so no line is shown twice. Messages are Markdown as the statement is (`code`), escaped first. A failure whose diagnosis found a fix in the source (`fix`, a
// suggestion) offers its edit as the error box does, while the editor holds `code`.
export function testsHtml(tests, t, { code = null } = {}) {
  let firstFail = true;
  return tests.map((x) => {
    const open = !x.passed && firstFail;
    if (!x.passed) firstFail = false;
    const [head, ...rest] = String(x.message || "").split("\n");
    const more = rest.join("\n").trim();
    const body = !head ? ""
      : x.passed ? `<div class="message muted">${renderInline(head)}${more ? "\n" + renderInline(more) : ""}</div>`
        : more ? `<details${open ? " open" : ""}><summary class="message">${renderInline(head)}</summary>`
          + `<pre class="message">${renderInline(more)}</pre></details>`
          : `<div class="message">${renderInline(head)}</div>`;
    const tol = x.tolerance ? ` <small class="muted">(${escapeHtml(x.tolerance)})</small>` : "";
    return `<li class="${x.passed ? "pass" : "fail"}" data-name="${escapeHtml(x.name)}" data-id="${escapeHtml(x.id ?? "")}">`
      + `<span class="icon" aria-hidden="true">${x.passed ? "✓" : "✗"}</span> <span class="sr">${escapeHtml(t(x.passed ? "passed" : "failed"))}:</span> `
      + `<span class="name">${escapeHtml(x.name)}</span>${tol}${body}${x.passed ? "" : fixHtml(x, t, code, x.id)}</li>`;
  }).join("");
}

// The counters of each launch: one compact table per launch (tensor; bytes loaded and stored, with how many
// of them were distinct when some were moved twice; masked-off lanes), folded after the first three launches; a
// launch that failed says where, its counters standing at the failure.
export function countersHtml(launches, t, fmt, { op, testNames = {} } = {}) {
  if (!launches?.length) return `<p class="note">${escapeHtml(t(op === "check" ? "noCountersCheck" : "noLaunches"))}</p>`;
  const num = (v) => (v == null ? "—" : fmt.format(v));
  const moved = (total, distinct) => `<td>${num(total)}${distinct != null && total != null && distinct < total
    ? `<br><small class="reread">${escapeHtml(t("distinct", { n: num(distinct) }))}</small>` : ""}</td>`;
  return launches.map((L, i) => {
    const rows = Object.entries(L.tensors || {}).map(([name, info]) => {
      const tot = info.totals || {};
      return `<tr><th scope="row"><code>${escapeHtml(name)}</code><br><small>${escapeHtml(info.dtype || "")} `
        + `[${escapeHtml((info.shape || []).join("×"))}]</small></th>`
        + moved(tot.loaded_bytes, tot.unique_loaded_bytes) + moved(tot.stored_bytes, tot.unique_stored_bytes)
        + `<td>${num(tot.masked_load_lanes)} / ${num(tot.masked_store_lanes)}</td></tr>`;
    }).join("");
    const test = L.test ? ` · ${escapeHtml(t("inTest", { name: testNames[L.test] ?? L.test }))}` : "";
    const flops = L.dot_flops?.total ? ` · ${escapeHtml(t("flops"))}: ${fmt.format(L.dot_flops.total)}` : "";
    const caption = escapeHtml(t("launchCaption", { i: i + 1, kernel: L.kernel, grid: gridText(L.grid) }));
    const failed = L.error ? `<p class="note launch-failed">${escapeHtml(t("launchFailed", { type: L.error.type,
      p: programText(L.error.program), line: L.error.line ?? "?" }))}</p>` : "";
    return `<details class="launch"${i < 3 || L.error ? " open" : ""}><summary>${caption}${test}${flops}</summary>${failed}`
      + `<div class="table-wrap"><table class="counters" data-kernel="${escapeHtml(L.kernel)}">`
      + `<thead><tr><th>${escapeHtml(t("tensor"))}</th><th>${escapeHtml(t("loadedBytes"))}</th>`
      + `<th>${escapeHtml(t("storedBytes"))}</th><th>${escapeHtml(t("maskedLanes"))}</th></tr></thead>`
      + `<tbody>${rows}</tbody></table></div></details>`;
  }).join("");
}

// The lab's GPU run: why it is unavailable, its error, or its comparison with the emulator.
export function gpuHtml(g, t, fmt) {
  if (g.available === false) return `<p class="warn">${escapeHtml(t("gpuUnavailable", { reason: g.reason || "" }))}</p>`;
  if (g.error) return errorHtml(g.error, t);
  const { stdout, ...rest } = g;
  return `<h3>${escapeHtml(t("gpu"))}</h3>` + tableHtml(rest, t, fmt) + (stdout ? `<pre class="output">${escapeHtml(stdout)}</pre>` : "");
}

// A table for whatever shape the bridge gives: a list of rows, a {row: {col: v}} map, or plain values.
export function tableHtml(v, t, fmt) {
  const cell = (x) => (typeof x === "number" ? fmt.format(x) : typeof x === "boolean" ? t(x ? "yes" : "no")
    : x == null ? "—" : typeof x === "object" ? JSON.stringify(x) : String(x));
  const wrap = (html) => `<div class="table-wrap">${html}</div>`;
  if (v == null) return "";
  if (Array.isArray(v) && v.every((r) => r && typeof r === "object" && !Array.isArray(r))) {
    const cols = [...new Set(v.flatMap((r) => Object.keys(r)))];
    return wrap(`<table class="traffic"><thead><tr>${cols.map((c) => `<th>${escapeHtml(columnLabel(t, c))}</th>`).join("")}</tr></thead><tbody>`
      + v.map((r) => `<tr>${cols.map((c) => `<td>${escapeHtml(cell(r[c]))}</td>`).join("")}</tr>`).join("") + "</tbody></table>");
  }
  if (typeof v === "object" && !Array.isArray(v)) {
    const entries = Object.entries(v);
    if (entries.length && entries.every(([, r]) => r && typeof r === "object" && !Array.isArray(r))) {
      const cols = [...new Set(entries.flatMap(([, r]) => Object.keys(r)))];
      return wrap(`<table class="traffic"><thead><tr><th></th>${cols.map((c) => `<th>${escapeHtml(columnLabel(t, c))}</th>`).join("")}</tr></thead><tbody>`
        + entries.map(([k, r]) => `<tr><th scope="row">${escapeHtml(k === "total" ? columnLabel(t, k) : k)}</th>${cols.map((c) => `<td>${escapeHtml(cell(r[c]))}</td>`).join("")}</tr>`).join("")
        + "</tbody></table>");
    }
    return wrap(`<table class="traffic"><tbody>${entries.map(([k, x]) => `<tr><th scope="row">${escapeHtml(columnLabel(t, k))}</th><td>${
      x && typeof x === "object" ? tableHtml(x, t, fmt) : escapeHtml(cell(x))}</td></tr>`).join("")}</tbody></table>`);
  }
  return `<pre>${escapeHtml(JSON.stringify(v, null, 1))}</pre>`;
}
