"""plait-dispatch against JAX: jit call overhead, eager ops, trace + lower,
an MLP training step, and the memory of a donating loop.

Small operations are timed in batches (``_BATCH`` calls per sample, the
sample divided by the batch) so the timer's own cost does not count; plait
and JAX alternate sample by sample (see :mod:`benchmarks.harness`).  The
memory benchmark runs each side in a fresh subprocess and reads the peak
resident set size there (with and without donation); the donating loop's
time is measured in this process, interleaved like the rest.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, interleaved, interleaved_ratio

_BATCH = 200


def _per_call(fn: Callable[[], object], n: int = _BATCH) -> Callable[[], object]:
    def run() -> object:
        for _ in range(n):
            fn()
        return None

    return run


def _scaled(p: float, j: float | None, n: int = _BATCH) -> tuple[float, float | None]:
    return p / n, (None if j is None else j / n)


def bench_jit_cached_call(jax: Any | None, repeats: int = 41) -> Result:
    """A cached call of a small jitted function (``a * b + a`` on ``f32[8]``)."""
    import plait_dispatch as plait

    x = plait.device_put(np.arange(8, dtype=np.float32))
    f = plait.jit(lambda a, b: a * b + a)
    f(x, x).block_until_ready()
    plait_fn = _per_call(lambda: f(x, x))
    jax_fn = None
    if jax is not None:
        jx = jax.device_put(np.arange(8, dtype=np.float32))
        jf = jax.jit(lambda a, b: a * b + a)
        jf(jx, jx).block_until_ready()
        jax_fn = _per_call(lambda: jf(jx, jx))
    p, j, r = interleaved_ratio(plait_fn, jax_fn, repeats)
    return Result("cached call of a small jitted function", *_scaled(p, j), "≤ 0.8× JAX", r)


def _params_tree(leaf: Callable[[], Any]) -> dict[str, Any]:
    """A pytree of 100 leaves shaped like an MLP's parameters and its Adam
    state (nested dicts and lists), every leaf made by ``leaf()``."""
    layers = lambda: [{"w": leaf(), "b": leaf()} for _ in range(8)]  # noqa: E731
    return {
        "params": layers(),
        "opt": {"mu": layers(), "nu": layers(), "count": leaf(), "extra": [leaf() for _ in range(51)]},
    }


def bench_jit_cached_calls(jax: Any | None, repeats: int = 41) -> list[Result]:
    """Cached calls of jitted functions over the argument shapes users have:
    one ``f32[4]``, a dict of 10 ``f32[4]`` (returning a dict of 10), a
    pytree of 100 leaves (returning the same structure), Python scalars
    mixed in, a static argument, a donated argument."""
    import plait_dispatch as plait
    from plait_core import tree_util as ptu

    def cases(lib: Any, tmap: Callable[..., Any]) -> list[tuple[str, Callable[[], object]]]:
        x = lib.device_put(np.arange(4, dtype=np.float32))
        d10 = {f"w{i}": lib.device_put(np.full(4, i, np.float32)) for i in range(10)}
        t100 = _params_tree(lambda: lib.device_put(np.ones(4, np.float32)))
        one = lib.jit(lambda a: a * 2.0)
        dict_f = lib.jit(lambda d: {k: v * 2.0 for k, v in d.items()})
        tree_f = lib.jit(lambda t: tmap(lambda v: v * 2.0, t))
        scal_f = lib.jit(lambda a, s, n: a * s + n)
        stat_f = lib.jit(lambda a, n: a * n, static_argnums=1)
        don_f = lib.jit(lambda a: a * 2.0, donate_argnums=0)
        state = {"x": lib.device_put(np.arange(4, dtype=np.float32))}

        def donate() -> object:
            state["x"] = don_f(state["x"])
            return state["x"]

        out = [
            ("jit cached call: one f32[4]", lambda: one(x)),
            ("jit cached call: dict of 10 f32[4] -> dict of 10", lambda: dict_f(d10)),
            ("jit cached call: pytree of 100 leaves (MLP params + Adam state) -> same", lambda: tree_f(t100)),
            ("jit cached call: f32[4] with Python scalars (a, 2.0, 3)", lambda: scal_f(x, 2.0, 3)),
            ("jit cached call: f32[4] and a static int", lambda: stat_f(x, 3)),
            ("jit cached call: donated f32[4] (x = f(x))", donate),
        ]
        for _, fn in out:
            lib.block_until_ready(fn())
        return out

    plait_cases = cases(plait, ptu.tree_map)
    jax_cases = cases(jax, jax.tree_util.tree_map) if jax is not None else [None] * len(plait_cases)
    results = []
    for (name, pf), jc in zip(plait_cases, jax_cases):
        jf = None if jc is None else jc[1]
        p, j, r = interleaved_ratio(_per_call(pf), None if jf is None else _per_call(jf), repeats)
        results.append(Result(name, *_scaled(p, j), "≤ 0.9× JAX", r))
    return results


def bench_mlp_loop(jax: Any | None, repeats: int = 11, steps: int = 1000) -> Result | None:
    """A 1,000-step SGD training loop of a small MLP (4-32-32-1, batch 16,
    params a list of (w, b) pairs), end to end: every step a cached jit call
    on the params pytree; one wait at the end."""
    import plait_core
    import plait_dispatch as plait

    grad = _plait_grad()
    if grad is None:
        return None
    sizes = [4, 32, 32, 1]
    rng = np.random.default_rng(2)
    xb = rng.standard_normal((16, 4)).astype(np.float32)
    yb = rng.standard_normal((16, 1)).astype(np.float32)

    def loop(lib: Any, lnp: Any, g: Any) -> Callable[[], object]:
        step = lib.jit(_mlp_step(lnp, g))
        x, y = lib.device_put(xb), lib.device_put(yb)
        p0 = lib.device_put(_mlp_init(sizes))
        lib.block_until_ready(step(p0, x, y))

        def run() -> object:
            p = p0
            for _ in range(steps):
                p = step(p, x, y)
            return lib.block_until_ready(p)

        return run

    pf = loop(plait, plait_core.numpy, grad)
    jf = None if jax is None else loop(jax, jax.numpy, jax.grad)
    p, j, r = interleaved_ratio(pf, jf, repeats)
    return Result(f"{steps}-step small-MLP (4-32-32-1) SGD loop, end to end", p, j, "≤ 0.95× JAX", r)


def bench_eager_ops(jax: Any | None, repeats: int = 41) -> list[Result]:
    """Eager operations on ``f32[8]``: a primitive through ``lax``, NumPy-style
    functions and operators, with array and Python-scalar operands, and a
    reduction."""
    import plait_dispatch as plait
    from plait_core import lax as plax
    from plait_core import numpy as pnp

    x = plait.device_put(np.arange(8, dtype=np.float32))
    jx: Any = None if jax is None else jax.device_put(np.arange(8, dtype=np.float32))
    cases: list[tuple[str, Callable[[], object], Callable[[], object] | None]] = [
        (
            "eager op: lax.add on f32[8]",
            lambda: plax.add(x, x),
            None if jax is None else (lambda: jax.lax.add(jx, jx)),
        ),
        (
            "eager op: numpy sin on f32[8]",
            lambda: pnp.sin(x),
            None if jax is None else (lambda: jax.numpy.sin(jx)),
        ),
        (
            "eager op: x * y operator on f32[8]",
            lambda: x * x,
            None if jax is None else (lambda: jx * jx),
        ),
        (
            "eager op: x * 2.0 (a Python float) on f32[8]",
            lambda: x * 2.0,
            None if jax is None else (lambda: jx * 2.0),
        ),
        (
            "eager op: x + 1 (a Python int, promoted) on f32[8]",
            lambda: x + 1,
            None if jax is None else (lambda: jx + 1),
        ),
        (
            "eager op: numpy sum of f32[8]",
            lambda: pnp.sum(x),
            None if jax is None else (lambda: jax.numpy.sum(jx)),
        ),
        (
            "eager op: numpy add of two f32[8]",
            lambda: pnp.add(x, x),
            None if jax is None else (lambda: jax.numpy.add(jx, jx)),
        ),
        (
            "eager op: x[0] on f32[8]",
            lambda: x[0],
            None if jax is None else (lambda: jx[0]),
        ),
        (
            "eager op: x.at[0].set(1.0) on f32[8]",
            lambda: x.at[0].set(1.0),
            None if jax is None else (lambda: jx.at[0].set(1.0)),
        ),
    ]
    out = []
    for name, pf, jf in cases:
        pf()
        if jf is not None:
            jf()
        p, j, r = interleaved_ratio(_per_call(pf), None if jf is None else _per_call(jf), repeats)
        out.append(Result(name, *_scaled(p, j), "≤ 0.8× JAX", r))
    return out


def bench_trace_lower_chain(jax: Any | None, repeats: int = 11) -> Result:
    """``jit(f).lower(x)`` of a fresh 1000-equation chain (trace + lower)."""
    import plait_dispatch as plait

    def fresh_chain() -> Callable[[Any], Any]:
        def chain(x: Any) -> Any:
            for _ in range(1000):
                x = x + 1.0
            return x

        return chain

    x = np.zeros(3, np.float32)

    def plait_fn() -> object:
        return plait.jit(fresh_chain()).lower(x)

    jax_fn = (lambda: jax.jit(fresh_chain()).lower(x)) if jax is not None else None
    plait_fn()
    if jax_fn is not None:
        jax_fn()
    p, j = interleaved(plait_fn, jax_fn, repeats)
    return Result("jit trace + lower of a 1000-equation chain", p, j, "≤ 0.5× JAX")


def _mlp_init(sizes: list[int], seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        ((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
        for m, n in itertools.pairwise(sizes)
    ]


def _mlp_step(np_mod: Any, grad: Callable[..., Any] | None) -> Callable[..., Any]:
    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for w, b in params[:-1]:
            h = np_mod.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return np_mod.mean((logits - y) ** 2)

    if grad is None:  # forward only
        return loss

    def step(params: Any, x: Any, y: Any) -> Any:
        g = grad(loss)(params, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, g)]

    return step


def _plait_grad() -> Callable[..., Any] | None:
    try:
        return importlib.import_module("plait_autodiff").grad  # type: ignore[no-any-return]
    except (ImportError, AttributeError):
        return None


def bench_mlp_step(jax: Any | None, repeats: int = 15, steps: int = 5) -> Result:
    """A jitted SGD step of a 784-512-512-10 MLP on a batch of 128 (forward
    only when plait_autodiff is not importable); params donated."""
    import plait_core
    import plait_dispatch as plait

    sizes = [784, 512, 512, 10]
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((128, 784)).astype(np.float32)
    yb = rng.standard_normal((128, 10)).astype(np.float32)
    grad = _plait_grad()
    what = "training step" if grad is not None else "forward pass (no grad yet)"
    pstep = plait.jit(_mlp_step(plait_core.numpy, grad), donate_argnums=0 if grad is not None else ())
    px, py = plait.device_put(xb), plait.device_put(yb)
    state: dict[str, Any] = {"p": plait.device_put(_mlp_init(sizes))}

    def plait_fn() -> None:
        for _ in range(steps):
            out = pstep(state["p"], px, py)
            if grad is not None:
                state["p"] = out
        plait.block_until_ready(out)

    jax_fn = None
    if jax is not None:
        jgrad = jax.grad if grad is not None else None
        jstep = jax.jit(_mlp_step(jax.numpy, jgrad), donate_argnums=0 if grad is not None else ())
        jx, jy = jax.device_put(xb), jax.device_put(yb)
        jstate: dict[str, Any] = {"p": jax.device_put(_mlp_init(sizes))}

        def jax_fn() -> None:
            for _ in range(steps):
                out = jstep(jstate["p"], jx, jy)
                if grad is not None:
                    jstate["p"] = out
            jax.block_until_ready(out)

    plait_fn()
    if jax_fn is not None:
        jax_fn()
    p, j = _scaled(*interleaved(plait_fn, jax_fn, repeats), n=steps)
    return Result(f"compiled MLP {what} 784-512-512-10, batch 128", p, j, "≤ 1.02× JAX")


_MEMORY_SCRIPT = textwrap.dedent(
    """
    import gc, json, sys, time
    import numpy as np

    def rss(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
        raise RuntimeError(field)

    side, donate = sys.argv[1], sys.argv[2] == "donate"
    n = 32 * 1024 * 1024  # 128 MB of float32
    if side == "plait":
        import plait_dispatch as lib
        import plait_core.numpy as lnp
    else:
        import jax as lib
        import jax.numpy as lnp
    block = lib.block_until_ready
    make = lib.jit(lambda: lnp.zeros((n,), np.float32))
    f = lib.jit(lambda x: x * 0.5 + 1.0, donate_argnums=0 if donate else ())
    before = rss("VmRSS:")
    warm = block(f(block(make())))  # compile and run both programs once
    del warm
    # The warm-up's x must be gone before the base is read, or the peak below
    # counts one copy too few: JAX's first call leaves it in a reference
    # cycle (a collection frees it), and a freed buffer's memory goes back to
    # the system a moment later (wait until the resident size settles).
    gc.collect()
    base, settled, deadline = rss("VmRSS:"), 0, time.monotonic() + 3.0
    while settled < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
        now = rss("VmRSS:")
        settled = settled + 1 if now >= base else 0
        base = min(base, now)
    if base - before > 2 * n:  # over half a copy of x (4n bytes) still resident
        raise RuntimeError(f"{(base - before) / 2**20:.0f} MiB still resident after the warm-up")
    with open("/proc/self/clear_refs", "w") as c:
        c.write("5")             # reset the peak RSS to the current RSS
    times = []
    for round in range(3):  # the peak is read after the first round; time: median of three
        x = block(make())
        t = time.perf_counter()
        for _ in range(50):
            x = f(x)
        block(x)
        times.append(time.perf_counter() - t)
        if round == 0:
            peak = rss("VmHWM:")
            value = float(np.asarray(x[:1])[0])
        del x
    result = {"copies": (peak - base) / (4 * n), "seconds": sorted(times)[1], "value": value}
    print(json.dumps(result))
    """
)


def _memory_run(side: str, donate: bool) -> dict[str, float] | None:
    env = dict(os.environ)
    res = subprocess.run(
        [sys.executable, "-c", _MEMORY_SCRIPT, side, "donate" if donate else "keep"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if res.returncode != 0:
        sys.stderr.write(f"memory benchmark ({side}) failed:\n{res.stderr[-2000:]}\n")
        return None
    out: dict[str, float] = json.loads(res.stdout.strip().splitlines()[-1])
    expected = 2.0 - 2.0 * 0.5**50
    if abs(out["value"] - expected) > 1e-5:
        raise RuntimeError(f"donation loop ({side}) computed {out['value']}, expected {expected}")
    return out


def _donating_loop(lib: Any, lnp: Any, n: int) -> Callable[[], float]:
    """A function running 50 donated steps on a fresh ``x`` (made before the
    clock starts) and returning their time; ``x`` is freed on return."""
    make = lib.jit(lambda: lnp.zeros((n,), np.float32))
    f = lib.jit(lambda x: x * 0.5 + 1.0, donate_argnums=0)

    def loop() -> float:
        x = lib.block_until_ready(make())
        t = time.perf_counter()
        for _ in range(50):
            x = f(x)
        lib.block_until_ready(x)
        return time.perf_counter() - t

    return loop


def _donation_loop_times(jax: Any | None, repeats: int = 5) -> tuple[float, float | None]:
    """Interleaved medians of the 50-step donated loop's time, in this process."""
    import plait_core.numpy as pnp
    import plait_dispatch as plait

    n = 32 * 1024 * 1024
    loops = [_donating_loop(plait, pnp, n)] + ([] if jax is None else [_donating_loop(jax, jax.numpy, n)])
    for loop in loops:
        loop()  # compile
    times: list[list[float]] = [[] for _ in loops]
    for _ in range(repeats):
        for loop, ts in zip(loops, times):
            ts.append(loop())
    return statistics.median(times[0]), (statistics.median(times[1]) if jax is not None else None)


def bench_donation_memory(jax: Any | None) -> Result:
    """Peak memory of 50 steps of ``x = f(x)`` on a 128 MB array with donation,
    in copies of ``x``: the peak resident set size of a fresh process running
    the loop, above that process before any ``x`` existed (compiled and warmed
    up; one copy is ideal).  The same loop without donation is measured as the
    control (two copies: ``f`` writes a new array while ``x`` is alive)."""
    p, p_keep = _memory_run("plait", True), _memory_run("plait", False)
    j = j_keep = None
    if jax is not None:
        j, j_keep = _memory_run("jax", True), _memory_run("jax", False)
    if p is None:
        raise RuntimeError("the plait side of the donation memory benchmark failed")

    def copies(d: dict[str, float] | None, keep: dict[str, float] | None) -> str:
        if d is None:
            return "—"
        return f"{d['copies']:.2f} copies of x" + ("" if keep is None else f" ({keep['copies']:.2f} without donation)")

    name = (
        f"50-step donated `x = f(x)` on 128 MB (time of the loop); peak RSS above the process before x: "
        f"plait {copies(p, p_keep)}, JAX {copies(j, j_keep)}"
    )
    verdict = "met" if p["copies"] < 1.5 else "NOT met"
    p_time, j_time = _donation_loop_times(jax)
    return Result(name, p_time, j_time, f"one copy of x, not two: {p['copies']:.2f}, {verdict}")


def dispatch_results(jax: Any | None) -> list[Result]:
    """Every dispatch benchmark row."""
    return [
        bench_jit_cached_call(jax),
        *bench_eager_ops(jax),
        bench_trace_lower_chain(jax),
        bench_mlp_step(jax),
        bench_donation_memory(jax),
    ]


if __name__ == "__main__":
    from benchmarks.harness import markdown_table

    try:
        jax_mod: Any | None = importlib.import_module("jax")
    except ImportError:
        jax_mod = None
    print(markdown_table(dispatch_results(jax_mod)))
