"""Several processes on 127.0.0.1: 2 processes x 4 CPU devices, started by
``python -m plait.distributed.launch`` (bounded by a timeout; on expiry its
process group, i.e. only what this test started, is killed), and the clear
errors of ``plait.distributed.initialize``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("distributed_worker.py")


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher's group: its own children only
        out, _ = proc.communicate()
        raise AssertionError(f"timed out after {timeout} s:\n{out[-4000:]}") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


def _losses(out: str, prefix: str = "") -> list[float]:
    return [float(v) for v in re.findall(rf"^{re.escape(prefix)}step \d: loss ([\d.]+)$", out, flags=re.M)]


def test_two_processes_of_four_devices_train_as_one() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    multi = _run(
        [sys.executable, "-m", "plait.distributed.launch", "--nproc", "2", "--devices-per-process", "4",
         "--timeout", "240", str(WORKER)],
        env, timeout=300,
    )
    assert multi.returncode == 0, multi.stdout[-6000:]
    for k in (0, 1):
        assert f"[process {k}] process_count 2 device_count 8 local 4" in multi.stdout
        assert f"[process {k}] cross-process psum 36.0 all_gather [1, 2, 3, 4, 5, 6, 7, 8]" in multi.stdout
        assert f"[process {k}] data_parallel.py: all checks passed" in multi.stdout
    single = _run([sys.executable, str(ROOT / "examples" / "data_parallel.py")], env, timeout=300)
    assert single.returncode == 0, single.stdout[-4000:]
    one, two = _losses(single.stdout), _losses(multi.stdout, "[process 0] ")
    assert len(one) == len(two) == 5
    assert max(abs(a - b) for a, b in zip(one, two)) <= 1e-5


def test_initialize_errors_are_clear() -> None:
    script = textwrap.dedent("""
        import pytest, plait
        from plait.distributed.launch import free_port
        d = plait.distributed
        with pytest.raises(ValueError, match="process_id 3 is out of range for 2 processes"):
            d.initialize("127.0.0.1:1234", 2, 3)
        with pytest.raises(ValueError, match="coordinator_address was not given and .PLAIT_COORDINATOR_ADDRESS is not set"):
            d.initialize(None, 2, 0)
        port = free_port()
        with pytest.raises(RuntimeError, match=f"could not reach the coordinator at 127.0.0.1:{port} within 2 s"):
            d.initialize(f"127.0.0.1:{port}", 2, 1, initialization_timeout=2)
        assert not d.is_initialized()
        d.initialize(f"127.0.0.1:{free_port()}", 1, 0)
        assert d.is_initialized() and plait.process_count() == 1
        with pytest.raises(RuntimeError, match="already called"):
            d.initialize(f"127.0.0.1:{free_port()}", 1, 0)
        d.shutdown()
        print("ok")
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    res = _run([sys.executable, "-c", script], env, timeout=120)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stdout[-4000:]
    late = "import plait; plait.devices(); plait.distributed.initialize('127.0.0.1:1234', 2, 0)"
    res = _run([sys.executable, "-c", late], env, timeout=120)
    assert res.returncode != 0 and "must be called before any device is used" in res.stdout, res.stdout[-3000:]
