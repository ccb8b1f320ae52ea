"""Threads: eight threads calling one jitted function and eager operations at
once get correct results; cache fills are serialised (one trace per signature)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

import plait_dispatch as pd
from plait_core import lax
from plait_core import numpy as pnp
from plait_dispatch.array import Array

N_THREADS = 8
ROUNDS = 40


def run_threads(work: Callable[[int], None]) -> None:
    barrier = threading.Barrier(N_THREADS)
    errors: list[BaseException] = []

    def target(k: int) -> None:
        try:
            barrier.wait()
            work(k)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=target, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]


def test_one_jitted_function_and_eager_ops_from_eight_threads() -> None:
    traces: list[int] = []

    @pd.jit
    def f(x: Any, y: Any) -> Any:
        traces.append(1)
        return pnp.tanh(x) * y + 1.0

    def work(k: int) -> None:
        rng = np.random.default_rng(k)
        for r in range(ROUNDS):
            x = rng.standard_normal(16).astype(np.float32)
            y = np.float32(k + r)
            dx = pd.device_put(x)
            out = f(dx, y) if r % 2 else f(x, y)
            assert type(out) is Array
            np.testing.assert_allclose(np.asarray(out), np.tanh(x) * y + 1.0, rtol=1e-5, atol=1e-5)
            e = lax.mul(dx, dx) + k
            np.testing.assert_allclose(np.asarray(e), x * x + k, rtol=1e-6)
            s = pnp.sum(dx * 2.0)
            np.testing.assert_allclose(float(s), float(np.sum(x * 2.0, dtype=np.float32)), rtol=1e-4)

    run_threads(work)
    assert len(traces) == 1  # one signature, traced once although eight threads raced


def test_distinct_signatures_from_threads_trace_once_each() -> None:
    traces: list[int] = []

    @pd.jit
    def g(x: Any) -> Any:
        traces.append(int(x.shape[0]))
        return x * 2

    def work(k: int) -> None:
        for r in range(10):
            n = 1 + (k + r) % 4
            x = pd.device_put(np.arange(n, dtype=np.float32) + k)
            np.testing.assert_array_equal(np.asarray(g(x)), (np.arange(n) + k) * 2)

    run_threads(work)
    assert sorted(traces) == [1, 2, 3, 4]


def test_donating_calls_from_threads() -> None:
    step = pd.jit(lambda x: x + 1.0, donate_argnums=0)

    def work(k: int) -> None:
        x = pd.device_put(np.full(8, float(k), np.float32))
        for _ in range(ROUNDS):
            old, x = x, step(x)
            assert old.is_deleted()
        np.testing.assert_array_equal(np.asarray(x), np.full(8, k + ROUNDS))

    run_threads(work)
