// The page's layout. Resizable panes: two dividers (role="separator", focusable), between the code and the
// results (the code's share of the width) and between the task and the code (the task's height). Each moves by
// pointer drag or by keyboard (arrows, Page Up/Down for larger steps, Home/End), and is remembered in this
// browser. On narrow screens: the exercise picker, and results brought into view.
import { getPref, setPref } from "./storage.js";

function divider(el, { pref, initial, min, max, step, vertical, apply, fromPointer }) {
  let value = Math.min(max(), Math.max(min(), Number(getPref(pref, initial)) || initial));
  const set = (v, save = true) => {
    value = Math.min(max(), Math.max(min(), v));
    apply(value);
    el.setAttribute("aria-valuenow", String(Math.round(value)));
    el.setAttribute("aria-valuemin", String(Math.round(min())));
    el.setAttribute("aria-valuemax", String(Math.round(max())));
    if (save) setPref(pref, value);
  };
  el.setAttribute("role", "separator");
  el.setAttribute("aria-orientation", vertical ? "vertical" : "horizontal");
  el.tabIndex = 0;
  el.addEventListener("keydown", (e) => {
    const less = vertical ? "ArrowLeft" : "ArrowUp", more = vertical ? "ArrowRight" : "ArrowDown";
    const moves = { [less]: -step, [more]: step, PageUp: -5 * step, PageDown: 5 * step };
    if (e.key in moves) set(value + moves[e.key]);
    else if (e.key === "Home") set(min());
    else if (e.key === "End") set(max());
    else return;
    e.preventDefault();
  });
  el.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    el.setPointerCapture(e.pointerId);
    document.body.classList.add("dragging");
    const move = (ev) => set(fromPointer(ev), false);
    const up = () => {
      el.removeEventListener("pointermove", move);
      el.removeEventListener("pointerup", up);
      el.removeEventListener("pointercancel", up);
      document.body.classList.remove("dragging");
      set(value);
    };
    el.addEventListener("pointermove", move);
    el.addEventListener("pointerup", up);
    el.addEventListener("pointercancel", up);
  });
  set(value, false);
  return { get value() { return value; }, set, refresh: () => set(value, false) };
}

// `layout`: the grid holding [work][divider][results]; `work`, `results`: its panes; `task`: the pane above
// the code, whose height the second divider sets.
export function setupPanes({ layout, work, results, columns, task, taskDivider }) {
  const cols = divider(columns, {
    pref: "workPercent", initial: 62, step: 2, vertical: true,
    min: () => 30, max: () => 80,
    apply: (v) => {
      layout.style.setProperty("--work", `${v}fr`);
      layout.style.setProperty("--results", `${100 - v}fr`);
    },
    fromPointer: (e) => {
      const left = work.getBoundingClientRect().left, right = results.getBoundingClientRect().right;
      return ((e.clientX - left) / Math.max(1, right - left)) * 100;
    },
  });
  const rows = divider(taskDivider, {
    pref: "taskHeight", initial: Math.round(window.innerHeight * 0.34), step: 24, vertical: false,
    min: () => 60, max: () => Math.max(120, window.innerHeight - 260),
    apply: (v) => task.style.setProperty("--task-height", `${v}px`),
    fromPointer: (e) => e.clientY - task.getBoundingClientRect().top,
  });
  addEventListener("resize", () => rows.refresh());
  return { cols, rows };
}

// The width below which the panes stack in the page's own scroll (style.css's media query).
const NARROW = "(max-width: 999px)";
export const isNarrow = () => matchMedia(NARROW).matches;

// On a narrow screen the exercise list folds behind one button naming the current exercise, so the task is on
// the first screen: the button opens the list, choosing an exercise folds it again. Wide screens show the list.
export function setupExercisePicker({ nav, button }) {
  const set = (open) => { nav.classList.toggle("open", open); button.setAttribute("aria-expanded", String(open)); };
  button.addEventListener("click", () => set(!nav.classList.contains("open")));
  return { close: () => set(false), label: (text) => { button.textContent = text; } };
}

// A result that has just arrived, brought into view: on a narrow screen the page scrolls so that it starts at
// the top; on a wide one the results pane scrolls to it only as far as needed.
export function showResult(el) {
  el?.scrollIntoView({ block: isNarrow() ? "start" : "nearest" });
}
