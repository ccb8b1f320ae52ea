"""The eager backend: primitives run on XLA one at a time, cached, returning
Arrays; host inputs transferred once; higher-order primitives compiled whole;
deleted arrays refused; committed placement, across two devices in a
subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import DeletedArrayError, lax
from plait_core import numpy as pnp
from plait_dispatch import _jaxlib, eager
from plait_dispatch.array import Array

F32, I32, BF16 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(ml_dtypes.bfloat16)


def device(x: Any) -> Array:
    out = pd.device_put(x)
    assert isinstance(out, Array)
    return out


@pytest.fixture
def dispatched() -> Iterator[list[str]]:
    """Names of the primitives the eager backend is asked to run, in order."""
    seen: list[str] = []

    def spy(prim: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
        seen.append(prim.name)
        return eager.xla_backend(prim, args, params)

    prev = pc.set_eager_backend(spy)
    try:
        yield seen
    finally:
        pc.set_eager_backend(prev)


def test_installed_on_import() -> None:
    assert pc.eager_backend() is eager.xla_backend


@pytest.mark.parametrize("dtype", [F32, I32, np.dtype(np.bool_), BF16, np.dtype(np.float16)], ids=str)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
def test_results_are_arrays_matching_numpy(dtype: Any, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, shape).astype(dtype)
    y = rng.integers(1, 5, shape).astype(dtype)
    dx, dy = device(x), device(y)
    if dtype == np.bool_:
        got, want = lax.bitwise_and(dx, dy), x & y
    else:
        got, want = lax.max(dx, dy), np.maximum(x, y)
    assert type(got) is Array and got.dtype == dtype and got.shape == shape
    assert not got.weak_type and not got.committed and got.device is pd.default_device()
    np.testing.assert_array_equal(np.asarray(got), want)
    total = pnp.sum(dx) if dtype != np.bool_ else pnp.any(dx)
    assert type(total) is Array
    np.testing.assert_array_equal(np.asarray(total), x.sum() if dtype != np.bool_ else x.any())


def test_weak_type_is_kept() -> None:
    w = lax.mul(2.0, 3.0)
    assert type(w) is Array and w.weak_type and w.dtype == F32 and float(w) == 6.0
    i = lax.add(2, 3)
    assert i.weak_type and i.dtype == I32 and int(i) == 5
    s = lax.add(device(np.float32(1.0)), 2.0)
    assert not s.weak_type and float(s) == 3.0
    # A weak Array combined with a strong bfloat16 one yields bfloat16.
    b = device(np.ones(2, BF16)) * w
    assert b.dtype == BF16 and not b.weak_type
    np.testing.assert_array_equal(np.asarray(b).astype(np.float32), [6.0, 6.0])


def test_numpy_and_scalar_inputs() -> None:
    x = np.linspace(-1, 1, 5).astype(np.float32)
    got = lax.sin(x)
    assert type(got) is Array
    np.testing.assert_allclose(np.asarray(got), np.sin(x), rtol=1e-6)
    mixed = device(x) * 2.5 + x
    np.testing.assert_allclose(np.asarray(mixed), x * 3.5, rtol=1e-6)
    with pc.enable_x64():
        wide = lax.add(np.arange(3, dtype=np.float64), 1.0)
        assert wide.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(wide), np.arange(3) + 1.0)


def test_numpy_input_is_transferred_once(monkeypatch: pytest.MonkeyPatch) -> None:
    puts: list[tuple[int, ...]] = []
    real = _jaxlib.device_put

    def counting(value: np.ndarray, aval: Any, dev: Any, committed: bool) -> Any:
        puts.append(value.shape)
        return real(value, aval, dev, committed)

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    lax.mul(device(np.ones((2, 3), np.float32)), device(np.ones((2, 3), np.float32)))  # compile first
    monkeypatch.setattr(_jaxlib, "device_put", counting)
    out = lax.mul(x, x)
    assert puts == [(2, 3)]
    np.testing.assert_array_equal(np.asarray(out), x * x)
    puts.clear()
    out = pd.jit(lambda a, b, c: a * b + c)(x, x, x)
    assert puts == [(2, 3)]
    np.testing.assert_array_equal(np.asarray(out), x * x + x)


def test_scalar_operands_are_not_transferred_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    x = device(np.arange(3, dtype=np.float32))
    lax.add(x, 0.25)
    puts: list[Any] = []
    real = _jaxlib.device_put
    monkeypatch.setattr(_jaxlib, "device_put", lambda *a: puts.append(a) or real(*a))
    for _ in range(5):
        np.testing.assert_array_equal(np.asarray(lax.add(x, 0.25)), np.arange(3) + 0.25)
    assert puts == []
    # -0.0 and 0.0 are different values, even though they compare equal.
    assert np.signbit(np.asarray(lax.mul(device(np.float32(1.0)), -0.0)))
    assert not np.signbit(np.asarray(lax.mul(device(np.float32(1.0)), 0.0)))


def test_one_compilation_per_primitive_params_and_types() -> None:
    x = device(np.arange(4, dtype=np.float32))
    pnp.roll(x, 1)
    base = pd.stats.snapshot()["compiles"]
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(pnp.roll(x, 1)), np.roll(np.arange(4), 1))
    assert pd.stats.snapshot()["compiles"] == base
    pnp.roll(x, 2)  # new params of the same primitives
    assert pd.stats.snapshot()["compiles"] > base


def test_higher_order_primitives_compile_their_bodies_whole(dispatched: list[str]) -> None:
    x = device(np.linspace(0, 1, 4).astype(np.float32))
    out = lax.cond(True, lambda v: pnp.sin(v) * 2.0, lambda v: pnp.cos(v), x)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.linspace(0, 1, 4)) * 2, rtol=1e-6)
    loop = lax.fori_loop(0, 4, lambda i, v: v * 2.0 + 1.0, x)
    want = np.linspace(0, 1, 4)
    for _ in range(4):
        want = want * 2 + 1
    np.testing.assert_allclose(np.asarray(loop), want, rtol=1e-5)
    n, w = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, pnp.sin(c[1])), (0, x))
    assert int(n) == 3
    np.testing.assert_allclose(np.asarray(w), np.sin(np.sin(np.sin(np.linspace(0, 1, 4)))), rtol=1e-6)
    ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, x)
    np.testing.assert_allclose(np.asarray(ys[0]), np.linspace(0, 1, 4).sum(), rtol=1e-6)
    call = lax.named_call(lambda v: pnp.exp(v) - 1.0)(x)
    np.testing.assert_allclose(np.asarray(call), np.expm1(np.linspace(0, 1, 4)), rtol=1e-5)
    # The bodies' primitives never reach the eager backend one by one.
    assert not {"sin", "cos", "mul", "exp", "sub"} & set(dispatched), dispatched
    assert {"cond", "while", "scan", "closed_call"} <= set(dispatched)


def test_custom_jvp_primal_runs_eagerly() -> None:
    @pc.custom_jvp
    def f(x: Any) -> Any:
        return pnp.sin(x) * 3.0

    f.defjvp(lambda p, t: (f(p[0]), t[0]))
    x = device(np.linspace(0, 1, 3).astype(np.float32))
    np.testing.assert_allclose(np.asarray(f(x)), 3 * np.sin(np.linspace(0, 1, 3)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pd.jit(f)(x)), 3 * np.sin(np.linspace(0, 1, 3)), rtol=1e-6)


def test_primitive_errors_read_as_staged_ones() -> None:
    x, y = device(np.ones((2, 3), np.float32)), device(np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"add requires operands of equal shapes.*\(2, 3\) and \(3,\)"):
        lax.add(x, y)
    with pytest.raises(TypeError, match=r"an argument of exp: expected an array.*str"):
        lax.exp("x")


@pytest.mark.parametrize("kind", ["deleted", "donated"])
def test_deleted_arrays_are_refused_by_eager_ops(kind: str) -> None:
    x = device(np.arange(3, dtype=np.float32))
    y = device(np.arange(3, dtype=np.float32))
    lax.add(x, y)  # the short path knows this signature
    if kind == "deleted":
        y.delete()
    else:
        pd.jit(lambda a: a * 2, donate_argnums=0)(y)
    for op in (lambda: lax.add(x, y), lambda: y + 1.0, lambda: lax.sin(y), lambda: pnp.sum(y)):
        with pytest.raises(DeletedArrayError, match=f"Array f32\\[3\\] was {kind}"):
            op()
    with pytest.raises(RuntimeError, match=kind):
        repr(y)
    with pytest.raises(ValueError, match=kind):
        np.asarray(y)
    with pytest.raises(DeletedArrayError, match=kind):
        pd.device_put(y)
    with pytest.raises(DeletedArrayError, match=f"cannot pass it to jit\\(<lambda>\\).*{kind}"):
        pd.jit(lambda a: a + 1)(y)
    np.testing.assert_array_equal(np.asarray(x + 1.0), [1.0, 2.0, 3.0])


def test_committed_arguments_commit_results() -> None:
    dev = pd.devices()[0]
    c = pd.device_put(np.arange(3, dtype=np.float32), dev)
    u = device(np.ones(3, np.float32))
    assert c.committed and not u.committed
    assert (c + u).committed and not (u + u).committed
    assert pd.jit(lambda a, b: a * b)(c, u).committed
    assert not pd.jit(lambda a, b: a * b)(u, u).committed
    assert pd.jit(lambda a: a + 1, device=dev)(u).committed


def test_what_xla_cannot_run_is_left_to_cores_reference() -> None:
    # A collective outside any mapped axis: core's own, clear error.
    with pc.extend_axis_env([("i", 3)]):
        with pytest.raises(
            pc.UnboundAxisNameError, match=r"psum over the axis 'i' \(size 3\) cannot be evaluated"
        ):
            lax.psum(device(np.ones(2, np.float32)), "i")
        with pytest.raises(pc.UnboundAxisNameError, match=r"psum over the axis 'i'"):
            lax.psum(device(np.ones(2, np.float32)), "i")  # the verdict is cached, the error is not


def test_numpy_backend_can_be_restored() -> None:
    eager.uninstall()
    try:
        out = lax.add(np.float32(1.0), np.float32(2.0))
        assert type(out) is not Array and float(out) == 3.0
    finally:
        eager.install()
    assert type(lax.add(np.float32(1.0), np.float32(2.0))) is Array


_TWO_DEVICES = textwrap.dedent(
    """
    import numpy as np
    import plait_dispatch as pd
    from plait_core import lax

    d0, d1 = pd.devices()
    x = np.arange(4, dtype=np.float32)
    a = pd.device_put(x, d1)
    u = pd.device_put(x)
    assert a.committed and a.device is d1 and not u.committed and u.device is d0

    # Uncommitted values follow committed ones; results stay committed there.
    for out in (a + u, lax.mul(u, a), a * 2.0, pd.jit(lambda p, q: p - q)(u, a), pd.jit(lambda p: p * 3)(a)):
        assert out.committed and out.device is d1, out.device
    np.testing.assert_array_equal(np.asarray(pd.jit(lambda p, q: p * q)(u, a)), x * x)
    # Trivial computations (nothing committed) run on the default device, uncommitted.
    for out in (u + u, pd.jit(lambda p: p + 1)(u), lax.add(1.0, 2.0)):
        assert not out.committed and out.device is d0
    # jit(device=) places the computation and commits its results.
    out = pd.jit(lambda p: p + 1, device=d1)(u)
    assert out.committed and out.device is d1
    np.testing.assert_array_equal(np.asarray(out), x + 1)
    # The fast path of a jitted function does not ignore placement.
    f = pd.jit(lambda p, q: p + q)
    f(u, u); f(u, u)
    assert f(u, a).device is d1 and f(u, u).device is d0

    b = pd.device_put(x, d0)
    for run in (lambda: a + b, lambda: pd.jit(lambda p, q: p + q)(a, b), lambda: pd.jit(lambda p: p, device=d0)(a)):
        try:
            run()
        except ValueError as e:
            msg = str(e)
            assert "cpu:1" in msg and "cpu:0" in msg and "committed to different devices" in msg, msg
        else:
            raise AssertionError("no error")
    print("two-device placement ok")
    """
)


def test_placement_across_two_devices() -> None:
    env = dict(os.environ, PLAIT_NUM_CPU_DEVICES="2")
    res = subprocess.run(
        [sys.executable, "-c", _TWO_DEVICES], env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert "two-device placement ok" in res.stdout


def test_eager_under_jit_tracing_is_staged(dispatched: list[str]) -> None:
    f: Callable[[Any], Any] = pd.jit(lambda v: pnp.tanh(v) * 2.0)
    x = device(np.zeros(3, np.float32))
    np.testing.assert_array_equal(np.asarray(f(x)), np.zeros(3))
    assert "tanh" not in dispatched


@pytest.mark.parametrize("sampler", ["normal", "uniform", "randint", "split"])
def test_an_eager_sampler_compiles_one_program_per_shape(sampler: str) -> None:
    from plait_core import random

    key = pd.device_put(random.PRNGKey(3))
    calls = {
        "normal": lambda: random.normal(key, (11, 3)),
        "uniform": lambda: random.uniform(key, (11, 3), minval=-2.0, maxval=5.0),
        "randint": lambda: random.randint(key, (11, 3), 0, 9),
        "split": lambda: random.split(key, 11),
    }
    base = pd.stats.snapshot()["compiles"]
    first = calls[sampler]()
    assert pd.stats.snapshot()["compiles"] == base + 1
    again = calls[sampler]()
    assert pd.stats.snapshot()["compiles"] == base + 1
    staged = pd.jit(calls[sampler])()
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
    np.testing.assert_array_equal(np.asarray(first), np.asarray(staged))


def test_library_functions_compile_once_per_signature_with_op_by_op_values() -> None:
    # Issue 26: linalg.solve binds a dozen primitives; eagerly it is one
    # compiled program per signature (as JAX's jitted library functions).
    from plait_core import eager_staging

    rng = np.random.default_rng(5)
    a = device((rng.normal(size=(5, 5)) + 5 * np.eye(5)).astype(np.float32))
    b = device(rng.normal(size=(5,)).astype(np.float32))
    prev = eager_staging.set_eager_staging(False)
    try:
        base = pd.stats.snapshot()["compiles"]
        want = pnp.linalg.solve(a, b)
        op_by_op = pd.stats.snapshot()["compiles"] - base
    finally:
        eager_staging.set_eager_staging(prev)
    assert op_by_op >= 5
    a2 = a * 1.0
    base = pd.stats.snapshot()["compiles"]
    got = pnp.linalg.solve(a, b)
    assert pd.stats.snapshot()["compiles"] == base + 1
    again = pnp.linalg.solve(a2, b)
    assert pd.stats.snapshot()["compiles"] == base + 1
    assert type(got) is Array and got.aval == want.aval
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(again), np.asarray(want))
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(np.asarray(a), np.asarray(b)), rtol=1e-5)
