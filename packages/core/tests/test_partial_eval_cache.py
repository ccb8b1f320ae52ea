"""Partial evaluation and constant hoisting are cached per jaxpr (issue 26): the
same split and the same const-free body come back for the same jaxpr and
flags, so that a call split again (an eager ``grad`` of a ``jit`` function in a
loop) is the same call, compiled once by a compiling backend."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core as pc
from plait_core import numpy as pnp
from plait_core.partial_eval import partial_eval_jaxpr
from plait_core.primitives.calls import hoist_consts
from plait_core.staging import trace_to_jaxpr

TABLE = np.arange(3, dtype=np.float32)


def _f(x: Any, y: Any) -> list[Any]:
    return [pnp.sin(x) * y + TABLE, pnp.cos(x)]


def _closed() -> pc.ClosedJaxpr:
    aval = pc.ShapedArray((3,), np.dtype(np.float32))
    return trace_to_jaxpr(_f, [aval, aval])


def test_the_same_split_for_the_same_jaxpr_and_flags() -> None:
    closed = _closed()
    known, unknown, out_uk, nres = partial_eval_jaxpr(closed, [False, True])
    again = partial_eval_jaxpr(closed, [False, True])
    assert again[0] is known and again[1] is unknown and again[2] == out_uk and again[3] == nres
    assert out_uk == [True, False]
    again[2].append(True)  # the caller's own list
    assert partial_eval_jaxpr(closed, [False, True])[2] == [True, False]
    other = partial_eval_jaxpr(closed, [True, False])
    assert other[0] is not known and other[2] == [True, True]
    inst = partial_eval_jaxpr(closed, [False, True], instantiate=True)
    assert inst[0] is not known and inst[2] == [True, True]
    fresh = partial_eval_jaxpr(_closed(), [False, True])  # an equal jaxpr, another object
    assert fresh[0] is not known and str(fresh[0]) == str(known)


def test_the_split_computes_the_function() -> None:
    closed = _closed()
    x = np.linspace(0, 1, 3).astype(np.float32)
    y = np.float32(2.0) * np.ones(3, np.float32)
    for _ in range(2):
        known, unknown, _out_uk, nres = partial_eval_jaxpr(closed, [False, True])
        kouts = pc.eval_jaxpr(known.jaxpr, known.consts, x)
        nk = len(kouts) - nres
        uouts = pc.eval_jaxpr(unknown.jaxpr, unknown.consts, *kouts[nk:], y)
        np.testing.assert_allclose(np.asarray(uouts[0]), np.sin(x) * y + TABLE, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(kouts[0]), np.cos(x), rtol=1e-6)


def test_hoisting_gives_one_body_per_jaxpr() -> None:
    closed = _closed()
    assert closed.consts  # TABLE
    body, consts = hoist_consts(closed)
    body2, consts2 = hoist_consts(closed)
    assert body2 is body and not body.consts and len(body.in_avals) == len(closed.in_avals) + len(consts)
    assert consts2 is not consts and len(consts2) == len(consts) and all(a is b for a, b in zip(consts2, consts))
    assert hoist_consts(_closed())[0] is not body
    free = trace_to_jaxpr(lambda x: [pnp.sin(x)], [pc.ShapedArray((3,), np.dtype(np.float32))])
    assert hoist_consts(free) == (free, [])
