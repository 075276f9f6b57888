// The memory picture of a script's launches as one page that needs no server (`python -m minitriton run
// --picture`, minitriton/picture/page.py): the data is JSON inside the page, and the sandbox's own memory panel
// (memory.js) draws it, with the launch picker over every recorded launch and a data source that reads the
// embedded pictures instead of asking Python. Built into minitriton/picture/viewer.js by web/build.mjs.
import { locale, makeT } from "./i18n.js";
import { escapeHtml } from "./markdown.js";
import { createMemoryPanel } from "./memory.js";

const data = JSON.parse(document.getElementById("picture-data").textContent);
const lang = data.lang === "ru" ? "ru" : "en";
const t = makeT(lang);
const fmt = new Intl.NumberFormat(locale(lang));
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
  + `<section id="memory-panel" class="memory" aria-live="polite"></section>`;

// The panel's view of "the last run": every recorded launch, the first one shown.
const view = { op: "run", exercise: null, code: null, result: { launches: data.launches } };
const panel = createMemoryPanel({
  root: document.getElementById("memory-panel"),
  t: () => t, fmt: () => fmt,
  call: async (op, request) => data.pictures[request.launch],
  current: () => view,
  canCall: () => true,
  runFirst: async () => {},
  testNames: () => ({}),
});
if (data.launches.length) panel.open();
else { view.memory = { empty: true }; panel.render(view); }
// where element `offset` of a tensor is drawn: the tests hover there, as the sandbox page's tests do
window.__picture = { cell: (name, offset) => panel.cellAt(name, offset) };
