// web/serve.mjs: NumPy from the local packages folder by default, on `/` with no query parameter (the page's
// config.json names this server's /packages/), the CDN only when the folder lacks the wheel or --cdn says so.
// A stand-in site (config.json, the lock's numpy entry, a "wheel" whose sha256 the lock holds) is enough:
// no build, no browser, no network.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { numpyIn, startServer } from "../serve.mjs";

const SERVE = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), "serve.mjs");
const CDN = "https://cdn.jsdelivr.net/pyodide/v0.29.1/full/";
const WHEEL = "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl";
const BYTES = Buffer.from("not really numpy, but the bytes the lock's sha256 names");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mt-serve-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dist = path.join(tmp, "dist");
const packages = path.join(tmp, "packages");
const empty = path.join(tmp, "empty");
fs.mkdirSync(path.join(dist, "pyodide"), { recursive: true });
fs.mkdirSync(packages);
fs.mkdirSync(empty);
const config = { buildId: "b1", packageBaseUrl: CDN, wheel: { name: "minitriton" } };
fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>minitriton</title>");
fs.writeFileSync(path.join(dist, "config.json"), JSON.stringify(config));
const sha256 = createHash("sha256").update(BYTES).digest("hex");
fs.writeFileSync(path.join(dist, "pyodide", "pyodide-lock.json"),
  JSON.stringify({ packages: { numpy: { file_name: WHEEL, sha256 } } }));
fs.writeFileSync(path.join(packages, WHEEL), BYTES);

async function get(url) {
  const r = await fetch(url);
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()), headers: r.headers };
}

// `node web/serve.mjs ARGS` with PYODIDE_PACKAGES=folder: its two printed lines and the served config.json.
async function serveCli(args, folder) {
  const child = spawn(process.execPath, [SERVE, "--port=0", `--dist=${dist}`, ...args], {
    env: { ...process.env, PYODIDE_PACKAGES: folder }, stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = (await lines.next()).value;
    const second = (await lines.next()).value;
    const url = /^serving (http:\/\/127\.0\.0\.1:\d+\/)$/.exec(first)?.[1];
    assert.ok(url, `first line: ${first}`);
    const served = JSON.parse((await get(`${url}config.json`)).body);
    return { url, second, served };
  } finally {
    child.kill();
  }
}

test("the folder counts when it holds the wheel the site's lock names, with the lock's sha256", () => {
  assert.deepEqual(numpyIn(packages, dist), { ok: true, file: path.join(packages, WHEEL) });
  assert.match(numpyIn(empty, dist).why, /is missing$/);
  const wrong = path.join(tmp, "wrong");
  fs.mkdirSync(wrong);
  fs.writeFileSync(path.join(wrong, WHEEL), "tampered");
  assert.match(numpyIn(wrong, dist).why, new RegExp(`the lock says ${sha256}$`));
  assert.match(numpyIn(packages, empty).why, /no pyodide\/pyodide-lock.json naming numpy/);
});

test("with packages, `/`'s config names this server's /packages/ and the wheel is served from there", async () => {
  const { server, url } = await startServer({ port: 0, dist, packages });
  try {
    const served = JSON.parse((await get(`${url}config.json`)).body);
    assert.deepEqual(served, { ...config, packageBaseUrl: `${url}packages/` });
    const wheel = await get(new URL(WHEEL, served.packageBaseUrl).href);   // as the worker resolves it
    assert.equal(wheel.status, 200);
    assert.deepEqual(wheel.body, BYTES);
    assert.equal(wheel.headers.get("cross-origin-resource-policy"), "same-origin");
    const page = await get(url);
    assert.equal(page.status, 200);
    assert.match(page.body.toString(), /<title>minitriton<\/title>/);
  } finally {
    server.close();
  }
});

test("without packages the build's config is served as it is", async () => {
  const { server, url } = await startServer({ port: 0, dist });
  try {
    assert.deepEqual(JSON.parse((await get(`${url}config.json`)).body), config);
    assert.equal((await get(`${url}packages/${WHEEL}`)).status, 404);
  } finally {
    server.close();
  }
});

test("`node web/serve.mjs` serves the local NumPy on a plain URL, and says so", async () => {
  const { url, second, served } = await serveCli([], packages);
  assert.equal(served.packageBaseUrl, `${url}packages/`);
  assert.match(second, /NumPy from .*\/ \(at \/packages\/\): works offline, no CDN$/);
});

test("`node web/serve.mjs` says the page needs the internet when the folder lacks NumPy, or with --cdn", async () => {
  for (const [args, folder, why] of [[[], empty, /is missing/], [["--cdn"], packages, /\(--cdn\)$/]]) {
    const { second, served } = await serveCli(args, folder);
    assert.equal(served.packageBaseUrl, CDN);
    assert.ok(second.startsWith(`  NumPy from ${CDN}: the page needs the internet`), second);
    assert.match(second, why);
  }
});
