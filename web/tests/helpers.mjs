// Shared test plumbing: headless Chromium (Debian's /usr/bin/chromium driven by playwright-core), the site
// build, the servers (lab: `python -m sandbox`; Pyodide: web/serve.mjs), failure artifacts.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";
import { PACKAGES_DIR } from "../pyodide-packages.mjs";
import { startServer } from "../serve.mjs";

export const WEB = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const ROOT = path.dirname(WEB);
export const DIST = path.join(WEB, "dist");
export const RESULTS = path.join(WEB, "test-results");
export const PYTHON = process.env.PYTHON || (fs.existsSync(path.join(ROOT, ".venv/bin/python")) ? path.join(ROOT, ".venv/bin/python") : "python3");
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

// Build the site unless dist/ already matches the sources (build.mjs --if-changed takes ~0.3 s then).
export function ensureBuilt() {
  execFileSync(process.execPath, [path.join(WEB, "build.mjs"), "--if-changed"], { stdio: ["ignore", "ignore", "inherit"] });
}

// A browser with a fresh profile. Playwright refuses --user-data-dir in args, so the profile directory goes
// through launchPersistentContext instead (same effect: a new, empty profile per launch).
export async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install -y chromium, or set CHROMIUM)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "mt-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1400, height: 1000 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

// A new page whose console (page and workers) is recorded; `run` is the test body. On failure a screenshot,
// the console log, the page's HTML and the sandbox state go to web/test-results/<test name>.*
export async function withPage(t, context, run) {
  const page = await context.newPage();
  const log = [];
  const stamp = () => new Date().toISOString().slice(11, 23);
  page.on("console", (m) => log.push(`${stamp()} [${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => log.push(`${stamp()} [pageerror] ${e.message}`));
  page.on("requestfailed", (r) => log.push(`${stamp()} [requestfailed] ${r.url()} ${r.failure()?.errorText}`));
  page.on("worker", (w) => {
    log.push(`${stamp()} [worker] ${w.url()}`);
    w.on("console", (m) => log.push(`${stamp()} [worker ${m.type()}] ${m.text()}`));
  });
  page.on("dialog", (d) => log.push(`${stamp()} [dialog] ${d.message()}`));
  try {
    await run(page, log);
  } catch (e) {
    fs.mkdirSync(RESULTS, { recursive: true });
    const slug = t.name.replace(/[^\p{L}\p{N}]+/gu, "_").slice(0, 80);
    await page.screenshot({ path: path.join(RESULTS, `${slug}.png`), fullPage: true }).catch(() => {});
    const state = await page.evaluate(() => JSON.stringify({
      timings: window.__sandbox?.timings, mode: window.__sandbox?.mode, code: window.__sandbox?.code,
      lastResult: window.__sandbox?.state?.lastResult, bootError: String(window.__sandbox?.state?.bootError?.message ?? ""),
    }, null, 1)).catch((err) => `(no state: ${err.message})`);
    const html = await page.content().catch(() => "");
    fs.writeFileSync(path.join(RESULTS, `${slug}.log`), `${e.stack || e}\n\n--- console ---\n${log.join("\n")}\n\n--- state ---\n${state}\n`);
    fs.writeFileSync(path.join(RESULTS, `${slug}.html`), html);
    e.message += `\n(screenshot and console log: web/test-results/${slug}.png/.log)`;
    throw e;
  } finally {
    await page.close().catch(() => {});
  }
}

// What goes wrong while `page` loads, from now on: console errors and warnings (the page's and its workers'),
// failed requests and answers of 400 or more, as lines of text (an empty list: a clean load).
export function loadProblems(page) {
  const problems = [];
  const onConsole = (where) => (m) => { if (["error", "warning"].includes(m.type())) problems.push(`${where} ${m.type()}: ${m.text()}`); };
  page.on("console", onConsole("page"));
  page.on("worker", (w) => w.on("console", onConsole("worker")));
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => { if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`); });
  return problems;
}

// `python -m sandbox --port 0 --no-browser` from the repo's .venv. Resolves {url, stop} once the server
// prints its http://127.0.0.1:P/?token=... URL.
export async function startLabServer() {
  const cmd = process.env.LAB_SERVER_CMD
    ? ["sh", ["-c", process.env.LAB_SERVER_CMD]]
    : [PYTHON, ["-m", "sandbox", "--port", "0", "--no-browser"]];
  const child = spawn(cmd[0], cmd[1], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`lab server printed no URL in 30 s:\n${out}`)); }, 30000);
    const onData = (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\S*token=[\w-]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1], output: () => out,
          stop: () => new Promise((r) => { if (child.exitCode !== null) r(); else { child.once("exit", r); child.kill(); } }),
        });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`lab server exited (${code}) before printing its URL:\n${out}`));
    });
  });
}

export async function waitReady(page, timeout = 120000) {
  await page.waitForFunction(() => document.body.dataset.ready === "1" || document.body.dataset.stage === "failed", null, { timeout });
  const stage = await page.evaluate(() => document.body.dataset.stage);
  if (stage === "failed") {
    const text = await page.locator("#boot").innerText();
    throw new Error(`the page did not get ready: ${text}`);
  }
}

export function recordTimings(file, entry) {
  fs.mkdirSync(RESULTS, { recursive: true });
  const p = path.join(RESULTS, file);
  const all = fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, "utf8")) : [];
  all.push({ date: new Date().toISOString(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg1: os.loadavg()[0], ...entry });
  fs.writeFileSync(p, JSON.stringify(all, null, 1));
}


// Pyodide's NumPy wheel as the built site's lock names it, and the folder the tests serve packages from
// (web/pyodide-packages/, filled by tools/setup.sh; PYODIDE_PACKAGES=/folder overrides).
export function numpyWheel() {
  const lock = JSON.parse(fs.readFileSync(path.join(DIST, "pyodide", "pyodide-lock.json"), "utf8"));
  return { lock, file: lock.packages.numpy.file_name, packages: process.env.PYODIDE_PACKAGES || PACKAGES_DIR };
}

// web/serve.mjs's static site and a browser for the `describe` block that calls this (its before/after hooks
// start and stop them). `packages` is the folder served as packages/; null: a fresh empty folder, so Python
// starts and NumPy does not. The result holds `server`, `browser` and `packages` once started, and
// `it(name, body)`: a test whose body gets a new page (withPage).
export function pyodideSite(packages = null) {
  const site = { packages, empty: null };
  before(async () => {
    if (!site.packages) site.packages = site.empty = fs.mkdtempSync(path.join(os.tmpdir(), "mt-no-packages-"));
    site.server = await startServer({ port: 0, packages: site.packages });
    site.browser = await launchBrowser();
  });
  after(async () => {
    await site.browser?.close();
    site.server?.server.close();
    if (site.empty) fs.rmSync(site.empty, { recursive: true, force: true });
  });
  site.it = (name, body) => test(name, (t) => withPage(t, site.browser.context, body));
  return site;
}
