"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``,
``scan`` and ``map``, with JAX's names and signatures.

Each function stages the Python functions it is given into jaxprs (once, on
abstract values) and binds one ``cond``, ``while`` or ``scan`` primitive.
Values the functions close over become leading operands of the primitive,
so every transformation sees them.  Operands, carries and scanned values may
be any pytrees.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval, to_numpy
from plait_core.dims import Dim, SymbolicDim, definitely_equal, definitely_equal_shapes, dim_as_int
from plait_core.jaxpr import ClosedJaxpr
from plait_core.lax import _lenient, elementwise
from plait_core.lax.structural import concatenate, expand_dims, index_in_dim, reshape, slice_in_dim
from plait_core.primitives.control_flow import (
    check_carry_types,
    cond_p,
    convert_constvars,
    join_consts,
    scan_p,
    while_p,
)
from plait_core.primitives.shapes import dimension_as_value
from plait_core.staging import shaped_abstractify, trace_to_jaxpr
from plait_core.trace import Tracer
from plait_core.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)

__all__ = ["cond", "fori_loop", "map", "scan", "switch", "while_loop"]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


# ---------------------------------------------------------------------------
# Helpers


def _lax(name: str) -> Callable[..., Any]:
    """The elementwise lax function ``name``; the multi-operand ones convert Python
    scalars (:mod:`plait_core.lax._lenient`)."""
    fn: Callable[..., Any] = getattr(_lenient if name in _lenient.__all__ else elementwise, name)
    return fn


def _leaf_paths(tree: PyTreeDef, prefix: str) -> list[str]:
    """``prefix`` followed by the key path of each leaf of ``tree``."""
    pairs, _ = tree_flatten_with_path(tree_unflatten(tree, range(tree.num_leaves)))
    return [prefix + keystr(p) for p, _ in pairs]


def _avals(leaves: Sequence[Any], what: str) -> list[ShapedArray]:
    return [shaped_abstractify(x, f"{what} leaf {i}") for i, x in enumerate(leaves)]


def _flat_outputs(out: Any, what: str) -> tuple[list[Any], PyTreeDef]:
    leaves, tree = tree_flatten(out)
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, Tracer):
            try:
                get_aval(leaf)
            except TypeError:
                raise TypeError(
                    f"{what} must return arrays, but output leaf {i} of the returned tree {tree} "
                    f"has type {type(leaf).__name__}"
                ) from None
    return leaves, tree


def _stage(
    fun: Callable[..., Any], in_tree: PyTreeDef, in_avals: Sequence[ShapedArray], what: str
) -> tuple[ClosedJaxpr, PyTreeDef]:
    """Stage ``fun(*args)`` where ``args`` is the tuple ``in_tree`` describes."""
    trees: list[PyTreeDef] = []

    def flat_fun(*xs: Any) -> list[Any]:
        leaves, tree = _flat_outputs(fun(*tree_unflatten(in_tree, xs)), what)
        trees.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat_fun, in_avals)
    return closed, trees[0]


def _promote_weak(carry: Sequence[ShapedArray], body_out: Sequence[ShapedArray]) -> list[ShapedArray]:
    """The carry types to trace a loop body with again, as JAX does: a weakly
    typed carry (a Python scalar, say) that the body returns with another
    dtype becomes strongly typed in the dtype both promote to (``0`` with a
    body returning ``float32`` becomes ``float32``; a weak ``float32`` with a
    body returning ``float16`` becomes ``float16``), and one the body returns
    strongly typed in its own dtype becomes strongly typed."""
    out = []
    for c, o in zip(carry, body_out):
        if c.weak_type and c.dtype != o.dtype:
            c = c.update(dtype=dtypes.result_type(c, o), weak_type=False)
        elif c.weak_type and not o.weak_type:
            c = c.strip_weak_type()
        out.append(c)
    return out


def _convert_promoted(values: Sequence[Any], before: Sequence[ShapedArray], after: Sequence[ShapedArray]) -> list[Any]:
    """``values`` (of types ``before``) converted to the promoted dtypes ``after``."""
    convert = _lax("convert_element_type")
    return [v if a.dtype == b.dtype else convert(v, a.dtype) for v, b, a in zip(values, before, after)]


def _check_carry_out(
    what: str,
    fun_name: str,
    in_tree: PyTreeDef,
    out_tree: PyTreeDef,
    in_avals: Sequence[ShapedArray],
    out_avals: Sequence[ShapedArray],
    prefix: str,
) -> None:
    """The body must return the carry's tree with the same dtypes and shapes
    (a weakly typed carry coming back strong is promoted, not an error)."""
    if in_tree != out_tree:
        raise TypeError(
            f"{what}: {fun_name} must return a carry with the same tree structure as its input, "
            f"but the carry is {in_tree} and {fun_name} returned {out_tree}"
        )
    check_carry_types(what, _leaf_paths(in_tree, prefix), in_avals, out_avals, weak_may_become_strong=True)


def _to_int32_index(x: Any) -> Any:
    if isinstance(x, Tracer):
        return x if x.aval.dtype == dtypes.int32 else _lax("convert_element_type")(x, np.int32)
    return np.int32(np.asarray(to_numpy(x)).item())


def _bind_branches(index: Any, funs: Sequence[Callable[..., Any]], names: Sequence[str], operands: tuple[Any, ...], what: str) -> Any:
    ops, ops_tree = tree_flatten(operands)
    avals = _avals(ops, f"{what} operand")
    staged = [_stage(f, ops_tree, avals, f"{what}: {n}") for f, n in zip(funs, names)]
    j0, t0 = staged[0]
    for (j, t), n in zip(staged[1:], names[1:]):
        if t != t0:
            raise TypeError(
                f"{what}: {names[0]} and {n} must return the same tree structure, but {names[0]} "
                f"returns {t0} and {n} returns {t}"
            )
        for path, a, b in zip(_leaf_paths(t0, "output"), j0.out_avals, j.out_avals):
            if a.dtype != b.dtype or not definitely_equal_shapes(a.shape, b.shape):
                raise TypeError(
                    f"{what}: {names[0]} and {n} must return values of the same types, but {path} is "
                    f"{a.str_short()} in {names[0]} and {b.str_short()} in {n}"
                )
    branches, consts = join_consts([j for j, _ in staged])
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(branches))
    return tree_unflatten(t0, outs)


# ---------------------------------------------------------------------------
# cond and switch


def cond(pred: Any, true_fun: Any, false_fun: Any, *operands: Any, operand: Any = _MISSING) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged
    so that ``pred`` may be a traced value.

    ``pred`` is a boolean or integer scalar (an integer counts as true when
    non-zero).  Both functions must return the same tree of arrays with the
    same dtypes and shapes.  The older form ``cond(pred, true_operand,
    true_fun, false_operand, false_fun)`` is accepted too, and so is a single
    ``operand=`` keyword."""
    if (
        len(operands) == 2
        and operand is _MISSING
        and not (callable(true_fun) and callable(false_fun))
        and callable(false_fun)
        and callable(operands[1])
    ):
        true_op, t_fun, false_op, f_fun = true_fun, false_fun, operands[0], operands[1]
        return cond(pred, lambda ops: t_fun(ops[0]), lambda ops: f_fun(ops[1]), (true_op, false_op))
    if operand is not _MISSING:
        if operands:
            raise TypeError("cond: when operand= is passed as a keyword, no operands may be passed positionally")
        operands = (operand,)
    for name, f in (("true_fun", true_fun), ("false_fun", false_fun)):
        if not callable(f):
            raise TypeError(f"cond: {name} must be callable, got a value of type {type(f).__name__}")
    aval = get_aval(pred, "the predicate of cond")
    if aval.shape != ():
        raise TypeError(f"cond: the predicate must be a scalar, got a value of type {aval.str_short()} (shape {aval.shape})")
    if dtypes.is_bool(aval.dtype):
        index = _to_int32_index(pred)
    elif dtypes.is_int(aval.dtype):
        index = _to_int32_index(_lax("ne")(pred, 0) if isinstance(pred, Tracer) else bool(np.asarray(to_numpy(pred))))
    else:
        raise TypeError(
            f"cond: the predicate must be a boolean or integer scalar, got {aval.str_short()} "
            f"(dtype {aval.dtype.name})"
        )
    return _bind_branches(index, (false_fun, true_fun), ("false_fun", "true_fun"), operands, "cond")


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any, operand: Any = _MISSING) -> Any:
    """``branches[index](*operands)``, staged so that ``index`` may be traced.

    ``index`` is an integer scalar, clamped into ``[0, len(branches) - 1]``.
    Every branch must return the same tree of arrays with the same types."""
    if operand is not _MISSING:
        if operands:
            raise TypeError("switch: when operand= is passed as a keyword, no operands may be passed positionally")
        operands = (operand,)
    try:
        funs = tuple(branches)
    except TypeError:
        raise TypeError(f"switch: branches must be a sequence of functions, got {type(branches).__name__}") from None
    if not funs:
        raise ValueError("switch: branches must be a non-empty sequence of functions, got an empty one")
    for i, f in enumerate(funs):
        if not callable(f):
            raise TypeError(f"switch: branches[{i}] must be callable, got a value of type {type(f).__name__}")
    aval = get_aval(index, "the index of switch")
    if aval.shape != () or not dtypes.is_int(aval.dtype):
        raise TypeError(f"switch: the branch index must be an integer scalar, got {aval.str_short()}")
    if len(funs) == 1:
        return funs[0](*operands)
    if isinstance(index, Tracer):
        idx = _to_int32_index(index)
    else:
        idx = np.int32(min(max(int(np.asarray(to_numpy(index)).item()), 0), len(funs) - 1))
    return _bind_branches(idx, funs, [f"branches[{i}]" for i in range(len(funs))], operands, "switch")


# ---------------------------------------------------------------------------
# while_loop


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)`` is true; return ``val``.

    ``cond_fun`` must return a boolean scalar; ``body_fun`` must return a
    value of the same tree, dtypes and shapes as ``init_val``, except that a
    weakly typed initial value (a Python scalar, say) is promoted as in JAX:
    to the dtype it and the body's result promote to, strongly typed, when
    the body changes its dtype (``while_loop(lambda c: c < 3, lambda c: c +
    1.5, 0)`` is ``float32`` 3.0), and to the body's strong type otherwise.
    Reverse-mode differentiation of a while loop is not possible; use
    :func:`scan` or :func:`fori_loop` with concrete bounds for that."""
    for name, f in (("cond_fun", cond_fun), ("body_fun", body_fun)):
        if not callable(f):
            raise TypeError(f"while_loop: {name} must be callable, got a value of type {type(f).__name__}")
    init, tree = tree_flatten(init_val)
    in_tree = tree_flatten((init_val,))[1]
    init_avals = avals = _avals(init, "while_loop init_val")
    for _ in range(len(avals) + 1):  # each round makes at least one weak carry strong
        body, body_tree = _stage(body_fun, in_tree, avals, "while_loop: body_fun")
        promoted = _promote_weak(avals, body.out_avals) if body_tree == tree else avals
        if promoted == avals:
            break
        avals = promoted
    _check_carry_out("while_loop", "body_fun", tree, body_tree, avals, body.out_avals, "init_val")
    init = _convert_promoted(init, init_avals, avals)
    cond_j, cond_tree = _stage(cond_fun, in_tree, avals, "while_loop: cond_fun")
    outs = cond_j.out_avals
    if cond_tree.num_leaves != 1 or outs[0].shape != () or not dtypes.is_bool(outs[0].dtype):
        got = ", ".join(a.str_short() for a in outs) or "nothing"
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, but it returned {got} (tree {cond_tree})")
    cj, cconsts = convert_constvars(cond_j)
    bj, bconsts = convert_constvars(body)
    res = while_p.bind(
        *cconsts, *bconsts, *init,
        cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=len(cconsts), body_nconsts=len(bconsts),
    )
    return tree_unflatten(tree, res)


# ---------------------------------------------------------------------------
# scan and map


def _scan_length(xs: Sequence[Any], avals: Sequence[ShapedArray], paths: Sequence[str], length: Any) -> Dim:
    for p, a in zip(paths, avals):
        if a.ndim == 0:
            raise ValueError(f"scan: every leaf of xs needs a leading axis to scan over, but {p} has type {a.str_short()}")
    if length is not None:
        if isinstance(length, SymbolicDim):
            n: Dim = length
        else:
            try:
                n = operator.index(length)
            except TypeError:
                raise TypeError(f"scan: length must be an int, got {length!r}") from None
        if type(n) is int and n < 0:
            raise ValueError(f"scan: length must be non-negative, got {n}")
    elif avals:
        n = avals[0].shape[0]
    else:
        raise ValueError("scan: there are no xs to scan over and no length was given; pass length=...")
    if not all(definitely_equal(a.shape[0], n) for a in avals):
        listing = ", ".join(f"{p}: {a.str_short()}" for p, a in zip(paths, avals))
        given = f"length={n} was given, and " if length is not None else ""
        raise ValueError(f"scan: {given}the leaves of xs must all have the same leading size, but they are {listing}")
    return n


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: Any = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``.

    Returns the final carry and the ``y`` values stacked along a new leading
    axis (pytrees both).  ``xs`` may be ``None`` when ``length`` is given;
    every leaf of ``xs`` must have the same leading size.  With
    ``reverse=True`` the loop runs from the last index to the first (``ys``
    stay aligned with ``xs``).  ``unroll`` (a positive int, or ``True`` for
    full unrolling) is a hint to compilers.  ``f`` must return the carry with
    the same tree, dtypes and shapes it received; weakly typed leaves of
    ``init`` are promoted first as in :func:`while_loop`."""
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got a value of type {type(f).__name__}")
    if type(reverse) is not bool:
        raise TypeError(f"scan: reverse must be a bool, got {reverse!r}")
    carry, carry_tree = tree_flatten(init)
    xs_leaves, xs_tree = tree_flatten(xs)
    x_avals = _avals(xs_leaves, "scan xs")
    n = _scan_length(xs_leaves, x_avals, _leaf_paths(xs_tree, "xs"), length)
    if isinstance(unroll, bool):
        unroll = max(n if type(n) is int else 1, 1) if unroll else 1
    if type(unroll) is not int or unroll < 1:
        raise ValueError(f"scan: unroll must be a bool or a positive int, got {unroll!r}")
    slices = [a.update(shape=a.shape[1:]) for a in x_avals]
    in_tree = tree_flatten((init, xs))[1]
    c_avals = _avals(carry, "scan init")
    trees: list[PyTreeDef] = []

    def body(c: Any, x: Any) -> Any:
        out = f(c, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(
                f"scan: f must return a pair (carry, y), but it returned a value of type {type(out).__name__}"
            )
        trees.append(tree_flatten(out[0])[1])
        return out[0], out[1]

    init_avals = c_avals
    for _ in range(len(c_avals) + 1):  # each round makes at least one weak carry strong
        trees.clear()
        closed, out_tree = _stage(body, in_tree, c_avals + slices, "scan: f")
        nc = trees[0].num_leaves
        promoted = _promote_weak(c_avals, closed.out_avals[:nc]) if trees[0] == carry_tree else c_avals
        if promoted == c_avals:
            break
        c_avals = promoted
    _check_carry_out("scan", "f", carry_tree, trees[0], c_avals, closed.out_avals[:nc], "init")
    carry = _convert_promoted(carry, init_avals, c_avals)
    y_tree = tree_flatten(tree_unflatten(out_tree, range(out_tree.num_leaves))[1])[1]
    jaxpr, consts = convert_constvars(closed)
    outs = scan_p.bind(
        *consts, *carry, *xs_leaves,
        jaxpr=jaxpr,
        num_consts=len(consts),
        num_carry=len(carry),
        length=n,
        reverse=reverse,
        unroll=unroll,
        linear=(False,) * (len(consts) + len(carry) + len(xs_leaves)),
    )
    return tree_unflatten(carry_tree, outs[: len(carry)]), tree_unflatten(y_tree, outs[len(carry) :])


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, results
    stacked (a :func:`scan` without carry).

    With ``batch_size``, the loop takes ``batch_size`` slices per step (``f``
    is applied to each of them within the step; core has no ``vmap``), and
    the slices left over after the last whole batch are mapped after the
    loop: fewer, larger steps, the same values."""
    if not callable(f):
        raise TypeError(f"map: f must be callable, got a value of type {type(f).__name__}")
    if batch_size is None:
        _, ys = scan(lambda c, x: (c, f(x)), (), xs)
        return ys
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(f"map: batch_size must be an int, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"map: batch_size must be at least 1, got {batch_size}")
    return _map_in_batches(f, xs, int(batch_size))


def _map_in_batches(f: Callable[[Any], Any], xs: Any, size: int) -> Any:
    leaves, tree = tree_flatten(xs)
    if not leaves:
        raise ValueError("map: xs holds no arrays to map over")
    n = dim_as_int(get_aval(leaves[0]).shape[0], "the length of the mapped axis of lax.map with batch_size")
    whole = n // size * size

    def apply_each(chunk: list[Any], count: int) -> Any:
        """``f`` on each of the ``count`` slices of ``chunk``, results stacked."""
        outs = [f(tree_unflatten(tree, [index_in_dim(c, i, 0, keepdims=False) for c in chunk])) for i in range(count)]
        flat = [tree_flatten(o) for o in outs]
        out_tree = flat[0][1]
        stacked = [concatenate([expand_dims(o[0][j], (0,)) for o in flat], 0) for j in range(len(flat[0][0]))]
        return tree_unflatten(out_tree, stacked)

    parts = []
    if whole:
        batched = [reshape(slice_in_dim(x, 0, whole), (whole // size, size, *get_aval(x).shape[1:])) for x in leaves]
        _, ys = scan(lambda c, chunk: (c, apply_each(tree_flatten(chunk)[0], size)), (), tree_unflatten(tree, batched))
        ys_leaves, ys_tree = tree_flatten(ys)
        parts.append(([reshape(y, (whole, *get_aval(y).shape[2:])) for y in ys_leaves], ys_tree))
    if whole < n:
        rest = apply_each([slice_in_dim(x, whole, n) for x in leaves], n - whole)
        parts.append(tree_flatten(rest))
    if len(parts) == 1:
        return tree_unflatten(parts[0][1], parts[0][0])
    (a, a_tree), (b, _) = parts
    return tree_unflatten(a_tree, [concatenate([u, v], 0) for u, v in zip(a, b)])


# ---------------------------------------------------------------------------
# fori_loop


def _concrete_int(x: Any) -> int | None:
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        return None if value is None else int(np.asarray(to_numpy(value)).item())
    return int(np.asarray(to_numpy(x)).item())


def _fori_symbolic(
    lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, unroll: int | bool | None
) -> Any:
    """``fori_loop`` with a symbolic bound: a scan of ``upper - lower`` steps
    when the other bound is a concrete integer; else the bounds become values."""
    bounds: list[Dim | None] = []
    for name, b in (("lower", lower), ("upper", upper)):
        if type(b) is SymbolicDim:
            bounds.append(b)
            continue
        aval = get_aval(b, f"fori_loop {name}")
        if aval.shape != () or not dtypes.is_int(aval.dtype):
            raise TypeError(f"fori_loop: {name} must be an integer scalar, got {aval.str_short()}")
        bounds.append(_concrete_int(b))
    lo_d, hi_d = bounds
    if lo_d is None or hi_d is None:
        lo_v = dimension_as_value(lower) if type(lower) is SymbolicDim else lower
        hi_v = dimension_as_value(upper) if type(upper) is SymbolicDim else upper
        return fori_loop(lo_v, hi_v, body_fun, init_val, unroll=unroll)
    dtype = dtypes.default_int_dtype()
    first = dimension_as_value(lo_d) if type(lo_d) is SymbolicDim else np.asarray(lo_d, dtype)

    def step(c: Any, _: Any) -> Any:
        i, x = c
        return (_lax("add")(i, np.ones((), dtype)), body_fun(i, x)), None

    (_, result), _ = scan(step, (first, init_val), None, length=hi_d - lo_d, unroll=1 if unroll is None else unroll)
    return result


def fori_loop(
    lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *, unroll: int | bool | None = None
) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``; return ``val``.

    With concrete bounds (Python or NumPy integers) the loop is a
    :func:`scan` of ``upper - lower`` steps, so it can be differentiated in
    reverse mode; so is a loop up to a symbolic size (``x.shape[0]`` under
    ``mask`` or ``vmap`` over piles: a scan of symbolic length, ``i`` of the
    default integer dtype).  With traced bounds it is a :func:`while_loop`
    (``unroll`` then is an error).  ``i`` has the dtype of the bounds."""
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun must be callable, got a value of type {type(body_fun).__name__}")
    if type(lower) is SymbolicDim or type(upper) is SymbolicDim:
        return _fori_symbolic(lower, upper, body_fun, init_val, unroll)
    lo, hi = get_aval(lower, "fori_loop lower"), get_aval(upper, "fori_loop upper")
    if lo.shape != () or hi.shape != () or not dtypes.is_int(lo.dtype) or not dtypes.is_int(hi.dtype):
        raise TypeError(
            f"fori_loop: lower and upper must be integer scalars, got lower {lo.str_short()} and upper {hi.str_short()}"
        )
    dtype = dtypes.result_type(lower, upper)
    _, x_tree = tree_flatten(init_val)

    def step(i: Any, x: Any) -> Any:
        new = body_fun(i, x)
        new_leaves, new_tree = tree_flatten(new)
        old = [get_aval(v) for v in tree_flatten(x)[0]]
        new_avals = _avals(new_leaves, "fori_loop body_fun output")
        if new_tree == x_tree:  # weak carries are promoted by the scan or while loop: not an error here
            old = _promote_weak(old, new_avals)
        _check_carry_out("fori_loop", "body_fun", x_tree, new_tree, old, new_avals, "init_val")
        return new

    def one_more(i: Any) -> Any:
        return _lax("add")(i, np.ones((), dtype))

    lo_c, hi_c = _concrete_int(lower), _concrete_int(upper)
    if lo_c is not None and hi_c is not None:
        n = max(hi_c - lo_c, 0)
        init = (np.asarray(lo_c, dtype), init_val)
        (_, result), _ = scan(
            lambda c, _: ((one_more(c[0]), step(c[0], c[1])), None),
            init, None, length=n, unroll=1 if unroll is None else unroll,
        )
        return result
    if unroll is not None:
        raise ValueError("fori_loop: unroll can only be used when lower and upper are concrete integers")
    lo_v, hi_v = (v if get_aval(v).dtype == dtype else _lax("convert_element_type")(v, dtype) for v in (lower, upper))
    _, _, result = while_loop(
        lambda c: _lax("lt")(c[0], c[1]),
        lambda c: (one_more(c[0]), c[1], step(c[0], c[2])),
        (lo_v, hi_v, init_val),
    )
    return result
