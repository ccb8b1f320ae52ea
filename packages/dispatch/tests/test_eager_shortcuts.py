"""The eager shortcuts (core's ``plait_core.eager_fast``, answered by
``plait_dispatch.eager_shortcuts``): ``plait.numpy`` calls whose outcome is one
primitive bound on their operands skip the NumPy layer, and give exactly what
the NumPy layer gives; everything else still takes the NumPy layer.

The oracle of values is NumPy; which way a call went is read from the
shortcut tables and from a spy on the NumPy layer's promotion."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import DeletedArrayError, eager_fast, set_eager_backend
from plait_core import numpy as pnp
from plait_core.numpy import math as pmath
from plait_dispatch import eager, eager_shortcuts
from plait_dispatch.array import Array
from plait_dispatch.cache import clear_caches

_X = np.array([-1.5, 0.0, 2.0, 3.25], np.float32)
_Y = np.array([4.0, -2.0, 0.5, 1.0], np.float32)


@pytest.fixture
def promotions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the NumPy functions that went through ``promote_args`` (the
    NumPy layer's general way), starting from cold caches."""
    eager.clear_eager_cache()
    seen: list[str] = []
    general = pmath.promote_args

    def spy(name: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(name)
        return general(name, *args, **kwargs)

    monkeypatch.setattr(pmath, "promote_args", spy)
    yield seen


def device(x: Any) -> Array:
    out = pd.device_put(x)
    assert type(out) is Array
    return out


def test_shortcuts_are_offered_for_device_arrays() -> None:
    assert eager_fast.shortcuts.array_type is Array


@pytest.mark.parametrize(
    ("name", "op", "oracle"),
    [
        ("add", lambda x, y: pnp.add(x, y), np.add),
        ("subtract", lambda x, y: pnp.subtract(x, y), np.subtract),
        ("multiply", lambda x, y: pnp.multiply(x, y), np.multiply),
        ("x + y", lambda x, y: x + y, np.add),
        ("x - y", lambda x, y: x - y, np.subtract),
        ("x * y", lambda x, y: x * y, np.multiply),
    ],
)
def test_binary_arithmetic_takes_the_shortcut_after_the_first_call(
    promotions: list[str], name: str, op: Any, oracle: Any
) -> None:
    x, y = device(_X), device(_Y)
    first = op(x, y)
    second = op(x, y)
    assert promotions == [], f"{name}: the second call went through promotion"
    assert any(k[1] == id(x.aval) for k in eager_shortcuts._binary)
    for out in (first, second):
        assert type(out) is Array and out.dtype == np.float32 and not out.weak_type and not out.committed
        np.testing.assert_array_equal(np.asarray(out), oracle(_X, _Y))


def test_python_scalars_take_the_shortcut_as_promotion_makes_them(promotions: list[str]) -> None:
    x = device(_X)
    i = device(np.array([1, 2, 3], np.int32))
    cases = [
        (lambda: x * 2.0, _X * np.float32(2.0), np.float32),
        (lambda: x + 1, _X + np.float32(1), np.float32),
        (lambda: x - 3, _X - np.float32(3), np.float32),
        (lambda: i + 2, np.array([3, 4, 5], np.int32), np.int32),
        # promoted (to a weak float32, as in JAX): the NumPy layer
        (lambda: i * 2.0, np.array([2.0, 4.0, 6.0], np.float32), np.float32),
    ]
    for op, _, _ in cases:
        op()
        op()
    del promotions[:]
    for op, want, dt in cases:
        out = op()
        assert out.dtype == dt and out.weak_type == (op is cases[-1][0])
        np.testing.assert_array_equal(np.asarray(out), want)
    assert promotions == ["multiply"], promotions  # only i * 2.0 promotes the array


def test_booleans_and_mixed_types_keep_the_numpy_layer() -> None:
    b = device(np.array([True, False, True]))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(b + b), [True, False, True])  # logical or
        np.testing.assert_array_equal(np.asarray(b * b), [True, False, True])  # logical and
        assert (b + b).dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(b + 1), [2, 1, 2])
        with pytest.raises(TypeError):
            b - b
    x = device(_X)
    h = device(_X.astype(np.float16))
    for _ in range(2):
        out = x + h
        assert out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), _X * 2)
    w = pnp.asarray(2.0) * 1.0  # weakly typed
    for _ in range(2):
        out = w + x[:1]
        assert out.dtype == np.float32 and not out.weak_type and float(out[0]) == 0.5


def test_unary_functions_and_sum() -> None:
    x = device(_X)
    i = device(np.array([1, 2, 3], np.int32))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(pnp.sin(x)), np.sin(_X), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(pnp.exp(x)), np.exp(_X), rtol=1e-6)
        assert pnp.sin(i).dtype == np.float32  # promoted first
        np.testing.assert_allclose(np.asarray(pnp.sin(i)), np.sin([1.0, 2.0, 3.0]), rtol=1e-6)
        s = pnp.sum(x)
        assert s.shape == () and s.dtype == np.float32 and float(s) == float(np.sum(_X))
        assert int(pnp.sum(i)) == 6 and pnp.sum(i).dtype == np.int32
        m = pnp.sum(device(np.ones((2, 3), np.float32)))
        assert m.shape == () and float(m) == 6.0
    assert any(k[0].name == "sin" for k in eager_shortcuts._unary)
    assert any(k[0].name == "reduce_sum" for k in eager_shortcuts._unary)


def test_sums_follow_the_x64_flag() -> None:
    i = device(np.array([1, 2, 3], np.int32))
    assert pnp.sum(i).dtype == np.int32
    with pc.enable_x64():
        for _ in range(2):
            s = pnp.sum(i)
            assert s.dtype == np.int64 and int(s) == 6
    assert pnp.sum(i).dtype == np.int32


def test_deleted_and_donated_arrays_are_refused_as_before() -> None:
    x, y = device(_X), device(_Y)
    pnp.sin(x), x + y, x * 2.0, pnp.sum(x)  # known
    pnp.sin(x), x + y, x * 2.0, pnp.sum(x)
    x.delete()
    for op in (lambda: pnp.sin(x), lambda: x + y, lambda: y + x, lambda: x * 2.0, lambda: pnp.sum(x)):
        with pytest.raises(DeletedArrayError, match="deleted"):
            op()


def test_committed_operands_take_the_usual_way() -> None:
    dev = pd.devices()[0]
    c = pd.device_put(_X, dev)
    u = device(_Y)
    for _ in range(2):
        for out in (pnp.sin(c), c + u, u + c, c * 2.0, pnp.sum(c)):
            assert out.committed and out.device is dev
    np.testing.assert_array_equal(np.asarray(u + c), _X + _Y)


def test_shortcuts_apply_only_under_their_backend() -> None:
    x = device(_X)
    pnp.sin(x), pnp.sin(x)
    prev = set_eager_backend(None)
    try:
        assert eager_fast.shortcuts.array_type is not Array
        out = pnp.sin(x)  # NumPy evaluates it
        assert type(out) is not Array
        np.testing.assert_allclose(np.asarray(out), np.sin(_X), rtol=1e-6)
    finally:
        set_eager_backend(prev)
    assert eager_fast.shortcuts.array_type is Array
    assert type(pnp.sin(x)) is Array


def test_transformations_still_see_the_operations() -> None:
    x = device(_X)
    pnp.sin(x), x * x, pnp.sum(x)  # known eagerly

    def loss(v: Any) -> Any:
        return pnp.sum(pnp.sin(v) * v + v * 2.0)

    jaxpr = pc.make_jaxpr(loss)(x)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names.count("sin") == 1 and "reduce_sum" in names and names.count("mul") == 2
    jitted = pd.jit(loss)
    np.testing.assert_allclose(float(jitted(x)), float(np.sum(np.sin(_X) * _X + _X * 2)), rtol=1e-6)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="counts Linux memory maps")
def test_clear_caches_forgets_the_eager_operations() -> None:
    # Eager operations on ever new shapes (a long fuzz run makes them) each compile an
    # executable whose machine code stays mapped while a cache holds it: clear_caches
    # drops them all, as JAX's drops its compiled single primitives (the multi-device
    # fuzz grew ~32 memory maps per program before).
    def maps() -> int:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)

    def churn(start: int, n: int) -> None:
        for k in range(start, start + n):
            x = pnp.sin(pnp.ones(k + 1, np.float32)) * 2.0
            np.testing.assert_allclose(np.asarray(x), np.full(k + 1, 2 * np.sin(1.0), np.float32), rtol=1e-6)

    churn(3, 5)
    assert eager._ops
    clear_caches()
    assert not eager._ops and not eager_shortcuts._unary and not eager_shortcuts._binary
    before = maps()
    for start in range(10, 50, 10):
        churn(start, 10)
        clear_caches()
    assert maps() - before < 40  # was about 8 maps per new shape
