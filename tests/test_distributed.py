"""Several processes on 127.0.0.1: 2 processes x 4 CPU devices, started by
``python -m plait.distributed.launch`` (bounded by a timeout; on expiry its
process group, i.e. only what this test started, is killed): training as one,
``pmap`` across the processes equal to one process of 8 devices (and to
NumPy), and the clear errors of ``plait.distributed.initialize``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("distributed_worker.py")
PMAP_WORKER = Path(__file__).with_name("distributed_pmap_worker.py")


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


def _results(out: str) -> dict[int, dict[str, Any]]:
    """The ``RESULT`` line of each process, by process index."""
    found: dict[int, dict[str, Any]] = {}
    for m in re.finditer(r"RESULT (\{.*\})$", out, flags=re.M):
        record = json.loads(m.group(1))
        found[record["process"]] = record
    return found


def test_pmap_across_two_processes_equals_eight_devices_in_one() -> None:
    # issue 24 item 2: each process passed its 4 rows and got back sums over its own 4 devices only.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    multi = _run(
        [sys.executable, "-m", "plait.distributed.launch", "--nproc", "2", "--devices-per-process", "4",
         "--timeout", "150", str(PMAP_WORKER)],
        env, timeout=200,
    )
    assert multi.returncode == 0, multi.stdout[-6000:]
    procs = _results(multi.stdout)
    assert sorted(procs) == [0, 1] and {p["processes"] for p in procs.values()} == {2}, multi.stdout[-3000:]
    single = _run([sys.executable, str(PMAP_WORKER)], {**env, "PLAIT_NUM_CPU_DEVICES": "8"}, timeout=200)
    assert single.returncode == 0, single.stdout[-4000:]
    one = _results(single.stdout)[0]["results"]
    a, b = procs[0]["results"], procs[1]["results"]

    data = (np.arange(8 * 3, dtype=np.float32).reshape(8, 3) % 7) - 2.0  # as the worker's
    w = np.array([1.0, -2.0, 0.5], np.float32)
    total = data.sum(0)
    expected_rows = {  # each mapped along axis 0: process 0's rows, then process 1's
        "psum": np.broadcast_to(total, (8, 3)),
        "axis_index": np.arange(8),
        "all_gather": np.broadcast_to(data[:, 0], (8, 8)),
        "ppermute": np.roll(data, 1, axis=0),  # device j's value goes to device j + 1 (mod 8)
        "grad_pmean": np.broadcast_to((2 * data**2 * w).mean(0), (8, 3)),
        "static": data * 3 + np.arange(8, dtype=np.float32)[:, None],
        "chained": np.broadcast_to((2 * data).sum(0), (8, 3)),
        "devices_all": np.broadcast_to(total, (8, 3)),
        "donated": data + np.arange(8, dtype=np.float32)[:, None],
    }
    for name, want in expected_rows.items():
        got = np.concatenate([np.asarray(a[name]), np.asarray(b[name])])
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(np.asarray(one[name]), want, rtol=1e-6, err_msg=f"{name} (one process)")
    both = np.concatenate([np.asarray(a["in_out_axes_1"]), np.asarray(b["in_out_axes_1"])], axis=1)
    np.testing.assert_array_equal(both, np.broadcast_to(total[:, None], (3, 8)))
    np.testing.assert_array_equal(np.asarray(one["in_out_axes_1"]), both)
    for r in (a, b, one):  # out_axes=None: the value once, the same in every process
        np.testing.assert_array_equal(np.asarray(r["psum_out_axes_none"]), total)
    # devices=local_devices(): a pmap within each process, over its own rows only.
    np.testing.assert_array_equal(np.asarray(a["devices_local"]), np.broadcast_to(data[:4].sum(0), (4, 3)))
    np.testing.assert_array_equal(np.asarray(b["devices_local"]), np.broadcast_to(data[4:].sum(0), (4, 3)))
    np.testing.assert_array_equal(np.asarray(one["devices_local"]), np.broadcast_to(total, (8, 3)))
    # Under jit/grad (traced rows) pmap maps over each process's own devices, as JAX 0.10.2's does.
    np.testing.assert_array_equal(np.asarray(a["jit_psum"]), np.broadcast_to(data[:4].sum(0), (4, 3)))
    np.testing.assert_array_equal(np.asarray(b["jit_psum"]), np.broadcast_to(data[4:].sum(0), (4, 3)))
    np.testing.assert_array_equal(np.asarray(one["jit_psum"]), np.broadcast_to(total, (8, 3)))
    np.testing.assert_array_equal(np.concatenate([a["grad_psum"], b["grad_psum"]]), 2 * data * 4)
    np.testing.assert_array_equal(np.asarray(one["grad_psum"]), 2 * data * 8)
    assert a["donated_input_deleted"] and b["donated_input_deleted"] and one["donated_input_deleted"]
    assert a["layout"] == b["layout"] == [[4, 3], True]  # each process's rows, on its own devices
    assert one["layout"] == [[8, 3], True]
    for r in (a, b):
        assert "the mapped axis must have size 4 (local_device_count()), got 2" in r["two_rows_error"]
        assert "devices= spans several processes" in r["devices_two_rows_error"]
        assert f"size 2, but devices= lists 4 device(s) of process {r is b:d}" in r["devices_two_rows_error"]
    assert one["two_rows_error"] is None  # one process: 2 rows map over 2 of its 8 devices
    assert "the mapped axis has size 2, but devices= lists 8 device(s)" in one["devices_two_rows_error"]
