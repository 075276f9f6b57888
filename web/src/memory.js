// The memory panel: any launch of the exercise's last Run or Check, every program of it traced once by the
// bridge ("memory" op), then scrubbed here without asking Python again: a launch picker, a program slider
// (arrow keys, or the buttons beside it), per tensor a picture (memview.js) with axes and block borders, a
// tooltip on hover (index, offset, value when the bridge sends values, which programs loaded and stored the
// element), the chosen program's offsets as a table, and the launch's traffic against the ideal.
//
// The bridge's data per program: `tensors[name]` = {loaded, stored, atomic, masked?} runs of element offsets
// ([start, length, ...]; masked-off lanes may point outside the tensor), `counters[name]`, and optionally
// `steps` = [{line, kind, tensor, offsets, masked}] (one per load/store the program made, in order: a loop's
// iterations one after another), which adds a step slider. `values[name]` (flat, optional) feeds the tooltip.
// A launch that failed (`launch.error` = {type, kind, program, line}) has its programs up to the failing one,
// which is marked `failed` and has `outside` runs (per tensor and in its failing step): the lanes that raised
// the error, drawn where they point in their own colour. The panel opens on the first failed launch and on
// its failing program.
import { escapeHtml } from "./markdown.js";
import * as mv from "./memview.js";
import { gridText, programText, tableHtml } from "./results.js";

const MAX_LISTED = 6;

const pad = (p) => [...p, 0, 0, 0].slice(0, 3);

// A program id trimmed to the grid's dimensions, as the messages write it.
function pidText(p, grid) {
  const dims = grid[2] > 1 ? 3 : grid[1] > 1 ? 2 : 1;
  return programText(p.slice(0, dims));
}

export function createMemoryPanel({ root, t, fmt, call, current, canCall, runFirst, testNames, scroll = true }) {
  const $ = (sel) => root.querySelector(sel);
  let tip = null;

  async function open() {
    let v = current();
    if (!v || !canCall()) return;
    if (!v.result?.launches?.length || !["run", "check"].includes(v.op)) {
      await runFirst();
      v = current();
      if (!v?.result?.launches?.length) { v && (v.memory = { empty: true }); render(v); return; }
    }
    const failed = v.result.launches.findIndex((L) => L.error);
    await load(v, v.memory?.launch ?? Math.max(0, failed));
  }

  async function load(v, k) {
    const L = v.result.launches[k];
    const r = await call("memory", { exercise: v.exercise, code: v.code, source: v.op, launch: k, grid: L.grid }, v);
    if (!r) return;
    v.memory = r.error ? { error: r.error, launch: k }
      : { data: r, launch: k, program: Math.max(0, r.programs.findIndex((p) => p.failed)), step: -1 };
    if (current() === v) render(v);
    if (scroll) root.scrollIntoView({ block: "start" });   // the page's panel is below the editor
  }

  function render(v) {
    const m = v?.memory;
    root.hidden = !m;
    if (!m) return;
    const T = t(), F = fmt();
    const launches = v.result?.launches ?? [];
    const head = `<h2>${escapeHtml(T("memoryTitle"))}</h2>`;
    if (m.empty) { root.innerHTML = head + `<p class="note">${escapeHtml(T("memNoLaunches"))}</p>`; return; }
    const names = testNames();
    const options = launches.map((L, i) => `<option value="${i}"${i === m.launch ? " selected" : ""}>`
      + escapeHtml(T("launchCaption", { i: i + 1, kernel: L.kernel, grid: gridText(L.grid) })
        + (L.test ? ` · ${T("inTest", { name: names[L.test] ?? L.test })}` : "")) + "</option>").join("");
    const picker = `<label class="mem-launch">${escapeHtml(T("memLaunch"))} <select id="mem-launch">${options}</select></label>`;
    if (m.error) {
      root.innerHTML = head + picker + `<p class="error">${escapeHtml(m.error.message || m.error.type)}</p>`;
      wire(v);
      return;
    }
    const d = m.data, n = d.programs.length;
    const legend = [["loaded", "legendLoaded"], ["stored", "legendStored"], ["both", "legendBoth"], ["masked", "legendMasked"],
      ["other", "legendOther"], ["none", "legendNone"], ...(d.programs.some((p) => p.failed && Object.values(p.tensors).some((a) => a.outside?.length)) ? [["failed", "legendFailed"]] : [])]
      .map(([c, k]) => `<span data-color="${c}"><i style="background:${mv.COLORS[c]}"></i>${escapeHtml(T(k))}</span>`).join("")
      + `<span data-color="ghost"><i class="ghost"></i>${escapeHtml(T("legendGhost"))}</span>`;
    const err = d.launch.error, [, gy, gz] = d.launch.grid, [ex, ey, ez] = pad(err?.program ?? []);
    const ran = err ? (ex * gy + ey) * gz + ez + 1 : d.launch.num_programs;   // programs up to the failing one
    const traced = (err ? `<p class="note" id="mem-failed">${escapeHtml(T("memFailed", { type: err.type, p: pidText(pad(err.program), d.launch.grid), line: err.line ?? "?" }))}</p>` : "")
      + (d.traced < ran ? `<p class="note">${escapeHtml(T("memTraced", { k: fmt().format(d.traced), n: F.format(ran) }))}</p>` : "");
    root.innerHTML = head + picker
      + `<div class="mem-program"><span id="mem-program-label">${escapeHtml(T("program"))}</span>`
      + `<button type="button" id="mem-prev" aria-label="${escapeHtml(T("memPrev"))}">◀</button>`
      + `<input type="range" id="mem-program" min="0" max="${Math.max(0, n - 1)}" step="1" value="${m.program}" aria-labelledby="mem-program-label">`
      + `<button type="button" id="mem-next" aria-label="${escapeHtml(T("memNext"))}">▶</button>`
      + `<output id="mem-program-text" for="mem-program"></output></div>`
      + `<div class="mem-program" id="mem-steps" hidden><span id="mem-step-label">${escapeHtml(T("memStep"))}</span>`
      + `<input type="range" id="mem-step" min="-1" max="0" step="1" value="-1" aria-labelledby="mem-step-label">`
      + `<output id="mem-step-text" for="mem-step"></output></div>`
      + traced + `<div class="legend">${legend}</div><div id="mem-figures"></div>`
      + `<div class="mem-tip" role="tooltip" hidden></div><div id="mem-table"></div>`
      + `<h3>${escapeHtml(T("traffic"))}</h3>${tableHtml(d.traffic, T, F)}`;
    tip = $(".mem-tip");
    const figures = $("#mem-figures");
    m.layouts = {};
    for (const [name, info] of Object.entries(d.tensors)) {
      const width = Math.max(120, root.clientWidth - 48 - (info.shape.length >= 3 ? 96 : 0));
      const numel = info.shape.reduce((a, b) => a * b, 1);
      const masked = d.programs.flatMap((p) => [p.tensors[name]?.masked, p.tensors[name]?.outside,
        ...(p.steps || []).filter((st) => st.tensor === name).flatMap((st) => [st.masked, st.outside])]);
      const L = mv.layout(info.shape, width, mv.pointsOutside(masked, numel) ? mv.GHOST_ROWS : 0);
      m.layouts[name] = L;
      const fig = document.createElement("figure");
      fig.className = "tensor";
      fig.dataset.tensor = name;
      fig.dataset.blocks = String(L.blocks);
      const ticks = mv.axes(L, (b) => `[${mv.indexOf(info.shape.slice(0, -2), b).join(", ")}, :, :]`);
      fig.innerHTML = `<figcaption></figcaption><div class="mem-canvas" style="width:${L.width}px">`
        + ticks.map((k) => `<span class="tick tick-${k.kind}" style="left:${k.x}px;top:${k.y}px">${escapeHtml(k.text)}</span>`).join("")
        + `<canvas role="img"></canvas></div>`;
      figures.appendChild(fig);
      const canvas = fig.querySelector("canvas");
      canvas.addEventListener("mousemove", (e) => hover(v, name, canvas, e));
      canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
    }
    wire(v);
    drawProgram(v);
  }

  function wire(v) {
    const sel = $("#mem-launch");
    if (sel) sel.onchange = () => { if (canCall()) load(v, Number(sel.value)); else sel.value = String(v.memory.launch); };
    const range = $("#mem-program");
    if (!range) return;
    const go = (p) => {
      v.memory.program = Math.max(0, Math.min(v.memory.data.programs.length - 1, p));
      range.value = String(v.memory.program);
      drawProgram(v);
    };
    range.oninput = () => go(Number(range.value));
    $("#mem-prev").onclick = () => go(v.memory.program - 1);
    $("#mem-next").onclick = () => go(v.memory.program + 1);
    $("#mem-step").oninput = () => { v.memory.step = Number($("#mem-step").value); drawProgram(v, false); };
  }

  // What the chosen program (and step, -1 = all of them) did to tensor `name`.
  function accessesOf(prog, name, step) {
    if (!prog) return {};
    if (step < 0 || !prog.steps?.length) return prog.tensors[name] ?? {};
    const st = prog.steps[step];
    if (!st || st.tensor !== name) return {};
    return { [{ load: "loaded", store: "stored", atomic: "atomic" }[st.kind]]: st.offsets, masked: st.masked, outside: st.outside };
  }

  // The chosen program's picture of every tensor: recoloured in place, no call to Python.
  function drawProgram(v, programChanged = true) {
    const T = t(), F = fmt(), m = v.memory, d = m.data;
    const prog = d.programs[m.program];
    const steps = prog?.steps ?? [];
    if (programChanged) m.step = -1;
    $("#mem-steps").hidden = !steps.length;
    $("#mem-step").max = String(Math.max(0, steps.length - 1));
    $("#mem-step").value = String(m.step);
    const st = steps[m.step];
    $("#mem-step-text").textContent = !st ? T("memAllSteps")
      : T("memStepOf", { i: m.step + 1, n: steps.length, line: st.line ?? "?", op: `tl.${st.kind}`, tensor: st.tensor });
    root.dataset.step = String(m.step);
    const grid = d.launch.grid;
    const text = prog ? T("memProgramOf", { p: pidText(prog.program, grid), i: F.format(m.program + 1), n: F.format(d.programs.length) })
      + (prog.failed ? ` · ${T("memFailedProgram")}` : "") : "—";
    $("#mem-program-text").textContent = text;
    $("#mem-program").setAttribute("aria-valuetext", text);
    root.dataset.program = String(m.program);
    for (const [name, info] of Object.entries(d.tensors)) {
      const fig = root.querySelector(`figure[data-tensor="${CSS.escape(name)}"]`);
      const L = m.layouts[name];
      const own = accessesOf(prog, name, m.step);
      const others = d.programs.filter((p) => p !== prog).flatMap((p) => [p.tensors[name]?.loaded, p.tensors[name]?.stored, p.tensors[name]?.atomic]);
      const flags = mv.cellFlags(L, own, others);
      mv.draw(fig.querySelector("canvas"), L, flags);
      const c = prog?.counters?.[name] ?? {};
      const loaded = mv.runsCount(own.loaded), stored = mv.runsCount(own.stored);
      fig.dataset.loaded = String(loaded);
      fig.dataset.stored = String(stored);
      fig.dataset.masked = String(mv.runsCount(own.masked));
      fig.dataset.outside = String(flags.outside);
      const frame = mv.bandFrame(L, flags.band) ?? flags.band;
      fig.dataset.band = frame ? [frame.x, frame.y, frame.w, frame.h].join(",") : "";
      fig.querySelector("canvas").setAttribute("aria-label", `${name}: ${T("legendLoaded")} ${loaded}, ${T("legendStored")} ${stored}`);
      fig.querySelector("figcaption").innerHTML = `<code>${escapeHtml(name)}</code> ${escapeHtml(info.dtype)} [${escapeHtml(info.shape.join("×"))}]`
        + ` · ${escapeHtml(T("memThisProgram", { l: F.format(c.loaded_bytes ?? 0), s: F.format(c.stored_bytes ?? 0),
          ml: F.format(c.masked_load_lanes ?? 0), ms: F.format(c.masked_store_lanes ?? 0) }))}`
        + (L.binR > 1 || L.binC > 1 ? ` · ${escapeHtml(T("scale", { r: L.binR, c: L.binC }))}` : "")
        + (flags.outside ? ` · ${escapeHtml(T(flags.failing ? "outsideFailed" : "outside", { n: F.format(flags.outside), k: F.format(flags.failing) }))}` : "");
    }
    $("#mem-table").innerHTML = programTable(d, prog, T, F);
  }

  function hover(v, name, canvas, e) {
    const m = v.memory, d = m.data, L = m.layouts[name], info = d.tensors[name];
    const rect = canvas.getBoundingClientRect();
    const scale = canvas.width / rect.width;
    const off = mv.offsetAt(L, (e.clientX - rect.left) * scale, (e.clientY - rect.top) * scale);
    if (off == null) { tip.hidden = true; return; }
    tip.innerHTML = tipHtml(d, name, off, info, t(), fmt());
    tip.hidden = false;
    const box = root.getBoundingClientRect();
    const at = tipPlace({ x: e.clientX - box.left, y: e.clientY - box.top }, { w: tip.offsetWidth, h: tip.offsetHeight },
      box.width, [...root.querySelectorAll("figure.tensor figcaption")].map((c) => {
        const r = c.getBoundingClientRect();
        return { x: r.left - box.left, y: r.top - box.top, w: r.width, h: r.height };
      }));
    tip.style.left = `${at.x}px`;
    tip.style.top = `${at.y}px`;
  }

  // The centre of element `offset`'s cell in the page's coordinates (the tests hover and sample colours there).
  function cellAt(name, offset) {
    const m = current()?.memory;
    const L = m?.layouts?.[name];
    const canvas = root.querySelector(`figure[data-tensor="${CSS.escape(name)}"] canvas`);
    const c = L && canvas && mv.cellCentre(L, offset);
    if (!c) return null;
    const r = canvas.getBoundingClientRect();
    return { x: r.left + c.x * (r.width / canvas.width), y: r.top + c.y * (r.height / canvas.height), canvasX: c.x, canvasY: c.y };
  }

  return { open, render, cellAt };
}

// Where the tooltip goes (its top-left, in the panel's coordinates): beside the cursor `c` (below and right
// first, then the other corners), else above or below the caption in the way, so that it covers no tensor's
// caption (`captions`: their boxes) and stays within `width`; the free place nearest the cursor wins.
export function tipPlace(c, size, width, captions) {
  const gap = 12;
  const clampX = (x) => Math.max(0, Math.min(x, width - size.w));
  const xs = [clampX(c.x + gap), clampX(c.x - gap - size.w)];
  const ys = [c.y + gap, c.y - gap - size.h, ...captions.flatMap((r) => [r.y + r.h + 2, r.y - size.h - 2])];
  const hits = (x, y) => captions.some((r) => x < r.x + r.w && r.x < x + size.w && y < r.y + r.h && r.y < y + size.h);
  const covers = (x, y) => c.x >= x && c.x <= x + size.w && c.y >= y && c.y <= y + size.h;   // the cursor itself
  let best = null;
  for (const y of ys) {
    for (const x of xs) {
      if (y < 0 || hits(x, y) || covers(x, y)) continue;
      const d = Math.hypot(x + size.w / 2 - c.x, y + size.h / 2 - c.y);
      if (!best || d < best.d) best = { x, y, d };
    }
  }
  return best ?? { x: xs[0], y: c.y + gap };
}

// What the tooltip says about element `off` of tensor `name`: its index, offset, value (when sent), and the
// programs that loaded and stored it.
export function tipHtml(d, name, off, info, T, F) {
  const grid = d.launch.grid;
  const who = (kind) => {
    const ps = d.programs.filter((p) => mv.runsHas(p.tensors[name]?.[kind], off) || (kind !== "atomic" && mv.runsHas(p.tensors[name]?.atomic, off)));
    if (!ps.length) return escapeHtml(T("tipNobody"));
    const shown = ps.slice(0, MAX_LISTED).map((p) => pidText(p.program, grid)).join(", ");
    return escapeHtml(shown + (ps.length > MAX_LISTED ? ` ${T("andMore", { n: F.format(ps.length - MAX_LISTED) })}` : ""));
  };
  const value = d.values?.[name]?.[off];
  return `<div><code>${escapeHtml(name)}[${mv.indexOf(info.shape, off).join(", ")}]</code></div>`
    + `<div>${escapeHtml(T("tipOffset", { o: F.format(off) }))}</div>`
    + (value !== undefined ? `<div>${escapeHtml(T("tipValue", { v: String(value) }))}</div>` : "")
    + `<div data-kind="loaded">${escapeHtml(T("tipLoadedBy"))} ${who("loaded")}</div>`
    + `<div data-kind="stored">${escapeHtml(T("tipStoredBy"))} ${who("stored")}</div>`;
}

// The chosen program's accesses as text: per tensor, how many elements and which offsets.
function programTable(d, prog, T, F) {
  if (!prog) return "";
  const runsText = (runs) => {
    const parts = [];
    for (let i = 0; i + 1 < (runs?.length ?? 0) && parts.length < 8; i += 2) {
      parts.push(runs[i + 1] === 1 ? F.format(runs[i]) : `${F.format(runs[i])}…${F.format(runs[i] + runs[i + 1] - 1)}`);
    }
    const more = (runs?.length ?? 0) / 2 - parts.length;
    return parts.length ? parts.join(", ") + (more > 0 ? `, ${T("andMore", { n: F.format(more) })}` : "") : "—";
  };
  const rows = Object.keys(d.tensors).flatMap((name) => [["loaded", "legendLoaded"], ["stored", "legendStored"], ["atomic", "legendBoth"], ["masked", "legendMasked"]]
    .filter(([kind]) => prog.tensors[name]?.[kind]?.length)
    .map(([kind, label]) => `<tr><th scope="row"><code>${escapeHtml(name)}</code></th><td>${escapeHtml(T(label))}</td>`
      + `<td>${F.format(mv.runsCount(prog.tensors[name]?.[kind]))}</td><td>${escapeHtml(runsText(prog.tensors[name]?.[kind]))}</td></tr>`));
  return `<div class="table-wrap"><table class="mem-table"><caption>${escapeHtml(T("memProgramTable", { p: pidText(prog.program, d.launch.grid) }))}</caption>`
    + `<thead><tr><th>${escapeHtml(T("tensor"))}</th><th></th><th>${escapeHtml(T("elements"))}</th><th>${escapeHtml(T("offsets"))}</th></tr></thead>`
    + `<tbody>${rows.join("")}</tbody></table></div>`;
}
