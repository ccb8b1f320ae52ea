"""A jit wrapper reports its function's signature, also to
``inspect.signature(..., follow_wrapped=False)``, as JAX 0.10.2's jit object
does (chex's fake_pmap binds keyword arguments with it)."""

from __future__ import annotations

import inspect

import numpy as np

from plait_dispatch.jit import jit


def test_signature_of_a_jit_wrapper_is_the_functions() -> None:
    def f(x: object, y: int = 2, *, z: object = None) -> object:
        return x

    for follow in (False, True):
        assert str(inspect.signature(jit(f), follow_wrapped=follow)) == str(inspect.signature(f))
    bound = inspect.signature(jit(f), follow_wrapped=False).bind(np.float32(1), y=3)
    assert bound.arguments == {"x": np.float32(1), "y": 3}
    assert float(jit(f)(np.float32(1.5))) == 1.5
