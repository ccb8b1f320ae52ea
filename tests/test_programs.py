"""A corpus of JAX-style programs (``tests/programs/p*.py``, each written with
``import jax``) runs unchanged on plait through ``python -m plait.compat``.

Every program checks itself against NumPy float64 oracles it computes (an
assertion failure is a failed run).  When ``PLAIT_JAX_PYTHON`` names an
interpreter with JAX 0.10.2, the same files also run on JAX and every printed
value (``label: [numbers] shape=[...]``) must agree with plait's within
tolerances.  The programs run in two subprocesses (one per CPU core), several
programs per process (``tests/programs/_driver.py``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted((HERE / "programs").glob("p*.py"))
DRIVER = HERE / "programs" / "_driver.py"
ROOT = HERE.parent

# Programs that do not run or agree on plait today, with why (also listed in README.md).
KNOWN_FAILURES: dict[str, str] = {}
# Values printed without a NumPy oracle that depend on many float32 steps: compared more loosely with JAX.
LOOSE = {"initial_loss", "final_loss", "elbo_first", "elbo_last", "dp_weights", "final_energy", "conv_grad_head"}
_LINE = re.compile(r"^(?P<label>[\w.]+): (?P<values>\[.*\]) shape=(?P<shape>\[.*\])$")


def _run(command: list[str], paths: list[Path]) -> dict[str, Any]:
    proc = subprocess.run([*command, str(DRIVER), *map(str, paths)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"})
    reports = {}
    for line in proc.stdout.splitlines():
        if line.startswith("@@ "):
            report = json.loads(line[3:])
            reports[report["name"]] = report
    missing = [p.stem for p in paths if p.stem not in reports]
    assert not missing, f"no report for {missing}: rc={proc.returncode}\n{proc.stderr[-3000:]}"
    return reports


def _run_all(command: list[str]) -> dict[str, Any]:
    halves = [PROGRAMS[0::2], PROGRAMS[1::2]]
    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(lambda ps: _run(command, ps), halves))
    return {**parts[0], **parts[1]}


@cache
def plait_reports() -> dict[str, Any]:
    """Every program's report on plait (run once per test session)."""
    return _run_all([sys.executable, "-m", "plait.compat"])


def _jax_python() -> str | None:
    path = os.environ.get("PLAIT_JAX_PYTHON")
    if not path:
        return None
    probe = subprocess.run([path, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True)
    return path if probe.returncode == 0 and probe.stdout.strip() == "0.10.2" else None


@cache
def jax_reports() -> dict[str, Any]:
    """Every program's report on JAX 0.10.2."""
    python = _jax_python()
    assert python is not None
    return _run_all([python])


def values(output: str) -> dict[str, np.ndarray]:
    """The labelled values a program printed."""
    out = {}
    for line in output.splitlines():
        m = _LINE.match(line)
        if m:
            out[m["label"]] = np.asarray(json.loads(m["values"]), np.float64).reshape(json.loads(m["shape"]))
    return out


def test_corpus_size_and_known_failures_listed_in_readme() -> None:
    assert len(PROGRAMS) >= 25
    readme = (ROOT / "README.md").read_text()
    for name in KNOWN_FAILURES:
        assert name in readme, f"{name} is a known failure but README.md does not list it"


@pytest.mark.parametrize("program", [p.stem for p in PROGRAMS])
def test_program_runs_on_plait(program: str) -> None:
    report = plait_reports()[program]
    if program in KNOWN_FAILURES:
        assert not report["ok"], f"{program} now passes: remove it from KNOWN_FAILURES and README.md"
        pytest.xfail(KNOWN_FAILURES[program])
    assert report["ok"], report["error"]
    assert values(report["output"]), f"{program} printed no values"


def test_share_that_runs_and_agrees() -> None:
    reports = plait_reports()
    ok = sum(r["ok"] for r in reports.values())
    print(f"\n{ok} of {len(reports)} corpus programs run on plait and pass their NumPy checks")
    assert ok / len(reports) >= 0.9


@pytest.mark.skipif(_jax_python() is None, reason="PLAIT_JAX_PYTHON does not name a JAX 0.10.2 interpreter")
@pytest.mark.parametrize("program", [p.stem for p in PROGRAMS])
def test_program_agrees_with_jax(program: str) -> None:
    mine, theirs = plait_reports()[program], jax_reports()[program]
    assert theirs["ok"], f"the program fails on JAX: {theirs['error']}"
    if program in KNOWN_FAILURES:
        pytest.xfail(KNOWN_FAILURES[program])
    a, b = values(mine["output"]), values(theirs["output"])
    assert a.keys() == b.keys()
    for label in a:
        loose = label in LOOSE
        np.testing.assert_allclose(a[label], b[label], rtol=5e-2 if loose else 2e-3, atol=1e-2 if loose else 1e-4,
                                   err_msg=f"{program}: {label}")
