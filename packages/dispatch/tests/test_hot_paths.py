"""The hot paths of issue 17: each primitive's last eager signature checked by
identity, result Arrays built without ``__init__``, and the pytree-in,
pytree-out jit handler run inline by the tree fast path.

They must give what the general path gives (values against NumPy, dtypes,
weak types, committedness), switch correctly between signatures that follow
each other, and never answer a call whose arguments changed (a new shape
retraces, a deleted leaf is refused, a donated leaf is deleted).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import DeletedArrayError
from plait_core import numpy as pnp
from plait_dispatch import eager_shortcuts
from plait_dispatch.array import Array

_jit = importlib.import_module("plait_dispatch.jit")

_X4 = np.array([-1.5, 0.0, 2.0, 3.25], np.float32)
_X8 = np.linspace(-2.0, 2.0, 8, dtype=np.float32)


def device(x: Any) -> Array:
    out = pd.device_put(x)
    assert type(out) is Array
    return out


def assert_complete(a: Any, dtype: Any, weak: bool = False) -> None:
    """An Array every method works on (all its slots set, live, uncommitted)."""
    assert type(a) is Array
    assert a.dtype == dtype and a.weak_type is weak and a.committed is False
    assert not a.is_deleted()
    repr(a)
    np.asarray(a)


def test_alternating_unary_signatures_each_get_their_own_operation() -> None:
    x4, x8, h4 = device(_X4), device(_X8), device(_X4.astype(np.float16))
    for _ in range(3):
        for x, host in ((x4, _X4), (x8, _X8), (h4, _X4.astype(np.float16)), (x4, _X4)):
            out = pnp.sin(x)
            assert_complete(out, host.dtype)
            assert out.shape == host.shape
            np.testing.assert_allclose(np.asarray(out), np.sin(host), rtol=1e-3 if host.dtype == np.float16 else 1e-6)
            # another primitive between two calls of the first
            np.testing.assert_allclose(np.asarray(pnp.exp(x)), np.exp(host), rtol=1e-3)
    assert eager_shortcuts._last_unary  # the memo was used


def test_sum_call_sites_with_other_params_are_not_confused() -> None:
    m = device(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(3):
        s = pnp.sum(m)
        assert s.shape == () and float(s) == 15.0
        k = pnp.sum(m, keepdims=True)
        assert k.shape == (1, 1) and float(k[0, 0]) == 15.0
        a = pnp.sum(m, axis=0)
        np.testing.assert_array_equal(np.asarray(a), [3.0, 5.0, 7.0])


def test_the_memo_follows_the_x64_flag() -> None:
    i = device(np.array([1, 2, 3], np.int32))
    x = device(_X4)
    for _ in range(3):
        assert pnp.sum(i).dtype == np.int32
        assert (x + 1).dtype == np.float32
        with pc.enable_x64():
            s = pnp.sum(i)
            assert s.dtype == np.int64 and int(s) == 6
            assert (x + 1).dtype == np.float32
            np.testing.assert_array_equal(np.asarray(x + 1), _X4 + 1)
        assert pnp.sum(i).dtype == np.int32 and int(pnp.sum(i)) == 6


def test_alternating_binary_signatures_and_scalars() -> None:
    x4, y4, x8 = device(_X4), device(_X4[::-1].copy()), device(_X8)
    i = device(np.array([1, 2, 3, 4], np.int32))
    w = pnp.asarray(2.0) * 1.0  # weakly typed float32
    assert w.weak_type
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(x4 + y4), _X4 + _X4[::-1])
        np.testing.assert_array_equal(np.asarray(x8 + x8), _X8 + _X8)
        np.testing.assert_array_equal(np.asarray(x4 * 2.0), _X4 * np.float32(2.0))
        np.testing.assert_array_equal(np.asarray(x4 * 2), _X4 * np.float32(2))
        out = i + 3
        assert_complete(out, np.int32)
        np.testing.assert_array_equal(np.asarray(out), [4, 5, 6, 7])
        ww = w + w
        assert_complete(ww, np.float32, weak=True)
        assert float(ww) == 4.0
        assert_complete(x4 - y4, np.float32)


def test_results_of_the_shortcuts_can_be_deleted_and_donated() -> None:
    x = device(_X4)
    for _ in range(2):
        pnp.sin(x), x * 2.0
    s, m = pnp.sin(x), x * 2.0
    s.delete()
    assert s.is_deleted()
    with pytest.raises(DeletedArrayError, match="deleted"):
        pnp.sin(s)
    f = pd.jit(lambda a: a + 1.0, donate_argnums=0)
    out = f(m)
    assert m.is_deleted()
    with pytest.raises(DeletedArrayError, match="donated"):
        np.asarray(m)
    np.testing.assert_array_equal(np.asarray(out), _X4 * 2 + 1)


def _tree_handler(f: Any) -> Any:
    state = _jit.jit_state(f)
    assert state is not None
    (cands,) = state.tree_fast.values()
    return cands[0][1]


def _mlp_params() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [
        (rng.standard_normal((3, 5)).astype(np.float32), np.zeros(5, np.float32)),
        (rng.standard_normal((5, 2)).astype(np.float32), np.ones(2, np.float32)),
    ]


def test_pytree_in_pytree_out_runs_inline_and_matches_numpy() -> None:
    step = pd.jit(lambda p, s: [(w * s + 1.0, b - s) for w, b in p])
    host = _mlp_params()
    p = pd.device_put(host)
    for k in range(4):
        p = step(p, 0.5)
        host = [(w * np.float32(0.5) + np.float32(1.0), b - np.float32(0.5)) for w, b in host]
        assert isinstance(p, list) and all(isinstance(t, tuple) and len(t) == 2 for t in p)
        for (w, b), (hw, hb) in zip(p, host):
            assert_complete(w, np.float32)
            assert_complete(b, np.float32)
            np.testing.assert_allclose(np.asarray(w), hw, rtol=1e-6)
            np.testing.assert_allclose(np.asarray(b), hb, rtol=1e-6)
        if k >= 1:
            assert _tree_handler(step).plain
    assert step._cache_size() == 1


def test_dict_outputs_keep_weak_types_and_dtypes() -> None:
    f = pd.jit(lambda d: {"w": d["a"] * 2, "i": d["i"] + 1, "s": d["s"] * 1.0})
    d = {"a": device(_X4), "i": device(np.arange(3, dtype=np.int8)), "s": pnp.asarray(3.0) * 1.0}
    for _ in range(3):
        out = f(d)
        assert set(out) == {"w", "i", "s"}
        assert_complete(out["w"], np.float32)
        assert_complete(out["i"], np.int8)
        assert_complete(out["s"], np.float32, weak=True)
        np.testing.assert_array_equal(np.asarray(out["i"]), [1, 2, 3])
        assert float(out["s"]) == 3.0
    assert _tree_handler(f).plain


def test_a_new_shape_on_the_inline_path_retraces() -> None:
    f = pd.jit(lambda d: {k: v * 2.0 for k, v in d.items()})
    small = {"a": device(_X4), "b": device(_X4)}
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(small)["a"]), _X4 * 2)
    big = {"a": device(_X8), "b": device(_X4)}
    out = f(big)
    assert out["a"].shape == (8,)
    np.testing.assert_array_equal(np.asarray(out["a"]), _X8 * 2)
    assert f._cache_size() == 2
    np.testing.assert_array_equal(np.asarray(f(small)["b"]), _X4 * 2)


def test_deleted_and_committed_leaves_leave_the_inline_path() -> None:
    f = pd.jit(lambda d: {k: v + 1.0 for k, v in d.items()})
    a, b = device(_X4), device(_X4)
    for _ in range(2):
        f({"a": a, "b": b})
    b.delete()
    with pytest.raises(DeletedArrayError):
        f({"a": a, "b": b})
    c = pd.device_put(_X4, pd.devices()[0])
    out = f({"a": a, "b": c})
    assert out["a"].committed and out["b"].committed
    np.testing.assert_array_equal(np.asarray(out["b"]), _X4 + 1)


def test_donated_pytree_leaves_are_deleted() -> None:
    f = pd.jit(lambda d: {k: v * 3.0 for k, v in d.items()}, donate_argnums=0)
    d = {"a": device(_X4), "b": device(_X4)}
    for _ in range(3):
        old = d
        d = f(d)
        assert old["a"].is_deleted() and old["b"].is_deleted()
        with pytest.raises(DeletedArrayError, match="donated"):
            f(old)
    np.testing.assert_array_equal(np.asarray(d["a"]), _X4 * 27)
    state = _jit.jit_state(f)
    assert state is not None
    # donation never runs inline: the handler's own call marks the Arrays donated
    assert not any(pair[1].plain for cands in state.tree_fast.values() for pair in cands)


# -- the runner a NumPy function keeps (plait_core.eager_fast.runner_memo) ----


def _sin_memo_holds_a_runner() -> bool:
    from plait_core import eager_fast

    return any(m[0] is not eager_fast.no_runner for m in eager_fast._memos)


def test_the_runner_memo_is_used_and_forgotten_with_the_eager_cache() -> None:
    from plait_dispatch import eager

    x = device(_X4)
    eager.clear_eager_cache()
    assert not _sin_memo_holds_a_runner()
    for _ in range(3):
        out = pnp.sin(x)
        assert_complete(out, np.float32)
        np.testing.assert_allclose(np.asarray(out), np.sin(_X4), rtol=1e-6)
    assert _sin_memo_holds_a_runner()
    eager.clear_eager_cache()
    assert not _sin_memo_holds_a_runner()
    np.testing.assert_allclose(np.asarray(pnp.sin(x)), np.sin(_X4), rtol=1e-6)


def test_the_runner_refuses_what_it_was_not_made_for() -> None:
    x = device(_X4)
    for _ in range(3):
        pnp.cos(x)
    # the same abstract value object, but committed: the result is committed too
    c = pd.device_put(_X4, pd.devices()[0])
    out = pnp.cos(c)
    assert out.committed
    # an equal type in another object, integers (promoted first), a deleted operand
    y = device(_X4 + 1)
    np.testing.assert_allclose(np.asarray(pnp.cos(y)), np.cos(_X4 + 1), rtol=1e-6)
    i = device(np.array([0, 1, 2], np.int32))
    assert pnp.cos(i).dtype == np.float32
    d = pnp.cos(x) * 1.0
    pnp.cos(d), pnp.cos(d)
    d.delete()
    with pytest.raises(DeletedArrayError, match="deleted"):
        pnp.cos(d)
    # under x64 (float32 stays float32) and back
    with pc.enable_x64():
        assert pnp.cos(x).dtype == np.float32
    np.testing.assert_allclose(np.asarray(pnp.cos(x)), np.cos(_X4), rtol=1e-6)
    # inside a transformation the primitive is still seen
    jaxpr = pc.make_jaxpr(lambda v: pnp.cos(v))(x)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["cos"]


def test_host_scalar_signatures_take_the_scalar_loop_first() -> None:
    f = pd.jit(lambda a, s, n: a * s + n)
    x = device(_X4)
    for _ in range(3):
        out = f(x, 2.0, 3)
        assert_complete(out, np.float32)
        np.testing.assert_array_equal(np.asarray(out), _X4 * 2 + 3)
    state = _jit.jit_state(f)
    assert state is not None
    assert all(pair[1].mixed for cands in state.tree_fast.values() for pair in cands)
    # other scalars, then Arrays where the scalars were: same structure, right answers
    np.testing.assert_array_equal(np.asarray(f(x, 5.0, 1)), _X4 * 5 + 1)
    s, n = device(np.float32(4.0)), device(np.float32(-1.0))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(x, s, n)), _X4 * 4 - 1)
    # an int where a float was: promoted as staging does
    out = f(x, 2, 3)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), _X4 * 2 + 3)


def test_threads_sharing_the_memos_get_their_own_signatures() -> None:
    import threading

    a, b = device(_X4), device(_X8.astype(np.float16))
    want = {id(a): np.sin(_X4), id(b): np.sin(_X8.astype(np.float16))}
    f = pd.jit(lambda d: {k: v + 1.0 for k, v in d.items()})
    errors: list[BaseException] = []

    def work(x: Array) -> None:
        try:
            for _ in range(200):
                out = pnp.sin(x)
                assert out.dtype == x.dtype and out.shape == x.shape
                np.testing.assert_allclose(np.asarray(out), want[id(x)], rtol=1e-2)
                t = f({"v": x})
                assert t["v"].shape == x.shape
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(x,)) for x in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# -- pacing of chained calls (a training loop p = step(p, ...)) ---------------


def _dense_step() -> Any:
    def step(p: Any, x: Any) -> Any:
        w, b = p
        h = pnp.tanh(x @ w + b)
        return (w - 0.01 * (x.T @ h), b - 0.01 * pnp.sum(h, axis=0))

    return step


def _dense_oracle(p: Any, x: np.ndarray) -> Any:
    w, b = p
    h = np.tanh(x @ w + b)
    return (w - np.float32(0.01) * (x.T @ h), b - np.float32(0.01) * h.sum(axis=0))


def test_chained_calls_of_a_large_program_are_paced_and_right() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    host = (rng.standard_normal((8, 32)).astype(np.float32) * 0.3, np.zeros(32, np.float32))
    step = pd.jit(_dense_step())
    p = pd.device_put(host)
    dx = device(x)
    for _ in range(30):
        p = step(p, dx)
        host = _dense_oracle(host, x)
    handler = _tree_handler(step)
    assert handler.plain and handler.chained  # 16 x 8 x 32 multiply-adds: XLA's worker threads
    assert handler.pace_out == 1  # the bias, the smallest result, is what a later call waits on
    np.testing.assert_allclose(np.asarray(p[0]), host[0], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(p[1]), host[1], rtol=2e-5, atol=2e-6)
    assert_complete(p[0], np.float32)


def test_pacing_survives_deleted_and_donated_results() -> None:
    rng = np.random.default_rng(2)
    x = device(rng.standard_normal((16, 8)).astype(np.float32))
    step = pd.jit(_dense_step())
    eat = pd.jit(lambda p: (p[0] * 2.0, p[1] + 1.0), donate_argnums=0)
    p = pd.device_put((np.ones((8, 32), np.float32), np.zeros(32, np.float32)))
    for k in range(6):
        q = step(p, x)
        if k % 3 == 1:
            q[1].delete()  # the result the next chained call would wait on
            q = (q[0], pd.device_put(np.zeros(32, np.float32)))
        p = q
    r = step(p, x)
    r2 = step(r, x)
    doubled = eat(r2)  # a paced call's results donated elsewhere
    assert r2[0].is_deleted() and r2[1].is_deleted()
    assert doubled[0].shape == (8, 32) and doubled[1].shape == (32,)
    p = step(r, x)  # the call after a donation still runs
    assert p[0].shape == (8, 32) and np.isfinite(np.asarray(p[0])).all()


def test_independent_threads_chaining_one_function() -> None:
    import threading

    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    step = pd.jit(_dense_step())
    starts = [(rng.standard_normal((8, 32)).astype(np.float32) * 0.3, np.zeros(32, np.float32)) for _ in range(3)]
    results: list[Any] = [None] * 3
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            p = pd.device_put(starts[i])
            dx = device(x)
            for _ in range(50):
                p = step(p, dx)
            results[i] = (np.asarray(p[0]), np.asarray(p[1]))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    for i in range(3):
        host = starts[i]
        for _ in range(50):
            host = _dense_oracle(host, x)
        np.testing.assert_allclose(results[i][0], host[0], rtol=1e-4, atol=1e-5)
