"""``pmap`` programs for ``test_distributed.py``: run by ``python -m
plait.distributed.launch`` (each process passes its rows of one 8-row
input and prints its rows of every result), or alone on 8 CPU devices (the
whole input; the single-process reference).  Each result is printed as one
``RESULT <json>`` line; the test compares them with NumPy and across runs."""

from __future__ import annotations

import json
import os

import numpy as np

import plait
from plait import lax

multi = bool(os.environ.get("PLAIT_COORDINATOR_ADDRESS"))
if multi:
    plait.distributed.initialize()

n_local = plait.local_device_count()
n = plait.device_count()
me = plait.process_index()
data = (np.arange(8 * 3, dtype=np.float32).reshape(8, 3) % 7) - 2.0  # small integers: sums are exact
rows = data[me * n_local:(me + 1) * n_local]
w = np.array([1.0, -2.0, 0.5], np.float32)
results: dict[str, object] = {}


def record(name: str, value: object) -> None:
    results[name] = np.asarray(value).tolist()


def loss(p: object, x: object) -> object:
    return plait.numpy.sum((x * p) ** 2)


record("psum", plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(rows))
record("axis_index", plait.pmap(lambda v: lax.axis_index("i"), axis_name="i")(rows))
record("all_gather", plait.pmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(rows[:, 0]))
shift = [(j, (j + 1) % n) for j in range(n)]
record("ppermute", plait.pmap(lambda v: lax.ppermute(v, "i", shift), axis_name="i")(rows))
grad_mean = plait.pmap(lambda p, x: lax.pmean(plait.grad(loss)(p, x), "i"), axis_name="i", in_axes=(None, 0))
record("grad_pmean", grad_mean(w, rows))
record("psum_out_axes_none", plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)(rows))
record("static", plait.pmap(lambda v, k: v * k + lax.axis_index("i"), axis_name="i", static_broadcasted_argnums=1)(rows, 3))
record("in_out_axes_1", plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i", in_axes=1, out_axes=1)(rows.T.copy()))
first = plait.pmap(lambda v: v * 2, axis_name="i")(rows)
record("chained", plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(first))
record("devices_all", plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=plait.devices())(rows))
record("devices_local", plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=plait.local_devices())(rows))
# Under a transformation a traced value holds this process's rows only: pmap maps over its own devices (JAX's).
psum_sq = plait.pmap(lambda v: lax.psum(v * v, "i"), axis_name="i")
record("jit_psum", plait.jit(plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i"))(rows))
record("grad_psum", plait.grad(lambda r: psum_sq(r).sum())(rows))
placed = plait.pmap(lambda v: v, axis_name="i")(rows)
record("donated", plait.pmap(lambda v: v + lax.axis_index("i"), axis_name="i", donate_argnums=0)(placed))
results["donated_input_deleted"] = placed.is_deleted()
out = plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(rows)
results["layout"] = [list(out.shape), sorted(str(d) for d in out.devices()) == sorted(str(d) for d in plait.local_devices())]
try:
    plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(rows[:2])
    results["two_rows_error"] = None
except ValueError as e:
    results["two_rows_error"] = str(e)
try:
    plait.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=plait.devices())(rows[:2])
    results["devices_two_rows_error"] = None
except ValueError as e:
    results["devices_two_rows_error"] = str(e)
print("RESULT " + json.dumps({"process": me, "processes": plait.process_count(), "results": results}), flush=True)
if multi:
    plait.distributed.shutdown()
