// Drawing one tensor of the memory picture: its elements as a grid of cells on a canvas, coloured by what the
// chosen program did to them (loaded, stored, both; masked-off lanes where they point; elements other programs
// touched), with axes and, for 3-D and 4-D tensors, one block per leading index separated by borders. Offsets
// outside the tensor (masked-off lanes, and the lanes of a failed access that raised the error) are drawn in
// ghost rows above or below it. Large tensors are binned: one cell then stands for binR × binC elements; a
// program's own cells too thin or narrow to see are then framed (MIN_BAND).
export const COLORS = {
  none: "#e8ebef", loaded: "#2f7fd1", stored: "#f08a24", both: "#8a4fbf", masked: "#9aa3ad", other: "#c6d3e1",
  failed: "#e0201b", ghost: "#ffffff", ghostLine: "#c0392b", border: "#1d232b", band: "#1d232b",
};
export const LOADED = 1, STORED = 2, MASKED = 4, OTHER = 8, FAILED = 16;
const MAX_HEIGHT = 520, MAX_CELL = 14, MIN_CELL = 2, MIN_GHOST = 6;    // ghost rows stay visible when cells are thin
export const MIN_BAND = 8;                                              // px: the least a program's frame spans
export const GHOST_ROWS = 2;

// Runs [start, length, ...] -> offsets, calling f(offset) for each.
export function eachOffset(runs, f) {
  for (let i = 0; i + 1 < (runs?.length ?? 0); i += 2) for (let o = runs[i], e = o + runs[i + 1]; o < e; o++) f(o);
}
export function runsCount(runs) {
  let n = 0;
  for (let i = 1; i < (runs?.length ?? 0); i += 2) n += runs[i];
  return n;
}
export function runsHas(runs, offset) {
  let lo = 0, hi = (runs?.length ?? 0) / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1, s = runs[2 * mid];
    if (offset < s) hi = mid - 1;
    else if (offset >= s + runs[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

// The picture's geometry for a shape, fitted to `width` px, with `ghostRows` rows above and below it for
// offsets outside the tensor (0 when no masked-off lane points outside).
//   1-D [n]: rows of `cols` elements.  2-D [R, C]: R rows.  3-D [A, R, C]: A blocks of R rows.
//   4-D [B, H, R, C]: B·H blocks, a wider border between batches. More dimensions fold into the rows.
export function layout(shape, width, ghostRows = 0) {
  const dims = shape.length ? shape : [1];
  let blocks = 1, outer = 1, rows, cols;
  if (dims.length === 1) {
    const n = dims[0];
    cols = Math.max(1, Math.min(n, n <= 64 ? n : 64));
    rows = Math.ceil(n / cols);
  } else {
    cols = dims[dims.length - 1];
    rows = dims[dims.length - 2];
    const lead = dims.slice(0, -2);
    if (lead.length >= 1) blocks = lead.reduce((a, b) => a * b, 1);
    if (lead.length >= 2) outer = lead[lead.length - 1];            // blocks per batch
  }
  const numel = dims.reduce((a, b) => a * b, 1);
  const binC = Math.max(1, Math.ceil((cols * 2) / Math.max(width, 40)));
  const C = Math.ceil(cols / binC);
  const totalRows = rows * blocks;
  const binR = Math.max(1, Math.ceil((totalRows * MIN_CELL) / MAX_HEIGHT));
  const R = Math.ceil(rows / binR);
  // cells are cw wide and ch tall: as wide as the width allows, and as tall, but no taller than the height allows
  const cw = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(width / C)));
  const ch = Math.max(MIN_CELL, Math.min(cw, Math.floor(MAX_HEIGHT / (R * blocks))));
  const gapX = cw >= 6 ? 1 : 0, gapY = ch >= 6 ? 1 : 0;
  const blockGap = blocks > 1 ? Math.max(5, ch) : 0;
  const batchGap = outer > 1 ? blockGap * 2 : blockGap;
  const gh = Math.max(ch, MIN_GHOST);                                 // a ghost row's height
  const ghost = ghostRows ? ghostRows * gh + 4 : 0;                   // room above and below for ghost rows
  const blockTop = [];
  let y = ghost;
  for (let b = 0; b < blocks; b++) {
    if (b > 0) y += outer > 1 && b % outer === 0 ? batchGap : blockGap;
    blockTop.push(y);
    y += R * ch;
  }
  return { shape: dims, numel, rows, cols, blocks, outer, binR, binC, R, C, cw, ch, gapX, gapY, blockTop,
    width: C * cw, height: y + ghost, ghostRows, gh, ghostTop: 0, ghostBottom: y + 4,
    wrap: dims.length === 1 };
}

// Element offset -> {block, row, col} (row counted from the block's top), or {ghost: -1 | 1, row, col} for an
// offset before the start or past the end (row 0 is the ghost row next to the tensor), or null when it lies
// further out than the ghost rows. Past the end of a wrapped 1-D tensor, its last row continues first.
export function place(L, offset) {
  const C = L.cols, blockLen = L.rows * C;
  if (offset >= 0 && offset < L.numel) {
    const block = Math.floor(offset / blockLen), rest = offset - block * blockLen;
    return { block, row: Math.floor(rest / C), col: rest % C };
  }
  if (offset < 0) {
    const row = Math.floor(offset / C);                               // -1 for the row just above
    return -row - 1 < L.ghostRows * L.binR ? { ghost: -1, row: -row - 1, col: offset - row * C } : null;
  }
  if (L.wrap) {
    const row = Math.floor(offset / C), col = offset % C;
    if (row === L.rows - 1) return { block: 0, row, col, ghost: 0 };
    return row - L.rows < L.ghostRows * L.binR ? { ghost: 1, row: row - L.rows, col } : null;
  }
  const past = offset - L.numel, row = Math.floor(past / C);
  return row < L.ghostRows * L.binR ? { ghost: 1, row, col: past % C } : null;
}

// Top-left pixel of the cell holding a placed element.
export function cellXY(L, p) {
  const x = Math.floor(p.col / L.binC) * L.cw;
  if (p.ghost === -1) return { x, y: L.ghostTop + (L.ghostRows - 1 - Math.floor(p.row / L.binR)) * L.gh };
  if (p.ghost === 1) return { x, y: L.ghostBottom + Math.floor(p.row / L.binR) * L.gh };
  return { x, y: L.blockTop[p.block] + Math.floor(p.row / L.binR) * L.ch };
}

// Pixel -> element offset (the first element of the cell's bin), or null off the tensor.
export function offsetAt(L, x, y) {
  const col = Math.floor(x / L.cw) * L.binC;
  if (x < 0 || col >= L.cols) return null;
  for (let b = 0; b < L.blocks; b++) {
    const top = L.blockTop[b];
    if (y >= top && y < top + L.R * L.ch) {
      const row = Math.floor((y - top) / L.ch) * L.binR;
      const off = b * L.rows * L.cols + row * L.cols + col;
      return row < L.rows && off < L.numel ? off : null;
    }
  }
  return null;
}

// How many offsets of the runs lie outside [0, numel).
export function countOutside(runs, numel) {
  let n = 0;
  for (let i = 0; i + 1 < (runs?.length ?? 0); i += 2) {
    const s = runs[i], e = s + runs[i + 1];
    n += Math.max(0, Math.min(e, 0) - s) + Math.max(0, e - Math.max(s, numel));
  }
  return n;
}

// Whether any of the runs points outside [0, numel): the picture then needs its ghost rows.
export function pointsOutside(runsList, numel) {
  for (const runs of runsList) {
    for (let i = 0; i + 1 < (runs?.length ?? 0); i += 2) if (runs[i] < 0 || runs[i] + runs[i + 1] > numel) return true;
  }
  return false;
}

// The centre pixel of the cell holding element `offset` (for the page's tests and the keyboard), or null.
export function cellCentre(L, offset) {
  const p = place(L, offset);
  if (!p) return null;
  const { x, y } = cellXY(L, p);
  const h = p.ghost === -1 || p.ghost === 1 ? L.gh : L.ch;
  return { x: x + (L.cw - L.gapX) / 2, y: y + (h - (h >= 6 ? 1 : 0)) / 2 };
}

// Offset -> multi-index of the (contiguous) tensor.
export function indexOf(shape, offset) {
  const idx = new Array(shape.length).fill(0);
  let rest = offset;
  for (let d = shape.length - 1; d >= 0; d--) { idx[d] = rest % shape[d]; rest = Math.floor(rest / shape[d]); }
  return idx;
}

// Cell flags for one tensor: `own` = {loaded, stored, atomic, masked, outside} runs of the chosen program (or
// step; `outside`: the lanes of a failed access that raised the error), `others` = runs other programs touched.
// Returns {cells: Map("x,y" -> flags), outside: how many of its lanes point outside the tensor (drawn or not),
// failing: how many raised the error, band: the box around its own cells {x, y, w, h} or null}.
export function cellFlags(L, own, others) {
  const cells = new Map();
  let band = null;
  const mark = (runs, bit) => eachOffset(runs, (o) => {
    const p = place(L, o);
    if (!p) return;
    const { x, y } = cellXY(L, p);
    const k = `${x},${y}`;
    cells.set(k, (cells.get(k) || 0) | bit);
    if (bit === OTHER || p.ghost === -1 || p.ghost === 1) return;       // the band: its cells in the tensor
    if (!band) band = { x0: x, y0: y, x1: x, y1: y };
    else Object.assign(band, { x0: Math.min(band.x0, x), y0: Math.min(band.y0, y), x1: Math.max(band.x1, x), y1: Math.max(band.y1, y) });
  });
  for (const runs of others) mark(runs, OTHER);
  mark(own.loaded, LOADED);
  mark(own.stored, STORED);
  mark(own.atomic, LOADED | STORED);
  mark(own.masked, MASKED);
  mark(own.outside, FAILED);
  return { cells, outside: countOutside(own.masked, L.numel) + countOutside(own.outside, L.numel),
    failing: runsCount(own.outside), band: band && { x: band.x0, y: band.y0, w: band.x1 + L.cw - band.x0, h: band.y1 + L.ch - band.y0 } };
}

// The frame drawn around a program's own cells when they span less than MIN_BAND px in either direction
// (binned tensors: a block of 128 elements among 100 000 is one 2 px row), centred on them; null when they
// show well enough alone.
export function bandFrame(L, band) {
  if (!band || (band.w >= MIN_BAND && band.h >= MIN_BAND)) return null;
  const w = Math.max(band.w, MIN_BAND), h = Math.max(band.h, MIN_BAND);
  const x = Math.max(0, Math.min(L.width - w, band.x - (w - band.w) / 2));
  const y = Math.max(0, Math.min(L.height - h, band.y - (h - band.h) / 2));
  return { x: Math.round(x), y: Math.round(y), w, h };
}

export function colorOf(f) {
  if (f & FAILED) return COLORS.failed;
  if ((f & LOADED) && (f & STORED)) return COLORS.both;
  if (f & STORED) return COLORS.stored;
  if (f & LOADED) return COLORS.loaded;
  if (f & MASKED) return COLORS.masked;
  if (f & OTHER) return COLORS.other;
  return COLORS.none;
}

export function draw(canvas, L, flags) {
  canvas.width = L.width;
  canvas.height = L.height;
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, L.width, L.height);
  const sw = L.cw - L.gapX, sh = L.ch - L.gapY;
  for (let b = 0; b < L.blocks; b++) {
    const top = L.blockTop[b];
    const lastRows = b === L.blocks - 1 && L.wrap ? Math.ceil((L.numel - (L.rows - 1) * L.cols) / L.binC) : L.C;
    for (let r = 0; r < L.R; r++) {
      const n = L.wrap && r === L.R - 1 ? lastRows : L.C;
      for (let c = 0; c < n; c++) {
        const x = c * L.cw, y = top + r * L.ch;
        ctx.fillStyle = colorOf(flags.cells.get(`${x},${y}`) || 0);
        ctx.fillRect(x, y, sw, sh);
      }
    }
    if (b > 0) {                                                      // the border between blocks
      const between = L.blockTop[b] - (L.blockTop[b - 1] + L.R * L.ch);
      ctx.fillStyle = COLORS.border;
      ctx.fillRect(0, L.blockTop[b] - Math.ceil(between / 2) - 1, L.width, between > 8 ? 3 : 2);
    }
  }
  const gsh = L.gh - (L.gh >= 6 ? 1 : 0);
  const ghost = (x, y, f) => {                                        // a cell outside the tensor
    const sh = gsh;
    ctx.fillStyle = COLORS.ghost;
    ctx.fillRect(x, y, sw, sh);
    ctx.strokeStyle = COLORS.ghostLine;
    ctx.setLineDash([2, 2]);
    ctx.strokeRect(x + 0.5, y + 0.5, Math.max(1, sw - 1), Math.max(1, sh - 1));
    ctx.setLineDash([]);
    ctx.fillStyle = colorOf(f);
    const mx = Math.max(1, Math.floor(sw / 4)), my = Math.max(1, Math.floor(sh / 4));
    ctx.fillRect(x + mx, y + my, Math.max(1, sw - 2 * mx), Math.max(1, sh - 2 * my));
  };
  const cells = (own) => {
    for (const [k, f] of flags.cells) {
      const [x, y] = k.split(",").map(Number);
      const outside = offsetAt(L, x, y) == null && !inTensorRow(L, x, y);
      if (own && f !== OTHER) { if (outside) ghost(x, y, f); else { ctx.fillStyle = colorOf(f); ctx.fillRect(x, y, sw, sh); } }
      else if (!own && outside) ghost(x, y, f);
    }
  };
  cells(false);
  const frame = bandFrame(L, flags.band);
  if (frame) {                                  // framed, then its cells again on top (a frame at an edge overlaps them)
    ctx.strokeStyle = COLORS.band;
    ctx.lineWidth = 2;
    ctx.strokeRect(frame.x + 1, frame.y + 1, frame.w - 2, frame.h - 2);
    ctx.lineWidth = 1;
    cells(true);
  }
}

// Whether a cell position lies on a drawn row of the tensor (a wrapped tensor's last row continues past its end).
function inTensorRow(L, x, y) {
  for (const top of L.blockTop) if (y >= top && y < top + L.R * L.ch) return !L.wrap || y < top + (L.R - 1) * L.ch;
  return false;
}

// Axis ticks (HTML, positioned over the canvas): columns along the top, rows at the left of each block, and a
// label per block ("head 1", "batch 0, head 1").
export function axes(L, blockLabel) {
  const ticks = [];
  const step = (n, px, room = 48) => { const want = Math.max(1, Math.ceil(room / px)); return [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 256, 512, 1000, 1024].find((s) => s >= want) ?? want; };
  const cs = step(L.cols, L.cw / L.binC);
  for (let c = 0; c < L.cols; c += cs) ticks.push({ kind: "col", x: Math.floor(c / L.binC) * L.cw, y: 0, text: String(c) });
  const rs = step(L.rows, L.ch / L.binR, 20);
  L.blockTop.forEach((top, b) => {
    for (let r = 0; r < L.rows; r += rs) {
      ticks.push({ kind: "row", x: 0, y: top + Math.floor(r / L.binR) * L.ch, text: String(L.wrap ? r * L.cols : r) });
    }
    if (L.blocks > 1) ticks.push({ kind: "block", x: 0, y: top, text: blockLabel(b) });
  });
  return ticks;
}
