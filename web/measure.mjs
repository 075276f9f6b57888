// Measures what web/README.md reports, in headless Chromium, and prints a Markdown table:
//   Pyodide (the default mode), with NumPy's official Pyodide wheel from web/pyodide-packages/ (checked
//   against Pyodide's lock; PYODIDE_PACKAGES=/folder overrides):
//     - page open -> ready (Python, NumPy, minitriton loaded; Run enabled), first visit (a fresh browser
//       profile: nothing cached) and repeat visit (same profile: the service worker's cache), with the
//       page's own stage times (Python booted, NumPy loaded, minitriton loaded);
//     - Check of each exercise's reference solution: cold (the first Check after ready) and warm (the
//       Checks after it, in the same page);
//   lab mode (`python -m minitriton serve`): page open -> ready and Check per exercise, when this checkout
//   has the lab server.
// Usage: node web/measure.mjs [--runs=3] [--no-lab]
import os from "node:os";
import { startServer } from "./serve.mjs";
import { PACKAGES_DIR, verifiedNumpy } from "./pyodide-packages.mjs";
import { ensureBuilt, launchBrowser, startLabServer, waitReady } from "./tests/helpers.mjs";
import { checkAllSolutions, openFresh } from "./tests/flows.mjs";

const arg = (name, dflt) => (process.argv.find((a) => a.startsWith(`--${name}=`)) || `=${dflt}`).split("=")[1];
const runs = Number(arg("runs", 3));
const withLab = !process.argv.includes("--no-lab");
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const fmt = (xs) => `${(median(xs) / 1000).toFixed(2)} s (${xs.map((x) => (x / 1000).toFixed(2)).join(", ")})`;
const rows = [];
const load = [os.loadavg()[0]];

// page open -> ready in `page`; the page's stage times (ms from its start) come along
async function openToReady(page, url) {
  const t0 = Date.now();
  await page.goto(url);
  await waitReady(page, 180000);
  const ms = Date.now() - t0;
  return { ms, timings: await page.evaluate(() => window.__sandbox.timings) };
}

async function pyodideReady(url) {
  const first = [];
  const repeat = [];
  const stages = { python: [], numpy: [], minitriton: [] };
  for (let i = 0; i < runs; i++) {
    const b = await launchBrowser();   // a fresh profile: the first visit
    try {
      const page = await b.context.newPage();
      const r = await openToReady(page, url);
      first.push(r.ms);
      await page.evaluate(() => navigator.serviceWorker.ready);
      await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 30000 });
      await page.close();
      const again = await b.context.newPage();
      const s = await openToReady(again, url);
      repeat.push(s.ms);
      // stage boundaries of the repeat visit: a stage ends when the next starts
      const st = s.timings.stages;
      stages.python.push(st.numpy - st.python);
      stages.numpy.push(st.minitriton - st.numpy);
      stages.minitriton.push(st.ready - st.minitriton);
    } finally { await b.close(); }
  }
  rows.push(["Pyodide: page open to ready, first visit (fresh browser profile)", fmt(first)]);
  rows.push(["Pyodide: page open to ready, repeat visit (service worker cache)", fmt(repeat)]);
  rows.push(["… of which Python boots (repeat visit, the page's own clock)", fmt(stages.python)]);
  rows.push(["… of which NumPy loads", fmt(stages.numpy)]);
  rows.push(["… of which minitriton (our wheel) loads and imports", fmt(stages.minitriton)]);
}

// Check of every exercise's reference solution: the first pass after ready is cold, the others warm.
async function checks(url, label) {
  const b = await launchBrowser();
  try {
    const page = await b.context.newPage();
    await openFresh(page, url);
    const cold = {};
    const warm = {};
    for (let i = 0; i <= runs; i++) {
      for (const r of await checkAllSolutions(page)) {
        if (!r.passed) throw new Error(`${label}: ${r.id} did not pass: ${r.error}`);
        if (i === 0) cold[r.id] = r.ms;
        else (warm[r.id] ??= []).push(r.ms);
      }
    }
    for (const id of Object.keys(cold)) {
      rows.push([`${label}: Check \`${id}\`, warm (click to result)`, fmt(warm[id])]);
    }
    rows.push([`${label}: Check, cold (first Check after ready), per exercise`,
      Object.entries(cold).map(([id, ms]) => `${id} ${(ms / 1000).toFixed(2)} s`).join(", ")]);
  } finally { await b.close(); }
}

ensureBuilt();
const packages = process.env.PYODIDE_PACKAGES || PACKAGES_DIR;
verifiedNumpy(packages);
const site = await startServer({ port: 0, packages });
try {
  await pyodideReady(site.pageUrl);
  await checks(`${site.pageUrl}&sw=0`, "Pyodide");
} finally { site.server.close(); }

if (withLab) {
  const lab = await startLabServer();
  if (lab.skip) {
    rows.push(["lab mode", `not measured: ${lab.skip}`]);
  } else {
    try {
      const ms = [];
      for (let i = 0; i < runs; i++) {
        const b = await launchBrowser();
        try { ms.push((await openToReady(await b.context.newPage(), lab.url)).ms); } finally { await b.close(); }
      }
      rows.push(["lab: page open to ready (exercises listed, Run enabled)", fmt(ms)]);
      await checks(lab.url, "lab");
    } finally { await lab.stop(); }
  }
}
load.push(os.loadavg()[0]);

console.log(`Measured ${new Date().toISOString().slice(0, 16).replace("T", " ")} on ${os.cpus().length} × `
  + `${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load average `
  + `${load.map((x) => x.toFixed(1)).join(" → ")}; median (all runs), ${runs} runs each; headless Chromium.\n`);
console.log("| what | time |\n|---|---|");
for (const [what, t] of rows) console.log(`| ${what} | ${t} |`);
