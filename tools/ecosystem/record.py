"""A pytest plugin: each test's outcome as one JSON line, written as it happens.

Loaded with ``-p tools.ecosystem.record``; the file is ``$ECOSYSTEM_RECORD``.
``$ECOSYSTEM_BUDGET_S`` (seconds, optional) stops the session after the test
that crosses it, so a bounded run still leaves every outcome it reached.  One
``$ECOSYSTEM_SAMPLE`` (an integer N, optional) runs one test in N, chosen by a
hash of its id, the same tests on every backend: a sample of the whole suite
when all of it does not fit the budget.  One
line per test: ``{"id", "outcome", "error"}`` with ``outcome`` one of passed,
failed, skipped, error, and ``error`` the exception's type and first message
line (``""`` when it passed or was skipped).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from typing import IO, Any

import pytest

_state: dict[str, Any] = {}


def _error_line(report: pytest.TestReport) -> str:
    """``Type: first line of message`` of a failed report (pytest's reprcrash)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message).splitlines()[0] if crash.message else ""
    return str(report.longrepr).strip().splitlines()[-1] if report.longrepr else ""


def in_sample(test_id: str, one_in: int) -> bool:
    """Whether ``test_id`` is in the sample of one test in ``one_in`` (stable across runs)."""
    return zlib.crc32(test_id.encode()) % one_in == 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    one_in = int(os.environ.get("ECOSYSTEM_SAMPLE") or 1)
    if one_in > 1:
        kept = [it for it in items if in_sample(it.nodeid, one_in)]
        config.hook.pytest_deselected(items=[it for it in items if not in_sample(it.nodeid, one_in)])
        items[:] = kept


def pytest_sessionstart(session: pytest.Session) -> None:
    path = os.environ.get("ECOSYSTEM_RECORD")
    if not path:
        raise pytest.UsageError("tools.ecosystem.record needs ECOSYSTEM_RECORD (the output path)")
    budget = os.environ.get("ECOSYSTEM_BUDGET_S")
    _state["out"] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the whole session
    _state["deadline"] = time.monotonic() + float(budget) if budget else None
    _state["seen"] = set()


def _write(test_id: str, outcome: str, error: str) -> None:
    out: IO[str] = _state["out"]
    out.write(json.dumps({"id": test_id, "outcome": outcome, "error": error}) + "\n")
    out.flush()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.nodeid in _state["seen"]:
        return
    if report.when == "call" or report.failed or report.skipped:
        _state["seen"].add(report.nodeid)
        if report.passed:
            _write(report.nodeid, "passed", "")
        elif report.skipped:
            _write(report.nodeid, "skipped", "")
        else:
            outcome = "failed" if report.when == "call" else "error"
            _write(report.nodeid, outcome, _error_line(report))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write(report.nodeid, "error", "collection: " + _error_line(report))  # type: ignore[arg-type]


def pytest_runtest_teardown(item: pytest.Item) -> None:
    deadline = _state.get("deadline")
    if deadline is not None and time.monotonic() > deadline:
        item.session.shouldstop = "ecosystem time budget spent"


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = _state.pop("out", None)
    if out is not None:
        out.close()
