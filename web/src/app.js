// The sandbox page: exercise list, CodeMirror 6 editor, Run/Check/Hint/Reset/Stop/Memory (and Run on GPU in
// lab mode), output, tests, counters and the memory picture. Python is reached through transport.js only:
// Pyodide in a module worker (default) or a local `python -m sandbox` (lab mode: ?token=...).
import { EditorView, basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { indentWithTab } from "@codemirror/commands";
import { EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import { Decoration, keymap } from "@codemirror/view";
import { columnLabel, makeT, LANGS } from "./i18n.js";
import { escapeHtml, renderMarkdown } from "./markdown.js";
import { COLORS, drawTensor, tensorTable } from "./memview.js";
import { LabTransport, StoppedError, WorkerTransport } from "./transport.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const STORE = "minitriton:";
const t0 = performance.now();

const state = {
  lang: params.get("lang") || localStorage.getItem(STORE + "lang") || "ru",
  exercises: [],
  current: null,
  ready: false,
  busy: false,
  checks: 0,
  hints: {},          // exercise id -> hints shown
  undo: null,         // {exercise, code}: one undo after Reset / Solution
  launches: [],       // the last Run/Check's launches (for the memory picture)
  lastResult: null,
  timings: { exercisesShown: null, ready: null, stages: {} },
  bootError: null,
};
if (!LANGS.includes(state.lang)) state.lang = "ru";
let t = makeT(state.lang);
let fmt = new Intl.NumberFormat(state.lang === "ru" ? "ru-RU" : "en-US");
const limitSeconds = Number(params.get("limit") || 60);

// ---------- editor ----------
const setErrorLine = StateEffect.define();
const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setErrorLine)) {
        deco = e.value == null ? Decoration.none
          : Decoration.set([Decoration.line({ class: "cm-error-line" }).range(e.value)]);
      }
    }
    if (tr.docChanged && !tr.effects.some((e) => e.is(setErrorLine))) deco = Decoration.none;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

let saveTimer = null;
const editor = new EditorView({
  parent: $("editor"),
  state: EditorState.create({
    doc: "",
    extensions: [
      Prec.highest(keymap.of([
        { key: "Mod-Enter", run: () => { run(); return true; } },
        { key: "Shift-Mod-Enter", run: () => { check(); return true; } },
      ])),
      basicSetup, python(), keymap.of([indentWithTab]), errorLineField,
      EditorView.updateListener.of((u) => {
        if (u.docChanged) { clearTimeout(saveTimer); saveTimer = setTimeout(save, 300); }
      }),
      EditorView.contentAttributes.of({ "aria-label": "code" }),
    ],
  }),
});
const code = () => editor.state.doc.toString();
function setCode(text) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
}
function showErrorLine(line) {
  if (!line || line < 1 || line > editor.state.doc.lines) { editor.dispatch({ effects: setErrorLine.of(null) }); return; }
  const pos = editor.state.doc.line(line).from;
  editor.dispatch({ effects: [setErrorLine.of(pos), EditorView.scrollIntoView(pos, { y: "center" })], selection: { anchor: pos } });
}

// ---------- autosave ----------
function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0).toString(16);
}
const key = (id) => `${STORE}code:${id}`;
function save() {
  clearTimeout(saveTimer);
  if (!state.current) return;
  const ex = state.current;
  try {
    localStorage.setItem(key(ex.id), JSON.stringify({ code: code(), starter: hash(ex.starter), saved: Date.now() }));
  } catch { /* storage full or blocked: keep running */ }
}
function loadSaved(ex) {
  try { return JSON.parse(localStorage.getItem(key(ex.id)) || "null"); } catch { return null; }
}
addEventListener("pagehide", save);
addEventListener("beforeunload", save);

// ---------- transport ----------
const token = params.get("token");
let transport;
async function loadConfig() {
  try { return await (await fetch("config.json", { cache: "no-cache" })).json(); } catch { return null; }
}

function packageBaseUrl(config) {
  const p = params.get("packages");
  const base = p ? new URL(p, location.href).href : config.packageBaseUrl;
  return base.endsWith("/") ? base : base + "/";
}

// ---------- boot progress ----------
const STAGES = ["python", "numpy", "minitriton", "ready"];
function renderStages(current, failed) {
  const ol = $("stages");
  if (transport?.mode === "lab") { ol.innerHTML = ""; $("boot-text").textContent = t("stage.lab"); return; }
  const at = STAGES.indexOf(current);
  ol.innerHTML = STAGES.map((s, i) => {
    const cls = failed && i === at ? "failed" : i < at || current === "ready" ? "done" : i === at ? "active" : "";
    const doneAt = state.timings.stages[STAGES[i + 1]];   // a stage ends when the next one starts
    const shown = doneAt != null && s !== "ready" && (i < at || current === "ready");
    return `<li class="${cls}" data-stage="${s}">${escapeHtml(t("stage." + s))}${shown ? ` <small>${(doneAt / 1000).toFixed(1)} s</small>` : ""}</li>`;
  }).join("");
  $("boot-text").textContent = failed ? "" : current === "ready" ? "" : t("loadingNote");
}
function onProgress({ stage }) {
  state.timings.stages[stage] = Math.round(performance.now() - t0);
  document.body.dataset.stage = stage;
  renderStages(stage);
}

// ---------- static text ----------
function renderStatic() {
  document.documentElement.lang = state.lang;
  document.title = t("title");
  $("title").textContent = t("title");
  $("lang").textContent = t("lang");
  $("ex-heading").textContent = t("exercises");
  $("run").textContent = `${t("run")} (${t("shortcutRun")})`;
  $("run").title = t("shortcutRun");
  $("check").textContent = t("check");
  $("check").title = t("shortcutCheck");
  $("hint").textContent = t("hint");
  $("reset").textContent = t("reset");
  $("undo").textContent = t("undoReset");
  $("solution").textContent = t("solution");
  $("stop").textContent = t("stop");
  $("memory").textContent = t("memory");
  $("gpu").textContent = t("gpu");
  $("tests-heading").textContent = t("tests");
  $("output-heading").textContent = t("output");
  $("counters-heading").textContent = t("counters");
  $("memory-heading").textContent = t("memoryTitle");
  $("saved-note").textContent = t("savedLocally");
  $("erase").textContent = t("eraseAll");
  $("emulator-note").textContent = t("emulatorNote");
  $("mode").textContent = transport?.mode === "lab" ? t("modeLab") : t("modePyodide");
  renderStages(document.body.dataset.stage || "python", !!state.bootError);
  if (state.bootError) showBootError(state.bootError);
  renderLegend();
}

function renderLegend() {
  const items = [["loaded", "legendLoaded"], ["stored", "legendStored"], ["both", "legendBoth"],
    ["masked", "legendMasked"], ["none", "legendNone"]];
  $("memory-legend").innerHTML = items.map(([c, k]) =>
    `<span><i style="background:${COLORS[c]}"></i>${escapeHtml(t(k))}</span>`).join("");
}

// ---------- exercises ----------
async function fetchExercises(config) {
  if (transport.mode === "pyodide" && config?.exercises?.includes(state.lang)) {
    const r = await fetch(`exercises.${state.lang}.json`);
    if (r.ok) return (await r.json()).exercises;
  }
  if (transport.mode === "pyodide" && !state.ready) return null;   // asked again once Python is up
  const data = await transport.call("exercises", { lang: state.lang });
  if (data.error) throw new Error(data.error.message);
  return data.exercises;
}

function renderExerciseList() {
  $("exercise-list").innerHTML = state.exercises.map((ex) =>
    `<li><a href="#${encodeURIComponent(ex.id)}" data-id="${escapeHtml(ex.id)}"`
    + `${state.current && ex.id === state.current.id ? ' aria-current="page"' : ""}>${escapeHtml(ex.title)}</a></li>`).join("");
}

function selectExercise(id, { keepCode = false } = {}) {
  const ex = state.exercises.find((e) => e.id === id) || state.exercises[0];
  if (!ex) return;
  if (state.current && state.current.id !== ex.id) save();
  const switching = !state.current || state.current.id !== ex.id;
  state.current = ex;
  localStorage.setItem(STORE + "current", ex.id);
  if (location.hash.slice(1) !== encodeURIComponent(ex.id)) history.replaceState(null, "", "#" + encodeURIComponent(ex.id));
  $("statement").innerHTML = `<h2>${escapeHtml(ex.title)}</h2>` + renderMarkdown(ex.statement);
  if (switching || !keepCode) {
    const saved = loadSaved(ex);
    setCode(saved ? saved.code : ex.starter);
    const changed = saved && saved.starter !== hash(ex.starter) && saved.code !== ex.starter;
    $("starter-changed").hidden = !changed;
    $("starter-changed").textContent = t("starterChanged");
    clearResults();
    $("hints").innerHTML = "";
    state.hints[ex.id] = 0;
    state.undo = null;
    $("undo").hidden = true;
  }
  renderExerciseList();
  updateButtons();
}

// ---------- results ----------
function clearResults() {
  $("error").hidden = true;
  $("error").innerHTML = "";
  $("tests").innerHTML = "";
  $("summary").textContent = "";
  $("output").textContent = "";
  $("counters").innerHTML = "";
  $("gpu-result").hidden = true;
  $("memory-panel").hidden = true;
  showErrorLine(null);
}

const programText = (p) => (Array.isArray(p) ? `(${p.join(", ")})` : String(p));

function showError(err) {
  const box = $("error");
  if (!err) { box.hidden = true; box.innerHTML = ""; showErrorLine(null); return; }
  const where = [];
  if (err.line) where.push(`<a href="#" class="goto-line" data-line="${err.line}">${escapeHtml(t("errorAt", { line: err.line }))}</a>`);
  if (err.program) where.push(escapeHtml(t("programId", { p: programText(err.program) })));
  box.innerHTML = `<div class="error-head"><strong>${escapeHtml(err.type || "Error")}</strong>`
    + `${where.length ? ` · ${where.join(" · ")}` : ""}</div>`
    + `<pre class="error-message">${escapeHtml(err.message || "")}</pre>`
    + (err.traceback ? `<details><summary>traceback</summary><pre>${escapeHtml(err.traceback)}</pre></details>` : "");
  box.hidden = false;
  box.dataset.line = err.line ?? "";
  box.dataset.program = err.program ? err.program.join(",") : "";
  showErrorLine(err.line);
}

function showOutput(stdout, seconds) {
  const text = stdout ?? "";
  const capped = text.length > 20000 ? text.slice(0, 20000) + "\n… (output cut at 20 000 characters)" : text;
  $("output").textContent = capped || t("noOutput");
  if (seconds != null) $("output").dataset.seconds = seconds;
}

function showCounters(launches, fromRun = false) {
  launches = launches || [];
  if (fromRun) state.launches = launches;
  if (!launches.length) { $("counters").innerHTML = `<p class="note">${escapeHtml(t("noLaunches"))}</p>`; return; }
  $("counters").innerHTML = launches.map((L, i) => {
    const rows = Object.entries(L.tensors || {}).map(([name, info]) => {
      const tot = info.totals || {};
      const cell = (v) => `<td>${v == null ? "—" : fmt.format(v)}</td>`;
      return `<tr><th scope="row">${escapeHtml(name)}</th><td>${escapeHtml(info.dtype || "")}</td>`
        + `<td>${escapeHtml((info.shape || []).join("×"))}</td>`
        + cell(tot.loaded_bytes) + cell(tot.unique_loaded_bytes) + cell(tot.stored_bytes) + cell(tot.unique_stored_bytes)
        + cell(tot.masked_load_lanes) + cell(tot.masked_store_lanes) + "</tr>";
    }).join("");
    const flops = L.dot_flops?.total ? ` · ${escapeHtml(t("flops"))}: ${fmt.format(L.dot_flops.total)}` : "";
    return `<table class="counters" data-kernel="${escapeHtml(L.kernel)}"><caption>${escapeHtml(t("launch"))} ${i + 1}: `
      + `<code>${escapeHtml(L.kernel)}</code>, ${escapeHtml(t("grid"))} ${escapeHtml(programText(L.grid))}${flops}</caption>`
      + `<thead><tr><th>${escapeHtml(t("tensor"))}</th><th>dtype</th><th>shape</th><th>${escapeHtml(t("loadedBytes"))}</th>`
      + `<th>${escapeHtml(t("uniqueLoaded"))}</th><th>${escapeHtml(t("storedBytes"))}</th><th>${escapeHtml(t("uniqueStored"))}</th>`
      + `<th>${escapeHtml(t("maskedLoads"))}</th><th>${escapeHtml(t("maskedStores"))}</th></tr></thead><tbody>${rows}</tbody></table>`;
  }).join("");
}

function showTests(tests, passed) {
  state.checks += 1;
  const total = tests.length, ok = tests.filter((x) => x.passed).length;
  let firstFail = true;
  $("tests").innerHTML = tests.map((x) => {
    const open = !x.passed && firstFail;
    if (!x.passed) firstFail = false;
    const msg = String(x.message || "");
    const firstLine = msg.split("\n")[0];
    const body = !msg ? ""
      : x.passed ? `<div class="message muted">${escapeHtml(msg)}</div>`
        : `<details${open ? " open" : ""}><summary>${escapeHtml(firstLine.length > 90 ? firstLine.slice(0, 90) + "…" : firstLine)}</summary>`
          + `<pre class="message">${escapeHtml(msg)}</pre></details>`;
    const tol = x.tolerance ? ` <small class="muted">(${escapeHtml(x.tolerance)})</small>` : "";
    return `<li class="${x.passed ? "pass" : "fail"}" data-name="${escapeHtml(x.name)}">`
      + `<span class="icon" aria-hidden="true">${x.passed ? "✓" : "✗"}</span> <span class="sr">${escapeHtml(t(x.passed ? "passed" : "failed"))}:</span> `
      + `<span class="name">${escapeHtml(x.name)}</span>${tol}${body}</li>`;
  }).join("");
  $("summary").textContent = t(passed && ok === total ? "passedAll" : "passedSome", { n: state.checks, p: ok, t: total });
  $("summary").className = "summary " + (passed && ok === total ? "pass" : "fail");
}

function showStatus(text, cls = "") {
  $("run-status").textContent = text;
  $("run-status").className = "run-status " + cls;
}

function updateButtons() {
  const can = state.ready && !state.busy && !!state.current;
  $("run").disabled = !can;
  $("check").disabled = !can;
  $("memory").disabled = !can;
  $("gpu").disabled = !can;
  $("hint").disabled = !state.ready || !state.current;
  $("solution").disabled = !state.ready || !state.current || state.busy;
  $("stop").hidden = !state.busy;
  $("run").hidden = state.busy;
  document.body.dataset.busy = state.busy ? "1" : "";
}

// One call to Python with a wall-clock limit; Stop and the limit both end it through the transport.
async function call(op, request, statusKey) {
  state.busy = true;
  updateButtons();
  showStatus(t(statusKey), "busy");
  const started = performance.now();
  const timer = setTimeout(() => transport.stop("timeLimit"), limitSeconds * 1000);
  try {
    const result = await transport.call(op, { lang: state.lang, ...request });
    const interrupted = result?.error?.type === "KeyboardInterrupt";   // Stop through the interrupt buffer
    showStatus(interrupted ? t("stopped") : t("seconds", { s: ((performance.now() - started) / 1000).toFixed(2) }),
      interrupted ? "stopped" : "");
    return result;
  } catch (e) {
    if (e instanceof StoppedError) {
      showStatus(e.message === "timeLimit" ? t("timeLimit", { s: limitSeconds }) : t("stopped"), "stopped");
      if (transport.mode === "pyodide") waitReady(true);
      return null;
    }
    showStatus(String(e.message || e), "failed");
    return { error: { type: "Error", message: String(e.message || e) } };
  } finally {
    clearTimeout(timer);
    state.busy = false;
    state.lastCallMs = Math.round(performance.now() - started);
    updateButtons();
  }
}

async function run() {
  if (!state.ready || state.busy || !state.current) return;
  save();
  clearResults();
  const r = await call("run", { exercise: state.current.id, code: code() }, "running");
  if (!r) return;
  state.lastResult = r;
  showOutput(r.stdout, r.seconds);
  showError(r.error);
  showCounters(r.launches, true);
}

async function check() {
  if (!state.ready || state.busy || !state.current) return;
  save();
  clearResults();
  const r = await call("check", { exercise: state.current.id, code: code() }, "checking");
  if (!r) return;
  state.lastResult = r;
  showOutput(r.stdout, r.seconds);
  showError(r.error);
  if (r.tests) showTests(r.tests, r.passed);
  showCounters(r.launches);
}

async function hint() {
  const ex = state.current;
  if (!ex || !state.ready) return;
  const k = state.hints[ex.id] || 0;
  const total = ex.hints ?? Infinity;
  if (k >= total) { showStatus(t("noMoreHints")); return; }
  const r = await transport.call("hint", { lang: state.lang, exercise: ex.id, index: k });
  if (r.error) { showStatus(r.error.message, "failed"); return; }
  state.hints[ex.id] = k + 1;
  const div = document.createElement("div");
  div.className = "hint";
  div.innerHTML = `<h3>${escapeHtml(t("hintOf", { k: (r.index ?? k) + 1, n: r.total ?? total }))}</h3>${renderMarkdown(r.hint)}`;
  $("hints").appendChild(div);
  if (k + 1 >= (r.total ?? total)) $("hint").disabled = true;
}

function replaceCode(text) {
  state.replacements = (state.replacements || 0) + 1;
  state.undo = { exercise: state.current.id, code: code() };
  setCode(text);
  save();
  $("undo").hidden = false;
  $("starter-changed").hidden = true;
  clearResults();
}

function reset() {
  if (!state.current || !confirm(t("confirmReset"))) return;
  replaceCode(state.current.starter);
}

async function solution() {
  if (!state.current || !confirm(t("confirmSolution"))) return;
  const r = await transport.call("solution", { lang: state.lang, exercise: state.current.id });
  if (r.error) { showStatus(r.error.message, "failed"); return; }
  replaceCode(r.code);
}

function undo() {
  if (!state.undo || state.undo.exercise !== state.current?.id) return;
  setCode(state.undo.code);
  save();
  state.undo = null;
  $("undo").hidden = true;
}

async function stop() {
  await transport.stop("stopped");
}

// ---------- memory picture ----------
// The launches come from the last Run (the exercise's demo, which the memory op replays); the program
// inputs are bounded by the chosen launch's grid.
function renderMemoryForm(selected = 0, program = [0, 0, 0]) {
  const L = state.launches;
  const launchOpts = L.map((l, i) => `<option value="${i}"${i === selected ? " selected" : ""}>${i + 1}: ${escapeHtml(l.kernel)} ${escapeHtml(programText(l.grid))}</option>`).join("");
  const grid = L[selected]?.grid || [1, 1, 1];
  const axis = (a) => `<label>${"xyz"[a]} <input type="number" name="p${a}" min="0" max="${Math.max(0, (grid[a] ?? 1) - 1)}" value="${Math.min(program[a] ?? 0, Math.max(0, (grid[a] ?? 1) - 1))}"></label>`;
  $("memory-form").innerHTML = (L.length > 1 ? `<label>${escapeHtml(t("launch"))} <select name="launch">${launchOpts}</select></label>` : "")
    + `<fieldset><legend>${escapeHtml(t("program"))}</legend>${axis(0)}${axis(1)}${axis(2)}</fieldset>`
    + `<button type="submit">${escapeHtml(t("show"))}</button>`;
  const sel = $("memory-form").elements.launch;
  if (sel) sel.onchange = () => renderMemoryForm(Number(sel.value), program);
}

async function memory(ev) {
  ev?.preventDefault?.();
  if (!state.ready || state.busy || !state.current) return;
  const panel = $("memory-panel");
  const form = $("memory-form");
  if (panel.hidden || !form.elements.p0) renderMemoryForm();
  panel.hidden = false;
  const f = form.elements;
  const program = [0, 1, 2].map((a) => Math.max(0, Number(f["p" + a].value) || 0));
  const launch = f.launch ? Number(f.launch.value) : 0;
  const r = await call("memory", { exercise: state.current.id, code: code(), program, launch }, "running");
  if (!r) return;
  state.lastMemory = r;
  if (r.error) { showError(r.error); $("memory-view").innerHTML = ""; $("traffic").innerHTML = ""; return; }
  showError(null);
  if (r.launch && (!state.launches.length || state.launches[launch]?.kernel !== r.launch.kernel)) {
    state.launches = [r.launch];
    renderMemoryForm(0, r.program || program);
  }
  const view = $("memory-view");
  view.innerHTML = "";
  const perProgram = r.launch?.tensors || {};
  const linear = linearProgram(r.program || program, r.launch?.grid || [1]);
  for (const [name, info] of Object.entries(r.tensors || {})) {
    const fig = document.createElement("figure");
    fig.className = "tensor";
    fig.dataset.tensor = name;
    const canvas = document.createElement("canvas");
    canvas.setAttribute("role", "img");
    const drawn = drawTensor(canvas, info);
    canvas.setAttribute("aria-label", `${name}: ${info.loaded?.length ?? 0} ${t("legendLoaded")}, ${info.stored?.length ?? 0} ${t("legendStored")}`);
    const pp = perProgram[name]?.per_program;
    const pc = info.program_counters || (pp && {
      masked_load_lanes: pp.masked_load_lanes?.[linear], masked_store_lanes: pp.masked_store_lanes?.[linear],
      loaded_bytes: pp.loaded_bytes?.[linear], stored_bytes: pp.stored_bytes?.[linear],
    });
    const maskedCounts = pc ? ` · ${t("loadedBytes")}: ${fmt.format(pc.loaded_bytes ?? 0)}, ${t("storedBytes")}: ${fmt.format(pc.stored_bytes ?? 0)}`
      + ` · ${t("maskedLoads")}: ${fmt.format(pc.masked_load_lanes ?? 0)}, ${t("maskedStores")}: ${fmt.format(pc.masked_store_lanes ?? 0)}` : "";
    const scale = drawn.binR > 1 || drawn.binC > 1 ? ` · 1 px = ${drawn.binR}×${drawn.binC}` : "";
    fig.innerHTML = `<figcaption><code>${escapeHtml(name)}</code> ${escapeHtml(info.dtype || "")} [${escapeHtml((info.shape || []).join("×"))}]${escapeHtml(maskedCounts)}${escapeHtml(scale)}`
      + `${drawn.outside ? ` · ${drawn.outside} outside` : ""}</figcaption>`;
    fig.prepend(canvas);
    fig.insertAdjacentHTML("beforeend", tensorTable(name, info, t, (v) => fmt.format(v)));
    view.appendChild(fig);
  }
  $("traffic").innerHTML = `<h3>${escapeHtml(t("traffic"))}</h3>` + renderValue(r.traffic);
}

// minitriton's linear program id (engine.Launch.linear_id): x slowest, z fastest.
function linearProgram(p, grid) {
  const g = [grid[0] ?? 1, grid[1] ?? 1, grid[2] ?? 1];
  return ((p[0] ?? 0) * g[1] + (p[1] ?? 0)) * g[2] + (p[2] ?? 0);
}

// A table for whatever shape the bridge gives: a list of rows, a {row: {col: v}} map, or plain values.
function renderValue(v) {
  const cell = (x) => (typeof x === "number" ? fmt.format(x) : x == null ? "—" : typeof x === "object" ? JSON.stringify(x) : String(x));
  if (v == null) return "";
  if (Array.isArray(v) && v.every((r) => r && typeof r === "object" && !Array.isArray(r))) {
    const cols = [...new Set(v.flatMap((r) => Object.keys(r)))];
    return `<table class="traffic"><thead><tr>${cols.map((c) => `<th>${escapeHtml(columnLabel(t, c))}</th>`).join("")}</tr></thead><tbody>`
      + v.map((r) => `<tr>${cols.map((c) => `<td>${escapeHtml(cell(r[c]))}</td>`).join("")}</tr>`).join("") + "</tbody></table>";
  }
  if (typeof v === "object" && !Array.isArray(v)) {
    const entries = Object.entries(v);
    if (entries.length && entries.every(([, r]) => r && typeof r === "object" && !Array.isArray(r))) {
      const cols = [...new Set(entries.flatMap(([, r]) => Object.keys(r)))];
      return `<table class="traffic"><thead><tr><th></th>${cols.map((c) => `<th>${escapeHtml(columnLabel(t, c))}</th>`).join("")}</tr></thead><tbody>`
        + entries.map(([k, r]) => `<tr><th scope="row">${escapeHtml(k === "total" ? columnLabel(t, k) : k)}</th>${cols.map((c) => `<td>${escapeHtml(cell(r[c]))}</td>`).join("")}</tr>`).join("")
        + "</tbody></table>";
    }
    return `<table class="traffic"><tbody>${entries.map(([k, x]) => `<tr><th scope="row">${escapeHtml(columnLabel(t, k))}</th><td>${
      x && typeof x === "object" ? renderValue(x) : escapeHtml(cell(x))}</td></tr>`).join("")}</tbody></table>`;
  }
  return `<pre>${escapeHtml(JSON.stringify(v, null, 1))}</pre>`;
}

// ---------- lab: run on the GPU ----------
async function gpu() {
  if (!state.ready || state.busy || !state.current) return;
  save();
  const r = await call("gpu", { exercise: state.current.id, code: code() }, "running");
  if (!r) return;
  const box = $("gpu-result");
  box.hidden = false;
  if (r.available === false) { box.innerHTML = `<p class="warn">${escapeHtml(t("gpuUnavailable", { reason: r.reason || "" }))}</p>`; return; }
  if (r.error) { showError(r.error); box.innerHTML = ""; return; }
  box.innerHTML = `<h3>${escapeHtml(t("gpu"))}</h3>` + renderValue(r);
}

// ---------- boot ----------
function showBootError(e) {
  const numpy = e.stage === "numpy";
  const url = /did not load from (\S+)/.exec(e.message)?.[1] || state.packageBaseUrl;
  const text = numpy ? t("numpyFailed", { url }) : `${t("bootFailed")}: ${e.message.split("\n")[0]}`;
  renderStages(e.stage, true);
  $("boot-text").innerHTML = `<span class="boot-error" role="alert">${escapeHtml(text)}</span>`
    + `<details><summary>…</summary><pre>${escapeHtml(e.message)}</pre></details>`;
  document.body.dataset.stage = "failed";
}

function waitReady(restarting = false) {
  state.ready = false;
  updateButtons();
  if (restarting) $("boot-text").textContent = t("restarting");
  return transport.ready.then(async (info) => {
    state.ready = true;
    state.bootError = null;
    state.timings.ready ??= Math.round(performance.now() - t0);
    state.info = info;
    if (!state.exercises.length) {
      state.exercises = (await fetchExercises(state.config)) || [];
      afterExercises();
    }
    renderStages("ready");
    document.body.dataset.ready = "1";
    updateButtons();
  }, (e) => {
    state.bootError = e;
    showBootError(e);
    updateButtons();
  });
}

function afterExercises() {
  if (!state.exercises.length) return;
  state.timings.exercisesShown ??= Math.round(performance.now() - t0);
  const wanted = decodeURIComponent(location.hash.slice(1)) || localStorage.getItem(STORE + "current");
  selectExercise(wanted, { keepCode: !!state.current });
}

async function main() {
  const config = await loadConfig();
  state.config = config;
  if (token) {
    transport = new LabTransport({ token });
    $("gpu").hidden = false;
  } else {
    if (!config) throw new Error("config.json is missing: build the site with `node web/build.mjs`");
    state.packageBaseUrl = packageBaseUrl(config);
    transport = new WorkerTransport({
      workerUrl: new URL("worker.mjs", location.href),
      init: {
        lockUrl: new URL("pyodide/pyodide-lock.json", location.href).href,
        packageBaseUrl: state.packageBaseUrl,
        wheelUrl: new URL(config.wheel.file, location.href).href,
        wheelName: config.wheel.name,
      },
    });
  }
  document.body.dataset.mode = transport.mode;
  transport.onRestart = () => waitReady(true);
  renderStatic();
  transport.start(onProgress);
  const booted = waitReady();
  try {
    const list = await fetchExercises(config);
    if (list) { state.exercises = list; afterExercises(); }
  } catch (e) {
    showStatus(String(e.message || e), "failed");
  }
  await booted;
  if ("serviceWorker" in navigator && params.get("sw") !== "0" && !token) {
    navigator.serviceWorker.register("sw.js").catch((e) => console.warn("service worker not registered:", e.message));
  }
}

// ---------- wiring ----------
$("run").onclick = run;
$("check").onclick = check;
$("hint").onclick = hint;
$("reset").onclick = reset;
$("undo").onclick = undo;
$("solution").onclick = solution;
$("stop").onclick = stop;
$("memory").onclick = memory;
$("memory-form").onsubmit = memory;
$("gpu").onclick = gpu;
$("error").onclick = (e) => {
  const a = e.target.closest(".goto-line");
  if (a) { e.preventDefault(); showErrorLine(Number(a.dataset.line)); editor.focus(); }
};
$("exercise-list").onclick = (e) => {
  const a = e.target.closest("a[data-id]");
  if (a) { e.preventDefault(); selectExercise(a.dataset.id); }
};
$("lang").onclick = async () => {
  state.lang = state.lang === "ru" ? "en" : "ru";
  localStorage.setItem(STORE + "lang", state.lang);
  t = makeT(state.lang);
  fmt = new Intl.NumberFormat(state.lang === "ru" ? "ru-RU" : "en-US");
  renderStatic();
  const list = await fetchExercises(state.config).catch(() => null);
  if (list) { state.exercises = list; selectExercise(state.current?.id, { keepCode: true }); }
};
$("erase").onclick = () => {
  if (!confirm(t("confirmErase"))) return;
  for (const k of Object.keys(localStorage)) if (k.startsWith(STORE + "code:")) localStorage.removeItem(k);
  if (state.current) { setCode(state.current.starter); }
};
addEventListener("hashchange", () => {
  const id = decodeURIComponent(location.hash.slice(1));
  if (id && id !== state.current?.id && state.exercises.some((e) => e.id === id)) selectExercise(id);
});

// For the e2e tests and for people debugging in the console: read-only views of the state.
window.__sandbox = {
  state, get code() { return code(); }, setCode, get mode() { return transport?.mode; },
  get timings() { return { ...state.timings, now: Math.round(performance.now() - t0) }; },
};
main().catch((e) => {
  state.bootError = { stage: "python", message: String(e.message || e) };
  showBootError(state.bootError);
});
