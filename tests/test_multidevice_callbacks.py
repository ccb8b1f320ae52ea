"""Runs ``multidevice_callback_checks.py`` in a subprocess on 8 CPU devices
(the device count is fixed when the client starts)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def test_host_callbacks_on_eight_cpu_devices() -> None:
    checks = Path(__file__).with_name("multidevice_callback_checks.py")
    env = {**os.environ, "PLAIT_NUM_CPU_DEVICES": "8", "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(checks)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert re.search(r"\d+ passed", proc.stdout) and "failed" not in proc.stdout
