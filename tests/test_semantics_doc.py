"""docs/semantics.md is the rule table the tests, the parity probes and the docs cite by row id (`S1.5`).

Its ids are unique and in order within each section, and every row id cited anywhere in the repository's
Python and Markdown files exists in it, so a citation cannot point at nothing.
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEMANTICS = ROOT / "docs" / "semantics.md"
ROW_ID = re.compile(r"\bS(\d+)\.(\d+)\b")
SKIP = {".git", ".venv", "node_modules", "results"}   # parity/results/ holds dated records of past runs


def _rows() -> list:
    """(section, row) of each table row of docs/semantics.md, in document order."""
    return [(int(s), int(r)) for s, r in re.findall(r"^\| S(\d+)\.(\d+) \|", SEMANTICS.read_text(), re.M)]


def _sources():
    for path in ROOT.rglob("*"):
        if path.suffix in (".py", ".md") and not SKIP & set(path.relative_to(ROOT).parts):
            yield path


def test_row_ids_are_unique_and_in_order():
    rows = _rows()
    assert len(rows) > 150
    assert len(rows) == len(set(rows)), sorted({r for r in rows if rows.count(r) > 1})
    assert rows == sorted(rows), "rows out of order"
    assert sorted({s for s, _ in rows}) == list(range(1, max(s for s, _ in rows) + 1))


def test_every_cited_row_exists():
    rows = set(_rows())
    dangling = []
    for path in _sources():
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in ROW_ID.finditer(line):
                if (int(m.group(1)), int(m.group(2))) not in rows:
                    dangling.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)}")
    assert not dangling, dangling


def test_the_citations_are_found():
    """The scan above sees the probes' and the tests' citations (it would pass vacuously otherwise)."""
    cited = {path.name for path in _sources() if ROW_ID.search(path.read_text(errors="replace"))}
    assert {"integers_and_casts.py", "test_vs_interpreter.py", "test_ops_elementwise.py"} <= cited
