"""Random programs of 3 to 12 statements over the ``jnp`` / ``lax`` / ``nn`` surface.

Each op generator looks at the values defined so far (their shapes and kinds)
and returns a statement that is valid for them, or ``None`` when no value fits.
Shapes are tracked exactly (NumPy computes broadcast and indexing shapes on
dummy arrays); dtypes only as a kind (float, int, bool), which is all that
validity needs.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from .program import KINDS, OTHER_SIZES, N, Program, Stmt, Var

Gen = Callable[["Builder"], "Stmt | None"]

UNARY_FLOAT = (
    "jnp.sin", "jnp.cos", "jnp.tanh", "jnp.exp", "jnp.log", "jnp.log1p", "jnp.expm1", "jnp.sqrt", "lax.rsqrt",
    "jnp.abs", "jnp.negative", "jnp.sign", "jnp.floor", "jnp.ceil", "jnp.round", "jnp.square", "jnp.reciprocal",
    "jnp.arctan", "jnp.sinh", "jnp.arcsinh", "jnp.cbrt", "jnp.exp2",
    "nn.relu", "nn.gelu", "nn.silu", "nn.softplus", "nn.sigmoid",
)
UNARY_INT = ("jnp.abs", "jnp.negative", "jnp.sign", "jnp.square")
# float-only maths applied to integers: JAX promotes them to float32.
UNARY_PROMOTING = ("jnp.sin", "jnp.exp", "jnp.sqrt", "jnp.tanh")
BODIES = ("jnp.sin({a})", "{a} * 2.0", "{a} - 1.0", "jnp.tanh({a})", "{a} * {a}", "jnp.exp(-{a} * {a})")


def _kind_join(a: str, b: str) -> str:
    return "f" if "f" in (a, b) else "i" if "i" in (a, b) else "b"


def _bshape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


class Builder:
    """The program under construction."""

    def __init__(self, rng: random.Random, inputs: list[Var]) -> None:
        self.rng = rng
        self.vars: list[Var] = list(inputs)
        self.stmts: list[Stmt] = []

    def pick(self, ok: Callable[[Var], bool] = lambda v: True) -> Var | None:
        """A value satisfying ``ok``, most often the latest one (programs chain)."""
        cands = [v for v in self.vars if ok(v)]
        if not cands:
            return None
        if cands[-1] is self.vars[-1] and self.rng.random() < 0.6:
            return cands[-1]
        return self.rng.choice(cands)

    def emit(self, op: str, expr: str, args: list[Var], shape: tuple[int, ...], kind: str) -> Stmt:
        target = Var(f"v{len(self.vars)}", tuple(shape), kind)
        return Stmt(target, expr, tuple(a.name for a in args), op)

    def axis(self, v: Var) -> int:
        return self.rng.randrange(len(v.shape))

    def scalar(self, kind: str) -> str:
        r = self.rng
        if kind == "i" or (kind == "b" and r.random() < 0.5):
            return r.choice(["2", "-1", "3", "1"])
        if kind == "b":
            return r.choice(["True", "False"])
        return r.choice(["0.5", "-1.5", "2.0", "3", "-2", "jnp.float16(1.5)", "jnp.float32(0.25)", "jnp.int32(2)"])


def _scalar_kind(text: str) -> str:
    if text in ("True", "False"):
        return "b"
    if "int" in text or text.lstrip("-").isdigit():
        return "i"
    return "f"


# --- elementwise ------------------------------------------------------------------------------------------


def unary(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind != "b")
    if v is None:
        return None
    if v.kind == "f":
        fn = b.rng.choice(UNARY_FLOAT)
        return b.emit("unary:" + fn, fn + "({0})", [v], v.shape, "f")
    if b.rng.random() < 0.3:
        fn = b.rng.choice(UNARY_PROMOTING)
        return b.emit("unary_int_to_float:" + fn, fn + "({0})", [v], v.shape, "f")
    fn = b.rng.choice(UNARY_INT)
    return b.emit("unary:" + fn, fn + "({0})", [v], v.shape, "i")


def logical_not(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "b")
    if v is None:
        return None
    expr = b.rng.choice(["jnp.logical_not({0})", "~{0}"])
    return b.emit("logical_not", expr, [v], v.shape, "b")


def binary(b: Builder) -> Stmt | None:
    r = b.rng
    x = b.pick()
    assert x is not None
    ops = ["+", "-", "*", "/", "jnp.maximum", "jnp.minimum", "<", ">=", "==", "!="]
    op = r.choice(ops)
    if r.random() < 0.4:
        y_text = b.scalar(x.kind if r.random() < 0.5 else r.choice(KINDS))
        y_kind, args, shape = _scalar_kind(y_text), [x], x.shape
        left, right = ("{0}", y_text) if r.random() < 0.7 else (y_text, "{0}")
    else:
        y = b.pick(lambda v: _bshape(v.shape, x.shape) is not None)
        assert y is not None
        y_kind, args = y.kind, [x, y]
        shape = _bshape(x.shape, y.shape)  # type: ignore[assignment]
        left, right = "{0}", "{1}"
    if op == "-" and x.kind == "b" and y_kind == "b":
        op = "+"
    comparison = op in ("<", ">=", "==", "!=")
    kind = "b" if comparison else _kind_join(x.kind, y_kind)
    if op == "/":
        kind = "f"
    if op.startswith("jnp."):
        expr = f"{op}({left}, {right})"
    else:
        expr = f"{left} {op} {right}"
    return b.emit("binary:" + op, expr, args, shape, kind)


def power(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind in "fi")
    if v is None:
        return None
    e = b.rng.choice(["2", "3", "0.5"] if v.kind == "f" else ["2", "3"])
    return b.emit("power", "{0} ** " + e, [v], v.shape, v.kind)


def floordiv_mod(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind in "fi")
    if v is None:
        return None
    op = b.rng.choice(["//", "%"])
    if v.kind == "i" and b.rng.random() < 0.5:
        # An integer divisor that may be 0 (JAX: x // 0 is -2, x % 0 is 0; seed-free finding).
        d = b.pick(lambda w: w.kind == "i" and _bshape(w.shape, v.shape) is not None)
        if d is not None:
            fn = {"//": "jnp.floor_divide", "%": "jnp.remainder"}[op]
            return b.emit("binary:" + op, fn + "({0}, {1})", [v, d], _bshape(v.shape, d.shape) or (), "i")
    return b.emit("binary:" + op, "{0} " + op + " " + b.rng.choice(["2", "3"]), [v], v.shape, v.kind)


def arctan2(b: Builder) -> Stmt | None:
    x = b.pick(lambda v: v.kind == "f")
    y = b.pick(lambda v: v.kind == "f" and x is not None and _bshape(v.shape, x.shape) is not None)
    if x is None or y is None:
        return None
    return b.emit("arctan2", "jnp.arctan2({0}, {1})", [x, y], _bshape(x.shape, y.shape) or (), "f")


def logical(b: Builder) -> Stmt | None:
    x = b.pick(lambda v: v.kind == "b")
    y = b.pick(lambda v: v.kind == "b" and x is not None and _bshape(v.shape, x.shape) is not None)
    if x is None or y is None:
        return None
    fn = b.rng.choice(["jnp.logical_and({0}, {1})", "jnp.logical_or({0}, {1})", "{0} & {1}", "{0} ^ {1}"])
    return b.emit("logical", fn, [x, y], _bshape(x.shape, y.shape) or (), "b")


def where(b: Builder) -> Stmt | None:
    c = b.pick()
    assert c is not None
    x = b.pick(lambda v: _bshape(v.shape, c.shape) is not None)
    assert x is not None
    y = b.pick(lambda v: _bshape(v.shape, c.shape, x.shape) is not None)
    assert y is not None
    cond = "{0}" if c.kind == "b" else "{0} > 0"
    shape = _bshape(c.shape, x.shape, y.shape) or ()
    if b.rng.random() < 0.3:
        return b.emit("where_scalar", f"jnp.where({cond}, {{1}}, 0.0)", [c, x], _bshape(c.shape, x.shape) or (),
                      _kind_join(x.kind, "f"))
    return b.emit("where", f"jnp.where({cond}, {{1}}, {{2}})", [c, x, y], shape, _kind_join(x.kind, y.kind))


def astype(b: Builder) -> Stmt | None:
    v = b.pick()
    assert v is not None
    r = b.rng
    if v.kind == "f":
        if r.random() < 0.5:
            return b.emit("astype:int32", "jnp.clip({0}, -50, 50).astype(jnp.int32)", [v], v.shape, "i")
        dt = r.choice(["float16", "float32"])
        return b.emit("astype:" + dt, "{0}.astype(jnp." + dt + ")", [v], v.shape, "f")
    dt = r.choice(["float32", "int32"] if v.kind == "b" else ["float32", "float16"])
    return b.emit("astype:" + dt, "{0}.astype(jnp." + dt + ")", [v], v.shape, "i" if dt == "int32" else "f")


# --- reductions and scans ---------------------------------------------------------------------------------


def _axis_arg(b: Builder, v: Var) -> tuple[str, tuple[int, ...]]:
    """An ``axis=`` argument text and the axes it reduces."""
    nd = len(v.shape)
    r = b.rng.random()
    if nd == 0 or r < 0.25:
        return "None", tuple(range(nd))
    if nd >= 2 and r < 0.4:
        axes = tuple(sorted(b.rng.sample(range(nd), 2)))
        return str(axes), axes
    ax = b.axis(v)
    return (str(ax - nd) if b.rng.random() < 0.3 else str(ax)), (ax,)


def reduction(b: Builder) -> Stmt | None:
    v = b.pick()
    assert v is not None
    r = b.rng
    if v.kind == "b":
        fn, kind = r.choice([("jnp.any", "b"), ("jnp.all", "b"), ("jnp.sum", "i")])
    elif v.kind == "i":
        fn, kind = r.choice([("jnp.sum", "i"), ("jnp.max", "i"), ("jnp.min", "i"), ("jnp.prod", "i"), ("jnp.mean", "f")])
    else:
        fn = r.choice(["jnp.sum", "jnp.mean", "jnp.max", "jnp.min", "jnp.prod", "jnp.var", "jnp.std", "nn.logsumexp"])
        kind = "f"
    if fn in ("jnp.max", "jnp.min") and 0 in v.shape:
        return None
    axis, axes = _axis_arg(b, v)
    keep = r.random() < 0.25
    shape = tuple((1 if i in axes else d) for i, d in enumerate(v.shape) if keep or i not in axes)
    extra = ", keepdims=True" if keep else ""
    method = fn.removeprefix("jnp.")
    if method in ("sum", "mean", "max", "min", "prod", "var", "std", "any", "all") and r.random() < 0.3:
        return b.emit("reduce:" + fn, f"{{0}}.{method}(axis={axis}{extra})", [v], shape, kind)
    return b.emit("reduce:" + fn, f"{fn}({{0}}, axis={axis}{extra})", [v], shape, kind)


def arg_reduction(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind in "fi" and len(v.shape) >= 1)
    if v is None:
        return None
    fn = b.rng.choice(["jnp.argmax", "jnp.argmin"])
    ax = b.axis(v)
    shape = v.shape[:ax] + v.shape[ax + 1 :]
    return b.emit("reduce:" + fn, f"{fn}({{0}}, axis={ax})", [v], shape, "i")


def cumulative(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1 and v.kind in "fi")
    if v is None:
        return None
    ax = b.axis(v)
    fn = b.rng.choice(["jnp.cumsum", "jnp.cumprod", "lax.cummax", "lax.cummin"])
    return b.emit("cumulative:" + fn, f"{fn}({{0}}, axis={ax})", [v], v.shape, v.kind)


def stable_max(b: Builder) -> Stmt | None:
    """Ops that subtract a running or pairwise maximum for stability: smooth functions
    whose derivatives must not see the tie-breaking of that maximum (issue 24:
    cumlogsumexp's second derivative did).  ``make_data`` gives programs using them
    (and logsumexp/softmax) tied inputs."""
    v = b.pick(lambda v: len(v.shape) >= 1 and v.kind == "f")
    if v is None:
        return None
    r = b.rng
    ax = b.axis(v)
    choice = r.randrange(4)
    if choice == 0:
        rev = r.random() < 0.5
        return b.emit("cumlogsumexp", f"lax.cumlogsumexp({{0}}, axis={ax}, reverse={rev})", [v], v.shape, "f")
    fn = r.choice(["jnp.logaddexp", "jnp.logaddexp2"])
    if choice == 1:
        # an element and its mirror image tie in the middle
        return b.emit("logaddexp:" + fn, f"{fn}({{0}}, jnp.flip({{0}}, axis={ax}))", [v], v.shape, "f")
    w = b.pick(lambda w: w.kind == "f" and w is not v and _bshape(v.shape, w.shape) is not None)
    if w is None or choice == 2:
        return b.emit("logaddexp:" + fn, f"{fn}({{0}}, jnp.round({{0}}))", [v], v.shape, "f")
    shape = _bshape(v.shape, w.shape)
    assert shape is not None
    return b.emit("logaddexp:" + fn, f"{fn}({{0}}, {{1}})", [v, w], shape, "f")


def sort(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1 and v.kind in "fi")
    if v is None:
        return None
    ax = b.axis(v)
    return b.emit("sort", f"jnp.sort({{0}}, axis={ax})", [v], v.shape, v.kind)


def nn_normalise(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1 and v.kind == "f")
    if v is None:
        return None
    fn = b.rng.choice(["nn.softmax", "nn.log_softmax"])
    ax = b.axis(v)
    return b.emit(fn, f"{fn}({{0}}, axis={ax})", [v], v.shape, "f")


# --- structure --------------------------------------------------------------------------------------------


def reshape(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1)
    if v is None:
        return None
    size = int(np.prod(v.shape))
    divisors = [d for d in range(2, size) if size % d == 0]
    options: list[tuple[int, ...]] = [(size,), (1, size), (size, 1)]
    options += [(d, size // d) for d in divisors]
    shape = b.rng.choice(options)
    text = ", ".join(str(d) for d in shape)
    if b.rng.random() < 0.5:
        return b.emit("reshape", f"{{0}}.reshape({text})", [v], shape, v.kind)
    if len(shape) == 1 and b.rng.random() < 0.5:
        return b.emit("reshape", "jnp.ravel({0})", [v], shape, v.kind)
    return b.emit("reshape", f"jnp.reshape({{0}}, ({text},))", [v], shape, v.kind)


def transpose(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 2)
    if v is None:
        return None
    nd = len(v.shape)
    perm = list(range(nd))
    b.rng.shuffle(perm)
    choice = b.rng.random()
    if choice < 0.3:
        return b.emit("transpose", "{0}.T", [v], v.shape[::-1], v.kind)
    if choice < 0.6:
        i, j = b.rng.sample(range(nd), 2)
        shape = list(v.shape)
        shape[i], shape[j] = shape[j], shape[i]
        return b.emit("swapaxes", f"jnp.swapaxes({{0}}, {i}, {j})", [v], tuple(shape), v.kind)
    return b.emit("transpose", f"jnp.transpose({{0}}, {tuple(perm)})", [v], tuple(v.shape[p] for p in perm), v.kind)


def expand_squeeze(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) <= 3)
    assert v is not None
    ones = [i for i, d in enumerate(v.shape) if d == 1]
    if ones and b.rng.random() < 0.6:
        ax = b.rng.choice(ones)
        return b.emit("squeeze", f"jnp.squeeze({{0}}, axis={ax})", [v], v.shape[:ax] + v.shape[ax + 1 :], v.kind)
    ax = b.rng.randrange(len(v.shape) + 1)
    if b.rng.random() < 0.3:
        return b.emit("expand_dims", "{0}[None]", [v], (1, *v.shape), v.kind)
    return b.emit("expand_dims", f"jnp.expand_dims({{0}}, {ax})", [v], v.shape[:ax] + (1,) + v.shape[ax:], v.kind)


def flip(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1)
    if v is None:
        return None
    ax = b.axis(v)
    return b.emit("flip", f"jnp.flip({{0}}, axis={ax})", [v], v.shape, v.kind)


def _index_text(b: Builder, v: Var, unique: bool) -> tuple[str, tuple[int, ...]] | None:
    """An index expression on ``v`` (basic or advanced) and the indexed shape."""
    r = b.rng
    d = v.shape[0]
    if d == 0:
        return None
    choice = r.random()
    if choice < 0.25:
        i = r.randrange(-d, d)
        text = str(i)
    elif choice < 0.55:
        lo = r.randrange(0, d)
        hi = r.randrange(lo + 1, d + 1)
        text = f"{lo}:{hi}" if r.random() < 0.7 else f"{lo - d}:"
    elif choice < 0.65:
        text = "::2" if r.random() < 0.5 else "::-1"
    elif choice < 0.8 and len(v.shape) >= 2:
        i = r.randrange(v.shape[-1])
        text = f"..., {i}"
    else:
        k = r.randint(1, min(3, d))
        idx = r.sample(range(d), k) if unique else [r.randrange(d) for _ in range(k)]
        text = f"jnp.array({idx})"
    dummy = np.empty(v.shape)
    ns = {"jnp": np}
    shape = eval(f"dummy[{text}]", ns, {"dummy": dummy}).shape
    return text, tuple(shape)


def index(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1)
    if v is None:
        return None
    got = _index_text(b, v, unique=False)
    if got is None:
        return None
    text, shape = got
    if text.startswith("jnp.array") and b.rng.random() < 0.5:
        ax = 0
        return b.emit("take", f"jnp.take({{0}}, {text}, axis={ax})", [v], shape, v.kind)
    return b.emit("index", f"{{0}}[{text}]", [v], shape, v.kind)


def at_update(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1)
    if v is None:
        return None
    got = _index_text(b, v, unique=True)
    if got is None:
        return None
    text, shape = got
    r = b.rng
    methods = ["set", "add", "mul", "min", "max", "get"] if v.kind != "b" else ["set", "get"]
    method = r.choice(methods)
    if method == "get":
        return b.emit("at:get", f"{{0}}.at[{text}].get()", [v], shape, v.kind)
    u = b.pick(lambda u: u.kind == v.kind and _bshape(u.shape, shape) == shape)
    if u is not None and r.random() < 0.6:
        return b.emit("at:" + method, f"{{0}}.at[{text}].{method}({{1}})", [v, u], v.shape, v.kind)
    val = {"f": r.choice(["1.5", "-0.5", "2.0"]), "i": r.choice(["2", "-1"]), "b": "True"}[v.kind]
    return b.emit("at:" + method, f"{{0}}.at[{text}].{method}({val})", [v], v.shape, v.kind)


def concatenate(b: Builder) -> Stmt | None:
    x = b.pick(lambda v: len(v.shape) >= 1)
    if x is None:
        return None
    ax = b.axis(x)

    def fits(v: Var) -> bool:
        return len(v.shape) == len(x.shape) and all(d == e for i, (d, e) in enumerate(zip(v.shape, x.shape)) if i != ax)

    y = b.pick(fits)
    assert y is not None
    shape = list(x.shape)
    shape[ax] += y.shape[ax]
    kind = _kind_join(x.kind, y.kind)
    if b.rng.random() < 0.3 and x.shape == y.shape:
        st = b.rng.randrange(len(x.shape) + 1)
        return b.emit("stack", f"jnp.stack([{{0}}, {{1}}], axis={st})", [x, y], x.shape[:st] + (2,) + x.shape[st:], kind)
    return b.emit("concatenate", f"jnp.concatenate([{{0}}, {{1}}], axis={ax})", [x, y], tuple(shape), kind)


def tile_repeat_pad(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1)
    if v is None:
        return None
    ax = b.axis(v)
    shape = list(v.shape)
    choice = b.rng.random()
    if choice < 0.33:
        shape[ax] *= 2
        return b.emit("repeat", f"jnp.repeat({{0}}, 2, axis={ax})", [v], tuple(shape), v.kind)
    if choice < 0.66:
        shape[-1] *= 2
        return b.emit("tile", "jnp.tile({0}, 2)", [v], tuple(shape), v.kind)
    lo, hi = b.rng.randrange(3), b.rng.randrange(3)
    pads = [(lo, hi) if i == ax else (0, 0) for i in range(len(shape))]
    shape[ax] += lo + hi
    return b.emit("pad", f"jnp.pad({{0}}, {pads})", [v], tuple(shape), v.kind)


def contraction(b: Builder) -> Stmt | None:
    x = b.pick(lambda v: v.kind in "fi" and 1 <= len(v.shape) <= 2)
    if x is None:
        return None
    k = x.shape[-1]
    y = b.pick(lambda v: v.kind in "fi" and 1 <= len(v.shape) <= 2 and v.shape[0] == k)
    if y is None:
        return None
    shape = x.shape[:-1] + y.shape[1:]
    kind = _kind_join(x.kind, y.kind)
    r = b.rng.random()
    if r < 0.4:
        return b.emit("matmul", "{0} @ {1}", [x, y], shape, kind)
    if r < 0.6:
        return b.emit("dot", "jnp.dot({0}, {1})", [x, y], shape, kind)
    letters_x = "ij"[2 - len(x.shape) :]
    letters_y = "jk"[: len(y.shape)]
    out = letters_x.replace("j", "") + letters_y.replace("j", "")
    return b.emit("einsum", f"jnp.einsum('{letters_x},{letters_y}->{out}', {{0}}, {{1}})", [x, y], shape, kind)


def einsum_elementwise(b: Builder) -> Stmt | None:
    x = b.pick(lambda v: v.kind == "f" and len(v.shape) == 2)
    if x is None:
        return None
    y = b.pick(lambda v: v.kind == "f" and v.shape == x.shape)
    assert y is not None
    if b.rng.random() < 0.5:
        return b.emit("einsum", "jnp.einsum('ij,ij->i', {0}, {1})", [x, y], x.shape[:1], "f")
    return b.emit("einsum", "jnp.einsum('ij->ji', {0})", [x], x.shape[::-1], "f")


def clip(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind in "fi")
    if v is None:
        return None
    bounds = "-1.0, 1.5" if v.kind == "f" else "-2, 3"
    return b.emit("clip", f"jnp.clip({{0}}, {bounds})", [v], v.shape, v.kind)


def isfinite(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "f")
    if v is None:
        return None
    fn = b.rng.choice(["jnp.isfinite", "jnp.isnan"])
    return b.emit(fn, fn + "({0})", [v], v.shape, "b")


def take_along_argsort(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind in "fi" and len(v.shape) >= 1)
    if v is None:
        return None
    ax = b.axis(v)
    expr = f"jnp.take_along_axis({{0}}, jnp.argsort({{0}}, axis={ax}), axis={ax})"
    return b.emit("take_along_axis", expr, [v], v.shape, v.kind)


def outer(b: Builder) -> Stmt | None:
    x = b.pick(lambda v: v.kind == "f" and len(v.shape) == 1)
    y = b.pick(lambda v: v.kind == "f" and len(v.shape) == 1)
    if x is None or y is None:
        return None
    return b.emit("outer", "jnp.outer({0}, {1})", [x, y], x.shape + y.shape, "f")


def dynamic_slice(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) >= 1 and v.shape[0] >= 2)
    if v is None:
        return None
    size = b.rng.randint(1, v.shape[0] - 1)
    start = b.rng.randrange(v.shape[0] - size + 1)
    starts = (start,) + (0,) * (len(v.shape) - 1)
    sizes = (size, *v.shape[1:])
    return b.emit("dynamic_slice", f"lax.dynamic_slice({{0}}, {starts}, {sizes})", [v], sizes, v.kind)


def one_hot(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "i" and len(v.shape) <= 2)
    if v is None:
        return None
    return b.emit("one_hot", "nn.one_hot({0}, 3)", [v], (*v.shape, 3), "f")


# --- control flow -----------------------------------------------------------------------------------------


def _body(b: Builder) -> str:
    return b.rng.choice(BODIES).format(a="a")


def cond(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "f")
    if v is None:
        return None
    t, f = _body(b), _body(b)
    expr = f"lax.cond(jnp.sum({{0}}) > 0, lambda a: {t}, lambda a: {f}, {{0}})"
    return b.emit("cond", expr, [v], v.shape, "f")


def fori_loop(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "f")
    if v is None:
        return None
    body = b.rng.choice(["jnp.tanh(c) + 0.5 * c", "c * 0.9 + jnp.sin(c)", "c + i"])
    n = b.rng.randint(1, 3)
    return b.emit("fori_loop", f"lax.fori_loop(0, {n}, lambda i, c: {body}, {{0}})", [v], v.shape, "f")


def scan(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "f" and len(v.shape) >= 1)
    if v is None:
        return None
    which = b.rng.randrange(2)
    expr = f"lax.scan(lambda c, x: (c * 0.5 + x, jnp.sin(c) * x), jnp.zeros_like({{0}}[0]), {{0}})[{which}]"
    return b.emit("scan", expr, [v], v.shape[1:] if which == 0 else v.shape, "f")


# --- linear algebra, FFT, windows, loops ------------------------------------------------------------------


def _spd(b: Builder) -> tuple[Var, str] | None:
    """A float matrix ``a`` and the text of a well-conditioned symmetric positive definite one made from it
    (``a @ a.T + k I``)."""
    v = b.pick(lambda v: v.kind == "f" and len(v.shape) == 2)
    if v is None:
        return None
    k = v.shape[0]
    a = "{0}.astype(jnp.float32)"
    return v, f"({a} @ {a}.T + {k} * jnp.eye({k}, dtype=jnp.float32))"


def linalg(b: Builder) -> Stmt | None:
    made = _spd(b)
    if made is None:
        return None
    v, s = made
    k = v.shape[0]
    r = b.rng.randrange(7)
    if r == 0:
        return b.emit("linalg:solve", f"jnp.linalg.solve({s}, {{0}}[:, 0].astype(jnp.float32))", [v], (k,), "f")
    if r == 1:
        return b.emit("linalg:cholesky", f"jnp.linalg.cholesky({s})", [v], (k, k), "f")
    if r == 2:
        return b.emit("linalg:inv", f"jnp.linalg.inv({s})", [v], (k, k), "f")
    if r == 3:
        return b.emit("linalg:slogdet", f"jnp.linalg.slogdet({s})[1]", [v], (), "f")
    if r == 4:
        return b.emit("linalg:eigvalsh", f"jnp.linalg.eigvalsh({s})", [v], (k,), "f")
    if r == 5:
        return b.emit("linalg:triangular", f"lax.linalg.triangular_solve(jnp.linalg.cholesky({s}), {{0}}.astype("
                      "jnp.float32), left_side=True, lower=True)", [v], v.shape, "f")  # fmt: skip
    return b.emit("linalg:norm", "jnp.linalg.norm({0}.astype(jnp.float32), axis=-1)", [v], (k,), "f")


def fft(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "f" and len(v.shape) >= 1)
    if v is None:
        return None
    ax = b.axis(v)
    x = "{0}.astype(jnp.float32)"
    if b.rng.random() < 0.5:
        return b.emit("fft", f"jnp.fft.fft({x}, axis={ax}).real", [v], v.shape, "f")
    shape = tuple(d // 2 + 1 if i == ax else d for i, d in enumerate(v.shape))
    return b.emit("fft", f"jnp.abs(jnp.fft.rfft({x}, axis={ax}))", [v], shape, "f")


def convolve(b: Builder) -> Stmt | None:
    x = b.pick(lambda v: v.kind == "f" and len(v.shape) == 1)
    if x is None:
        return None
    w = b.rng.choice(["jnp.array([0.5, -1.0, 2.0])", "jnp.array([1.0, 0.25])"])
    taps = 3 if "2.0" in w else 2
    mode = b.rng.choice(["full", "same", "valid"])
    n = x.shape[0]
    size = {"full": n + taps - 1, "same": max(n, taps), "valid": max(n, taps) - min(n, taps) + 1}[mode]
    fn = b.rng.choice(["jnp.convolve", "jnp.correlate"])
    return b.emit("convolve", f"{fn}({{0}}, {w}, mode='{mode}')", [x], (size,), "f")


def pool(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "f" and len(v.shape) >= 1 and v.shape[-1] >= 2)
    if v is None:
        return None
    nd = len(v.shape)
    window = (1,) * (nd - 1) + (2,)
    shape = v.shape[:-1] + (v.shape[-1] - 1,)
    if b.rng.random() < 0.5:
        expr = f"lax.reduce_window({{0}}, -jnp.inf, lax.max, {window}, {(1,) * nd}, 'VALID')"
        return b.emit("pool:max", expr, [v], shape, "f")
    expr = f"lax.reduce_window({{0}}, 0.0, lax.add, {window}, {(1,) * nd}, 'VALID')"
    return b.emit("pool:sum", expr, [v], shape, "f")


def while_loop(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: v.kind == "f")
    if v is None:
        return None
    n = b.rng.randint(1, 3)
    body = b.rng.choice(["jnp.tanh(ic[1]) + 0.5 * ic[1]", "ic[1] * 0.9 + 1.0"])
    expr = f"lax.while_loop(lambda ic: ic[0] < {n}, lambda ic: (ic[0] + 1, {body}), (0, {{0}}))[1]"
    return b.emit("while_loop", expr, [v], v.shape, "f")


def matrix_structure(b: Builder) -> Stmt | None:
    v = b.pick(lambda v: len(v.shape) == 2)
    if v is None:
        return None
    r = b.rng.randrange(5)
    if r == 0:
        return b.emit("triu", "jnp.triu({0})", [v], v.shape, v.kind)
    if r == 1:
        return b.emit("tril", "jnp.tril({0}, -1)", [v], v.shape, v.kind)
    if r == 2:
        return b.emit("diagonal", "jnp.diagonal({0})", [v], (min(v.shape),), v.kind)
    if r == 3 and v.kind != "b":
        return b.emit("trace", "jnp.trace({0})", [v], (), v.kind)
    ax = b.axis(v)
    return b.emit("roll", f"jnp.roll({{0}}, {b.rng.choice([1, -2])}, axis={ax})", [v], v.shape, v.kind)


#: The op generators and their relative weights.
GENERATORS: tuple[tuple[Gen, float], ...] = (
    (unary, 4), (logical_not, 0.5), (binary, 5), (power, 1), (floordiv_mod, 0.5), (arctan2, 0.5), (logical, 0.5),
    (where, 1), (astype, 1), (reduction, 2.5), (arg_reduction, 0.5), (cumulative, 1), (sort, 0.7),
    (nn_normalise, 1), (reshape, 1), (transpose, 1), (expand_squeeze, 0.7), (flip, 0.5), (index, 1.5),
    (at_update, 1.5), (concatenate, 1), (tile_repeat_pad, 0.7), (contraction, 1.2), (einsum_elementwise, 0.5),
    (cond, 0.7), (fori_loop, 0.5), (scan, 0.6), (clip, 0.5), (isfinite, 0.3), (take_along_argsort, 0.4),
    (outer, 0.4), (dynamic_slice, 0.5), (one_hot, 0.3), (linalg, 0.8), (fft, 0.4), (convolve, 0.4), (pool, 0.4),
    (while_loop, 0.4), (matrix_structure, 0.6), (stable_max, 0.8),
)


def _random_shape(rng: random.Random) -> tuple[int, ...]:
    """Half the arrays have the masked / ragged size ``N`` once, most often first."""
    nd = rng.choices([0, 1, 2, 3], weights=[1, 4, 4, 1])[0]
    shape = [rng.choice((N, *OTHER_SIZES)) for _ in range(nd)]
    if nd and rng.random() < 0.5:
        shape = [rng.choice(OTHER_SIZES) for _ in range(nd)]
        shape[0 if rng.random() < 0.7 else nd - 1] = N
    return tuple(shape)


def _random_inputs(rng: random.Random) -> list[Var]:
    count = rng.choices([1, 2, 3], weights=[3, 4, 2])[0]
    out: list[Var] = []
    for i in range(count):
        dtype = "float32" if i == 0 else rng.choices(["float32", "float16", "int32", "bool"], weights=[6, 1, 2, 1.5])[0]
        kind = {"float32": "f", "float16": "f", "int32": "i", "bool": "b"}[dtype]
        out.append(Var(f"x{i}", _random_shape(rng), kind, dtype))
    return out


def generate(seed: int, min_ops: int = 3, max_ops: int = 12) -> Program:
    """The random program of ``seed`` (deterministic)."""
    rng = random.Random(seed)
    builder = Builder(rng, _random_inputs(rng))
    target = rng.randint(min_ops, max_ops)
    gens = [g for g, _ in GENERATORS]
    weights = [w for _, w in GENERATORS]
    attempts = 0
    while len(builder.stmts) < target and attempts < 20 * max_ops:
        attempts += 1
        stmt = rng.choices(gens, weights=weights)[0](builder)
        if stmt is None or int(np.prod(stmt.target.shape)) > 400 or len(stmt.target.shape) > 4:
            continue
        builder.stmts.append(stmt)
        builder.vars.append(stmt.target)
    last = builder.vars[-1].name
    return Program(tuple(builder.vars[: len(builder.vars) - len(builder.stmts)]), tuple(builder.stmts), last, seed).dce()
