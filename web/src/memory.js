// The memory panel (placeholder port of the previous picture: one program of one launch of the demo).
import { escapeHtml } from "./markdown.js";
import { COLORS, drawTensor, tensorTable } from "./memview.js";
import { programText, tableHtml } from "./results.js";

export function createMemoryPanel({ root, t, fmt, call, current, code, canCall, onError }) {
  const form = root.querySelector("#memory-form");
  const view = root.querySelector("#memory-view");
  const traffic = root.querySelector("#traffic");
  const legend = root.querySelector("#memory-legend");

  function renderForm(v, selected = 0, program = [0, 0, 0]) {
    const L = v.result?.launches || [];
    const T = t();
    const launchOpts = L.map((l, i) => `<option value="${i}"${i === selected ? " selected" : ""}>${i + 1}: ${escapeHtml(l.kernel)} ${escapeHtml(programText(l.grid))}</option>`).join("");
    const grid = L[selected]?.grid || [1, 1, 1];
    const axis = (a) => `<label>${"xyz"[a]} <input type="number" name="p${a}" min="0" max="${Math.max(0, (grid[a] ?? 1) - 1)}" value="${Math.min(program[a] ?? 0, Math.max(0, (grid[a] ?? 1) - 1))}"></label>`;
    form.innerHTML = (L.length > 1 ? `<label>${escapeHtml(T("launch"))} <select name="launch">${launchOpts}</select></label>` : "")
      + `<fieldset><legend>${escapeHtml(T("program"))}</legend>${axis(0)}${axis(1)}${axis(2)}</fieldset>`
      + `<button type="submit">${escapeHtml(T("show"))}</button>`;
  }

  async function open(ev) {
    ev?.preventDefault?.();
    const v = current();
    if (!v || !canCall()) return;
    if (root.hidden || !form.elements.p0) renderForm(v);
    root.hidden = false;
    const f = form.elements;
    const program = [0, 1, 2].map((a) => Math.max(0, Number(f["p" + a].value) || 0));
    const launch = f.launch ? Number(f.launch.value) : 0;
    const r = await call("memory", { exercise: v.exercise, code: code(), program, launch }, v);
    if (!r) return;
    v.memory = r;
    if (r.error) { v.result = { ...(v.result || {}), error: r.error }; onError(); return; }
    render(v);
  }
  form.onsubmit = open;

  function render(v) {
    const r = v?.memory;
    root.hidden = !r || !!r.error;
    if (!r || r.error) return;
    const T = t(), F = fmt();
    legend.innerHTML = [["loaded", "legendLoaded"], ["stored", "legendStored"], ["both", "legendBoth"], ["masked", "legendMasked"], ["none", "legendNone"]]
      .map(([c, k]) => `<span><i style="background:${COLORS[c]}"></i>${escapeHtml(T(k))}</span>`).join("");
    if (!form.elements.p0) renderForm(v, r.launch_index ?? 0, r.program);
    view.innerHTML = "";
    for (const [name, info] of Object.entries(r.tensors || {})) {
      const fig = document.createElement("figure");
      fig.className = "tensor";
      fig.dataset.tensor = name;
      const canvas = document.createElement("canvas");
      canvas.setAttribute("role", "img");
      const drawn = drawTensor(canvas, info);
      canvas.setAttribute("aria-label", `${name}: ${info.loaded?.length ?? 0} ${T("legendLoaded")}, ${info.stored?.length ?? 0} ${T("legendStored")}`);
      fig.innerHTML = `<figcaption><code>${escapeHtml(name)}</code> ${escapeHtml(info.dtype || "")} [${escapeHtml((info.shape || []).join("×"))}]`
        + `${drawn.binR > 1 || drawn.binC > 1 ? " · " + escapeHtml(T("scale", { r: drawn.binR, c: drawn.binC })) : ""}`
        + `${drawn.outside ? " · " + escapeHtml(T("outside", { n: drawn.outside })) : ""}</figcaption>`;
      fig.prepend(canvas);
      fig.insertAdjacentHTML("beforeend", tensorTable(name, info, T, (x) => F.format(x)));
      view.appendChild(fig);
    }
    traffic.innerHTML = `<h3>${escapeHtml(T("traffic"))}</h3>` + tableHtml(r.traffic, T, F);
  }

  return { open, render };
}
