"""docs/limits.md's table of work limits is the code's: every row's value is its constant's, and every `MAX_…`
constant of the algebra, the compilers and the checks has a row (a new limit arrives documented)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fsa", "compiler", "realize")
#: constants that are derived from rows of nn/limits.py (the options' table of the same page), not limits of their own
DERIVED = {"realize.lstar.MAX_QUERIES_LIMIT", "realize.lstar.MAX_SECONDS_LIMIT", "realize.lstar.MAX_DEPTH"}
#: the names of limit constants: MAX_…, the monoid's dense-table bound and hash retries, the D-classes' group cells
LIMIT_NAME = r"^(MAX_[A-Z_]+|DENSE_LIMIT|HASH_RETRIES|GROUP_CELLS)\s*(?::[^=]+)?="


def _rows() -> dict[str, str]:
    doc = (ROOT / "docs" / "limits.md").read_text()
    table = doc.split("<!-- work limits: begin -->")[1].split("<!-- work limits: end -->")[0]
    rows = re.findall(r"^\| `fsa2rnn\.([\w.]+)` \| ([^|]+) \|", table, flags=re.M)
    assert len(rows) > 40
    return {name: value.strip() for name, value in rows}


def _value(text: str) -> int:
    """'1,000,000', '2^25', '2·10^7' as integers."""
    text = text.replace(",", "")
    power = re.fullmatch(r"(?:(\d+)·)?(\d+)\^(\d+)", text)
    if power:
        return int(power[1] or 1) * int(power[2]) ** int(power[3])
    return int(text)


def test_every_documented_limit_is_the_constant_of_its_module():
    for dotted, text in _rows().items():
        module, name = dotted.rsplit(".", 1)
        assert getattr(importlib.import_module(f"fsa2rnn.{module}"), name) == _value(text), dotted


def test_every_limit_constant_is_documented():
    documented = set(_rows())
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for name in re.findall(LIMIT_NAME, path.read_text(), flags=re.M):
                found.add(f"{module}.{name}")
    assert found - DERIVED - documented == set()
    assert documented <= found  # no row for a constant that is gone
