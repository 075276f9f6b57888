// The sandbox page: exercise list with progress, statement and hints, the editor, Run/Check/Hint/Reset/
// Solution/Stop/Memory (and Run on GPU in lab mode), and per exercise the last result: tests, output,
// counters, the memory picture. Python is reached through transport.js only: Pyodide in a module worker
// (default) or a local `python -m sandbox` (lab mode: ?token=...).
import { bootErrorText, fetchJson, isLabServer, packageBaseUrl, stagesHtml } from "./boot.js";
import { exerciseListHtml, hintsHtml, hintTexts } from "./course.js";
import { createEditor } from "./editor.js";
import { LANGS, makeT, numberFormat } from "./i18n.js";
import { setupExercisePicker, setupPanes, showResult } from "./layout.js";
import { escapeHtml, renderMarkdown } from "./markdown.js";
import { createMemoryPanel } from "./memory.js";
import { applyFix, countersHtml, errorHtml, gpuHtml, statusText, testsHtml } from "./results.js";
import * as store from "./storage.js";
import { testHandle } from "./testhandle.js";
import { LabTransport, StoppedError, WorkerTransport } from "./transport.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const token = params.get("token");
const limitSeconds = Number(params.get("limit") || 60);
const OUTPUT_LIMIT = 20000;
const t0 = performance.now();

const state = {
  lang: params.get("lang") || store.getLang() || "ru",
  exercises: [],
  current: null,
  ready: false,
  busy: null,          // the exercise whose call is running, or null
  checks: 0,
  undo: null,          // {exercise, code}: one undo after Reset / Solution
  views: new Map(),    // exercise id -> what its result panes show (see newView)
  timings: { exercisesShown: null, ready: null, stages: {} },
  bootError: null,
  config: null,
};
if (!LANGS.includes(state.lang)) state.lang = "ru";
let t, fmt, fmtSeconds;
function useLanguage(lang) {
  state.lang = lang;
  t = makeT(lang);
  fmt = numberFormat(lang);
  fmtSeconds = numberFormat(lang, { fractionDigits: 2 });
}
useLanguage(state.lang);
let transport = null;

// ---------- editor and autosave ----------
let saveTimer = null;
const editor = createEditor($("editor"), {
  onRun: () => run(), onCheck: () => check(), label: t("editorLabel"),
  onChange: () => { clearTimeout(saveTimer); saveTimer = setTimeout(save, 300); },
});
function save() {
  clearTimeout(saveTimer);
  if (state.current) store.saveCode(state.current.id, editor.code, state.current.starter_hash);
}
addEventListener("pagehide", save);
addEventListener("beforeunload", save);

const panes = setupPanes({ layout: $("layout"), work: $("work"), results: $("results"), columns: $("split-columns"),
  task: $("task"), taskDivider: $("split-task") });
const picker = setupExercisePicker({ nav: $("exercises"), button: $("ex-picker") });

// The exercise list in the page's language: pre-rendered by the build when it is there (shown before
// Python is up), else from Python.
async function fetchExercises({ fromPython = false } = {}) {
  if (!fromPython && state.config?.exercises?.includes(state.lang)) {
    const data = await fetchJson(`exercises.${state.lang}.json`);
    if (data?.exercises) return data.exercises;
  }
  if (!state.ready) return null;
  const data = await transport.call("exercises", { lang: state.lang });
  return data?.exercises ?? null;
}

// ---------- boot progress ----------
function renderStages(current, failed) {
  if (document.body.dataset.mode === "lab") { $("stages").innerHTML = ""; if (!failed) $("boot-text").textContent = t("stage.lab"); return; }
  $("stages").innerHTML = stagesHtml(current, failed, state.timings.stages, t, fmtSeconds);
  if (!failed) $("boot-text").textContent = current === "ready" ? "" : t("loadingNote");
}
function onProgress({ stage }) {
  state.timings.stages[stage] = Math.round(performance.now() - t0);
  document.body.dataset.stage = stage;
  renderStages(stage);
}
function showBootError(e) {
  renderStages(e.stage, true);
  $("boot-text").innerHTML = `<span class="boot-error" role="alert">${escapeHtml(bootErrorText(e, t, state.packageBaseUrl))}</span>`
    + (e.message ? `<details><summary>…</summary><pre>${escapeHtml(e.message)}</pre></details>` : "");
  document.body.dataset.stage = "failed";
}

// ---------- static text ----------
function renderStatic() {
  document.documentElement.lang = state.lang;
  document.title = t("title");
  const text = {
    title: "title", lang: "lang", "ex-heading": "exercises", check: "check", reset: "reset", undo: "undoReset",
    solution: "solution", stop: "stop", memory: "memory", gpu: "gpu", "tests-heading": "tests",
    "output-heading": "output", "counters-heading": "counters",
    "saved-note": "savedLocally", erase: "eraseAll", "emulator-note": "emulatorNote", "editor-note": "editorNote",
    "starter-changed": "starterChanged",
  };
  for (const [id, key] of Object.entries(text)) $(id).textContent = t(key);
  $("run").textContent = `${t("run")} (${t("shortcutRun")})`;
  $("run").title = t("shortcutRun");
  $("check").title = t("shortcutCheck");
  $("split-columns").setAttribute("aria-label", t("splitColumns"));
  $("split-task").setAttribute("aria-label", t("splitTask"));
  editor.setLabel(t("editorLabel"));
  const mode = document.body.dataset.mode;
  $("mode").textContent = mode === "lab" ? t("modeLab") : mode === "pyodide" ? t("modePyodide") : "";
  if (state.bootError) showBootError(state.bootError);
  else renderStages(document.body.dataset.stage || "python");
}

// ---------- exercises, statement, hints, progress ----------
function renderExerciseList() {
  const solved = store.solvedIds();
  $("exercise-list").innerHTML = exerciseListHtml(state.exercises, state.current?.id, solved, t);
  const k = state.exercises.filter((ex) => solved.has(ex.id)).length, n = state.exercises.length;
  $("progress").textContent = n ? t("progress", { k, n }) : "";
  const i = state.exercises.indexOf(state.current);
  picker.label(i < 0 ? t("exercises") : t("exercisePicker", { i: i + 1, n, title: state.current.title }));
}

function renderHints(scrollToLast = false) {
  const ex = state.current, texts = hintTexts(ex);
  const k = ex ? Math.min(store.hintsShown(ex.id), texts.length) : 0;
  $("hints").innerHTML = hintsHtml(texts, k, t);
  $("hint").textContent = k ? t("hintProgress", { k, n: texts.length }) : t("hint");
  $("hint").disabled = !ex || k >= texts.length;
  if (scrollToLast && k) $("hints").lastElementChild.scrollIntoView({ block: "nearest" });
}

function hint() {
  const ex = state.current;
  if (!ex) return;
  const k = store.hintsShown(ex.id), n = hintTexts(ex).length;
  if (k >= n) { showNote("noMoreHints"); return; }
  store.setHintsShown(ex.id, k + 1);
  renderHints(true);
}

function selectExercise(id, { keepCode = false } = {}) {
  const ex = state.exercises.find((e) => e.id === id) || state.exercises[0];
  if (!ex) return;
  const switching = !state.current || state.current.id !== ex.id;
  if (switching && state.current) save();
  state.current = ex;
  store.setCurrent(ex.id);
  if (location.hash.slice(1) !== encodeURIComponent(ex.id)) history.replaceState(null, "", "#" + encodeURIComponent(ex.id));
  $("statement").innerHTML = `<h2>${escapeHtml(ex.title)}</h2>` + renderMarkdown(ex.statement);
  renderHints();
  if (switching || !keepCode) {
    const saved = store.loadCode(ex.id);
    editor.setCode(saved ? saved.code : ex.starter);
    $("starter-changed").hidden = !(store.starterChanged(saved, ex) && saved.code !== ex.starter);
    state.undo = null;
    $("undo").hidden = true;
    if (switching) $("task").scrollTop = 0;
    renderResults({ highlight: true });
    refreshLanguage(state.views.get(ex.id));
  }
  renderExerciseList();
  updateButtons();
}

// A new list (first load, a language switch, the lab server's own list): the same exercise stays open with
// the student's code; code that is still the old language's starter becomes the new language's starter.
function showExercises(list) {
  const previous = new Map(state.exercises.map((e) => [e.id, e]));
  state.exercises = list;
  if (!list.length) return;
  state.timings.exercisesShown ??= Math.round(performance.now() - t0);
  if (!state.current) {
    const wanted = decodeURIComponent(location.hash.slice(1)) || store.getCurrent();
    selectExercise(wanted);
    return;
  }
  const old = previous.get(state.current.id);
  selectExercise(state.current.id, { keepCode: true });
  if (old && old.starter !== state.current.starter && editor.code === old.starter) {
    editor.setCode(state.current.starter);
    save();
  }
}

// ---------- results: one view per exercise ----------
// {exercise, op, code, lang, result, status: {key, vars, cls}, checkNo, gpu, memory}: a call's result stays
// with the exercise it ran for, whichever exercise is on screen when it returns.
function viewFor(id) {
  if (!state.views.has(id)) state.views.set(id, { exercise: id, op: null, code: null, lang: state.lang, result: null, status: null });
  return state.views.get(id);
}

function renderStatus() {
  const el = $("run-status");
  if (state.busy && state.busy !== state.current?.id) {
    const title = state.exercises.find((e) => e.id === state.busy)?.title ?? state.busy;
    el.textContent = t("busyElsewhere", { title });
    el.className = "run-status busy";
    return;
  }
  const s = state.current && state.views.get(state.current.id)?.status;
  el.textContent = statusText(s, t, fmtSeconds);
  el.className = "run-status " + (s?.cls || "");
}
function showNote(key, cls = "", vars = {}) {
  if (!state.current) return;
  viewFor(state.current.id).status = { key, cls, vars };
  renderStatus();
}

function renderResults({ highlight = false } = {}) {
  const v = state.current ? state.views.get(state.current.id) : null;
  const r = v?.result;
  const box = $("error");
  const err = r?.error;
  box.hidden = !err;
  box.innerHTML = err ? errorHtml(err, t, { code: v.code === editor.code ? v.code : null }) : "";
  if (highlight) editor.showErrorLine(err && v.code === editor.code ? err.line : null, err?.diagnostic);
  if (r?.tests) {
    const ok = r.tests.filter((x) => x.passed).length, total = r.tests.length;
    const all = r.passed && ok === total;
    $("tests").innerHTML = testsHtml(r.tests, t, { code: v.code === editor.code ? v.code : null });
    $("summary").textContent = t(all ? "passedAll" : "passedSome", { n: v.checkNo, p: ok, t: total });
    $("summary").className = "summary " + (all ? "pass" : "fail");
  } else {
    $("tests").innerHTML = "";
    $("summary").textContent = "";
    $("summary").className = "summary";
  }
  const out = r ? String(r.stdout ?? "") : "";
  $("output").textContent = !r ? "" : out.length > OUTPUT_LIMIT ? out.slice(0, OUTPUT_LIMIT) + "\n" + t("outputCut", { n: fmt.format(OUTPUT_LIMIT) })
    : out || t("noOutput");
  $("counters").innerHTML = r ? countersHtml(r.launches, t, fmt, { op: v.op, testNames: testNamesOf(state.current) }) : "";
  renderGpu(v);
  memoryPanel.render(v);
  $("results").dataset.lang = v?.lang ?? "";
  renderStatus();
}

// Test id -> its title in the page's language (launch records name the test that made them by id).
function testNamesOf(ex) {
  return Object.fromEntries((ex?.test_ids || []).map((id, i) => [id, ex.tests[i]]));
}

function renderGpu(v) {
  $("gpu-result").hidden = !v?.gpu;
  $("gpu-result").innerHTML = v?.gpu ? gpuHtml(v.gpu, t, fmt) : "";
}

// Results already on screen that Python wrote in the other language are asked for again, in this one.
async function refreshLanguage(v) {
  if (!v?.result || v.lang === state.lang || !state.ready || state.busy || !["run", "check"].includes(v.op)) return;
  const status = v.status;
  const r = await call(v.op, { exercise: v.exercise, code: v.code }, v, "rerunning");
  v.status = status;
  if (r && !r.error?.key) { v.result = r; v.lang = state.lang; }
  if (state.current?.id === v.exercise) renderResults();
  else renderStatus();
}

// ---------- calls to Python ----------
function updateButtons() {
  const can = state.ready && !state.busy && !!state.current;
  for (const id of ["run", "check", "memory", "gpu"]) $(id).disabled = !can;
  $("solution").disabled = !state.current;
  $("reset").disabled = !state.current;
  $("stop").hidden = !state.busy;
  $("run").hidden = !!state.busy;
  document.body.dataset.busy = state.busy ? "1" : "";
}

// Whether a Run/Check can start now; if not, the status line says why.
function canCall() {
  if (!state.current) return false;
  if (state.busy) return false;
  if (!state.ready) { showNote(state.bootError ? "notReadyFailed" : "notReadyYet", "failed"); return false; }
  return true;
}

// One call with a wall-clock limit; Stop and the limit both end it through the transport. The status and
// the result belong to `view` (its exercise), not to whatever is on screen when the answer comes.
async function call(op, request, view, statusKey) {
  state.busy = view.exercise;
  view.status = { key: statusKey, cls: "busy" };
  updateButtons();
  renderStatus();
  const started = performance.now();
  const timer = setTimeout(() => transport.stop("timeLimit"), limitSeconds * 1000);
  try {
    const result = await transport.call(op, { lang: state.lang, ...request });
    const interrupted = result?.error?.type === "KeyboardInterrupt";   // Stop through the interrupt buffer
    view.status = interrupted ? { key: "stopped", cls: "stopped" }
      : result?.error?.key ? { error: result.error, cls: "failed" }
        : { key: "seconds", vars: { s: (performance.now() - started) / 1000 }, cls: "" };
    return result;
  } catch (e) {
    if (e instanceof StoppedError) {
      view.status = e.message === "timeLimit" ? { key: "timeLimit", vars: { s: limitSeconds }, cls: "stopped" } : { key: "stopped", cls: "stopped" };
      if (transport.mode === "pyodide") waitReady(true);
      return null;
    }
    const error = { type: "WorkerError", key: "workerCrashed", vars: { detail: String(e.message || e) }, message: String(e.message || e) };
    view.status = { error, cls: "failed" };
    return { error };
  } finally {
    clearTimeout(timer);
    state.busy = null;
    updateButtons();
    renderStatus();
  }
}

async function runOp(op) {
  if (!canCall()) return;
  save();
  const ex = state.current, src = editor.code, lang = state.lang;
  const v = viewFor(ex.id);
  Object.assign(v, { op, code: src, lang, result: null, gpu: null, memory: null });
  renderResults({ highlight: true });
  const r = await call(op, { exercise: ex.id, code: src }, v, op === "check" ? "checking" : "running");
  if (!r) { if (state.current?.id === ex.id) renderStatus(); return; }
  v.result = r;
  v.lang = lang;                      // the language it was asked in (the page may have switched since)
  state.lastResult = r;
  if (op === "check" && r.tests) {
    v.checkNo = ++state.checks;
    if (r.passed && r.tests.every((x) => x.passed)) { store.markSolved(ex.id); renderExerciseList(); }
  }
  if (state.current?.id === ex.id) {
    renderResults({ highlight: true });
    showResult(r.error ? $("error") : r.tests ? $("tests-heading") : $("output-heading"));
    refreshLanguage(v);
  }
}
const run = () => runOp("run"), check = () => runOp("check");

async function gpu() {
  if (!canCall()) return;
  save();
  const ex = state.current, v = viewFor(ex.id);
  const r = await call("gpu", { exercise: ex.id, code: editor.code }, v, "running");
  if (!r) return;
  v.gpu = r;
  if (state.current?.id === ex.id) renderGpu(v);
}

// ---------- reset, solution, undo, erase ----------
function replaceCode(text) {
  state.replacements = (state.replacements || 0) + 1;
  state.undo = { exercise: state.current.id, code: editor.code };
  editor.setCode(text);
  save();
  $("undo").hidden = false;
  $("starter-changed").hidden = true;
}

function reset() {
  if (!state.current || !confirm(t("confirmReset"))) return;
  replaceCode(state.current.starter);
}

// The reference solution: from the build's solutions file when there is one (no Python needed), else Python.
async function solution() {
  const ex = state.current;
  if (!ex || !confirm(t("confirmSolution"))) return;
  let text = (await fetchJson(`solutions.${state.lang}.json`))?.solutions?.[ex.id];
  if (text == null && state.ready && !state.busy) text = (await transport.call("solution", { lang: state.lang, exercise: ex.id }))?.code;
  if (text == null) {
    const detail = bootErrorText(state.bootError || { key: "notReadyYet" }, t, state.packageBaseUrl);
    return showNote("solutionUnavailable", "failed", { detail });
  }
  if (state.current?.id === ex.id) replaceCode(text);
}

function undo() {
  if (!state.undo || state.undo.exercise !== state.current?.id) return;
  editor.setCode(state.undo.code);
  save();
  state.undo = null;
  $("undo").hidden = true;
}

function eraseAll() {
  if (!confirm(t("confirmErase"))) return;
  store.eraseAll();
  if (state.current) editor.setCode(state.current.starter);
  renderExerciseList();
  renderHints();
}

// ---------- language ----------
async function switchLanguage() {
  useLanguage(state.lang === "ru" ? "en" : "ru");
  store.setPref("lang", state.lang);
  renderStatic();
  renderExerciseList();
  renderResults();
  const list = await fetchExercises();
  if (list) showExercises(list);
  refreshLanguage(state.current && state.views.get(state.current.id));
}

// ---------- boot ----------
function waitReady(restarting = false) {
  state.ready = false;
  updateButtons();
  if (restarting) $("boot-text").textContent = t("restarting");
  return transport.ready.then(async (info) => {
    state.ready = true;
    state.bootError = null;
    state.timings.ready ??= Math.round(performance.now() - t0);
    state.info = info;
    if (transport.mode === "lab" || !state.exercises.length) {
      const list = await fetchExercises({ fromPython: true }).catch(() => null);
      if (list) showExercises(list);
    }
    renderStages("ready");
    document.body.dataset.ready = "1";
    updateButtons();
  }, failBoot);
}

function failBoot(e) {
  state.bootError = e;
  showBootError(e);
  updateButtons();
}

async function main() {
  const config = await fetchJson("config.json", { cache: "no-cache" });
  const lab = !token && isLabServer(config);
  state.config = config;
  document.body.dataset.mode = token || lab ? "lab" : "pyodide";
  renderStatic();
  const list = await fetchExercises();
  if (list) showExercises(list);
  if (lab) return failBoot({ stage: "token", key: "tokenMissing" });
  if (token) {
    transport = new LabTransport({ token });
    $("gpu").hidden = false;
  } else {
    if (!config) return failBoot({ stage: "python", key: "configMissing" });
    state.packageBaseUrl = packageBaseUrl(config, params);
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
  transport.onRestart = () => waitReady(true);
  transport.start(onProgress);
  await waitReady();
  if ("serviceWorker" in navigator && params.get("sw") !== "0" && !token) {
    navigator.serviceWorker.register("sw.js").catch((e) => console.warn("service worker not registered:", e.message));
  }
}

// ---------- the memory picture ----------
const memoryPanel = createMemoryPanel({
  root: $("memory-panel"),
  t: () => t, fmt: () => fmt,
  call: (op, request, view) => call(op, request, view, "running"),
  current: () => state.current && viewFor(state.current.id),
  canCall,
  runFirst: () => run(),
  testNames: () => testNamesOf(state.current),
});

// ---------- wiring ----------
const actions = { run, check, hint, reset, undo, solution, gpu, lang: switchLanguage, erase: eraseAll,
  stop: () => transport?.stop("stopped"), memory: () => memoryPanel.open() };
for (const [id, action] of Object.entries(actions)) $(id).onclick = action;
$("error").onclick = $("tests").onclick = (e) => {
  const a = e.target.closest(".goto-line"), fix = e.target.closest(".apply-fix");
  if (a) { e.preventDefault(); editor.showErrorLine(Number(a.dataset.line)); editor.focus(); }
  else if (fix) applyFix(viewFor(state.current.id), editor, runOp, fix.dataset.test ?? null);
};
$("exercise-list").onclick = (e) => {
  const a = e.target.closest("a[data-id]");
  if (a) { e.preventDefault(); selectExercise(a.dataset.id); picker.close(); }
};
addEventListener("hashchange", () => {
  const id = decodeURIComponent(location.hash.slice(1));
  if (id && id !== state.current?.id && state.exercises.some((e) => e.id === id)) selectExercise(id);
});

// For the e2e tests and for people debugging in the console: read-only views of the state.
window.__sandbox = testHandle({ state, editor, panes, memoryPanel, viewFor, t0, mode: () => transport?.mode });
main().catch((e) => failBoot({ stage: "python", message: String(e.message || e) }));
