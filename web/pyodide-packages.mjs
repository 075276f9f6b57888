// Fills web/pyodide-packages/ with the wheels Pyodide loads on this machine, from the package registries only:
//   - NumPy's official Pyodide build. The Pyodide CDN is the only host that serves it by itself; PyPI's
//     gbdraw==0.14.2 carries the very file (gbdraw/web/vendor/pyodide-wheels/...). It is taken out of that
//     package and kept only if its sha256 equals the one in the shipped Pyodide's own pyodide-lock.json
//     (never trust the carrier);
//   - pytest, hypothesis and their pure-Python dependencies (pyodide-test-requirements.txt, hash-checked by
//     pip), to run the test suite inside Pyodide (web/pyodide-node.mjs --test-tools).
// Nothing is downloaded when the folder already holds the right files.
//
// Usage: node web/pyodide-packages.mjs [--python=PATH]   (tools/setup.sh runs it)
// The tests, web/measure.mjs and `python -m bench --runtime pyodide` read the folder; serve.mjs --packages=DIR
// serves it to the page.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const WEB = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(WEB);
export const PACKAGES_DIR = path.join(WEB, "pyodide-packages");
export const PYODIDE_DIR = path.join(WEB, "node_modules", "pyodide");
export const TEST_REQUIREMENTS = path.join(WEB, "pyodide-test-requirements.txt");
// The registry package that carries NumPy's Pyodide wheel for the pinned Pyodide, and where inside it.
const CARRIER = "gbdraw==0.14.2";
const CARRIER_DIR = "gbdraw/web/vendor/pyodide-wheels/";

export const sha256 = (file) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

export function pyodideLock() {
  return JSON.parse(fs.readFileSync(path.join(PYODIDE_DIR, "pyodide-lock.json"), "utf8"));
}

// numpy's entry in the shipped lock: {file_name, sha256, version, ...}.
export function numpyEntry() {
  const entry = pyodideLock().packages.numpy;
  if (!entry) throw new Error("Pyodide's pyodide-lock.json has no numpy entry");
  return entry;
}

// The numpy wheel in `dir` if its sha256 is the lock's; throws with what is wrong otherwise.
export function verifiedNumpy(dir = PACKAGES_DIR) {
  const { file_name: name, sha256: want } = numpyEntry();
  const file = path.join(dir, name);
  if (!fs.existsSync(file)) {
    throw new Error(`${file} is missing: run \`node web/pyodide-packages.mjs\` (or tools/setup.sh)`);
  }
  const got = sha256(file);
  if (got !== want) throw new Error(`${file} has sha256 ${got}, but Pyodide's lock says ${want}`);
  return file;
}

// The wheel files pyodide-test-requirements.txt names, as {name, version, sha256} (file names are pip's).
export function testRequirements() {
  return fs.readFileSync(TEST_REQUIREMENTS, "utf8").split("\n")
    .map((l) => /^([A-Za-z0-9_.-]+)==(\S+)\s+--hash=sha256:([0-9a-f]{64})/.exec(l.trim()))
    .filter(Boolean).map(([, name, version, sha]) => ({ name, version, sha256: sha }));
}

// Wheel files in `dir` whose hash is one of the test requirements' (one per requirement).
export function testWheels(dir = PACKAGES_DIR) {
  const wanted = new Map(testRequirements().map((r) => [r.sha256, r]));
  const found = new Map();
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (!f.endsWith(".whl")) continue;
    const r = wanted.get(sha256(path.join(dir, f)));
    if (r) found.set(r.name, path.join(dir, f));
  }
  return found;
}

function defaultPython() {
  const venv = path.join(ROOT, ".venv", "bin", "python");
  return fs.existsSync(venv) ? venv : "python3";
}

function pip(python, args) {
  try {
    execFileSync(python, ["-m", "pip", ...args], {
      stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
    });
  } catch (e) {
    process.stderr.write(String(e.stdout || "") + String(e.stderr || ""));
    throw new Error(`pip ${args.slice(0, 2).join(" ")} failed (${python})`);
  }
}

function fetchNumpy(python, dir) {
  const { file_name: name, sha256: want } = numpyEntry();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mt-numpy-"));
  try {
    pip(python, ["download", "-q", "--no-deps", "--only-binary=:all:", "-d", tmp, CARRIER]);
    const [carrier] = fs.readdirSync(tmp).filter((f) => f.endsWith(".whl"));
    if (!carrier) throw new Error(`pip download ${CARRIER} gave no wheel`);
    // The member is named as in the lock, except that Pyodide 0.29.4+ renamed the platform tag; take the
    // numpy wheel of the lock's version and let the hash decide.
    const member = execFileSync(python, ["-c", `
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = [n for n in z.namelist() if n.startswith(sys.argv[2]) and n.rsplit("/", 1)[1].startswith("numpy-" + sys.argv[3] + "-")]
if len(names) != 1:
    sys.exit(f"{sys.argv[1]} holds {len(names)} numpy-{sys.argv[3]} wheels under {sys.argv[2]}")
open(sys.argv[4], "wb").write(z.read(names[0]))
print(names[0])
`, path.join(tmp, carrier), CARRIER_DIR, numpyEntry().version, path.join(tmp, name)], { encoding: "utf8" }).trim();
    const got = sha256(path.join(tmp, name));
    if (got !== want) {
      throw new Error(`${member} in ${CARRIER} has sha256 ${got}, but Pyodide's lock says ${want}: not NumPy's `
        + `official build for this Pyodide; refusing it`);
    }
    fs.copyFileSync(path.join(tmp, name), path.join(dir, name));
    return member;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function fetchTestWheels(python, dir) {
  const py = pyodideLock().info.python.split(".").slice(0, 2).join(".");
  pip(python, ["download", "-q", "--no-deps", "--only-binary=:all:", "--require-hashes", "--python-version", py,
    "--platform", "any", "-d", dir, "-r", TEST_REQUIREMENTS]);
}

export function ensurePackages({ python = defaultPython(), dir = PACKAGES_DIR, log = console.log } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  try {
    verifiedNumpy(dir);
  } catch {
    const member = fetchNumpy(python, dir);
    log(`[pyodide-packages] ${numpyEntry().file_name}: taken from ${CARRIER} (${member}), sha256 equals the lock's`);
  }
  const missing = testRequirements().filter((r) => !testWheels(dir).has(r.name));
  if (missing.length) {
    fetchTestWheels(python, dir);
    log(`[pyodide-packages] test wheels: ${missing.map((r) => `${r.name}==${r.version}`).join(", ")}`);
  }
  const still = testRequirements().filter((r) => !testWheels(dir).has(r.name));
  if (still.length) throw new Error(`no wheel with the required hash for ${still.map((r) => r.name).join(", ")}`);
  return dir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const python = (process.argv.find((a) => a.startsWith("--python=")) || "").split("=")[1] || defaultPython();
  try {
    ensurePackages({ python });
    console.log(`[pyodide-packages] ${path.relative(ROOT, PACKAGES_DIR)}/ holds numpy ${numpyEntry().version} for `
      + `Pyodide ${JSON.parse(fs.readFileSync(path.join(PYODIDE_DIR, "package.json"), "utf8")).version} and the test wheels`);
  } catch (e) {
    console.error(`[pyodide-packages] FAILED: ${e.message}`);
    process.exit(1);
  }
}
