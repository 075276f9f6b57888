// The memory picture of any script (`python -m minitriton run --picture`): the viewer minitriton ships is the
// build of the page's own sources, and the page it writes for a script that is not an exercise works in
// Chromium from file:// with every network request blocked: a launch picked with the keyboard, a program with
// the mouse, the steps in order with their kernel lines (marked in the kernel's source beside the picture),
// masked lanes drawn in and outside the tensor, and the tooltip giving the element's value.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { buildViewer, VIEWER_DIR } from "../build.mjs";
import { PYTHON, ROOT, launchBrowser, withPage } from "./helpers.mjs";

const SCRIPT = path.join(ROOT, "tests", "picture", "picture_tiles.py");
const SOURCE = fs.readFileSync(SCRIPT, "utf8").split("\n");
const lineOf = (needle) => SOURCE.findIndex((l) => l.includes(needle)) + 1;
const COLORS = { loaded: [0x2f, 0x7f, 0xd1], stored: [0xf0, 0x8a, 0x24], both: [0x8a, 0x4f, 0xbf], masked: [0x9a, 0xa3, 0xad],
  other: [0xc6, 0xd3, 0xe1], none: [0xe8, 0xeb, 0xef] };

test("the committed viewer (minitriton/picture/viewer.*) is the build of web/src/picture.js", async () => {
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "mt-viewer-"));
  try {
    await buildViewer(fresh);
    for (const f of ["viewer.js", "viewer.css"]) {
      assert.ok(fs.readFileSync(path.join(fresh, f)).equals(fs.readFileSync(path.join(VIEWER_DIR, f))),
        `minitriton/picture/${f} differs from a fresh build: run \`node web/build.mjs --viewer\` and commit it`);
    }
  } finally {
    fs.rmSync(fresh, { recursive: true, force: true });
  }
});

// `python -m minitriton run ARGS SCRIPT ...` in a fresh folder; the page's path (from the last stderr line).
function drawScript(dir, args, scriptArgs = []) {
  const done = spawnSync(PYTHON, ["-m", "minitriton", "run", ...args, SCRIPT, ...scriptArgs], {
    cwd: dir, encoding: "utf8", env: { ...process.env, PYTHONPATH: ROOT, LANG: "C.UTF-8", LC_ALL: "" },
  });
  const last = done.stderr.trim().split("\n").pop();
  const m = /^minitriton: memory picture of (\d+) launches: (.+)$/.exec(last);
  assert.ok(m, `the last stderr line names the page:\n${done.stderr}`);
  return { status: done.status, launches: Number(m[1]), file: m[2] };
}

describe("a script's memory picture, opened from file://", () => {
  let browser, dir;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-picture-"));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // The page opened with every request but its own file refused and recorded.
  async function open(page, file) {
    const requests = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url === pathToFileURL(file).href) return route.continue();
      requests.push(url);
      return route.abort();
    });
    page.on("request", (r) => { if (r.url() !== pathToFileURL(file).href) requests.push(r.url()); });
    await page.goto(pathToFileURL(file).href);
    await page.locator("#memory-panel figure.tensor").first().waitFor();
    return requests;
  }

  const colourAt = (page, name, offset) => page.evaluate(([n, o, colors]) => {
    const c = window.__picture.cell(n, o);
    if (!c) return null;
    const canvas = document.querySelector(`#memory-panel figure[data-tensor="${n}"] canvas`);
    const rgb = [...canvas.getContext("2d").getImageData(Math.floor(c.canvasX), Math.floor(c.canvasY), 1, 1).data];
    return Object.entries(colors).find(([, v]) => v.every((x, i) => x === rgb[i]))?.[0] ?? `rgb(${rgb})`;
  }, [name, offset, COLORS]);

  test("launches, programs, steps, masked lanes and values", async (t) => {
    const { status, launches, file } = drawScript(dir, ["--picture"]);
    assert.equal(status, 0);
    assert.equal(launches, 2);
    assert.equal(file, path.join(fs.realpathSync(dir), "minitriton-picture.html"));
    await withPage(t, browser.context, async (page, log) => {
      const requests = await open(page, file);
      const fig = (name) => page.locator(`#memory-panel figure[data-tensor="${name}"]`);
      const programText = () => page.locator("#mem-program-text").innerText();

      // launch 1 (x is 5×7, grid (2, 2)), program (0, 1): columns 4…7, the last one masked off; its masked
      // lanes point at the first element of the next row, inside the tensor, which no lane of it loads
      assert.match(await page.locator("#mem-launch option:checked").innerText(), /Launch 1: scale_rows, grid \(2, 2\)/);
      await page.click("#mem-next");
      assert.match(await programText(), /^\(0, 1\) · 2 of 4$/);
      assert.equal(await fig("x_ptr").getAttribute("data-loaded"), "12");
      assert.equal(await fig("x_ptr").getAttribute("data-masked"), "4");
      assert.equal(await colourAt(page, "x_ptr", 7), "masked", "x[1, 0]: where program (0, 1)'s masked lane points");
      assert.equal(await colourAt(page, "x_ptr", 5), "loaded");
      assert.equal(await colourAt(page, "out_ptr", 5), "stored");
      assert.equal(await colourAt(page, "sums_ptr", 2), "both", "an atomic_add reads and writes");
      assert.equal(await colourAt(page, "x_ptr", 0), "other", "loaded by program (0, 0)");

      // launch 2 (x is 6×3, grid (2, 1)) picked with the keyboard, its second program with the mouse
      await page.focus("#mem-launch");
      await page.keyboard.press("ArrowDown");
      await page.waitForFunction(() => document.querySelector('#memory-panel figure[data-tensor="x_ptr"] figcaption')?.textContent.includes("[6×3]"));
      assert.match(await programText(), /^0 · 1 of 2$/);
      await page.click("#mem-next");
      assert.match(await programText(), /^1 · 2 of 2$/);
      // rows 4…7 and columns 0…3 of a 6×3 tensor: 6 lanes inside, 10 masked off at 8 distinct offsets,
      // 7 of them past the end (drawn in the ghost rows below the tensor, as far as those reach)
      const masked = new Set();
      for (const r of [4, 5, 6, 7]) for (const c of [0, 1, 2, 3]) if (!(r < 6 && c < 3)) masked.add(r * 3 + c);
      assert.equal(await fig("x_ptr").getAttribute("data-loaded"), "6");
      assert.equal(await fig("x_ptr").getAttribute("data-masked"), String(masked.size));
      const below = await page.evaluate(() => [window.__picture.cell("x_ptr", 17), window.__picture.cell("x_ptr", 20)]);
      assert.ok(below[1].y > below[0].y, "offset 20 lies below the tensor's last row");
      assert.equal(await colourAt(page, "x_ptr", 20), "masked");
      assert.equal(await colourAt(page, "x_ptr", 23), "masked");
      assert.match(await fig("x_ptr").locator("figcaption").innerText(), /outside the tensor/);

      // its accesses in order, each with its kernel line, marked in the kernel's source beside the picture
      const marked = await page.locator("#kernel-source .src-line.access").evaluateAll((els) => els.map((e) => Number(e.dataset.line)));
      assert.deepEqual(marked, [lineOf("tl.load(x_ptr"), lineOf("tl.store(out_ptr"), lineOf("tl.atomic_add(")]);
      await page.focus("#mem-step");
      const steps = [["tl.load(x_ptr", "tl.load x_ptr"], ["tl.store(out_ptr", "tl.store out_ptr"], ["tl.atomic_add(", "tl.atomic sums_ptr"]];
      for (const [i, [needle, op]] of steps.entries()) {
        await page.keyboard.press("ArrowRight");
        assert.equal(await page.locator("#mem-step-text").innerText(), `step ${i + 1} of 3: line ${lineOf(needle)}, ${op}`);
        const current = page.locator("#kernel-source .src-line.current");
        assert.equal(await current.getAttribute("data-line"), String(lineOf(needle)), "the kernel's source shows the step's line");
        assert.ok((await current.innerText()).includes(needle));
      }
      assert.equal(await fig("x_ptr").getAttribute("data-loaded"), "0", "the atomic step touches sums only");
      assert.equal(await fig("sums_ptr").getAttribute("data-masked"), "2", "rows 6 and 7 of sums are masked off");

      // hover: out[3, 1] after the launch is 2 · x[3, 1] = 2 · 10 / 4
      const at = await page.evaluate(() => window.__picture.cell("out_ptr", 10));
      await page.mouse.move(at.x, at.y);
      const tip = page.locator("#memory-panel .mem-tip");
      await tip.waitFor();
      assert.match(await tip.innerText(), /out_ptr\[3, 1\]/);
      assert.match(await tip.innerText(), /value 5\b/);
      assert.match(await tip.innerText(), /stored by: 0$/m, "row 3 is program 0's (a grid of (2,) is written as 1-D)");
      const atX = await page.evaluate(() => window.__picture.cell("x_ptr", 13));
      await page.mouse.move(atX.x, atX.y);
      assert.match(await tip.innerText(), /x_ptr\[4, 1\]/);
      assert.match(await tip.innerText(), /value 3\.25\b/);
      assert.match(await tip.innerText(), /loaded by: 1$/m);

      assert.deepEqual(requests, [], "the page requests nothing");
      assert.deepEqual(log.filter((l) => /error|failed/i.test(l)), []);
    });
  });

  test("what was left out is said, in both languages", async (t) => {
    // minitriton.picture.recording in code, kept to 1 launch of at most 3 programs
    const code = "import runpy, sys, minitriton\nminitriton.install()\n"
      + "with minitriton.picture.recording(sys.argv[1], lang=sys.argv[2], max_launches=1, max_programs=3):\n"
      + "    runpy.run_path(sys.argv[3], run_name='__main__')\n";
    const texts = { en: [/^Launches drawn: 1; later ones not drawn \(over the limit\): 1\.$/, /^The first 3 of 4 programs are traced\.$/],
      ru: [/^Нарисовано запусков: 1; следующие не нарисованы \(сверх предела\): 1\.$/, /^Прослежены первые 3 программ из 4\.$/] };
    for (const [lang, [launchesNote, programsNote]] of Object.entries(texts)) {
      const file = path.join(dir, `left-out-${lang}.html`);
      execFileSync(PYTHON, ["-c", code, file, lang, SCRIPT], { env: { ...process.env, PYTHONPATH: ROOT }, stdio: "ignore" });
      await withPage(t, browser.context, async (page) => {
        assert.deepEqual(await open(page, file), []);
        assert.match(await page.locator("#picture-left-out").innerText(), launchesNote);
        assert.equal(await page.locator("#mem-launch option").count(), 1);
        assert.ok((await page.locator("#memory-panel p.note").allInnerTexts()).some((n) => programsNote.test(n)));
      });
    }
  });

  test("a failing script: the launches before the failure, the error, in Russian", async (t) => {
    const { status, launches, file } = drawScript(dir, ["--picture=failed.html", "--lang", "ru"], ["fail"]);
    assert.equal(status, 1);
    assert.ok(launches >= 2);
    await withPage(t, browser.context, async (page) => {
      const requests = await open(page, file);
      assert.match(await page.locator("#picture-error").innerText(), /Скрипт остановился с ошибкой[\s\S]*OutOfBoundsError/);
      const options = await page.locator("#mem-launch option").allInnerTexts();
      assert.match(options[0], /^Запуск 1: scale_rows, сетка \(2, 2\)/);
      assert.match(options[1], /^Запуск 2: scale_rows, сетка \(2,\)/);
      // the panel opens on the failed launch's failing program, the last that ran
      assert.match(await page.locator("#mem-program-text").innerText(), /^1 · 2 из 2 · здесь ошибка$/);
      assert.deepEqual(requests, []);
    });
  });
});
