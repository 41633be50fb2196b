"""fsa/registry.py: entries from entry points (a fake distribution on sys.path) and register() calls; a broken plug-in
is one PluginError naming it and never breaks the others."""

from __future__ import annotations

import sys
import textwrap

import pytest

from fsa2rnn.fsa.errors import PluginError, SpecError
from fsa2rnn.fsa.registry import Registry, resolve_ref, unknown_name_message

GROUP = "fsa2rnn.test-registry"


@pytest.fixture
def dist(tmp_path, monkeypatch):
    """A distribution ``toyreg`` with a module and entry points in GROUP, put on sys.path."""
    (tmp_path / "toyreg_mod.py").write_text(
        textwrap.dedent(
            """
            GOOD = {"size": 3}
            BAD_SHAPE = {"no_size": 1}
            """
        )
    )
    (tmp_path / "toyreg_broken.py").write_text("raise RuntimeError('boom at import')\n")
    info = tmp_path / "toyreg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyreg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{GROUP}]\n"
        "good = toyreg_mod:GOOD\n"
        "shape = toyreg_mod:BAD_SHAPE\n"
        "missing = toyreg_mod:NOPE\n"
        "broken = toyreg_broken:X\n"
    )
    info2 = tmp_path / "toyreg2-0.1.dist-info"  # a second distribution that reuses a name
    info2.mkdir()
    (info2 / "METADATA").write_text("Metadata-Version: 2.1\nName: toyreg2\nVersion: 0.1\n")
    (info2 / "entry_points.txt").write_text(f"[{GROUP}]\ngood = toyreg_mod:BAD_SHAPE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for mod in ("toyreg_mod", "toyreg_broken"):
        sys.modules.pop(mod, None)


def _check(name, obj):
    if "size" not in obj:
        raise PluginError("has no 'size'")


def test_entry_points_load_lazily_and_report_problems_by_name(dist):
    reg = Registry(GROUP, "widget", check=_check)
    assert {"good", "shape", "missing", "broken"} <= set(reg.names())
    assert "toyreg_mod" not in sys.modules  # listing imports nothing
    assert reg.get("good") == {"size": 3}
    assert reg.origin("good").startswith("toyreg")
    with pytest.raises(PluginError, match=r"widget plug-in 'shape' \(toyreg.*has no 'size'"):
        reg.get("shape")
    with pytest.raises(PluginError, match=r"'missing'.*has no attribute 'NOPE'"):
        reg.get("missing")
    with pytest.raises(PluginError, match=r"'broken'.*does not import \(RuntimeError: boom at import\)"):
        reg.get("broken")
    assert reg.get("good") == {"size": 3}  # the broken ones did not break the good one
    problems = "\n".join(reg.problems())
    assert "'shape'" in problems and "'missing'" in problems and "'broken'" in problems
    assert "widget plug-in 'good' from toyreg2 is not used: the name is already registered by toyreg" in problems


def test_register_refuses_a_taken_name_and_replaces_on_request(dist):
    reg = Registry(GROUP, "widget", check=_check)
    with pytest.raises(PluginError, match=r"widget 'good' is already registered \(by toyreg"):
        reg.register("good", {"size": 5})
    reg.register("good", {"size": 5}, replace=True)
    assert reg.get("good") == {"size": 5}
    with pytest.raises(PluginError, match="has no 'size'"):
        reg.register("new", {"x": 1})
    reg.register("lazy", "toyreg_mod:GOOD")
    assert reg.ref("lazy") == "toyreg_mod:GOOD" and reg.get("lazy") == {"size": 3}
    reg.refresh()
    assert reg.get("lazy") == {"size": 3} and reg.get("good") == {"size": 5}  # register() entries survive a refresh


def test_unknown_name_suggests_the_closest():
    reg = Registry(GROUP + ".empty", "widget", unknown=SpecError)
    reg.register("householder", {"size": 1})
    with pytest.raises(SpecError, match=r"unknown widget 'housholder' \(choose from householder; did you mean"):
        reg.get("housholder")
    assert unknown_name_message("task", "zz", ["a"]) == "unknown task 'zz' (choose from a)"


@pytest.mark.parametrize(
    ("ref", "match"),
    [
        ("no_colon", "is not of the form"),
        ("a b:c", "is not of the form"),
        ("json:nope", "has no attribute 'nope'"),
        ("no_such_module_xyz:a", "does not import"),
    ],
)
def test_resolve_ref_errors_are_one_line(ref, match):
    with pytest.raises(PluginError, match=match) as info:
        resolve_ref(ref)
    assert "\n" not in str(info.value)


def test_resolve_ref_dotted_attribute():
    assert resolve_ref("os:path.join") is __import__("os").path.join
