"""pytest plugin for the mutation runs: which lines of the mutated modules each test executes (``-p trace_plugin``).

Reads ``MUTATION_TRACE_FILES`` (absolute paths, ``os.pathsep``-separated) and writes ``MUTATION_TRACE_OUT`` (JSON:
``{nodeid: {"outcome", "seconds", "lines": {path: [line, …]}}}``). Lines executed while no test runs (imports,
collection) are not attributed to any test. A line tracer only for frames of the named files (sys.settrace)."""

from __future__ import annotations

import json
import os
import sys
import threading

import pytest

_FILES = set(filter(None, os.environ.get("MUTATION_TRACE_FILES", "").split(os.pathsep)))
_current: dict[str, set[int]] | None = None
_results: dict[str, dict] = {}


def _local(frame, event, arg):  # type: ignore[no-untyped-def]
    if event == "line" and _current is not None:
        _current.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
    return _local


def _global(frame, event, arg):  # type: ignore[no-untyped-def]
    if frame.f_code.co_filename in _FILES:
        if _current is not None:
            _current.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return _local
    return None


def pytest_configure(config):  # type: ignore[no-untyped-def]
    sys.settrace(_global)
    threading.settrace(_global)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
    global _current
    _current = {}
    _results[item.nodeid] = {"outcome": "passed", "seconds": 0.0, "lines": {}}
    yield
    _results[item.nodeid]["lines"] = {f: sorted(v) for f, v in _current.items()}
    _current = None


def pytest_runtest_logreport(report):  # type: ignore[no-untyped-def]
    r = _results.get(report.nodeid)
    if r is None:
        return
    r["seconds"] += report.duration
    if report.outcome == "failed" or (report.outcome == "skipped" and report.when == "call"):
        r["outcome"] = report.outcome


def pytest_sessionfinish(session, exitstatus):  # type: ignore[no-untyped-def]
    sys.settrace(None)
    threading.settrace(None)  # type: ignore[arg-type]
    with open(os.environ["MUTATION_TRACE_OUT"], "w") as fh:
        json.dump(_results, fh)
