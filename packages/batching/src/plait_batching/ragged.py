"""Ragged values: what ``vmap`` over piles sees, and how it computes with them.

Inside ``vmap(f, in_axes=pile_axis)`` an element of a pile has a symbolic
size along its ragged axis: a fresh name such as ``_pile0`` (one per set of
lengths), so ``x.shape[0]`` is that name and shape rules reason with it.  The
same happens to a size taken from a batched integer (``pnp.arange(n)``,
``pnp.ones((7, n))``): see :func:`symbolic_size`.

A ragged value is a :class:`~plait_batching.trace.BatchTracer` with
``ragged`` set: its ``aval`` is the element type with symbolic sizes, its
``val`` the elements padded along the ragged axes to the padded size of each
name (the pile's padded size, or the largest length).  A value may have
several ragged axes: of one name (self-attention scores ``n x n``) or, for
the rules that treat each axis on its own (elementwise, broadcasting and
transposing, reductions, ``sort``, ``dot_general``, ``rev``, ``pad``,
slicing, indexing, dynamic slices, ``concatenate``: see
``several_sizes`` of :func:`padded_rule` and core's ``per_axis`` padded
rules), of different names (cross-attention scores ``n x m``
between two piles).  Other rules refuse an equation that involves two names
(:func:`check_one_size`).  The names are the same exactly when the lengths
are (checked when concrete).

The rules (:data:`~plait_batching.registries.ragged_rules`, rule(trace, prim,
args, params) returning the results on ``trace``) compute on the padded
data.  Most primitives simply run their batching rule on it, with every
symbolic size in their params replaced by its padded size (:func:`padded_rule`):
what lands in the padding stays in the padding.  Those that would read the
padding into a true result first fill it with a neutral value (reductions,
contractions), and the rest is refused with a reason.

Rules whose results change a ragged size (padding, concatenating,
convolving along a ragged axis) use the helpers at the end of this module:
:func:`derived_size` names the size of a result whose lengths are computed,
and :func:`check_true_sizes` refuses concrete lengths for which a result's
polynomial size is not the true one (an element of length 0 where the
polynomial assumes at least 1).

The names live in a :class:`RaggedEnv`, one per ``BatchTrace`` that maps a
pile: each name's lengths (a value of the parent trace, ``int32[B]``) and
padded size (a static ``int``).

A name is *full* when every length is its padded size (a full pile,
:attr:`Pile.full <plait_batching.pile.Pile>`): its values have no padding.
Then a size made of full names has no mask and no fill, its lengths are
constants, and an equation that involves only full names (and no
sub-program) runs the primitive's batching rule on the data
(:func:`process_full`): the program of a dense ``vmap``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from plait_batching.moves import BDim, broadcast_batch, moveaxis, shift
from plait_batching.pile import Pile
from plait_batching.registries import batching_rules, ragged_rules
from plait_batching.storage import concrete as _concrete
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_core import ClosedJaxpr, Jaxpr, Primitive, ShapedArray, Tracer, dtypes, get_aval, set_current_trace
from plait_core.dims import Dim, SymbolicDim, evaluate_dim
from plait_core.errors import ConcretizationTypeError
from plait_core.primitives.elementwise import (
    add_p,
    and_p,
    convert_element_type_p,
    lt_p,
    max_p,
    mul_p,
    select_n_p,
)
from plait_core.primitives.reductions import reduce_sum_p
from plait_core.primitives.structural import broadcast_in_dim_p, iota_p, pad_p, reshape_p, slice_p

__all__ = [
    "Operand",
    "check_one_size",
    "env_of",
    "fill_key",
    "fill_padding",
    "is_filled",
    "record_fill",
    "names_involved",
    "several_size_types",
    "operands",
    "ragged_axes",
    "refuse",
    "RaggedEnv",
    "RaggedSize",
    "enter_pile",
    "finish_pile",
    "padded_rule",
    "packed_dispatch",
    "process_full",
    "process_ragged",
    "process_ragged_padded",
    "ragged_dim",
    "ragged_result_error",
    "symbolic_size",
]

_fresh_names = itertools.count()
_I32 = np.dtype(np.int32)


class RaggedSize:
    """One ragged size: its ``name``, the ``lengths`` (a value of the parent
    trace, ``int32[B]``), the static ``padded`` size and, when known, the
    ``concrete`` lengths; the static ``capacity`` of its packed values (the
    sum of the lengths when known, else the pile's, else ``B * padded``),
    the ``layout`` its pile asked for (``None``: plait chooses), whether
    it is ``full`` (every length is ``padded``: the pile's static promise)
    and whether a pile of it is stored packed (``packed_storage``: results of
    this size are returned packed too)."""

    __slots__ = ("capacity", "concrete", "full", "layout", "lengths", "name", "packed_storage", "padded")

    def __init__(
        self, name: str, lengths: Any, padded: int, concrete: np.ndarray | None, capacity: int,
        layout: str | None = None, full: bool = False, packed_storage: bool = False,
    ) -> None:  # fmt: skip
        self.name, self.lengths, self.padded, self.concrete = name, lengths, padded, concrete
        self.capacity, self.layout, self.full, self.packed_storage = capacity, layout, full, packed_storage

    def describe(self) -> str:
        if self.concrete is None:
            return f"{self.name} with traced lengths" + (f", all {self.padded} (a full pile)" if self.full else "")
        return f"{self.name} with lengths {np.array2string(self.concrete)}"


class RaggedEnv:
    """The ragged sizes of one ``vmap`` over piles, and the values derived
    from them (lengths of polynomial sizes, masks), memoised for the life of
    the ``vmap``."""

    __slots__ = ("_lengths", "_masks", "axis", "packing", "sizes")

    def __init__(self, axis: AxisData) -> None:
        self.axis = axis
        self.sizes: dict[str, RaggedSize] = {}
        self._lengths: dict[Dim, Any] = {}
        self._masks: dict[tuple[Dim, bool], Any] = {}
        #: Index values of the packed layout, memoised by :mod:`plait_batching.packed`.
        self.packing: dict[tuple[str, str], Any] = {}

    # -- names -------------------------------------------------------------------

    def names_in(self, d: Any) -> frozenset[str]:
        """The names of this env that the dimension ``d`` mentions."""
        if type(d) is not SymbolicDim:
            return frozenset()
        return frozenset(n for n in d.free_names() if n in self.sizes)

    def names_in_shape(self, shape: Sequence[Dim]) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for d in shape:
            if type(d) is SymbolicDim:
                out = out | self.names_in(d)
        return out

    def names_in_params(self, value: Any) -> frozenset[str]:
        """The names of this env mentioned by a param value (dims and tuples of them)."""
        if type(value) is SymbolicDim:
            return self.names_in(value)
        if isinstance(value, tuple):
            out: frozenset[str] = frozenset()
            for v in value:
                out = out | self.names_in_params(v)
            return out
        return frozenset()

    def mentions(self, params: dict[str, Any]) -> bool:
        """Whether a primitive's params mention a ragged size of this env."""
        return any(self.names_in_params(v) for v in params.values())

    def is_ragged(self, d: Any) -> bool:
        return bool(self.names_in(d))

    def is_partial(self, d: Any) -> bool:
        """Whether values with an axis of size ``d`` may have padding there: it
        mentions a ragged size that is not full."""
        return any(not self.sizes[n].full for n in self.names_in(d))

    def full_value(self, d: Any) -> int | None:
        """``d`` evaluated when it is ragged and every size it mentions is a
        full one of this env (then it is the same for every element), else ``None``."""
        if type(d) is not SymbolicDim:
            return None
        names = d.free_names()
        if not names or not all(n in self.sizes and self.sizes[n].full for n in names):
            return None
        return int(evaluate_dim(d, {n: self.sizes[n].padded for n in names}))

    def describe(self, names: Sequence[str] | frozenset[str]) -> str:
        return "; ".join(self.sizes[n].describe() for n in sorted(names))

    def size_for(
        self, lengths: Any, padded: int, concrete: np.ndarray | None, capacity: int | None = None,
        layout: str | None = None, full: bool = False, packed_storage: bool = False,
    ) -> RaggedSize:  # fmt: skip
        """The size of these lengths: an existing one when they are the same
        value or equal concrete lengths, else a fresh name.  ``capacity``,
        ``layout``, ``full`` and ``packed_storage`` are the pile's (see
        :class:`RaggedSize`); a forced layout given for an existing size
        overrides its automatic one, a pile that is full at the size's padded
        size makes it full (its promise is about these lengths), and a packed
        pile makes its results packed."""
        for s in self.sizes.values():
            if s.lengths is lengths or (
                concrete is not None and s.concrete is not None and np.array_equal(s.concrete, concrete)
            ):
                if s.layout is None:
                    s.layout = layout
                if capacity is not None and concrete is None and not s.packed_storage:
                    # (A packed pile's tracer was made at the size's capacity: it stays.)
                    s.capacity = min(s.capacity, capacity)
                s.full = s.full or (full and s.padded == padded)
                s.packed_storage = s.packed_storage or packed_storage
                return s
        name = f"_pile{next(_fresh_names)}"
        size = self.sizes[name] = RaggedSize(
            name, lengths, padded, concrete, self.capacity_of(padded, concrete, capacity), layout, full,
            packed_storage,
        )  # fmt: skip
        return size

    def capacity_of(self, padded: int, concrete: np.ndarray | None, capacity: int | None = None) -> int:
        """The rows of packed values: the sum of concrete lengths, else ``capacity``, else ``B * padded``."""
        if concrete is not None:
            return int(concrete.sum())
        if capacity is not None:
            return capacity
        return int(self.axis.size) * padded

    # -- padded sizes, lengths and masks (values of the parent trace) ------------

    def padded(self, d: Dim, clamp: bool = True) -> Dim:
        """The padded size of a dimension (``d`` at the padded size of each name),
        never negative: a size that shrinks with the lengths (``n - 3``) is
        empty in every element when the padded size is below what it takes
        away (``clamp=False``: the polynomial's value, for rules that refuse
        such sizes)."""
        if type(d) is not SymbolicDim or not self.names_in(d):
            return d
        for mono, coeff in d.terms:
            if mono and coeff < 0 and any(n in self.sizes for n, _ in mono):
                raise ValueError(
                    f"vmap over piles: the ragged size {d} is not padded by its largest length (it decreases "
                    "when a length grows); plait supports ragged sizes that grow with the lengths"
                )
        env = {n: (self.sizes[n].padded if n in self.sizes else SymbolicDim.var(n)) for n in d.free_names()}
        out: Dim = d.evaluate(env)
        if clamp and type(out) is int and out < 0:
            return 0
        return out

    def padded_shape(self, shape: Sequence[Dim]) -> tuple[Dim, ...]:
        return tuple(self.padded(d) for d in shape)

    def pad_param(self, value: Any, clamp: bool = True) -> Any:
        """A param value with every ragged size replaced by its padded size
        (``clamp``: as :meth:`padded`)."""
        if type(value) is SymbolicDim:
            return self.padded(value, clamp)
        if isinstance(value, tuple) and self.names_in_params(value):
            return tuple(self.pad_param(v, clamp) for v in value)
        return value

    def lengths(self, d: Dim) -> Any:
        """``d`` as a size for every element: an ``int32[B]`` value (parent
        trace current), never negative: a size that shrinks as the lengths do
        (``x[1:]`` is ``n - 1``) is empty for the elements it would make
        negative, as NumPy's slices are."""
        hit = self._lengths.get(d)
        if hit is not None:
            return hit
        known = self.full_value(d)
        if known is not None:  # the same for every element
            out = self._lengths[d] = self._broadcast(np.asarray(max(known, 0), _I32))
            return out
        out = self.value(d)
        if type(d) is SymbolicDim and any(coeff < 0 for _, coeff in d.terms):
            out = max_p.bind(out, self._broadcast(np.asarray(0, _I32)))
        self._lengths[d] = out
        return out

    def value(self, d: Dim) -> Any:
        """The polynomial ``d`` evaluated for every element (``lax.dimension_as_value``:
        may be negative)."""
        if type(d) is not SymbolicDim:
            return self._broadcast(np.asarray(d, _I32))
        known = self.full_value(d)
        if known is not None:  # full sizes: a constant, so nothing downstream reads the lengths
            return self._broadcast(np.asarray(known, _I32))
        return self._evaluate(d)

    def _broadcast(self, scalar: Any) -> Any:
        return broadcast_in_dim_p.bind(scalar, shape=(self.axis.size,), broadcast_dimensions=())

    def _evaluate(self, d: SymbolicDim) -> Any:
        others = d.free_names() - self.sizes.keys()
        if others:
            raise NotImplementedError(
                f"vmap over piles: the size {d} mixes a ragged size with the symbolic sizes "
                f"{', '.join(sorted(others))} of an enclosing transformation; this is not supported"
            )
        if len(d.terms) == 1:
            mono, coeff = d.terms[0]
            if coeff == 1 and len(mono) == 1 and mono[0][1] == 1:
                return self.sizes[mono[0][0]].lengths
        total: Any = None
        for mono, coeff in d.terms:
            term: Any = np.asarray(coeff, _I32)
            for name, power in mono:
                for _ in range(power):
                    term = mul_p.bind(self.sizes[name].lengths, term)
            if not mono:
                term = broadcast_in_dim_p.bind(term, shape=(self.axis.size,), broadcast_dimensions=())
            total = term if total is None else add_p.bind(total, term)
        return total

    def mask(self, d: Dim, batch_first: bool) -> Any:
        """``index < length`` along a ragged axis of size ``d``: a bool value of
        shape ``(B, padded)`` (``(padded, B)`` unless ``batch_first``); a
        constant ``True`` where ``d`` has no padding (full sizes)."""
        key = (d, batch_first)
        hit = self._masks.get(key)
        if hit is not None:
            return hit
        size, p = self.axis.size, self.padded(d)
        shape = (size, p) if batch_first else (p, size)
        if not self.is_partial(d):
            out = self._masks[key] = broadcast_in_dim_p.bind(np.asarray(True), shape=shape, broadcast_dimensions=())
            return out
        index = iota_p.bind(dtype=_I32, shape=shape, dimension=1 if batch_first else 0)
        lens = broadcast_in_dim_p.bind(self.lengths(d), shape=shape, broadcast_dimensions=(0 if batch_first else 1,))
        out = self._masks[key] = lt_p.bind(index, lens)
        return out


def env_of(trace: BatchTrace) -> RaggedEnv:
    """The trace's ragged env, made on first use."""
    env = trace.ragged
    if env is None:
        env = trace.ragged = RaggedEnv(trace.axis)
    assert isinstance(env, RaggedEnv)
    return env


# ---------------------------------------------------------------------------
# Operands and results of ragged rules


class Operand(NamedTuple):
    """An operand as a ragged rule sees it: the (padded) value of the parent
    trace, its batch dimension and its element type (symbolic when ragged)."""

    val: Any
    bdim: BDim
    aval: ShapedArray


def operands(trace: BatchTrace, prim: Primitive, args: Sequence[Any]) -> list[Operand]:
    out: list[Operand] = []
    for x in args:
        if type(x) is BatchTracer and x._trace is trace:
            out.append(Operand(x.val, x.bdim, x.aval))
        else:
            if isinstance(x, Tracer):
                trace.check_foreign_tracer(x, prim)
            out.append(Operand(x, None, get_aval(x, f"an argument of {prim.name}")))
    return out


def ragged_axes(env: RaggedEnv, aval: ShapedArray) -> list[int]:
    """The axes of an element type whose size is ragged."""
    return [i for i, d in enumerate(aval.shape) if env.is_ragged(d)]


def _types(ops: Sequence[Operand]) -> str:
    return ", ".join(o.aval.str_short() for o in ops)


def names_involved(env: RaggedEnv, ops: Sequence[Operand], params: dict[str, Any]) -> frozenset[str]:
    """The ragged names an equation's operands and params mention."""
    names: frozenset[str] = frozenset()
    for o in ops:
        names = names | env.names_in_shape(o.aval.shape)
    in_params = frozenset().union(*(env.names_in_params(v) for v in params.values())) if params else frozenset()
    return names | in_params


def check_one_size(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> frozenset[str]:
    """The ragged names an equation involves; ``ValueError`` if more than one."""
    names = names_involved(env, ops, params)
    if len(names) > 1:
        raise ValueError(
            f"vmap over piles: {prim.name} combines values of different ragged sizes (operands {_types(ops)}; "
            f"{env.describe(names)}). Piles combine only when their lengths are equal (checked when the lengths "
            "are concrete; under jit pass the same lengths value to both); different ragged sizes meet only "
            "along different axes (an n x m value), in elementwise operations, broadcasts, transposes, "
            "reductions, sort, dot_general, rev, pad, slices, indexing, dynamic slices and concatenate"
        )
    return names


def element_abstract_eval(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any], names: frozenset[str]
) -> list[ShapedArray]:
    """The element types of the results (symbolic along ragged axes); a shape
    error says which ragged size it is about."""
    try:
        out = prim.abstract_eval(*[o.aval for o in ops], **params)
    except (TypeError, ValueError) as e:
        msg = f"vmap over piles: {e} (element types {_types(ops)}; {env.describe(names)})"
        try:
            err = type(e)(msg)
        except Exception:  # an exception type with another constructor
            raise e from None
        raise err from None
    return list(out) if prim.multiple_results else [out]


def several_size_types(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]
) -> list[ShapedArray]:
    """:func:`element_abstract_eval` for a rule that treats each ragged axis on
    its own, so ragged axes of different sizes may meet in one equation; when
    two sizes meet along one axis (piles of different lengths) the error is
    :func:`check_one_size`'s, which says so."""
    names = names_involved(env, ops, params)
    try:
        return element_abstract_eval(env, prim, ops, params, names)
    except (TypeError, ValueError):
        if len(names) > 1:
            check_one_size(env, prim, ops, params)
        raise


def run_batched(axis: AxisData, prim: Primitive, vals: Sequence[Any], dims: Sequence[BDim], params: dict[str, Any]) -> tuple[list[Any], list[BDim]]:
    """The primitive's batching rule on padded operands (parent trace current)."""
    if all(d is None for d in dims):
        out = prim.bind(*vals, **params)
        outs = list(out) if prim.multiple_results else [out]
        return outs, [None] * len(outs)
    res, res_dims = batching_rules[prim](axis, list(vals), list(dims), **params)
    if prim.multiple_results:
        return list(res), list(res_dims)
    return [res], [res_dims]


def wrap_results(
    trace: BatchTrace, prim: Primitive, vals: Sequence[Any], dims: Sequence[BDim], avals: Sequence[ShapedArray]
) -> Any:
    """The results on ``trace``: ragged tracers where the element type is ragged."""
    env = env_of(trace)
    out: list[Any] = []
    for val, d, aval in zip(vals, dims, avals):
        if not env.names_in_shape(aval.shape):
            out.append(trace.wrap(val, d))
            continue
        if d is None:
            with set_current_trace(trace.parent_trace):
                val, d = broadcast_batch(val, trace.axis.size, 0), 0
        got = get_aval(val)
        elem = got.shape[:d] + got.shape[d + 1 :]
        expected = env.padded_shape(aval.shape)
        if tuple(elem) != expected:
            raise AssertionError(
                f"plait_batching: the ragged rule of {prim.name} made padded elements of shape {elem} for the "
                f"element type {aval.str_short()}, but {expected} was due (a bug in plait_batching)"
            )
        out.append(BatchTracer(trace, val, d, ShapedArray(aval.shape, got.dtype, aval.weak_type)))
    return out if prim.multiple_results else out[0]


# ---------------------------------------------------------------------------
# Rules computed on the padded data

RaggedRule = Callable[[BatchTrace, Primitive, Sequence[Any], dict[str, Any]], Any]
#: ``check(env, prim, ops, params)``: raise for a ragged layout the primitive cannot handle.
Check = Callable[[RaggedEnv, Primitive, Sequence[Operand], dict[str, Any]], None]
#: ``prepare(env, ops, params)``: the padded operand values to use (parent trace current).
Prepare = Callable[[RaggedEnv, Sequence[Operand], dict[str, Any]], list[Any]]


def padded_rule(
    check: Check | None = None, prepare: Prepare | None = None, *, several_sizes: bool = False
) -> RaggedRule:
    """A ragged rule that runs the primitive's batching rule on the padded data,
    with ragged sizes in params replaced by padded sizes.  ``check`` refuses
    layouts where that would be wrong; ``prepare`` fills padding the
    primitive would read (see :func:`fill_padding`).  ``several_sizes`` lets
    an equation involve ragged axes of different names (an ``n x m`` value
    between two piles): right for primitives that treat each axis on its own,
    since each name has its own padded size and mask; otherwise such an
    equation is refused (:func:`check_one_size`)."""

    def rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        env = env_of(trace)
        ops = operands(trace, prim, args)
        if several_sizes:
            out_avals = several_size_types(env, prim, ops, params)
        else:
            out_avals = element_abstract_eval(env, prim, ops, params, check_one_size(env, prim, ops, params))
        if check is not None:
            check(env, prim, ops, params)
        with set_current_trace(trace.parent_trace):
            vals = [o.val for o in ops] if prepare is None else prepare(env, ops, params)
            padded_params = {k: env.pad_param(v) for k, v in params.items()}
            outs, dims = run_batched(trace.axis, prim, vals, [o.bdim for o in ops], padded_params)
        return wrap_results(trace, prim, outs, dims, out_avals)

    return rule


def fill_padding(env: RaggedEnv, op: Operand, axes: Sequence[int], value: Any) -> Any:
    """``op``'s padded value with its padding along the ragged element axes
    among ``axes`` set to ``value`` (parent trace current); axes of full
    sizes have no padding."""
    which = [a for a in axes if env.is_partial(op.aval.shape[a])]
    if not which:
        return op.val
    assert op.bdim is not None
    full = get_aval(op.val)
    mask: Any = None
    for a in which:
        pos = shift(a, op.bdim)
        m = env.mask(op.aval.shape[a], op.bdim < pos)
        m = broadcast_in_dim_p.bind(m, shape=full.shape, broadcast_dimensions=tuple(sorted((op.bdim, pos))))
        mask = m if mask is None else and_p.bind(mask, m)
    fill = broadcast_in_dim_p.bind(np.asarray(value, full.dtype), shape=full.shape, broadcast_dimensions=())
    if full.weak_type:  # the padding must not make a weak value strong
        fill = convert_element_type_p.bind(fill, new_dtype=full.dtype, weak_type=True)
    return select_n_p.bind(mask, fill, op.val)


def fill_key(value: Any, dtype: Any) -> Any:
    """What a fill with ``value`` puts in a padding of ``dtype`` (a Python
    scalar, compared by ``==``); ``None`` for a value that is not a finite
    constant, whose fill is never recorded: a value keeps finite padding, since
    a derivative taken outside the ``vmap`` computes with the padded data
    (``0 * inf`` there would be NaN)."""
    if isinstance(value, Tracer):
        return None
    v = np.asarray(value, dtype)
    if v.dtype.kind in "fc" and not np.isfinite(v):
        return None
    return v.item()


def is_filled(x: Any, axes: Sequence[int], value: Any) -> bool:
    """Whether the padding of the ragged tracer ``x`` along every axis of
    ``axes`` is known to hold ``value`` (see :attr:`BatchTracer.filled`)."""
    known = x.filled if type(x) is BatchTracer else None
    if not known:
        return False
    key = fill_key(value, x.aval.dtype)
    return key is not None and all(known.get(a, None) == key and a in known for a in axes)


def record_fill(x: BatchTracer, val: Any, axes: Sequence[int], value: Any) -> None:
    """Make ``val`` (``x``'s data with its padding along ``axes`` set to
    ``value``, same batch dimension) the data of the ragged tracer ``x``: its
    padding is unspecified, so every later use may see the filled data, and
    a later fill with the same value is skipped.  Only finite values are
    recorded (see :func:`fill_key`)."""
    key = fill_key(value, x.aval.dtype)
    if key is None:
        return
    x.val = val
    # Where the padding along another axis crosses these axes it now holds ``value``.
    known = {a: k for a, k in (x.filled or {}).items() if k == key}
    known.update((a, key) for a in axes)
    x.filled = known


def refuse(prim: Primitive, ops: Sequence[Operand], env: RaggedEnv, why: str) -> ValueError:
    """The error for a ragged layout a rule does not support."""
    names = frozenset().union(*(env.names_in_shape(o.aval.shape) for o in ops))
    return ValueError(f"vmap over piles: {prim.name} {why} (element types {_types(ops)}; {env.describe(names)})")


# ---------------------------------------------------------------------------
# The dispatcher


#: Set by :mod:`plait_batching.packed`: ``try_packed(trace, prim, args,
#: params)`` computes an equation on packed values, or returns ``None`` when
#: it runs on the padded data (a hook, because packed values build on this module).
packed_dispatch: list[Callable[[BatchTrace, Primitive, Sequence[Any], dict[str, Any]], Any]] = []


def process_ragged(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Interpret ``prim`` on ``trace`` when a ragged value or size is involved:
    as a dense batch when every ragged size involved is full
    (:func:`process_full`), on packed values where :mod:`plait_batching.packed`
    chooses so (never for full sizes), else with the primitive's ragged rule
    on the padded data."""
    env = env_of(trace)
    names = _names_of(trace, env, args, params)
    full = [n for n in names if env.sizes[n].full]
    if full:
        if len(full) == len(names) and all(env.sizes[n].padded > 0 for n in names) and not _has_program(params):
            out = process_full(trace, prim, args, params, names)
            if out is not None:
                return out
        return process_ragged_padded(trace, prim, args, params)
    for try_packed in packed_dispatch:
        out = try_packed(trace, prim, args, params)
        if out is not None:
            return out
    return process_ragged_padded(trace, prim, args, params)


def _names_of(trace: BatchTrace, env: RaggedEnv, args: Sequence[Any], params: dict[str, Any]) -> frozenset[str]:
    """The ragged names of the operands' element types and of the params (reads no value)."""
    names: frozenset[str] = frozenset()
    for x in args:
        if type(x) is BatchTracer and x._trace is trace and x.ragged:
            names = names | env.names_in_shape(x.aval.shape)
    for v in params.values():
        names = names | env.names_in_params(v)
    return names


def _has_program(params: dict[str, Any]) -> bool:
    """Whether params carry a sub-program (a jaxpr, branches, a rule function),
    which only the ragged rules map over piles."""

    def program(v: Any) -> bool:
        if isinstance(v, (ClosedJaxpr, Jaxpr)) or (callable(v) and not isinstance(v, type)):
            return True
        return isinstance(v, (tuple, list)) and any(program(x) for x in v)

    return any(program(v) for v in params.values())


def process_full(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any], names: frozenset[str]
) -> Any:  # fmt: skip
    """``prim`` on ``trace`` when every ragged size it involves (``names``) is
    full: its batching rule on the data, ragged sizes in params replaced by
    their padded sizes, as a dense ``vmap`` computes (there is no padding to
    mask or fill).  The results keep their symbolic element types.  ``None``
    when the results' element types cannot be had that way (core's shape rule
    cannot prove a window fits a ragged axis, a size mixes names, or is
    negative at the padded sizes): then the ragged rule computes it."""
    env = env_of(trace)
    ops = operands(trace, prim, args)
    try:
        out_avals = element_abstract_eval(env, prim, ops, params, names)
    except (TypeError, ValueError):
        return None
    for aval in out_avals:
        for d in aval.shape:
            if env.is_ragged(d):
                at = env.full_value(d)
                if len(env.names_in(d)) > 1 or at is None or at < 0:
                    return None
    with set_current_trace(trace.parent_trace):
        # Sizes of full piles are the same in every element: their values as
        # they are (``dim_as_value`` of ``n - 3`` may be negative; a negative
        # shape was refused above).
        padded_params = {k: env.pad_param(v, clamp=False) for k, v in params.items()}
        outs, dims = run_batched(trace.axis, prim, [o.val for o in ops], [o.bdim for o in ops], padded_params)
    return wrap_results(trace, prim, outs, dims, out_avals)


def process_ragged_padded(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Interpret ``prim`` on ``trace`` with its ragged rule, on the padded data."""
    rule = ragged_rules.get(prim)
    if rule is None:
        ops = operands(trace, prim, args)
        reason = ragged_rules.unsupported_reason(prim) or "there is no rule for it yet"
        raise NotImplementedError(
            f"vmap over piles: {prim.name} is not supported on ragged values (element types {_types(ops)}): {reason}"
        )
    return rule(trace, prim, args, params)


# ---------------------------------------------------------------------------
# Sizes from batched integers


def symbolic_size(trace: BatchTrace, x: Any, what: str) -> SymbolicDim:
    """A ragged size for the batched integer scalar ``x`` used as a shape.

    Values made with it are padded to the largest of the integers, which
    must therefore be concrete (not traced by an enclosing ``jit``): a
    :class:`~plait_core.errors.ConcretizationTypeError` says so otherwise.
    Negative sizes are a ``ValueError``.  Equal integers give the same size."""
    if not (type(x) is BatchTracer and x._trace is trace):
        raise TypeError(f"{what}: expected a batched value of this vmap, got {type(x).__name__}")
    aval = x.aval
    if aval.shape != () or not dtypes.is_int(aval.dtype):
        raise TypeError(f"{what}: a size must be an integer scalar, got a batched value of type {aval.str_short()}")
    env = env_of(trace)
    with set_current_trace(trace.parent_trace):
        val = moveaxis(x.val, x.bdim, 0)
        if get_aval(val).dtype != _I32:
            val = convert_element_type_p.bind(val, new_dtype=_I32, weak_type=False)
    conc = _concrete(val)
    if conc is None:
        raise ConcretizationTypeError(
            f"{what}: a size taken from a batched integer makes a ragged value, padded to the largest of the "
            f"sizes, which must be known; but the sizes {aval.str_short()} are traced (for example by jit). "
            "Compute the sizes outside jit, or map over a Pile whose padded size is static"
        )
    if (conc < 0).any():
        raise ValueError(f"{what}: sizes must be non-negative, got the batched sizes {np.array2string(conc)}")
    size = env.size_for(val, int(conc.max()) if conc.size else 0, conc)
    return SymbolicDim.var(size.name)


def ragged_dim(n: Any) -> Any:
    """The size given by the batched integer ``n`` inside ``vmap``, usable in
    shapes (``pnp.arange(ragged_dim(n))``, ``pnp.ones((7, ragged_dim(n)))``):
    values made with it are ragged.  ``n`` not batched by a ``vmap`` is
    returned as it is.  (Once plait-core asks the trace of a traced size for
    a dimension, ``pnp.arange(n)`` does this by itself.)"""
    if type(n) is BatchTracer:
        return symbolic_size(n._trace, n, "ragged_dim")
    return n


# ---------------------------------------------------------------------------
# Entering and leaving vmap


def _fit(data: Any, axis: int, have: int, want: int) -> Any:
    """``data`` cut or zero-padded along ``axis`` to size ``want``."""
    if have == want:
        return data
    shape = get_aval(data).shape
    if have > want:
        limits = tuple(want if k == axis else s for k, s in enumerate(shape))
        return slice_p.bind(data, start_indices=(0,) * len(shape), limit_indices=limits, strides=None)
    config = tuple((0, want - have if k == axis else 0, 0) for k in range(len(shape)))
    return pad_p.bind(data, np.zeros((), get_aval(data).dtype), padding_config=config)


#: Set by :mod:`plait_batching.packed` (which builds on this module), for
#: piles stored packed: ``"enter"``: ``enter(trace, size, values, axis,
#: aval)``, the tracer of a pile's packed ``values`` (element type ``aval``);
#: ``"values"``: ``values(tracer, axis)``, a ragged result's packed values
#: (both with the parent trace current).
packed_storage_hooks: dict[str, Callable[..., Any]] = {}


def enter_pile(trace: BatchTrace, pile: Pile) -> BatchTracer:
    """What the mapped function sees for one element of ``pile``: a ragged
    value whose padding is zero, or, for a pile stored packed, a ragged value
    holding the pile's packed values (its padded data is made only if an
    operation reads it; see :mod:`plait_batching.packed`)."""
    env = env_of(trace)
    axes = pile.ragged_axes
    padded = pile.max_length
    if type(padded) is not int:
        raise TypeError(f"vmap: a Pile's padded size must be a concrete integer, got {padded}")
    packed = pile.storage == "packed"
    with set_current_trace(trace.parent_trace):
        lengths = pile.lengths
        if get_aval(lengths).dtype != _I32:
            lengths = convert_element_type_p.bind(lengths, new_dtype=_I32, weak_type=False)
        size = env.size_for(lengths, padded, _concrete(lengths), pile.capacity, pile.layout, pile.full, packed)
        if packed and not size.full:
            return _enter_packed(trace, size, pile.values, axes[0])
        if packed:  # every length is size.padded: the first B x padded rows are the elements, unpadded
            data = _full_data(pile.values, axes[0], pile.num_elements, size.padded)
            padded = size.padded
        else:
            data = pile.data
        aval = get_aval(data)
        shape = list(aval.shape[1:])
        for ax in axes:
            data = _fit(data, 1 + ax, padded, size.padded)
            shape[ax] = SymbolicDim.var(size.name)
        elt = ShapedArray(tuple(shape), aval.dtype, aval.weak_type)
        # Whatever the padding holds, the function computes from zeros there (and a
        # gradient with respect to the padded data is zero in the padding).
        data = fill_padding(env, Operand(data, 0, elt), axes, 0)
    out = BatchTracer(trace, data, 0, elt)
    out.filled = {ax: fill_key(0, elt.dtype) for ax in axes}
    return out


def _full_data(values: Any, axis: int, b: int, padded: int) -> Any:
    """Packed ``values`` whose elements all have length ``padded`` as padded data ``(B, ..., padded, ...)``."""
    shape = get_aval(values).shape
    values = _fit(values, axis, int(shape[axis]), b * padded)
    split = (*shape[:axis], b, padded, *shape[axis + 1 :])
    return moveaxis(reshape_p.bind(values, new_sizes=split, dimensions=None), axis, 0)


def _enter_packed(trace: BatchTrace, size: RaggedSize, values: Any, axis: int) -> BatchTracer:
    """The tracer of a packed pile's ``values`` (parent trace current): cut or
    padded to the size's capacity; where the lengths are traced the rows past
    their sum are zeroed (a buffer's tail may hold anything, and a dense
    layer's weight gradient sums over every row)."""
    vaval = get_aval(values)
    values = _fit(values, axis, int(vaval.shape[axis]), size.capacity)
    if size.concrete is None and size.capacity > 0:
        shape = get_aval(values).shape
        total = reduce_sum_p.bind(size.lengths, axes=(0,))
        rows = iota_p.bind(dtype=_I32, shape=shape, dimension=axis)
        valid = lt_p.bind(rows, broadcast_in_dim_p.bind(total, shape=shape, broadcast_dimensions=()))
        zero = broadcast_in_dim_p.bind(np.zeros((), vaval.dtype), shape=shape, broadcast_dimensions=())
        values = select_n_p.bind(valid, zero, values)
    elt_shape = list(vaval.shape)
    elt_shape[axis] = SymbolicDim.var(size.name)
    elt = ShapedArray(tuple(elt_shape), vaval.dtype, vaval.weak_type)
    out: BatchTracer = packed_storage_hooks["enter"](trace, size, values, axis, elt)
    return out


def ragged_result_error(trace: BatchTrace, leaf: Any, where: str, out_axes: Any) -> ValueError | None:
    """The error for a ragged result returned with an integer or ``None`` out_axes."""
    if not (type(leaf) is BatchTracer and leaf._trace is trace and leaf.ragged):
        return None
    env = env_of(trace)
    return ValueError(
        f"vmap: {where} of the function's result is ragged (element type {leaf.aval.str_short()}; "
        f"{env.describe(env.names_in_shape(leaf.aval.shape))}), but out_axes is {out_axes!r} for it; "
        "return ragged results with out_axes=pile_axis to get a Pile"
    )


def finish_pile(trace: BatchTrace, leaf: Any, where: str) -> Pile:
    """A result leaf as a pile (parent trace current): ragged values keep their
    ragged axis, others make a pile of equal lengths along their axis 0."""
    size = trace.axis.size
    try:
        aval = get_aval(leaf)
    except TypeError:
        raise TypeError(
            f"vmap: {where} of the function's result is a value of type {type(leaf).__name__}, which is not an "
            "array; out_axes=pile_axis makes piles of arrays"
        ) from None
    if not (type(leaf) is BatchTracer and leaf.ragged):
        val, bdim = trace.unpack(leaf)
        if aval.ndim == 0:
            raise ValueError(
                f"vmap: {where} of the function's result is a scalar per element ({aval.str_short()}), but "
                "out_axes=pile_axis makes a Pile, whose elements need at least one axis"
            )
        n = aval.shape[0]
        if type(n) is not int:
            raise TypeError(f"vmap: out_axes=pile_axis needs a concrete size along axis 0 of {where}, got {n}")
        data = moveaxis(val, bdim, 0) if bdim is not None else broadcast_batch(val, size, 0)
        lengths = broadcast_in_dim_p.bind(np.asarray(n, _I32), shape=(size,), broadcast_dimensions=())
        # Every length is the padded size: a full pile (if it has elements).
        return Pile._make(data, lengths, 0, full=_has_elements(size))
    env = env_of(trace)
    axes = ragged_axes(env, aval)
    if len({aval.shape[a] for a in axes}) != 1:
        sizes = ", ".join(str(aval.shape[a]) for a in axes)
        raise ValueError(
            f"vmap: {where} of the function's result has ragged axes {tuple(axes)} of different sizes ({sizes}; "
            f"element type {aval.str_short()}), but the ragged axes of a Pile share one length per element; "
            "reduce or slice the others first"
        )
    d = aval.shape[axes[0]]
    # The pile keeps the layout and capacity of the size it has (when it is one size, not 2 n).
    names = sorted(env.names_in(d))
    bare = len(names) == 1 and type(d) is SymbolicDim and d.terms == ((((names[0], 1),), 1),)
    kept = env.sizes[names[0]] if bare else None
    layout, capacity = (kept.layout, kept.capacity) if kept is not None else (None, None)
    full = env.full_value(d) is not None and _has_elements(size)  # a result of full sizes has no padding
    if kept is not None and kept.packed_storage and len(axes) == 1 and type(size) is int:
        # A size of a pile stored packed: the result is stored packed too.
        ax = axes[0]
        if full:  # (its padded data has no padding: the values are a reshape of it)
            val, bdim = leaf.val, leaf.bdim
            rows = size * kept.padded
            elt = tuple(s for k, s in enumerate(get_aval(val).shape) if k != bdim)
            merged = (*elt[:ax], rows, *elt[ax + 1 :])
            values = reshape_p.bind(moveaxis(val, bdim, ax), new_sizes=merged, dimensions=None)
        else:
            values, rows = packed_storage_hooks["values"](leaf, ax), kept.capacity
        return Pile._make_packed(values, env.lengths(d), ax, kept.padded, layout, rows, full)
    val, bdim = leaf.val, leaf.bdim  # (read only here: a packed result's padded data is made when read)
    if not is_filled(leaf, axes, 0):
        val = fill_padding(env, Operand(val, bdim, aval), axes, 0)
    data = moveaxis(val, bdim, 0)
    return Pile._make(data, env.lengths(d), axes[0] if len(axes) == 1 else tuple(axes), layout, capacity, full)


def _has_elements(size: Dim) -> bool:
    """Whether a vmap of ``size`` elements has any (a full pile has at least one)."""
    return type(size) is int and size > 0


# ---------------------------------------------------------------------------
# Helpers of the rules that move entries along a ragged axis


def derived_size(env: RaggedEnv, lengths: Any, padded: int) -> SymbolicDim:
    """The ragged size of values whose lengths are ``lengths`` (an ``int32[B]``
    value of the parent trace) and whose padded size is ``padded``: an existing
    size when it has the same lengths (the same value, or equal concrete
    lengths) and the same padded size, else a fresh name.  Used where a result's
    size would mix several names (concatenating piles of different lengths),
    which a value may not.  A size with equal lengths but another padded size
    stays a different size (its values' padded data has another shape), so
    combining with it is refused; pad such piles to one size."""
    conc = _concrete(lengths)
    for s in env.sizes.values():
        if s.padded != padded:
            continue
        if s.lengths is lengths or (conc is not None and s.concrete is not None and np.array_equal(s.concrete, conc)):
            return SymbolicDim.var(s.name)
    name = f"_pile{next(_fresh_names)}"
    env.sizes[name] = RaggedSize(name, lengths, padded, conc, env.capacity_of(padded, conc))
    return SymbolicDim.var(name)


def concrete_sizes(env: RaggedEnv, dims: Sequence[Dim]) -> list[np.ndarray] | None:
    """Each of ``dims`` evaluated for every element (``int64[B]``) when the
    lengths of every ragged size they mention are concrete, else ``None``."""
    names = sorted(frozenset().union(*(env.names_in(d) for d in dims)))
    lengths: list[np.ndarray] = []
    for n in names:
        concrete = env.sizes[n].concrete
        if concrete is None:
            return None
        lengths.append(concrete)
    if not lengths:
        return None
    at = [{n: int(c[b]) for n, c in zip(names, lengths)} for b in range(len(lengths[0]))]
    return [np.array([int(evaluate_dim(d, e)) for e in at], np.int64) for d in dims]


def check_true_sizes(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], in_dim: Dim, out_dim: Dim, exact: Callable[[int], int],
    what: str,
) -> None:  # fmt: skip
    """Refuse when, for the concrete lengths, the ragged size ``out_dim`` (a
    polynomial in the lengths, which plait's symbolic sizes take to be at least
    1) is not what ``prim`` gives an element whose ``in_dim`` is its true size
    (``exact(size)``; negative when the primitive would reject the element).
    ``what`` names the axis.  Traced lengths cannot be checked."""
    known = concrete_sizes(env, (in_dim, out_dim))
    if known is None:
        return
    for size, got in zip(known[0].tolist(), known[1].tolist()):
        want = exact(size)
        if want != got or want < 0:
            true = "is rejected (a negative size)" if want < 0 else f"has size {want}"
            raise refuse(
                prim, ops, env,
                f"along {what}: for an element of true size {size} the result {true}, but the result's ragged "
                f"size {out_dim} gives {got} (ragged sizes are polynomials in the lengths, taken to be at least 1)",
            )  # fmt: skip
