// The course's side of the page as HTML: the exercise list with what is solved (each title whole on hover, as
// a long one is cut to the sidebar's width), and the hints shown so far.
import { escapeHtml, renderMarkdown } from "./markdown.js";

export function exerciseListHtml(exercises, currentId, solved, t) {
  return exercises.map((ex) => {
    const done = solved.has(ex.id);
    return `<li${done ? ' class="solved"' : ""}><a href="#${encodeURIComponent(ex.id)}" data-id="${escapeHtml(ex.id)}"`
      + ` title="${escapeHtml(ex.title)}"`
      + `${ex.id === currentId ? ' aria-current="page"' : ""}>`
      + `<span class="mark" aria-hidden="true">${done ? "✓" : ""}</span><span class="ex-title">${escapeHtml(ex.title)}</span>`
      + `${done ? `<span class="sr"> (${escapeHtml(t("solvedMark"))})</span>` : ""}</a></li>`;
  }).join("");
}

// An exercise's hints in order (one hint alone counts as a list of one).
export function hintTexts(ex) {
  return Array.isArray(ex?.hint_texts) ? ex.hint_texts : ex?.hint_texts ? [ex.hint_texts] : [];
}

export function hintsHtml(texts, shown, t) {
  return texts.slice(0, shown).map((h, i) =>
    `<div class="hint"><h3>${escapeHtml(t("hintOf", { k: i + 1, n: texts.length }))}</h3>${renderMarkdown(h)}</div>`).join("");
}
