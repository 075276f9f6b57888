// A page's screenshot compared against its committed reference in web/tests/screenshots/<name>.png, both at half
// the page's size (each pixel the mean of 2x2: a tenth of the bytes to keep, and a text's shape still shows):
// pixelmatch with its colour threshold 0.1 (anti-aliasing is not counted); at most TOLERANCE of the pixels may
// differ.
// Regions that change from run to run (timings, the boot strip) are masked. `UPDATE_SCREENSHOTS=1` writes the
// references instead of comparing. On a mismatch the actual image and the difference go to web/test-results/.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pixelmatch from "pixelmatch";
import { PNG } from "pngjs";
import { RESULTS } from "./helpers.mjs";

export const REFERENCES = path.join(path.dirname(fileURLToPath(import.meta.url)), "screenshots");
export const TOLERANCE = 0.01;
const VOLATILE = ["#run-status", "#boot", ".cm-cursor"];

export async function matchScreenshot(page, name) {
  const mask = VOLATILE.map((sel) => page.locator(sel));
  const shot = halved(PNG.sync.read(await page.screenshot({ animations: "disabled", caret: "hide", mask,
    maskColor: "#ff00ff" })));
  const file = path.join(REFERENCES, `${name}.png`);
  if (process.env.UPDATE_SCREENSHOTS === "1") {
    fs.mkdirSync(REFERENCES, { recursive: true });
    fs.writeFileSync(file, PNG.sync.write(shot, { colorType: 2 }));
    return { written: file };
  }
  assert.ok(fs.existsSync(file), `no reference screenshot ${path.relative(process.cwd(), file)} `
    + "(UPDATE_SCREENSHOTS=1 writes it)");
  const ref = PNG.sync.read(fs.readFileSync(file));
  const save = (suffix, png) => {
    fs.mkdirSync(RESULTS, { recursive: true });
    const out = path.join(RESULTS, `screenshot-${name}.${suffix}.png`);
    fs.writeFileSync(out, PNG.sync.write(png));
    return path.relative(process.cwd(), out);
  };
  if (ref.width !== shot.width || ref.height !== shot.height) {
    assert.fail(`${name}: the screenshot is ${shot.width}x${shot.height}, its reference ${ref.width}x${ref.height} `
      + `(actual: ${save("actual", shot)})`);
  }
  const diff = new PNG({ width: ref.width, height: ref.height });
  const differing = pixelmatch(ref.data, shot.data, diff.data, ref.width, ref.height, { threshold: 0.1 });
  const ratio = differing / (ref.width * ref.height);
  if (ratio > TOLERANCE) {
    assert.fail(`${name}: ${differing} pixels (${(100 * ratio).toFixed(2)} %) differ from the reference, more than `
      + `${100 * TOLERANCE} % (actual: ${save("actual", shot)}, difference: ${save("diff", diff)})`);
  }
  return { differing, ratio };
}

function halved(png) {
  const width = png.width >> 1, height = png.height >> 1;
  const out = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 4; c++) {
        const at = (dy, dx) => png.data[((2 * y + dy) * png.width + 2 * x + dx) * 4 + c];
        out.data[(y * width + x) * 4 + c] = (at(0, 0) + at(0, 1) + at(1, 0) + at(1, 1) + 2) >> 2;
      }
    }
  }
  return out;
}
