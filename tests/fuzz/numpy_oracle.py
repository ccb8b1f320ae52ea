"""The NumPy oracle: the same source text, run by NumPy in float64.

``jnp`` maps to NumPy itself (with every float dtype widened to float64), and
small shims provide what NumPy lacks: ``.at[]`` updates (an ``ndarray``
subclass), ``lax.cond`` / ``fori_loop`` / ``scan`` / ``cummax`` / ``rsqrt`` as
Python loops, ``nn``'s activations from their formulas.  It checks values
only.  Each program also runs at its own precision (float32 / float16); the
gap between the two runs is how ill-conditioned the answer is, and widens the
tolerance there.  Derivatives are checked by central differences in float64
along the fuzzer's tangent directions; where two step sizes disagree the
point is a kink and the check is inconclusive (skipped), and so is a NaN or
infinite derivative (a singular point, where JAX is NaN as well; the JAX
oracle compares those exactly).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .compare import Checks, compare, values_close
from .data import Data
from .modes import Backend, Outcome, compile_program, record
from .program import Program


class OArray(np.ndarray):
    """An ``ndarray`` that stays an array (no 0-d scalars) and has ``.at``."""

    def __array_wrap__(self, arr: Any, context: Any = None, return_scalar: bool = False) -> OArray:  # type: ignore[override]
        return np.asarray(arr).view(OArray)

    def __getitem__(self, idx: Any) -> OArray:
        return wrap(np.ndarray.__getitem__(np.asarray(self), idx))

    @property
    def at(self) -> _At:
        return _At(self)


def wrap(x: Any) -> OArray:
    return np.asarray(x).view(OArray)


class _At:
    def __init__(self, x: OArray) -> None:
        self.x = x

    def __getitem__(self, idx: Any) -> _Update:
        return _Update(np.array(self.x), idx)


class _Update:
    """``.at[idx]`` with unique positions (the generator only makes those)."""

    def __init__(self, x: np.ndarray, idx: Any) -> None:
        self.x, self.idx = x, idx

    def _apply(self, fn: Callable[[np.ndarray, Any], Any]) -> OArray:
        out = self.x
        out[self.idx] = fn(out[self.idx], np.asarray(self.v))
        return wrap(out)

    def get(self) -> OArray:
        return wrap(self.x[self.idx])

    def set(self, v: Any) -> OArray:
        self.v = v
        return self._apply(lambda old, new: new)

    def add(self, v: Any) -> OArray:
        self.v = v
        return self._apply(np.add)

    def mul(self, v: Any) -> OArray:
        self.v = v
        return self._apply(np.multiply)

    def min(self, v: Any) -> OArray:
        self.v = v
        return self._apply(np.minimum)

    def max(self, v: Any) -> OArray:
        self.v = v
        return self._apply(np.maximum)


class _Namespace:
    """Attribute lookup on NumPy, results wrapped, some names overridden."""

    def __init__(self, base: Any, overrides: dict[str, Any]) -> None:
        self._base, self._overrides = base, overrides

    def __getattr__(self, name: str) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        fn = getattr(self._base, name)
        if not callable(fn) or isinstance(fn, type):
            return fn

        def call(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            return wrap(out) if isinstance(out, (np.ndarray, np.generic)) else out

        return call


def _logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> OArray:
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return wrap(out if keepdims else np.squeeze(out, axis=axis))


def _softmax(x: Any, axis: int = -1) -> OArray:
    e = np.exp(np.asarray(x) - np.max(x, axis=axis, keepdims=True))
    return wrap(e / np.sum(e, axis=axis, keepdims=True))


def _sigmoid(x: Any) -> OArray:
    return wrap(0.5 * (np.tanh(np.asarray(x) / 2) + 1))


def _gelu(x: Any, approximate: bool = True) -> OArray:
    x = np.asarray(x)
    return wrap(0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))))


def _cumlogsumexp(x: Any, axis: int = 0, reverse: bool = False) -> OArray:
    a = np.flip(np.asarray(x), axis) if reverse else np.asarray(x)
    out = np.logaddexp.accumulate(a, axis=axis)
    return wrap(np.flip(out, axis) if reverse else out)


def _fori_loop(lo: int, hi: int, body: Callable[[Any, Any], Any], init: Any) -> Any:
    c = init
    for i in range(lo, hi):
        c = body(wrap(np.int32(i)), c)
    return c


def _scan(fn: Callable[[Any, Any], Any], init: Any, xs: Any) -> tuple[Any, OArray]:
    c, ys = init, []
    for k in range(np.shape(xs)[0]):
        c, y = fn(c, xs[k])
        ys.append(np.asarray(y))
    return c, wrap(np.stack(ys))


def _while_loop(cond: Callable[[Any], Any], body: Callable[[Any], Any], init: Any) -> Any:
    c = init
    while bool(cond(c)):
        c = body(c)
    return c


def _reduce_window(x: Any, init: Any, op: Callable[[Any, Any], Any], dims: Any, strides: Any, padding: str) -> OArray:
    """``lax.reduce_window`` with ``'VALID'`` padding (what the generator emits)."""
    assert padding == "VALID"
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(x), dims)[tuple(slice(None, None, s) for s in strides)]
    out = np.full(windows.shape[: np.ndim(x)], init, np.asarray(x).dtype)
    for offset in np.ndindex(*dims):
        out = op(out, windows[(..., *offset)])
    return wrap(np.asarray(out))


def _triangular_solve(a: Any, b: Any, left_side: bool = False, lower: bool = False) -> OArray:
    assert left_side
    a = np.tril(a) if lower else np.triu(a)
    return wrap(np.linalg.solve(a, b))


def _int_floor_divide(x: Any, y: Any) -> OArray:
    """JAX's integer floor division: XLA's ``x / 0 == -1`` (unsigned: all ones), then
    floor's correction where the signs differ and the truncated remainder is non-zero."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind not in "iu" or y.dtype.kind not in "iu":
        return wrap(np.floor_divide(x, y))
    safe = np.where(y == 0, 1, y)
    trunc = np.where(y == 0, np.array(-1).astype(np.result_type(x, y)), np.fix(x / safe).astype(np.result_type(x, y)))
    if np.result_type(x, y).kind == "u":
        return wrap(trunc)
    rem = np.where(y == 0, x, np.fmod(x, safe))
    return wrap(np.where((np.sign(x) != np.sign(y)) & (rem != 0), trunc - 1, trunc))


def _int_remainder(x: Any, y: Any) -> OArray:
    """JAX's integer modulo: 0 where the divisor is 0."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind not in "iu" or y.dtype.kind not in "iu":
        return wrap(np.remainder(x, y))
    return wrap(np.where(y == 0, 0, np.remainder(x, np.where(y == 0, 1, y))).astype(np.result_type(x, y)))


def numpy_backend(wide: bool) -> Backend:
    """``jnp``/``lax``/``nn`` on NumPy; ``wide`` maps every float dtype to float64."""
    floats = {"float16": np.float64, "float32": np.float64} if wide else {"float16": np.float16, "float32": np.float32}
    jnp = _Namespace(np, {
        **floats, "array": lambda *a, **k: wrap(np.array(*a, **k)), "linalg": _Namespace(np.linalg, {}),
        "fft": _Namespace(np.fft, {}), "floor_divide": _int_floor_divide, "remainder": _int_remainder,
    })
    lax = _Namespace(np, {
        "rsqrt": lambda x: wrap(1 / np.sqrt(x)),
        "cummax": lambda x, axis=0: wrap(np.maximum.accumulate(x, axis=axis)),
        "cummin": lambda x, axis=0: wrap(np.minimum.accumulate(x, axis=axis)),
        "cumlogsumexp": _cumlogsumexp,
        "cond": lambda p, t, f, *ops: t(*ops) if bool(p) else f(*ops),
        "fori_loop": _fori_loop,
        "scan": _scan,
        "while_loop": _while_loop,
        "reduce_window": _reduce_window,
        "max": lambda x, y: np.maximum(x, y),
        "add": lambda x, y: np.add(x, y),
        "linalg": _Namespace(np, {"triangular_solve": _triangular_solve}),
        "dynamic_slice": lambda x, starts, sizes: wrap(np.asarray(x)[tuple(slice(a, a + n) for a, n in zip(starts, sizes))]),
    })
    nn = _Namespace(np, {
        "relu": lambda x: wrap(np.maximum(x, 0)),
        "sigmoid": _sigmoid,
        "silu": lambda x: wrap(np.asarray(x) * _sigmoid(x)),
        "softplus": lambda x: wrap(np.logaddexp(x, 0)),
        "gelu": _gelu,
        "softmax": _softmax,
        "log_softmax": lambda x, axis=-1: wrap(np.asarray(x) - _logsumexp(x, axis=axis, keepdims=True)),
        "logsumexp": _logsumexp,
        "one_hot": lambda x, n: wrap((np.asarray(x)[..., None] == np.arange(n)).astype(np.float64 if wide else np.float32)),
    })
    return Backend(None, jnp, lax, nn)


WIDE, NATIVE = numpy_backend(True), numpy_backend(False)


def _widen(x: np.ndarray) -> OArray:
    return wrap(x.astype(np.float64) if x.dtype.kind == "f" else x)


def _run(backend: Backend, program: Program, args: Sequence[np.ndarray], wide: bool) -> OArray:
    f = compile_program(backend, program)
    with np.errstate(all="ignore"):
        return wrap(f(*[_widen(a) if wide else wrap(a) for a in args]))


def _value_check(program: Program, arg_sets: list[list[np.ndarray]], got: Outcome, stacked: bool) -> str | None:
    """Compare ``got`` with float64 NumPy: one argument set, or several stacked (``vmap``)."""
    wide = np.stack([_run(WIDE, program, a, True) for a in arg_sets])
    native = np.stack([_run(NATIVE, program, a, False) for a in arg_sets])
    with np.errstate(all="ignore"):
        slack = np.nan_to_num(4 * np.abs(wide.astype(np.float64) - native.astype(np.float64)), nan=np.inf)
    if not stacked:
        wide, slack = wide[0], slack[0]
    return compare(got, record(wide), Checks(dtypes=False, weak_types=False), [slack])


def _primal(program: Program, data: Data, got: Outcome) -> str | None:
    first = Outcome("ok", got.values[:1], got.dtypes[:1], got.weak[:1])
    bad = _value_check(program, [data.args], first, stacked=False)
    return None if bad is None else "primal " + bad


class _Loss:
    """sum(f(x) * weights) in float64, as a function of the float inputs."""

    def __init__(self, program: Program, args: list[np.ndarray], weights: np.ndarray) -> None:
        self.program, self.args, self.weights = program, args, weights.astype(np.float64)
        self.floats = program.float_inputs()

    def out(self, fargs: Sequence[np.ndarray]) -> np.ndarray:
        args = list(self.args)
        for i, x in zip(self.floats, fargs):
            args[i] = x
        return np.asarray(_run(WIDE, self.program, args, True), dtype=np.float64)

    def __call__(self, fargs: Sequence[np.ndarray]) -> float:
        return float(np.sum(self.out(fargs) * self.weights))

    def at(self, *steps: tuple[float, Sequence[np.ndarray]]) -> list[np.ndarray]:
        x = [self.args[i].astype(np.float64) for i in self.floats]
        for h, d in steps:
            x = [xi + h * di.astype(np.float64) for xi, di in zip(x, d)]
        return x


def _fd(fn: Callable[[float], Any], h: float) -> Any:
    return (np.asarray(fn(h), dtype=np.float64) - np.asarray(fn(-h), dtype=np.float64)) / (2 * h)


def _smooth(fn: Callable[[float], Any], h: float = 1e-4) -> Any | None:
    """The central difference of ``fn`` at 0, or None at a kink (two steps disagree)."""
    with np.errstate(all="ignore"):
        a, b = _fd(fn, h), _fd(fn, h / 8)
    if values_close(b, a, 1e-4) is not None or not np.all(np.isfinite(b)):
        return None
    return b


def _along(loss: _Loss, t: Sequence[np.ndarray]) -> float | None:
    """The derivative of ``loss`` along ``t`` by central differences (None at a kink)."""
    fd: float | None = _smooth(lambda h: loss(loss.at((h, t))))
    return fd


def _directional(grads: Sequence[np.ndarray], directions: Sequence[np.ndarray]) -> tuple[float, float]:
    """<grads, directions> and the sum of |terms| (the scale of the product)."""
    terms = [np.asarray(g, np.float64) * np.asarray(d, np.float64) for g, d in zip(grads, directions)]
    return float(sum(np.sum(t) for t in terms)), float(sum(np.sum(np.abs(t)) for t in terms))


def _scalar_check(got: float, scale: float, want: float | None, what: str) -> str | None:
    if want is None:
        return "skip"
    if not math.isfinite(got):
        return "skip"  # a singular point (0/0 in arctan2(y, y) at 0): JAX gives NaN too; its oracle checks these
    if abs(got - want) <= 1e-3 * (abs(want) + scale) + 1e-4:  # 1e-4: float32 noise of cancelling terms
        return None
    return f"{what}: got {got!r}, finite differences {want!r}"


def check(program: Program, data: Data, mode: str, got: Outcome, checks: Checks) -> str | None:
    """None when ``got`` (plait's outcome for ``mode``) agrees with NumPy; "skip" when inconclusive."""
    if got.status == "skip":
        return "skip"
    if got.status == "error":
        return f"error where NumPy computes a value: {got.error}"
    if mode in ("eager", "jit"):
        return _value_check(program, [data.args], got, stacked=False)
    if mode == "vmap":
        elements = [[b[k] for b in data.batched] for k in range(data.batched[0].shape[0])] if data.batched else []
        return _value_check(program, elements, got, stacked=True)
    loss = _Loss(program, data.args, data.weights)
    t = data.tangents
    if mode in ("grad", "checkpoint", "vjp"):
        grads = got.values[1:] if mode == "vjp" else got.values
        if mode == "vjp":
            primal = _primal(program, data, got)
            if primal is not None:
                return primal
        value, scale = _directional(grads, t)
        return _scalar_check(value, scale, _along(loss, t), f"<{mode}, t>")
    if mode == "jvp":
        primal = _primal(program, data, got)
        if primal is not None:
            return primal
        want = _smooth(lambda h: loss.out(loss.at((h, t))))
        if want is None or not np.all(np.isfinite(got.values[1])):
            return "skip"
        diff = values_close(got.values[1], want, 1e-2)
        return None if diff is None else "tangent " + diff
    if mode == "jit_vmap_grad":
        per = len(program.float_inputs())
        checked = 0
        for k in range(data.batched[0].shape[0]):
            element = [b[k] for b in data.batched]
            lk = _Loss(program, element, data.weights)
            value, scale = _directional([g[k] for g in got.values[:per]], t)
            bad = _scalar_check(value, scale, _along(lk, t), f"element {k}: <grad, t>")
            if bad == "skip":  # this element sits on a kink or a singular point; the others still count
                continue
            if bad is not None:
                return bad
            checked += 1
        return None if checked else "skip"
    if mode == "grad_grad":
        v = data.second
        value, scale = _directional(got.values, t)

        def mixed(h: float) -> float:
            return _fd(lambda s: loss(loss.at((h, t), (s, v))), 1e-3)  # type: ignore[no-any-return]

        return _scalar_check(value, scale, _smooth(mixed, 1e-3), "<grad(grad), t>")
    raise ValueError(f"no NumPy check for mode {mode!r}")
