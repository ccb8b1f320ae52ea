"""``vmap`` of a ``jit`` with ``in_shardings`` (and so of ``pmap``): the batch
goes in front, unsplit, and each requested sharding gets that leading
dimension, as JAX's (found by the multi-device differential check, issue 24:
the shardings stayed on the operand's original dimensions and split the
batch instead).  Values on 8 CPU devices in a subprocess; the layout rule
in-process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

import plait
from plait.sharding import Mesh, NamedSharding, P
from plait_core.sharding import SingleDeviceSharding, TiledSharding
from plait_dispatch.cache import JitInfo

SCRIPT = textwrap.dedent("""
    import numpy as np
    import plait
    from plait import lax
    from plait.sharding import NamedSharding, P

    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    mesh = plait.sharding.make_mesh((8,), ("d",))
    f = plait.jit(lambda v, w: v * 2 + w, in_shardings=(NamedSharding(mesh, P("d")), NamedSharding(mesh, P())))
    w = np.float32(1.5)
    np.testing.assert_array_equal(np.asarray(plait.vmap(f, in_axes=(1, None), out_axes=1)(x, w)), 2 * x + w)
    xs = np.stack([x, -x])  # vmap over a leading axis: each (8, 3) piece is split over d
    np.testing.assert_array_equal(np.asarray(plait.vmap(f, in_axes=(0, None))(xs, w)), 2 * xs + w)
    g = plait.pmap(lambda v: lax.psum(v * v, "i"), axis_name="i")
    got = plait.vmap(g, in_axes=1, out_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(got), np.broadcast_to((x * x).sum(0), (8, 3)))
    grads = plait.vmap(plait.grad(lambda v: plait.numpy.sum(g(v))), in_axes=0)(xs)
    np.testing.assert_array_equal(np.asarray(grads), 2 * xs * 8)  # each row's square feeds 8 psum rows
    print("ok")
""")


def test_vmap_of_jit_with_in_shardings_and_of_pmap_on_eight_devices() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAIT_")}
    env["PLAIT_NUM_CPU_DEVICES"] = "8"
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout[-3000:] + proc.stderr[-3000:]


def test_batched_operands_get_an_unsplit_leading_dimension() -> None:
    dev = plait.devices()[0]
    named = NamedSharding(Mesh(np.array([dev], dtype=object), ("d",)), P(None, "d"))
    tiled = TiledSharding([dev], np.zeros((1, 1, 1), np.int64))
    single = SingleDeviceSharding(dev)
    info = JitInfo(None, (False,) * 4, True, ("a", "b", "c", "e"), ((named, tiled, single, named), (named,)))
    batched = info.batch_operands((True, True, True, False))
    ins, outs = batched.shardings  # type: ignore[misc]
    assert ins[0] == NamedSharding(named.mesh, P(None, None, "d"))
    assert ins[1]._tiling(3).assignment.shape == (1, 1, 1, 1)
    assert ins[2] is single and ins[3] is named  # any rank; not batched
    assert outs == ()  # results' layouts are left to the partitioner
    assert batched.names == info.names and batched.donated == info.donated
    assert info.batch_operands((False,) * 4) is info
