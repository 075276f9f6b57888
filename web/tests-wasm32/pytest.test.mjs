// The emulator's own test suite inside Pyodide (wasm32: 32-bit np.intp, no threads, no subprocesses), under
// Node with NumPy's official Pyodide wheel: pytest on tests/ as the CPython run collects it, minus the tests
// marked as needing Triton's interpreter or torch. Tests that start a subprocess or a thread are skipped with
// that reason (web/wasm32_pytest_plugin.py); torch-only tests skip themselves (importorskip).
// The whole pytest output goes to web/test-results/pytest-wasm32.log; the counts are printed as diagnostics.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { RESULTS, ROOT, WEB } from "../tests/helpers.mjs";

const SELECT = "not interpreter and not torch";

test("the test suite passes inside Pyodide (wasm32)", { timeout: 60 * 60 * 1000 }, async (t) => {
  fs.mkdirSync(RESULTS, { recursive: true });
  const logFile = path.join(RESULTS, "pytest-wasm32.log");
  const args = [path.join(WEB, "pyodide-node.mjs"), "--test-tools", "-m", "pytest", "-p", "wasm32_pytest_plugin",
    "-p", "no:cacheprovider", "-q", "-rs", "-m", SELECT, "tests"];
  const t0 = Date.now();
  const { code, out } = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, CI: process.env.CI ?? "true" } });
    let out = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { out += d; });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, out }));
  });
  fs.writeFileSync(logFile, out);
  const summary = out.trim().split("\n").filter((l) => / in [\d.]+s/.test(l)).pop() ?? "(no pytest summary line)";
  const count = (what) => Number((new RegExp(`(\\d+) ${what}`).exec(summary) || [0, 0])[1]);
  const reasons = {};
  for (const m of out.matchAll(/^SKIPPED \[(\d+)\] [^:]+:\d+: (.*)$/gm)) {
    const why = /torch|triton/i.test(m[2]) ? "needs torch or Triton" : m[2];
    reasons[why] = (reasons[why] ?? 0) + Number(m[1]);
  }
  const ran = count("passed") + count("failed") + count("error");
  t.diagnostic(`pytest inside Pyodide (wasm32), -m "${SELECT}": ${summary.replace(/=/g, "").trim()}`);
  t.diagnostic(`ran ${ran}, passed ${count("passed")}, failed ${count("failed")}, errors ${count("error")}; `
    + `skipped ${count("skipped")}: ${Object.entries(reasons).map(([k, v]) => `${v} ${k}`).join("; ")}; `
    + `${((Date.now() - t0) / 1000).toFixed(0)} s; full log: web/test-results/pytest-wasm32.log`);
  assert.equal(code, 0, `pytest inside Pyodide failed (exit ${code}):\n${out.slice(-6000)}`);
  assert.ok(count("passed") > 1000, `too few tests ran: ${summary}`);
});
