"""The README's commands and examples hold: each shell command it shows is run, by a test here, by another
test file, or by CI (.ci/run); its Python example prints what its comment says; the wheel `pip install .`
makes holds the emulator alone, with the extras the README names."""
from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()

# Where each shell command of the README runs: (file, text that file must contain to run it). The commands
# run here name the test that runs them.
RUN_BY = {
    "bash tools/main.sh": (".ci/run", "bash tools/main.sh"),
    "bash tools/test.sh": (".ci/run", "bash tools/test.sh"),
    ".venv/bin/python -m minitriton run my_script.py": (__file__, "def test_run_a_script"),
    ".venv/bin/python -m minitriton run -m pytest test_mine.py": (__file__, "def test_run_pytest_on_minitriton"),
    ".venv/bin/python -m minitriton run --picture my_script.py": ("tests/picture/test_picture_cli.py",
                                                                  'run_cli(tmp_path, "--picture", str(SCRIPT))'),
    ".venv/bin/python -m minitriton run --model H100 bench.py": ("tests/perf/test_do_bench.py",
                                                                 '"minitriton", "run", "--model"'),
    "pip install .": (__file__, "def test_wheel_holds_minitriton_alone"),
    "pip install '.[testing]'": (__file__, "def test_extras_resolve_offline"),
    "node web/serve.mjs": (__file__, "def test_serve_the_page"),
    ".venv/bin/python -m sandbox": ("tests/sandbox/test_server.py", '"-m", "sandbox"'),
}

_ENV = dict(os.environ, PYTHONPATH=str(ROOT))   # minitriton from this checkout, whatever the venv holds

SCRIPT = '''\
import numpy as np
import triton
import triton.language as tl


@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def run(n):
    x = np.arange(n, dtype=np.float32)
    out = np.empty_like(x)
    double[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)
    return x, out
'''


def _shell_blocks(text: str) -> list[list[str]]:
    """The commands of each ```sh block, comments stripped."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [[c for c in (line.split("  #")[0].strip() for line in b.splitlines()) if c] for b in blocks]


def test_every_readme_command_is_run_somewhere():
    commands = [c for block in _shell_blocks(README) for c in block]
    assert commands, "the README shows no ```sh block"
    assert sorted(commands) == sorted(RUN_BY), "a README command is new or gone: update RUN_BY"
    for command, (path, needle) in RUN_BY.items():
        assert needle in (ROOT / path).read_text(), f"{path} does not run `{command}` (no {needle!r})"


def test_exactly_two_setup_commands_come_first():
    assert _shell_blocks(README)[0] == ["bash tools/main.sh", "bash tools/test.sh"]


def test_python_example_prints_what_it_says(capsys):
    example = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    exec(_compiled(example, "README.md example"), {})
    expected = re.search(r"# (\d+) = 98432 \* 4", example).group(1)
    assert capsys.readouterr().out.strip() == expected == str(98432 * 4)


def test_dropping_the_mask_raises_what_the_readme_says():
    from minitriton import OutOfBoundsError
    example = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    assert example.count(", mask=mask") == 3
    with pytest.raises(OutOfBoundsError) as info:
        exec(_compiled(example.replace(", mask=mask", ""), "README.md example, unmasked"), {})
    message = str(info.value)
    assert "reads past the end of `x_ptr` (<README.md example, unmasked>:9, program (96,))" in message
    assert "lanes are out of range" in message and "fix: mask the tail" in message


def test_run_a_script(tmp_path):
    (tmp_path / "my_script.py").write_text(SCRIPT + '''
x, out = run(1000)
assert (out == 2 * x).all()
print("doubled", x.size)
''')
    done = subprocess.run([sys.executable, "-m", "minitriton", "run", "my_script.py"], cwd=tmp_path,
                          env=_ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "doubled 1000\n" and done.stderr == ""


def test_run_pytest_on_minitriton(tmp_path):
    (tmp_path / "my_script.py").write_text(SCRIPT)
    (tmp_path / "test_mine.py").write_text('''
import pytest
from my_script import run


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
def test_double(n):
    x, out = run(n)
    assert (out == 2 * x).all()
''')
    done = subprocess.run([sys.executable, "-m", "minitriton", "run", "-m", "pytest", "-q", "-p",
                           "no:cacheprovider", "test_mine.py"], cwd=tmp_path, env=_ENV, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node (tools/setup.sh installs it)")
def test_serve_the_page(tmp_path):
    """`node web/serve.mjs` serves the built page with the headers cross-origin isolation needs (here a
    stand-in page, so the test needs no build)."""
    (tmp_path / "index.html").write_text("<!doctype html><title>minitriton</title>")
    server = subprocess.Popen(["node", "web/serve.mjs", "--port=0", f"--dist={tmp_path}"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = re.fullmatch(r"serving (http://127\.0\.0\.1:\d+/)\n", server.stdout.readline()).group(1)
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and "<title>minitriton</title>" in page.read().decode()
            assert page.headers["Cross-Origin-Opener-Policy"] == "same-origin"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _pip(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """What `pip install .` reads (pyproject.toml, README.md, minitriton/), copied so that building leaves
    no build/ or egg-info folder in the repository."""
    src = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "minitriton", src / "minitriton", ignore=shutil.ignore_patterns("__pycache__"))
    return src


@pytest.fixture(scope="module")
def wheel(source, tmp_path_factory):
    """The wheel `pip install .` installs (built without network: setuptools comes from this venv)."""
    out = tmp_path_factory.mktemp("wheel")
    done = _pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(out), ".", cwd=source)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("minitriton-*.whl")
    return path


def test_wheel_holds_minitriton_alone(wheel, tmp_path):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"minitriton", "minitriton-0.1.0.dist-info"}, top
    assert "minitriton/testing/check.py" in names and "minitriton/__main__.py" in names
    site = tmp_path / "site"
    done = _pip("install", "--no-deps", "--no-index", "--target", str(site), str(wheel), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in site.iterdir()) == ["minitriton", "minitriton-0.1.0.dist-info"]


def test_wheel_metadata_names_the_extras(wheel):
    with zipfile.ZipFile(wheel) as z:
        meta = email.message_from_string(z.read("minitriton-0.1.0.dist-info/METADATA").decode())
    assert meta["License-Expression"] == "MIT"
    assert sorted(meta.get_all("Provides-Extra")) == ["reference", "test", "testing"]
    requires = meta.get_all("Requires-Dist")
    assert [r for r in requires if "extra" not in r] == ["numpy>=2.0"]
    assert 'hypothesis>=6.100; extra == "testing"' in requires
    assert 'triton==3.9.0; extra == "reference"' in requires


def test_extras_resolve_offline(source):
    """`pip install '.[testing]'` against what this venv holds: nothing but minitriton itself is missing."""
    done = _pip("install", "--dry-run", "--no-index", "--no-build-isolation", ".[testing]", cwd=source)
    assert done.returncode == 0, done.stderr
    assert "Would install minitriton-0.1.0" in done.stdout


def _compiled(source: str, name: str):
    """`source` compiled as the file `<name>`, its text registered with linecache (kernels read their source)."""
    import linecache
    filename = f"<{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return compile(source, filename, "exec")
