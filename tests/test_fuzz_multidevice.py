"""The multi-device differential check (``tests/fuzz/multidevice.py``): a
short fixed-seed run on 8 CPU devices (in a subprocess: the number of
devices is fixed when the client starts), every mode equal to one device.
The long run with fresh seeds is ``nox -s fuzz``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fuzz.multidevice import FORWARD_MODES, GRAD_MODES, VMAP_MODES
from fuzz.multidevice_programs import generate

TESTS = Path(__file__).resolve().parent
FIRST_SEED, PROGRAMS = 3, 3  # seeds 3..5: every kind of statement, a scan differentiated, a pmax


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env["PLAIT_NUM_CPU_DEVICES"] = "8"
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *sys.path])
    proc = subprocess.run(
        [sys.executable, "-m", "fuzz.multidevice", "--seed", str(FIRST_SEED), "--programs", str(PROGRAMS), "--json"],
        capture_output=True, text=True, env=env, timeout=300, cwd=TESTS,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, proc.stdout[-4000:] + proc.stderr[-4000:]
    result: dict[str, Any] = json.loads(lines[-1])
    assert proc.returncode == (1 if result["failures"] else 0), proc.stderr[-2000:]
    return result


def test_the_fixed_seeds_cover_every_kind_of_statement() -> None:
    programs = [generate(s) for s in range(FIRST_SEED, FIRST_SEED + PROGRAMS)]
    kinds = {k for p in programs for k in p.kinds}
    assert kinds == {"unary", "binary", "row_reduce", "dot", "scan", "batch", "global", "mix"}
    assert sum(p.differentiable for p in programs) == 2
    assert any("bmax(" in p.source for p in programs)
    assert any("scan" in p.kinds and p.differentiable for p in programs)


def test_short_fixed_seed_run_on_eight_devices_finds_no_failure(report: dict[str, Any]) -> None:
    assert report["failures"] == [], json.dumps(report["failures"], indent=1)[:6000]
    assert report["programs"] == PROGRAMS
    for mode in FORWARD_MODES + VMAP_MODES:
        assert report["checks"][mode] == PROGRAMS, report["checks"]
    for mode in GRAD_MODES:
        assert report["checks"][mode] == 2, report["checks"]
