// The memory picture of a script's launches as one page that needs no server (`python -m minitriton run
// --picture`, minitriton/picture/page.py): the data is JSON inside the page, and the sandbox's own memory panel
// (memory.js) draws it, with the launch picker over every recorded launch and a data source that reads the
// embedded pictures instead of asking Python. Beside it, the kernel's source: the lines where the chosen
// program loads, stores and updates memory are marked, the chosen step's line highlighted.
// Built into minitriton/picture/viewer.js by web/build.mjs.
import { makeT, numberFormat } from "./i18n.js";
import { escapeHtml } from "./markdown.js";
import { createMemoryPanel } from "./memory.js";

const data = JSON.parse(document.getElementById("picture-data").textContent);
const lang = data.lang === "ru" ? "ru" : "en";
const t = makeT(lang);
const fmt = numberFormat(lang);
const main = document.getElementById("picture");

const notes = [];
if (data.left_out?.launches) {
  notes.push(`<p class="note" id="picture-left-out">${escapeHtml(t("pictureLeftOut",
    { k: fmt.format(data.pictures.length), n: fmt.format(data.left_out.launches) }))}</p>`);
}
if (data.error) {
  notes.push(`<div class="error" id="picture-error"><p>${escapeHtml(t("pictureFailed"))}</p>`
    + `<pre>${escapeHtml(`${data.error.type}: ${data.error.message}`)}</pre></div>`);
}
main.innerHTML = `<h1>${escapeHtml(t("memoryTitle") + (data.title ? `: ${data.title}` : ""))}</h1>${notes.join("")}`
  + `<div class="picture-body"><section id="memory-panel" class="memory" aria-live="polite"></section>`
  + `<aside id="kernel-source" hidden></aside></div>`;
const root = document.getElementById("memory-panel");
const sourceBox = document.getElementById("kernel-source");

// The panel's view of "the last run": every recorded launch, the first one shown.
const view = { op: "run", exercise: null, code: null, result: { launches: data.launches } };
const panel = createMemoryPanel({
  root,
  t: () => t, fmt: () => fmt,
  call: async (op, request) => data.pictures[request.launch],
  current: () => view,
  canCall: () => true,
  runFirst: async () => {},
  testNames: () => ({}),
  scroll: false,
});

// The kernel's lines, redrawn when the panel shows another launch, program or step.
let shownSource = null;
function showSource() {
  const m = view.memory, d = m?.data, src = d?.launch?.source;
  sourceBox.hidden = !src?.lines?.length;
  if (sourceBox.hidden) return;
  if (shownSource !== src) {
    shownSource = src;
    sourceBox.innerHTML = `<h2>${escapeHtml(t("pictureSource", { kernel: d.launch.kernel, file: src.file }))}</h2>`
      + `<p class="note">${escapeHtml(t("pictureSourceNote"))}</p><pre class="kernel-lines">`
      + src.lines.map((text, i) => `<span class="src-line" data-line="${src.first_line + i}"><span class="src-no">`
        + `${src.first_line + i}</span>${escapeHtml(text)}</span>`).join("\n") + "</pre>";
  }
  const steps = d.programs[m.program]?.steps ?? [];
  const used = new Set(steps.map((s) => s.line));
  const current = steps[m.step]?.line;
  for (const el of sourceBox.querySelectorAll(".src-line")) {
    const line = Number(el.dataset.line);
    el.classList.toggle("access", used.has(line));
    el.classList.toggle("current", line === current);
  }
}
new MutationObserver(showSource).observe(root, { attributes: true, attributeFilter: ["data-program", "data-step"], childList: true });

if (data.launches.length) panel.open();
else { view.memory = { empty: true }; panel.render(view); }
// where element `offset` of a tensor is drawn: the tests hover there, as the sandbox page's tests do
window.__picture = { cell: (name, offset) => panel.cellAt(name, offset) };
