"""Host callbacks end to end: plait.debug.print / debug.callback,
plait.pure_callback and plait.experimental.io_callback, eagerly and inside
jit (compiled code calling back into Python), vmap, grad and scan; printed
output and values are asserted."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

import plait
from plait import lax
from plait.experimental import io_callback

pnp = plait.numpy
F32 = np.float32


def test_debug_print_formats_like_str_format(capsys: pytest.CaptureFixture[str]) -> None:
    x = pnp.arange(3.0)
    plait.debug.print("x={x} y={} s={s}", x, x=pnp.float32(1.5), s=2)
    plait.jit(lambda v: plait.debug.print("in jit {} {} {:.2f}", v, v.dtype, v[1] / 3))(x)
    assert capsys.readouterr().out == "x=1.5 y=[0. 1. 2.] s=2\nin jit [0. 1. 2.] float32 0.33\n"


def test_debug_print_under_vmap_grad_and_scan(capsys: pytest.CaptureFixture[str]) -> None:
    x = pnp.arange(3.0)

    def f(v: Any) -> Any:
        plait.debug.print("f sees {}", v)
        return (v**2).sum()

    np.testing.assert_array_equal(np.asarray(plait.jit(plait.grad(f))(x)), [0.0, 2.0, 4.0])
    plait.jit(plait.vmap(lambda v: plait.debug.print("element {}", v)))(pnp.array([3, 4], np.int32))

    def body(c: Any, xi: Any) -> tuple[Any, Any]:
        plait.debug.print("step {} {}", c, xi, ordered=True)
        return c + xi, c

    carry, ys = plait.jit(lambda v: lax.scan(body, 0.0, v))(x)
    assert float(carry) == 3.0
    np.testing.assert_array_equal(np.asarray(ys), [0.0, 0.0, 1.0])
    assert capsys.readouterr().out.splitlines() == [
        "f sees [0. 1. 2.]",
        "element 3",
        "element 4",
        "step 0.0 0.0",
        "step 0.0 1.0",
        "step 1.0 2.0",
    ]


def test_ordered_prints_keep_program_order(capsys: pytest.CaptureFixture[str]) -> None:
    @plait.jit
    def f(x: Any) -> Any:
        for k in range(6):
            plait.debug.print("{} {}", k, x * k, ordered=True)
        return x

    f(np.float32(2.0))
    assert capsys.readouterr().out.splitlines() == [f"{k} {2.0 * k}" for k in range(6)]


def test_debug_log_goes_to_the_logger(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="plait.debug"):
        plait.jit(lambda v: plait.debug.log("logged {}", v * 2))(np.float32(1.5))
    assert [r.getMessage() for r in caplog.records if r.name == "plait.debug"] == ["logged 3.0"]


def test_debug_callback_runs_for_its_effect_even_when_unused() -> None:
    seen: list[Any] = []
    out = plait.jit(lambda v: (plait.debug.callback(lambda a, b=None: seen.append((a.tolist(), b)), v, b="tag"), v)[1])(
        np.ones(2, F32)
    )
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.0])
    assert seen == [([1.0, 1.0], "tag")]


def test_pure_callback_values_eager_and_jit() -> None:
    x = np.linspace(0, 1, 4, dtype=F32)
    sd = plait.ShapeDtypeStruct(x.shape, F32)
    for run in (lambda f: f, plait.jit):
        y = run(lambda v: plait.pure_callback(lambda a: np.sin(a), sd, v) + 1)(x)
        np.testing.assert_allclose(np.asarray(y), np.sin(x) + 1, rtol=1e-6)
    result = {"s": plait.ShapeDtypeStruct((), F32), "k": sd}
    pair = plait.jit(lambda v: plait.pure_callback(lambda a, k: {"s": a.sum(), "k": a * k}, result, v, k=F32(3)))(x)
    np.testing.assert_allclose(float(pair["s"]), x.sum(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pair["k"]), 3 * x, rtol=1e-6)


def test_results_are_canonicalized_like_jax() -> None:
    # A Python float / float64 result is narrowed to float32 (x64 is off), as in JAX.
    out = plait.jit(lambda v: plait.pure_callback(lambda a: float(a) * 2, plait.ShapeDtypeStruct((), np.float64), v))(F32(1.5))
    assert np.asarray(out).dtype == np.float32 and float(out) == 3.0


def test_unused_pure_callback_is_dropped_unused_io_callback_is_not() -> None:
    log: list[str] = []
    sd = plait.ShapeDtypeStruct((2,), F32)

    def f(x: Any) -> Any:
        plait.pure_callback(lambda v: (log.append("pure"), v)[1], sd, x)
        io_callback(lambda v: (log.append("io"), v)[1], sd, x)
        return x

    plait.jit(f)(np.ones(2, F32))
    assert log == ["io"]


def test_io_callback_ordered_in_jit_and_under_vmap() -> None:
    log: list[float] = []
    sd = plait.ShapeDtypeStruct((), F32)

    def record(a: np.ndarray) -> np.ndarray:
        log.append(float(a))
        return np.asarray(a + 1, F32)

    y = plait.jit(lambda v: io_callback(record, sd, io_callback(record, sd, v, ordered=True), ordered=True))(F32(2.0))
    assert float(y) == 4.0 and log == [2.0, 3.0]
    log.clear()
    np.testing.assert_array_equal(np.asarray(plait.vmap(lambda v: io_callback(record, sd, v))(np.arange(3, dtype=F32))), [1, 2, 3])
    assert log == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="cannot vmap an ordered io_callback"):
        plait.vmap(lambda v: io_callback(record, sd, v, ordered=True))(np.arange(3, dtype=F32))


@pytest.mark.parametrize(
    ("method", "shapes"),
    [("sequential", [((), ())] * 3), ("sequential_unrolled", [((), ())] * 3), ("expand_dims", [((3,), (1,))]),
     ("broadcast_all", [((3,), (3,))])],
)  # fmt: skip
def test_pure_callback_vmap_methods(method: str, shapes: list[Any]) -> None:
    calls: list[Any] = []

    def cb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        calls.append((a.shape, b.shape))
        return np.asarray(a * b + 1, F32)

    sd = plait.ShapeDtypeStruct((), F32)
    out = plait.jit(plait.vmap(lambda a: plait.pure_callback(cb, sd, a, F32(2.0), vmap_method=method)))(
        np.arange(3, dtype=F32)
    )
    np.testing.assert_array_equal(np.asarray(out), [1.0, 3.0, 5.0])
    assert calls == shapes


def test_errors() -> None:
    sd = plait.ShapeDtypeStruct((2,), F32)
    with pytest.raises(RuntimeError, match=r"result 0 of the callback has shape \(3,\), expected \(2,\)"):
        plait.pure_callback(lambda v: np.zeros(3, F32), sd, np.ones(2, F32))
    with pytest.raises(RuntimeError, match=r"result 0 of the callback has shape \(3,\), expected \(2,\)"):
        plait.jit(lambda v: plait.pure_callback(lambda a: np.zeros(3, F32), sd, v))(np.ones(2, F32))
    with pytest.raises(RuntimeError, match="result 0 of the callback has dtype int32, expected float32"):
        plait.pure_callback(lambda v: np.zeros(2, np.int32), sd, np.ones(2, F32))
    with pytest.raises(NotImplementedError, match=r"vmap of pure_callback .* without a vmap_method"):
        plait.vmap(lambda v: plait.pure_callback(np.sin, plait.ShapeDtypeStruct((), F32), v))(np.ones(2, F32))
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        plait.pure_callback(np.sin, sd, np.ones(2, F32), vmap_method="parallel")
    with pytest.raises(ValueError, match=r"Pure callbacks \(pure_callback\) do not support differentiation"):
        plait.grad(lambda v: plait.pure_callback(np.sin, plait.ShapeDtypeStruct((), F32), v))(1.0)
    with pytest.raises(TypeError, match=r"result_shape_dtypes must be a pytree of values with \.shape and \.dtype"):
        plait.pure_callback(np.sin, 3, np.ones(2, F32))
    with pytest.raises(NotImplementedError, match=r"host callback .* is not supported on an operand of symbolic shape"):
        plait.mask(lambda v: (plait.debug.print("{}", v), v)[1], ["n"], "n")([np.ones(4, F32)], dict(n=2))


def test_pure_callback_with_custom_jvp_is_differentiable() -> None:
    @plait.custom_jvp
    def sin(x: Any) -> Any:
        return plait.pure_callback(np.sin, plait.ShapeDtypeStruct(np.shape(x), F32), x)

    sin.defjvp(lambda primals, tangents: (sin(primals[0]), pnp.cos(primals[0]) * tangents[0]))
    g = plait.jit(plait.grad(lambda v: sin(v)))(F32(0.5))
    np.testing.assert_allclose(float(g), np.cos(0.5), rtol=1e-6)


def test_single_device_programs_take_sharding_and_partitioned(capsys: pytest.CaptureFixture[str]) -> None:
    # On one device these change nothing (JAX's results); over several devices
    # see multidevice_callback_checks.py.
    d0 = plait.sharding.SingleDeviceSharding(plait.devices()[0])
    sd = plait.ShapeDtypeStruct((2,), F32)
    out = plait.jit(lambda v: plait.pure_callback(lambda a: a * 2, sd, v, sharding=d0))(np.ones(2, F32))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0])
    out = plait.jit(lambda v: io_callback(lambda a: a + 1, sd, v, sharding=d0, ordered=True))(np.ones(2, F32))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0])
    plait.jit(lambda v: plait.debug.print("p {}", v, partitioned=True))(np.arange(2, dtype=F32))
    seen: list[Any] = []
    plait.jit(lambda v: plait.debug.callback(lambda a: seen.append(a.tolist()), v, partitioned=True))(np.ones(2, F32))
    plait.effects_barrier()
    assert capsys.readouterr().out == "p [0. 1.]\n" and seen == [[1.0, 1.0]]
    mesh = plait.sharding.Mesh(np.array(plait.devices()[:1]), ("x",))
    named = plait.sharding.NamedSharding(mesh, plait.sharding.PartitionSpec("x"))
    with pytest.raises(NotImplementedError, match=r"pure_callback\(sharding=\.\.\.\) with a NamedSharding"):
        plait.pure_callback(lambda a: a, sd, np.ones(2, F32), sharding=named)
