"""The host-callback primitive: a Python function called on the host, with
NumPy arrays, from inside a program (eager, staged or compiled).

``callback(*args, callback, result_avals, kind, ordered, vmap_method, sharding, partitioned)``:

* ``callback`` is a :class:`HostCallback`: the flat Python function (NumPy
  arrays in, a sequence of arrays out), compared by identity;
* ``result_avals``: the abstract values the function returns (checked
  when it runs: a mismatch is a RuntimeError naming the result);
* ``kind``: ``'pure'`` (``pure_callback``: no effects, so an unused call
  may be removed, and transformations may call it any number of times),
  ``'io'`` (``io_callback``) or ``'debug'`` (``debug.callback`` and
  ``debug.print``: effects, no results);
* ``ordered``: effects happen in program order (compiled code threads a
  token through the ordered calls);
* ``vmap_method``: how ``vmap`` calls it (``'sequential'``,
  ``'sequential_unrolled'``, ``'expand_dims'``, ``'broadcast_all'``, or
  ``None``: not batchable);
* ``sharding``: in a program over several devices whose layout XLA
  chooses (``jit`` of sharded values), the device that runs the call, on
  the whole values (``None``: the program's first device); inside
  ``shard_map`` every device calls it on its own pieces and ``sharding``
  must be ``None``;
* ``partitioned`` (``debug`` calls only): every device calls it on its own
  pieces, also where XLA chooses the layout.

Calls with effects are never removed by dead-code elimination.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core.abstract import ShapedArray
from plait_core.dce import effect_rules
from plait_core.primitive import Primitive

__all__ = ["KINDS", "VMAP_METHODS", "HostCallback", "callback_p", "check_results"]

KINDS = ("pure", "io", "debug")
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", None)


class HostCallback:
    """A Python function called on the host, hashed and compared by identity
    (so that it can be a param of the primitive and key compilation caches)."""

    __slots__ = ("fun", "name", "order_per_device")

    def __init__(self, fun: Callable[..., Sequence[Any]], name: str, *, order_per_device: bool = False) -> None:
        self.fun = fun
        self.name = name
        #: An ordered debug call that may run in a program over several devices,
        #: its order kept per device (``checkify``'s checks); a user's
        #: ``debug.callback(ordered=True)`` is refused there, as in JAX.
        self.order_per_device = order_per_device

    def __call__(self, *args: Any) -> Sequence[Any]:
        return self.fun(*args)

    def __repr__(self) -> str:
        return f"<host callback {self.name}>"


def check_results(name: str, outs: Any, result_avals: Sequence[ShapedArray]) -> list[np.ndarray]:
    """``outs`` as NumPy arrays of exactly ``result_avals``' shapes and dtypes,
    or a RuntimeError naming the first that differs."""
    if outs is None:
        outs = ()
    outs = list(outs)
    if len(outs) != len(result_avals):
        raise RuntimeError(f"{name}: the callback returned {len(outs)} values, expected {len(result_avals)}")
    checked = []
    for k, (o, a) in enumerate(zip(outs, result_avals)):
        arr = np.asarray(o)
        if arr.shape != tuple(a.shape):
            raise RuntimeError(f"{name}: result {k} of the callback has shape {arr.shape}, expected {tuple(a.shape)}")
        if arr.dtype != a.dtype:
            raise RuntimeError(
                f"{name}: result {k} of the callback has dtype {arr.dtype.name}, expected {a.dtype.name}"
            )
        checked.append(arr)
    return checked


def _abstract_eval(
    *avals: ShapedArray, callback: HostCallback, result_avals: tuple[ShapedArray, ...], kind: str, ordered: bool,
    vmap_method: str | None, sharding: Any, partitioned: bool,
) -> list[ShapedArray]:  # fmt: skip
    if not isinstance(callback, HostCallback):
        raise TypeError(f"callback: the parameter callback must be a HostCallback, got {type(callback).__name__}")
    if kind not in KINDS:
        raise ValueError(f"callback: kind must be one of {KINDS}, got {kind!r}")
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"callback: vmap_method must be one of {VMAP_METHODS}, got {vmap_method!r}")
    if partitioned and (kind != "debug" or result_avals):
        raise ValueError(f"callback {callback.name}: only a debug callback (no results) can be partitioned")
    return list(result_avals)


def _impl(
    *args: Any, callback: HostCallback, result_avals: tuple[ShapedArray, ...], kind: str, ordered: bool,
    vmap_method: str | None, sharding: Any, partitioned: bool,
) -> list[np.ndarray]:  # fmt: skip
    outs = callback(*(np.asarray(a) for a in args))
    return check_results(callback.name, outs, result_avals)


callback_p = Primitive("callback", family="callback", multiple_results=True)
callback_p.def_abstract_eval(_abstract_eval)
callback_p.def_impl(_impl)
effect_rules[callback_p] = lambda eqn: eqn.params["kind"] != "pure"
