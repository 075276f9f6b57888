"""`python -m minitriton run --picture` and `minitriton.picture.recording`: the page they write holds every
program's accesses (checked against offsets computed here with NumPy), the values, the launches before a
failure, and loads nothing from the network."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitriton
import minitriton.language as tl
from minitriton import picture
from minitriton.picture.data import runs

SCRIPT = Path(__file__).with_name("picture_tiles.py")
ROOT = Path(__file__).resolve().parents[2]


def run_cli(tmp_path, *args, env=None):
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "minitriton", "run", *args], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=120)


def embedded(path) -> dict:
    text = Path(path).read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="picture-data">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


def script_line(needle: str) -> int:
    return next(i for i, line in enumerate(SCRIPT.read_text().splitlines(), 1) if needle in line)


def expected_program(M, N, pm, pn, bm=4, bn=4):
    """What program (pm, pn) of scale_rows touches, computed with NumPy alone: offsets of x and out under the
    mask, the masked-off lanes' offsets, the rows of sums it adds to."""
    rows = pm * bm + np.arange(bm)
    cols = pn * bn + np.arange(bn)
    offs = rows[:, None] * N + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    return offs[mask], offs[~mask], rows[rows < M], rows[rows >= M]


def check_scale_rows(pic, M, N):
    grid = [-(-M // 4), -(-N // 4), 1]
    assert pic["launch"]["kernel"] == "scale_rows" and pic["launch"]["grid"] == grid
    assert pic["traced"] == grid[0] * grid[1] == len(pic["programs"])
    lines = [script_line("tl.load(x_ptr"), script_line("tl.store(out_ptr"), script_line("tl.atomic_add(")]
    for prog in pic["programs"]:
        pm, pn, _ = prog["program"]
        inside, outside, sum_rows, sum_masked = expected_program(M, N, pm, pn)
        t = prog["tensors"]
        assert t["x_ptr"]["loaded"] == runs(inside) and t["x_ptr"]["stored"] == []
        assert t["out_ptr"]["stored"] == runs(inside) and t["out_ptr"]["loaded"] == []
        assert t["sums_ptr"]["atomic"] == runs(sum_rows)
        assert t["x_ptr"].get("masked", []) == runs(outside)
        assert t["sums_ptr"].get("masked", []) == runs(sum_masked)
        assert [(s["line"], s["kind"], s["tensor"]) for s in prog["steps"]] == list(zip(
            lines, ["load", "store", "atomic"], ["x_ptr", "out_ptr", "sums_ptr"]))
        assert prog["steps"][0]["offsets"] == runs(inside) and prog["steps"][0]["masked"] == runs(outside)
    source = pic["launch"]["source"]
    first = script_line("@triton.jit")
    assert source["file"] == SCRIPT.name and source["first_line"] == first
    assert source["lines"] == SCRIPT.read_text().splitlines()[first - 1:script_line("tl.atomic_add(")]
    x = (np.arange(M * N, dtype=np.float32) / 4).reshape(M, N)
    assert pic["values"]["x_ptr"] == x.ravel().tolist()
    assert pic["values"]["out_ptr"] == (2 * x).ravel().tolist()
    assert np.allclose(pic["values"]["sums_ptr"], x.sum(axis=1))


def test_run_picture_writes_every_program_of_every_launch(tmp_path):
    done = run_cli(tmp_path, "--picture", str(SCRIPT))
    assert done.returncode == 0, done.stderr
    page = tmp_path / picture.DEFAULT_PATH
    assert done.stdout.strip() == "done"
    assert done.stderr.strip().splitlines()[-1] == f"minitriton: memory picture of 2 launches: {page.resolve()}"
    data = embedded(page)
    assert data["lang"] == "en" and data["error"] is None and data["left_out"]["launches"] == 0
    assert [(L["kernel"], L["grid"]) for L in data["launches"]] == [("scale_rows", [2, 2, 1]), ("scale_rows", [2, 1, 1])]
    for pic, (M, N) in zip(data["pictures"], ((5, 7), (6, 3))):
        check_scale_rows(pic, M, N)
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"(?i)\b(https?|wss?|ftp):", html), "the page names no URL"
    assert not re.search(r"\b(src|href)=", html), "the page links nothing"
    assert "default-src 'none'" in html


def test_a_failing_script_still_writes_the_launches_before_the_failure(tmp_path):
    done = run_cli(tmp_path, "--picture=failed.html", "--lang", "ru", str(SCRIPT), "fail")
    assert done.returncode == 1
    err = done.stderr.strip().splitlines()
    assert any("OutOfBoundsError" in line for line in err), done.stderr
    assert err[-1].endswith(str((tmp_path / "failed.html").resolve())), "the page's path comes last"
    data = embedded(tmp_path / "failed.html")
    assert data["lang"] == "ru"
    assert data["error"]["type"] == "OutOfBoundsError" 
    assert f"picture_tiles.py:{script_line('tl.store(out_ptr + offs, tl.load')}" in data["error"]["message"]
    assert "x_ptr" in data["error"]["message"] and "программ" in data["error"]["message"], "the error in Russian"
    for pic, (M, N) in zip(data["pictures"][:2], ((5, 7), (6, 3))):
        check_scale_rows(pic, M, N)


@pytest.mark.parametrize("env, lang", [({"LANG": "ru_RU.UTF-8", "LC_ALL": ""}, "ru"),
                                       ({"LANG": "C.UTF-8", "LC_ALL": ""}, "en")])
def test_the_language_follows_the_locale(tmp_path, env, lang):
    done = run_cli(tmp_path, "--picture", str(SCRIPT), env=env)
    assert done.returncode == 0, done.stderr
    assert embedded(tmp_path / picture.DEFAULT_PATH)["lang"] == lang


def test_bad_lang_is_refused(tmp_path):
    done = run_cli(tmp_path, "--picture", "--lang=de", str(SCRIPT))
    assert done.returncode == 2 and "--lang" in done.stderr
    assert not (tmp_path / picture.DEFAULT_PATH).exists()


@minitriton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def test_recording_in_code_keeps_the_first_launches_and_programs(tmp_path):
    x = np.zeros(100, np.float32)
    with picture.recording(tmp_path / "p.html", lang="en", max_launches=2, max_programs=3) as drawn:
        for _ in range(5):
            add_one[(7,)](x, 100, BLOCK=16)
    assert drawn.path == str((tmp_path / "p.html").resolve())
    data = embedded(drawn.path)
    assert len(data["pictures"]) == 2 and data["left_out"]["launches"] == 3
    assert data["left_out"]["max_programs"] == 3
    for i, pic in enumerate(data["pictures"]):
        assert pic["traced"] == 3 and pic["launch"]["num_programs"] == 7
        assert [p["program"] for p in pic["programs"]] == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
        assert pic["programs"][1]["tensors"]["x_ptr"]["stored"] == runs(np.arange(16, 32))
        assert pic["values"]["x_ptr"] == [float(i + 1)] * 100, "the values after each launch"
    assert (x == 5).all()


def test_recording_writes_the_page_when_the_block_fails(tmp_path):
    x = np.zeros(10, np.float32)
    with pytest.raises(ZeroDivisionError):
        with picture.recording(tmp_path / "p.html", lang="ru"):
            add_one[(1,)](x, 10, BLOCK=16)
            1 / 0
    data = embedded(tmp_path / "p.html")
    assert data["error"]["type"] == "ZeroDivisionError" and len(data["pictures"]) == 1
    masked = data["pictures"][0]["programs"][0]["tensors"]["x_ptr"]["masked"]
    assert masked == runs(np.arange(10, 16)), "the masked lanes past the end, where they point"


def test_the_page_escapes_what_could_end_its_script(tmp_path):
    payload = {"lang": "en", "title": "</script><b>", "launches": [], "pictures": [], "left_out": {},
               "error": {"type": "E", "message": "</script><script>alert(1)</script>", "nan": float("nan")}}
    html = picture.page.render(payload)
    assert html.count("</script>") == 2, "the data and the viewer's own ends only"
    assert "&lt;/script&gt;" in html.split("<style>")[0]


def test_recording_stops_tracing_once_the_pages_data_is_full(tmp_path):
    x = np.zeros(100, np.float32)
    with picture.recording(tmp_path / "p.html", max_bytes=1) as drawn:
        for _ in range(3):
            add_one[(7,)](x, 100, BLOCK=16)
    data = embedded(drawn.path)
    assert len(data["pictures"]) == 1 and data["left_out"]["launches"] == 2
    assert data["pictures"][0]["traced"] == 7
