"""The demo runs and prints computed results."""

from __future__ import annotations

import re
import subprocess
import sys


def test_demo_runs_and_checks_itself() -> None:
    proc = subprocess.run([sys.executable, "-m", "plait.demo"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    diff = float(re.search(r"max \|staged - eager\| = ([0-9.e-]+)", out).group(1))  # type: ignore[union-attr]
    assert diff < 1e-5
    assert "rows sum to one: True" in out
    assert "{ lambda" in out and "dot_general" in out
    assert re.search(r"equations: \[.*'scan'.*\]", out)
    assert re.search(r"final: 1\.6105", out)
