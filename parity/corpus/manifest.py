"""The corpus's sources: published packages of open-source Triton projects, pinned by version and SHA-256.

Nothing of them is in this repository. `fetch()` downloads each archive from PyPI's file host, refuses one
whose SHA-256 differs, and extracts only the members the cases import into the cache (git-ignored
`build/corpus/<name>/`, small enough to carry to a GPU machine without network). `DEPENDENCIES` are pure-Python
packages some kernel modules import (einops, packaging); they go to `build/corpus/_deps/` and are used only where
the Python running the corpus lacks them.
"""
from __future__ import annotations

import hashlib
import io
import pathlib
import shutil
import tarfile
import urllib.request
import zipfile
from dataclasses import dataclass

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = REPO_ROOT / "build" / "corpus"
FILES = "https://files.pythonhosted.org/packages/"


@dataclass(frozen=True)
class Project:
    name: str           # the cache folder and the project's name in the report
    package: str        # the PyPI distribution
    version: str
    licence: str
    home: str           # where the project lives
    url: str            # the archive, as PyPI lists it
    sha256: str
    members: tuple      # path prefixes inside the archive to extract (after `strip`)
    strip: str = ""     # a leading folder of an sdist

    @property
    def folder(self) -> pathlib.Path:
        return CACHE / self.name


PROJECTS = (
    Project("liger-kernel", "liger-kernel", "0.8.5", "BSD-2-Clause", "github.com/linkedin/Liger-Kernel",
            FILES + "8f/73/9667e4a05457e99ec921380df8d279fbcb8f8e8bd76b033ee0c82bb1d3a0/"
                    "liger_kernel-0.8.5-py3-none-any.whl",
            "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9",
            ("liger_kernel/",)),
    Project("fla", "fla-core", "0.6.0", "MIT", "github.com/fla-org/flash-linear-attention",
            FILES + "23/08/a1a16725117cddded90bb11afed4b31f23d97f7f554775e66af998818ef9/"
                    "fla_core-0.6.0-py3-none-any.whl",
            "b0708b70e0b119cd58a0a5146ea56cb175cef6ed969d8ac60267e3e077ce3ebd",
            ("fla/",)),
    Project("mamba", "mamba-ssm", "2.3.2.post1", "Apache-2.0", "github.com/state-spaces/mamba",
            FILES + "af/48/aa7bec0efc7453fa0512276c0069c854bf684219050294266534bfef34bb/"
                    "mamba_ssm-2.3.2.post1.tar.gz",
            "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028",
            ("mamba_ssm/ops/triton/", "mamba_ssm/utils/"),
            strip="mamba_ssm-2.3.2.post1/"),
    Project("unsloth", "unsloth", "2026.10.9", "Apache-2.0", "github.com/unslothai/unsloth",
            FILES + "c4/1b/c8d6f64fb4b45625cb2842bd4fad7e7c8fb4c54afc16e0a9ef444ef10079/"
                    "unsloth-2026.10.9-py3-none-any.whl",
            "feb40b99bc4f8c543a36cbd0fe6e1410d6e4ac16bd4d0c731f607adce3d63bb0",
            ("unsloth/kernels/",)),
)

DEPENDENCIES = (
    Project("_deps", "einops", "0.8.2", "MIT", "github.com/arogozhnikov/einops",
            FILES + "2a/09/f8d8f8f31e4483c10a906437b4ce31bdf3d6d417b73fe33f1a8b59e34228/"
                    "einops-0.8.2-py3-none-any.whl",
            "54058201ac7087911181bfec4af6091bb59380360f069276601256a76af08193", ("einops/",)),
    Project("_deps", "packaging", "26.4", "Apache-2.0 OR BSD-2-Clause", "github.com/pypa/packaging",
            FILES + "ba/7b/5504f91c9c2733f693d7759e50ede5d27119d4da7e5836c46d3b5ff81d56/"
                    "packaging-26.4-py3-none-any.whl",
            "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2", ("packaging/",)),
)


def project(name: str) -> Project:
    return next(p for p in PROJECTS if p.name == name)


def is_cached(p: Project) -> bool:
    return (p.folder / f".{p.package}-{p.sha256[:16]}").exists()


def _members(data: bytes, url: str):
    """(path, bytes) of every file in a wheel or an sdist."""
    if url.endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                if not info.is_dir():
                    yield info.filename, z.read(info)
    else:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
            for m in t.getmembers():
                if m.isfile():
                    yield m.name, t.extractfile(m).read()


def fetch(p: Project, archive: pathlib.Path | None = None, log=print) -> None:
    """Put `p`'s members into its cache folder; `archive` is a file downloaded by hand (same hash)."""
    if is_cached(p):
        return
    data = archive.read_bytes() if archive else urllib.request.urlopen(p.url, timeout=300).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != p.sha256:
        raise ValueError(f"{p.package} {p.version}: SHA-256 {digest} is not the pinned {p.sha256}")
    if p.name != "_deps":
        shutil.rmtree(p.folder, ignore_errors=True)
    count = 0
    for path, blob in _members(data, p.url):
        rel = path[len(p.strip):] if path.startswith(p.strip) else None
        if rel is None or not rel.startswith(p.members) or ".." in rel.split("/"):
            continue
        target = p.folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
        count += 1
    (p.folder / f".{p.package}-{p.sha256[:16]}").write_text(p.url + "\n")
    log(f"{p.package} {p.version}: {len(data):,} bytes, SHA-256 ok, {count} files -> {p.folder}")


def fetch_all(log=print) -> None:
    for p in PROJECTS + DEPENDENCIES:
        fetch(p, log=log)
