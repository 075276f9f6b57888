// Starting up: what the page fetches before Python (config, the pre-rendered lists), whether the lab server
// served it, and the words of the boot line (the stages of Pyodide's start and why a start failed).
import { errorText } from "./results.js";
import { escapeHtml } from "./markdown.js";

export async function fetchJson(url, init) {
  try {
    const r = await fetch(url, init);
    return r.ok ? await r.json() : null;
  } catch { return null; }
}

// The lab server adds `"lab": true` to the config it serves: a page it serves knows it is in lab mode, token or
// not, and a page from a static server asks nothing more (no request that could fail).
export function isLabServer(config) {
  return config?.lab === true;
}

// Where Pyodide's NumPy comes from: ?packages=URL, else the build's default.
export function packageBaseUrl(config, params) {
  const p = params.get("packages");
  const base = p ? new URL(p, location.href).href : config.packageBaseUrl;
  return base.endsWith("/") ? base : base + "/";
}

export const STAGES = ["python", "numpy", "minitriton", "ready"];

// The stages as list items: done ones with how long they took, the current one active ("…", the one stage in
// progress) or failed.
export function stagesHtml(current, failed, times, t, fmtSeconds) {
  const at = STAGES.indexOf(current);
  return STAGES.map((s, i) => {
    const cls = failed && i === at ? "failed" : i < at || current === "ready" ? "done" : i === at ? "active" : "";
    const doneAt = times[STAGES[i + 1]];   // a stage ends when the next one starts
    const shown = doneAt != null && s !== "ready" && (i < at || current === "ready");
    return `<li class="${cls}" data-stage="${s}">${escapeHtml(t("stage." + s))}${cls === "active" ? "…" : ""}${shown ? ` <small>${fmtSeconds.format(doneAt / 1000)} s</small>` : ""}</li>`;
  }).join("");
}

// Why Python did not start, in the page's words: {stage, key?, error?, message?}.
export function bootErrorText(e, t, packageUrl) {
  if (e.stage === "numpy") return t("numpyFailed", { url: /did not load from (\S+)/.exec(e.message)?.[1] || packageUrl });
  if (e.key) return t(e.key);
  if (e.error) return errorText(e.error, t);
  return t("bootFailed", { detail: String(e.message || "").split("\n")[0] });
}
