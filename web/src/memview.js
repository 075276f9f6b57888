// The memory picture: for one program, a grid per tensor showing which elements it loaded and stored
// (and masked-off lanes, when the bridge reports their offsets), plus a text table with the same facts.
import { escapeHtml } from "./markdown.js";

const LOADED = 1, STORED = 2, MASKED = 4;
export const COLORS = {
  none: "#e8ebef", loaded: "#2f7fd1", stored: "#f08a24", both: "#8a4fbf", masked: "#9aa3ad",
};
const MAX_W = 720, MAX_H = 360;

// Element offset -> [row, col] in the picture, following the strides (largest stride first), or null when the
// offset does not name an element of the tensor.
export function locate(offset, shape, strides) {
  if (!shape.length) return offset === 0 ? [0, 0] : null;
  const dims = shape.map((n, d) => ({ n, d, s: strides?.[d] ?? shape.slice(d + 1).reduce((a, b) => a * b, 1) }))
    .sort((a, b) => b.s - a.s || a.d - b.d);
  const index = new Array(shape.length).fill(0);
  let rest = offset;
  for (const { n, d, s } of dims) {
    if (s === 0) continue;
    const i = Math.floor(rest / s);
    if (i < 0 || i >= n) return null;
    index[d] = i;
    rest -= i * s;
  }
  if (rest !== 0) return null;
  return flatCell(index, shape);
}

// Layout: 2-D and more: rows = all leading dims, cols = the last dim; 1-D: wrapped into rows.
export function gridSize(shape) {
  if (shape.length >= 2) {
    return { rows: shape.slice(0, -1).reduce((a, b) => a * b, 1), cols: shape[shape.length - 1] };
  }
  const n = shape.length ? shape[0] : 1;
  const cols = n <= 64 ? Math.max(n, 1) : n <= 8192 ? 64 : 128;
  return { rows: Math.ceil(n / cols), cols, wrap: true };
}

function flatCell(index, shape) {
  if (shape.length >= 2) {
    let row = 0;
    for (let d = 0; d < shape.length - 1; d++) row = row * shape[d] + index[d];
    return [row, index[shape.length - 1]];
  }
  const { cols } = gridSize(shape);
  return [Math.floor(index[0] / cols), index[0] % cols];
}

// Consecutive runs of sorted offsets, as "a…b" strings.
export function runs(offsets, max = 8) {
  const s = Array.from(new Set(offsets)).sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    out.push(i === j ? `${s[i]}` : `${s[i]}…${s[j]}`);
    i = j + 1;
  }
  return out.length > max ? out.slice(0, max).join(", ") + `, … (${out.length - max} more)` : out.join(", ");
}

function maskedOffsets(info) {
  return [].concat(info.masked ?? [], info.masked_loaded ?? [], info.masked_stored ?? []);
}

export function drawTensor(canvas, info) {
  const shape = info.shape ?? [];
  const { rows, cols } = gridSize(shape);
  const binR = Math.max(1, Math.ceil(rows / MAX_H)), binC = Math.max(1, Math.ceil(cols / MAX_W));
  const R = Math.ceil(rows / binR), C = Math.ceil(cols / binC);
  const cell = Math.max(1, Math.min(14, Math.floor(MAX_W / C), Math.floor(MAX_H / R)));
  const gap = cell >= 6 ? 1 : 0;
  canvas.width = C * cell;
  canvas.height = R * cell;
  const flags = new Uint8Array(R * C);
  let outside = 0;
  const mark = (list, bit) => {
    for (const off of list ?? []) {
      const rc = locate(off, shape, info.strides);
      if (!rc) { outside++; continue; }
      flags[Math.floor(rc[0] / binR) * C + Math.floor(rc[1] / binC)] |= bit;
    }
  };
  mark(info.loaded, LOADED);
  mark(info.stored, STORED);
  mark(maskedOffsets(info), MASKED);
  const ctx = canvas.getContext("2d");
  const n = shape.length ? shape.reduce((a, b) => a * b, 1) : 1;
  for (let r = 0; r < R; r++) {
    for (let c = 0; c < C; c++) {
      // cells of a wrapped 1-D tensor past its end stay blank
      if (shape.length < 2 && (r * binR) * cols + c * binC >= n) continue;
      const f = flags[r * C + c];
      ctx.fillStyle = (f & LOADED) && (f & STORED) ? COLORS.both : f & STORED ? COLORS.stored
        : f & LOADED ? COLORS.loaded : f & MASKED ? COLORS.masked : COLORS.none;
      ctx.fillRect(c * cell, r * cell, cell - gap, cell - gap);
    }
  }
  return { rows, cols, binR, binC, outside };
}

export function tensorTable(name, info, t, fmt) {
  const masked = maskedOffsets(info);
  const row = (label, list) => `<tr><th scope="row">${escapeHtml(label)}</th><td>${fmt(new Set(list ?? []).size)}</td>`
    + `<td>${escapeHtml(list && list.length ? runs(list) : "—")}</td></tr>`;
  return `<table class="mem-table"><caption>${escapeHtml(name)}</caption>`
    + `<tr><th></th><th>${escapeHtml(t("elements"))}</th><th>${escapeHtml(t("offsets"))}</th></tr>`
    + row(t("legendLoaded"), info.loaded) + row(t("legendStored"), info.stored)
    + (masked.length ? row(t("legendMasked"), masked) : "") + `</table>`;
}
