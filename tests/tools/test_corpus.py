"""parity.corpus: real Triton kernels from open-source projects, fetched from PyPI at pinned versions.

The manifest, the hash check and the classification of outcomes are tested on archives and outcomes made
here; one real case (mamba's state passing, from the smallest archive) runs on both backends when the cache
holds it or PyPI can be reached, and is skipped with the reason otherwise.
"""
from __future__ import annotations

import hashlib
import io
import re
import urllib.error
import zipfile

import pytest

from parity.corpus import causes, manifest
from parity.corpus.__main__ import classify, run
from parity.corpus.cases import CASES


def test_the_manifest_pins_every_source_and_the_corpus_is_large_enough():
    for p in manifest.PROJECTS + manifest.DEPENDENCIES:
        assert re.fullmatch(r"[0-9a-f]{64}", p.sha256), p.package
        assert p.url.startswith(manifest.FILES) and p.url.rsplit("/", 1)[1].startswith(p.package.replace("-", "_"))
        assert p.version in p.url and p.licence and p.members
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert {c.project for c in CASES} <= {p.name for p in manifest.PROJECTS}
    assert len(CASES) >= 30 and len({c.project for c in CASES}) >= 4


def _wheel(files: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


def test_fetch_extracts_only_the_members_of_an_archive_with_the_pinned_hash(tmp_path, monkeypatch):
    monkeypatch.setattr(manifest, "CACHE", tmp_path / "cache")
    data = _wheel({"lib/ops/k.py": "x = 1\n", "lib/models/big.py": "y = 2\n", "lib-1.0.dist-info/METADATA": ""})
    archive = tmp_path / "lib-1.0-py3-none-any.whl"
    archive.write_bytes(data)
    good = manifest.Project("lib", "lib", "1.0", "MIT", "example", manifest.FILES + "lib-1.0-py3-none-any.whl",
                            hashlib.sha256(data).hexdigest(), ("lib/ops/",))
    manifest.fetch(good, archive, log=lambda *_: None)
    assert (good.folder / "lib/ops/k.py").read_text() == "x = 1\n"
    assert not (good.folder / "lib/models").exists() and manifest.is_cached(good)

    bad = manifest.Project("bad", "bad", "1.0", "MIT", "example", good.url, "0" * 64, ("lib/",))
    with pytest.raises(ValueError, match="is not the pinned"):
        manifest.fetch(bad, archive, log=lambda *_: None)
    assert not bad.folder.exists() and not manifest.is_cached(bad)


def test_a_non_passing_outcome_is_explained_only_by_its_named_cause():
    error = {"outcome": "error", "detail": "RuntimeError('0 active drivers ([]). There should only be one.')"}
    other = {"outcome": "error", "detail": "NameError('x')"}
    fail = {"outcome": "fail", "detail": "out: 3 of 8 beyond the tolerance"}
    ok = {"outcome": "pass", "max_err": 0.0}
    rows = [{"name": "fla logsumexp", "minitriton": dict(ok), "interpreter": dict(error)},
            {"name": "fla logsumexp", "minitriton": dict(fail), "interpreter": dict(other)}]
    assert classify(rows, ["minitriton", "interpreter"]) == 2
    assert rows[0]["interpreter"]["cause"] == causes.NO_DRIVER.key and "cause" not in rows[0]["minitriton"]
    assert rows[1]["minitriton"]["cause"] == rows[1]["interpreter"]["cause"] == "UNEXPLAINED"


def _mamba_cached() -> bool:
    needed = [manifest.project("mamba")] + list(manifest.DEPENDENCIES)
    try:
        for p in needed:
            manifest.fetch(p, log=lambda *_: None)
    except (urllib.error.URLError, OSError) as e:
        pytest.skip(f"the corpus cache lacks mamba-ssm and PyPI cannot be reached: {e}")
    return True


def test_a_real_kernel_runs_on_minitriton_and_its_interpreter_outcome_is_named():
    _mamba_cached()
    name = "mamba ssd state_passing"
    rows = [{"name": name}]
    for backend in ("minitriton", "interpreter"):
        _, got = run(backend, [name], jobs=1, timeout=300)
        rows[0][backend] = got[name]
    assert rows[0]["minitriton"]["outcome"] == "pass" and rows[0]["minitriton"]["max_err"] < 1e-5
    assert classify(rows, ["minitriton", "interpreter"]) == 0
    assert rows[0]["interpreter"]["cause"] == causes.CUDA_DEVICE.key
