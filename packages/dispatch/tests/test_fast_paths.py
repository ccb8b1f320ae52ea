"""The short paths of eager operations and cached jit calls give exactly what
the general path gives: values, dtypes, weak types, devices, committedness and
errors; they only skip work.

Each case runs once on cold caches (the general path: it validates, compiles
and remembers the operation and the host scalars it met) and then again
(the short path), counting the general path's calls to prove which one ran.
The oracle of values is NumPy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import DeletedArrayError, config, lax
from plait_core import numpy as pnp
from plait_dispatch import eager
from plait_dispatch.array import Array

F32, F16, I8, I32 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int8), np.dtype(np.int32)
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture
def general_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the primitives that took the eager backend's general path,
    starting from cold caches."""
    eager.clear_eager_cache()
    seen: list[str] = []
    general = eager._general

    def spy(prim: Any, args: Any, params: Any) -> Any:
        seen.append(prim.name)
        return general(prim, args, params)

    monkeypatch.setattr(eager, "_general", spy)
    yield seen


def device(x: Any) -> Array:
    out = pd.device_put(x)
    assert isinstance(out, Array)
    return out


def _described(v: Any) -> tuple[Any, ...]:
    """Everything the two paths must agree on, the data included."""
    assert type(v) is Array
    return (v.shape, v.dtype, v.weak_type, v.device, v.committed, np.asarray(v).tobytes())


_X = np.array([-1.5, 0.0, 2.0, 3.25], np.float32)
_I = np.array([-3, 0, 5, 7], np.int8)

# (name, the operation on device arrays, the same on NumPy arrays, the inputs)
_CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[np.ndarray, ...]]] = [
    ("pnp.sin", lambda x: pnp.sin(x), np.sin, (_X,)),
    ("lax.sin", lambda x: lax.sin(x), np.sin, (_X,)),
    ("x * x", lambda x: x * x, lambda x: x * x, (_X,)),
    ("x * y", lambda x, y: x * y, lambda x, y: x * y, (_X, _X[::-1].copy())),
    ("lax.add", lambda x, y: lax.add(x, y), np.add, (_X, _X[::-1].copy())),
    ("x * 2.5", lambda x: x * 2.5, lambda x: x * np.float32(2.5), (_X,)),
    ("2.5 * x", lambda x: 2.5 * x, lambda x: np.float32(2.5) * x, (_X,)),
    ("x + 1", lambda x: x + 1, lambda x: x + np.float32(1), (_X,)),
    ("x - True", lambda x: x - True, lambda x: x - np.float32(1), (_X,)),
    ("x * -0.0", lambda x: x * -0.0, lambda x: x * np.float32(-0.0), (_X,)),
    ("x + nan", lambda x: x + float("nan"), lambda x: x + np.float32("nan"), (_X,)),
    ("f16 * 2.5", lambda x: x * 2.5, lambda x: x * np.float16(2.5), (_X.astype(F16),)),
    ("bf16 + 3", lambda x: x + 3, lambda x: x + BF16.type(3), (_X.astype(BF16),)),
    ("i8 + 3", lambda x: x + 3, lambda x: x + np.int8(3), (_I,)),
    ("i8 * 2.0", lambda x: x * 2.0, lambda x: x.astype(np.float32) * np.float32(2.0), (_I,)),
    ("x + np.float32", lambda x: x + np.float32(0.5), lambda x: x + np.float32(0.5), (_X,)),
    ("pnp.sum", lambda x: pnp.sum(x), lambda x: np.sum(x, dtype=np.float32), (_X,)),
    ("pnp.max axis", lambda x: pnp.max(x, axis=0), lambda x: np.max(x, axis=0), (_X,)),
    ("pnp.sum keepdims", lambda x: pnp.sum(x, keepdims=True), lambda x: np.sum(x, keepdims=True), (_X,)),
]


# Float zeros and NaNs are not remembered as host scalars (as keys, -0.0 equals
# 0.0 and NaN equals nothing): they always take the general path.
_GENERAL_ONLY = {"x * -0.0", "x + nan"}


@pytest.mark.parametrize(("name", "op", "oracle", "inputs"), _CASES, ids=[c[0] for c in _CASES])
def test_the_short_path_gives_what_the_general_path_gives(
    general_calls: list[str],
    name: str,
    op: Callable[..., Any],
    oracle: Callable[..., Any],
    inputs: tuple[np.ndarray, ...],
) -> None:
    args = [device(a) for a in inputs]
    first = op(*args)
    assert general_calls, "the first call must take the general path"
    del general_calls[:]
    second = op(*args)
    if name in _GENERAL_ONLY:
        assert general_calls, f"{name}: float zeros and NaNs are kept off the short path"
    else:
        assert general_calls == [], f"{name}: the second call took the general path for {general_calls}"
    assert _described(second) == _described(first)
    want = np.asarray(oracle(*inputs))
    assert second.dtype == want.dtype and second.shape == want.shape
    assert np.asarray(second).tobytes() == want.tobytes()  # bit for bit: signs of zeros, NaNs


def test_weak_types_survive_the_short_path(general_calls: list[str]) -> None:
    w = lax.mul(2.0, 3.0)  # a weak f32 Array
    assert w.weak_type
    outs = [w * 1.5, lax.add(w, w), pnp.sin(w)]
    del general_calls[:]
    again = [w * 1.5, lax.add(w, w), pnp.sin(w)]
    assert general_calls == []
    for a, b in zip(outs, again):
        assert a.weak_type and b.weak_type and _described(a) == _described(b)


def test_committed_operands_take_the_general_path_and_commit_results(general_calls: list[str]) -> None:
    dev = pd.devices()[0]
    u = device(_X)
    c = pd.device_put(_X, dev)
    pnp.sin(u), u * u  # the operations are known
    del general_calls[:]
    outs = [pnp.sin(c), c * u, u * c, c * 2.5]
    assert general_calls == ["sin", "mul", "mul", "mul"]
    for out in outs:
        assert out.committed and out.device is dev
    np.testing.assert_array_equal(np.asarray(outs[1]), _X * _X)
    assert not (u * u).committed


def test_host_scalars_are_kept_apart_by_the_x64_flag(general_calls: list[str]) -> None:
    assert lax.add(1.5, 2.5).dtype == F32
    with pc.enable_x64():
        out = lax.add(1.5, 2.5)
        assert out.dtype == np.float64 and out.weak_type and float(out) == 4.0
        x64 = device(np.arange(3, dtype=np.float64))
        np.testing.assert_array_equal(np.asarray(x64 + 1), np.arange(3) + 1.0)
        assert (x64 + 1).dtype == np.float64
    again = lax.add(1.5, 2.5)
    assert again.dtype == F32 and again.weak_type and float(again) == 4.0
    assert config.x64_enabled is False


def test_result_types_that_depend_on_x64_follow_the_flag() -> None:
    from plait_core.primitives.shapes import dim_as_value_p

    assert dim_as_value_p.bind(dim=3).dtype == I32
    with pc.enable_x64():
        out = dim_as_value_p.bind(dim=3)
        assert out.dtype == np.int64 and out.weak_type and int(out) == 3
    assert dim_as_value_p.bind(dim=3).dtype == I32


def test_promotion_converts_python_scalars_on_the_host_as_staging_does() -> None:
    # x + 1 on float32 meets a float32 NumPy scalar: one operation, no
    # convert_element_type, eagerly as in the staged program.
    jaxpr = pc.make_jaxpr(lambda x: x + 1)(np.ones(3, np.float32))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["add"]
    x = device(np.ones(3, np.float32))
    assert (x + 1).dtype == F32 and not (x + 1).weak_type
    # What cannot be converted exactly is still converted by the primitive,
    # with its own errors.
    with pytest.raises(OverflowError, match="does not fit in int8"):
        device(_I) + 300
    with pytest.raises(OverflowError, match="too large for int32"):
        device(_X) + 2**40


@pytest.mark.parametrize("path", ["eager unary", "eager binary", "eager scalar", "jit"])
def test_a_buffer_deleted_through_another_array_is_reported_without_xla_output(
    capfd: pytest.CaptureFixture[str], path: str
) -> None:
    # Two Arrays over one device buffer, as jaxlib's clone makes them (two
    # buffer objects, one memory): deleting one kills the other.  Executing
    # on the dead one would make XLA log an error line before failing.
    original = device(_X)
    a = Array(original._buf.clone(), original.aval, original.device, False)
    double = pd.jit(lambda v: v * 2.0)
    ops: dict[str, Callable[[], Any]] = {
        "eager unary": lambda: pnp.sin(a),
        "eager binary": lambda: a * a,
        "eager scalar": lambda: a * 2.0,
        "jit": lambda: double(a),
    }
    op = ops[path]
    op(), op()  # the short path knows the signature
    original.delete()
    capfd.readouterr()
    with pytest.raises(DeletedArrayError, match="deleted or donated through another Array that shares its"):
        op()
    assert capfd.readouterr().err == ""


def test_leaked_tracers_are_refused_by_the_eager_backend() -> None:
    leaked: list[Any] = []

    def keep(v: Any) -> Any:
        leaked.append(v)
        return v

    pc.make_jaxpr(keep)(np.ones(2, np.float32))
    x = device(np.ones(2, np.float32))
    lax.add(x, x)
    with pytest.raises(pc.TracerLeakError, match=r"as an argument of add\) after that transformation ended"):
        lax.add(x, leaked[0])
    with pytest.raises(pc.TracerLeakError, match=r"as an argument of sin\) after that transformation ended"):
        lax.sin(leaked[0])


def test_errors_are_the_general_paths(general_calls: list[str]) -> None:
    x, i = device(_X), device(_I.astype(np.int32))
    lax.add(x, x)
    with pytest.raises(TypeError, match=r"lax\.add requires arguments of the same dtype, got float32, int32"):
        lax.add(x, i)
    with pytest.raises(TypeError, match=r"an argument of sin: expected an array.*str"):
        lax.sin("x")
    with pytest.raises(TypeError, match="array operators do not accept a list"):
        x * [1.0]


def test_jit_short_path_gives_what_the_general_path_gives() -> None:
    f = pd.jit(lambda a, b: (a * b + a, pnp.sum(b)))
    g = pd.jit(lambda a: a + 1.0)
    x, y = device(_X), device(_X[::-1].copy())
    cold_f, cold_g = f(x, y), g(x)
    state_f, state_g = f.__plait_jit__, g.__plait_jit__  # type: ignore[attr-defined]
    assert state_f.fast and state_g.fast  # both signatures have short paths now
    warm_f, warm_g = f(x, y), g(x)
    for a, b in zip([*cold_f, cold_g], [*warm_f, warm_g]):
        assert _described(a) == _described(b)
    np.testing.assert_array_equal(np.asarray(warm_f[0]), _X * _X[::-1] + _X)
    dev = pd.devices()[0]
    committed = g(pd.device_put(_X, dev))
    assert committed.committed and committed.device is dev
    with pc.enable_x64():  # a new context: traced again, not the cached program
        assert g(x).dtype == F32


def test_jit_short_path_donates_and_refuses_the_donated(capfd: pytest.CaptureFixture[str]) -> None:
    f = pd.jit(lambda a, b: a + b, donate_argnums=0)
    x = device(_X)
    f(device(_X), x)
    f(device(_X), x)
    d = device(_X)
    out = f(d, x)
    np.testing.assert_array_equal(np.asarray(out), _X + _X)
    assert d.is_deleted()
    with pytest.raises(DeletedArrayError, match="was donated"):
        f(d, x)
    capfd.readouterr()
    with pytest.raises(ValueError, match="one of them is donated"):
        f(x, x)
    assert capfd.readouterr().err == ""  # refused before XLA sees it
