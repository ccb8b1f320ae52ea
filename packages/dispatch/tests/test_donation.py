"""Donation: donated Arrays are deleted by the call (reused by XLA or not),
using them again raises DeletedArrayError saying so, an unusable donation
warns once naming the argument, and the fast path donates too."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import DeletedArrayError
from plait_core import numpy as pnp
from plait_dispatch.array import Array


def device(x: Any) -> Array:
    out = pd.device_put(x)
    assert isinstance(out, Array)
    return out


def arange(n: int = 4, dtype: Any = np.float32) -> Array:
    return device(np.arange(n, dtype=dtype))


def test_donated_input_is_deleted_and_aliased() -> None:
    f = pd.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    x, y = arange(), arange()
    text = f.lower(x, y).as_text()
    assert "tf.aliasing_output = 0" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a usable donation does not warn
        out = f(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) * 3)
    assert x.is_deleted() and not y.is_deleted() and not out.is_deleted()
    with pytest.raises(DeletedArrayError, match=r"Array f32\[4\] was donated"):
        np.asarray(x)
    with pytest.raises(ValueError, match=r"cannot pass it to jit\(<lambda>\).*was donated"):
        f(x, y)
    with pytest.raises(RuntimeError, match=r"donated"):
        x + 1.0


def test_fast_path_donates_every_call() -> None:
    f = pd.jit(lambda x: x + 1.0, donate_argnums=0)
    x = arange()
    for step in range(1, 6):
        y = f(x)
        assert x.is_deleted() and not y.is_deleted()
        np.testing.assert_array_equal(np.asarray(y), np.arange(4) + step)
        x = y


def test_donate_argnames_and_pytrees() -> None:
    @pd.jit
    def plain(params: Any, g: Any) -> Any:
        return {k: v - 0.1 * g for k, v in params.items()}

    step = pd.jit(plain.__wrapped__, donate_argnames="params")  # type: ignore[attr-defined]
    params = {"w": arange(), "b": arange()}
    g = arange()
    new = step(params, g)
    assert params["w"].is_deleted() and params["b"].is_deleted() and not g.is_deleted()
    np.testing.assert_allclose(np.asarray(new["w"]), np.arange(4) * 0.9, rtol=1e-6)
    # By keyword, too.
    newer = step(params=new, g=g)
    assert new["w"].is_deleted() and not newer["w"].is_deleted()


def test_unusable_donation_warns_once_naming_the_argument() -> None:
    f = pd.jit(lambda big, other: pnp.sum(big) + other, donate_argnums=(0, 1))
    a, b = arange(8), device(np.float32(1.0))
    with pytest.warns(
        UserWarning,
        match=r"^Some donated buffers were not usable: f32\[8\]\. .*big \(no output has its shape and dtype\) could not be reused",
    ) as rec:
        out = f(a, b)
    assert len(rec) == 1 and "other" not in str(rec[0].message)  # `other` aliases the f32[] output
    assert rec[0].filename == __file__  # attributed to the user's call, not to plait's code
    assert float(out) == 29.0
    assert a.is_deleted() and b.is_deleted()  # deleted even though XLA could not reuse `big`
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        f(arange(8), device(np.float32(2.0)))
    assert [w for w in again if "could not be reused" in str(w.message)] == []


def test_unused_donated_argument_is_deleted_and_reported() -> None:
    f = pd.jit(lambda x, unused: x * 2, donate_argnums=1)
    x, u = arange(), arange(3)
    with pytest.warns(UserWarning, match=r"unused \(it is not used\)"):
        f(x, u)
    assert u.is_deleted() and not x.is_deleted()


def test_same_array_donated_and_read_is_an_error() -> None:
    f = pd.jit(lambda a, b: a + b, donate_argnums=0)
    x = arange()
    with pytest.raises(ValueError, match=r"same Array is passed as argument 'a' and as argument 'b'"):
        f(x, x)
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), np.arange(4))


def test_donating_host_values_is_harmless() -> None:
    f = pd.jit(lambda x: x + 1, donate_argnums=0)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)), x + 1)
    np.testing.assert_array_equal(x, np.arange(4))
    np.testing.assert_array_equal(np.asarray(f(2.0)), 3.0)


def test_donation_is_recorded_in_the_call_and_ignored_inside_traces() -> None:
    f = pd.jit(lambda x: x * 2, donate_argnums=0)
    closed = pc.make_jaxpr(lambda x: f(x) + 1)(np.ones(3, np.float32))
    (call,) = [e for e in closed.eqns if e.primitive.name == "closed_call"]
    assert call.params["jit_info"].donated == (True,)
    outer = pd.jit(lambda x: f(x) + 1)
    x = arange()
    np.testing.assert_array_equal(np.asarray(outer(x)), np.arange(4) * 2 + 1)
    assert not x.is_deleted()  # the outer call donates nothing


def test_deleted_array_as_any_argument() -> None:
    f = pd.jit(lambda a, b: a)  # b unused: pruned from the computation
    x, y = arange(), arange()
    f(x, y)
    y.delete()
    with pytest.raises(
        DeletedArrayError, match=r"cannot pass it to jit\(<lambda>\): Array f32\[4\] was deleted"
    ):
        f(x, y)
    with pytest.raises(DeletedArrayError, match=r"was deleted"):
        f(y, x)


def test_memory_is_reused_across_a_donating_loop() -> None:
    f = pd.jit(lambda x: x * 0.5 + 1.0, donate_argnums=0)
    x = device(np.zeros(1 << 16, np.float32))
    stats = f.lower(x).compile().memory_analysis()
    assert stats.alias_size_in_bytes == x.nbytes
    for _ in range(10):
        x = f(x)
    np.testing.assert_allclose(np.asarray(x)[:3], 2 - 2 * 0.5**10, rtol=1e-6)
