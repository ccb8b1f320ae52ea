"""``plait.Array``: the one public array type (issue 25), as ``jax.Array``.

``isinstance(x, plait.Array)`` holds for device arrays, for tracers inside
every transformation and for typed key arrays; ``plait.numpy.ndarray`` is the
same class; ``random.PRNGKey`` returns a device array, not a NumPy array."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
import plait_dispatch
from plait import random


def test_numpy_ndarray_is_array() -> None:
    assert pnp.ndarray is plait.Array
    assert isinstance(pnp.zeros(2), plait.Array)
    assert issubclass(plait_dispatch.Array, plait.Array)
    assert not isinstance(np.zeros(2), plait.Array) and not isinstance(1.0, plait.Array)
    with pytest.raises(TypeError, match=r"plait\.Array cannot be instantiated"):
        plait.Array()


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap", "jvp", "make_jaxpr"])
def test_tracers_are_arrays(transform: str) -> None:
    seen: list[tuple[bool, str]] = []

    def f(x: Any) -> Any:
        seen.append((isinstance(x, plait.Array), type(x).__name__))
        return (x * 2.0).sum()

    x = pnp.ones(3)
    if transform == "jvp":
        plait.jvp(f, (x,), (x,))
    else:
        getattr(plait, transform)(f)(x)
    assert len(seen) == 1 and seen[0][0], seen
    assert seen[0][1] != "Array"  # it really was a tracer


def test_key_arrays_are_arrays() -> None:
    key = random.key(0)
    assert isinstance(key, plait.Array) and isinstance(random.split(key, 3), plait.Array)
    raw = random.PRNGKey(3)
    assert type(raw) is plait_dispatch.Array and isinstance(raw, plait.Array)
    assert raw.dtype == np.uint32 and np.asarray(raw).tolist() == [0, 3]
    seen: list[bool] = []
    plait.jit(lambda: seen.append(isinstance(random.key(1), plait.Array) and isinstance(random.PRNGKey(1), plait.Array)))()
    assert seen == [True]
