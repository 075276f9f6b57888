// Measures what web/README.md reports, in headless Chromium, and prints a Markdown table:
//   lab mode: page open -> ready; Check of each exercise's reference solution;
//   Pyodide: page open -> Python booted in the worker (the numpy stage reached); with PYODIDE_PACKAGES
//            (a folder holding Pyodide's numpy wheel) also page open -> ready and Check per exercise.
// Usage: node web/measure.mjs [--runs=3]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer } from "./serve.mjs";
import { ensureBuilt, launchBrowser, startLabServer, waitReady } from "./tests/helpers.mjs";
import { checkAllSolutions, openFresh } from "./tests/flows.mjs";

const runs = Number((process.argv.find((a) => a.startsWith("--runs=")) || "--runs=3").split("=")[1]);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const fmt = (xs) => `${(median(xs) / 1000).toFixed(2)} s (${xs.map((x) => (x / 1000).toFixed(2)).join(", ")})`;
const rows = [];
const load = [];

async function pageReady(url, until) {
  const b = await launchBrowser();   // a fresh profile: nothing cached
  try {
    const page = await b.context.newPage();
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForFunction(until, null, { timeout: 180000 });
    return Date.now() - t0;
  } finally { await b.close(); }
}

async function checks(url, label) {
  const b = await launchBrowser();
  try {
    const page = await b.context.newPage();
    const per = {};
    for (let i = 0; i < runs; i++) {
      await openFresh(page, url);
      for (const r of await checkAllSolutions(page)) {
        if (!r.passed) throw new Error(`${r.id} did not pass: ${r.error}`);
        (per[r.id] ??= []).push(r.ms);
      }
    }
    for (const [id, ms] of Object.entries(per)) rows.push([`${label}: Check \`${id}\` (reference solution), click to result`, fmt(ms)]);
  } finally { await b.close(); }
}

ensureBuilt();
load.push(os.loadavg()[0]);
const lab = await startLabServer();
if (lab.skip) throw new Error(lab.skip);
try {
  const ms = [];
  for (let i = 0; i < runs; i++) ms.push(await pageReady(lab.url, () => document.body.dataset.ready === "1"));
  rows.push(["lab: page open to ready (exercises listed, Run enabled)", fmt(ms)]);
  await checks(lab.url, "lab");
} finally { await lab.stop(); }

const empty = fs.mkdtempSync(path.join(os.tmpdir(), "mt-measure-"));
const packages = process.env.PYODIDE_PACKAGES || empty;
const site = await startServer({ port: 0, packages });
try {
  const url = `${site.pageUrl}&sw=0`;
  const ms = [];
  for (let i = 0; i < runs; i++) {
    ms.push(await pageReady(url, () => document.body.dataset.stage === "numpy" || document.body.dataset.stage === "minitriton"
      || document.body.dataset.ready === "1" || document.body.dataset.stage === "failed"));
  }
  rows.push(["Pyodide: page open to Python booted in the module worker (numpy stage starts)", fmt(ms)]);
  if (process.env.PYODIDE_PACKAGES) {
    const ready = [];
    for (let i = 0; i < runs; i++) ready.push(await pageReady(url, () => document.body.dataset.ready === "1"));
    rows.push(["Pyodide: page open to ready (Python + NumPy + minitriton)", fmt(ready)]);
    await checks(url, "Pyodide");
  }
} finally { site.server.close(); fs.rmSync(empty, { recursive: true, force: true }); }
load.push(os.loadavg()[0]);

console.log(`Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${os.cpus()[0]?.model}, ` +
  `${Math.round(os.totalmem() / 2 ** 30)} GiB, load average ${load.map((x) => x.toFixed(1)).join(" → ")}; median (all runs), ${runs} runs each.\n`);
console.log("| what | time |\n|---|---|");
for (const [what, t] of rows) console.log(`| ${what} | ${t} |`);
if (!process.env.PYODIDE_PACKAGES) console.log("\nPyodide with numpy: not measured (PYODIDE_PACKAGES not set; the wheel cannot be downloaded here).");
