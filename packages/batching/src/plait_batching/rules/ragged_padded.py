"""Ragged rules from core's padded semantics: ``vmap`` of the masked rule.

Core defines what a primitive does on padded data once
(:data:`plait_core.padded.padded_rules`: reductions fill the padding with
their identity, ``dot_general`` zeroes a contracted padded axis, ``sort``
puts the padding last, ...), against an environment of logical sizes.  A
pile's environment, :class:`PileElementEnv`, has one logical size per
element: the rule runs on one element's padded data under a plain batching
trace of this ``vmap``'s size, where each logical size is the batched
lengths, so the ordinary batching rules make the rule's operations act on
every element at once.  Filling the padding (the commonest operation) takes
the shortcut of :func:`~plait_batching.ragged.fill_padding`, which builds
the mask in the data's own layout, and is tracked per value: the padding of
a ragged value is unspecified, so once an operand is filled with a finite
value its filled data replaces it for every later use (``e`` filled with 0
for ``sum(e)`` is what ``e / sum(e)`` then reads, so XLA fuses the fill with
the producer of ``e``), and a fill the value already has is skipped (a pile
enters ``vmap`` with zero padding).  Non-finite fills (``-inf`` for ``max``)
replace nothing: a derivative taken outside the ``vmap`` computes with the
padded data, where ``0 * inf`` would be NaN.

Rules core registers ``per_axis`` let ragged axes of different sizes meet in
one equation (``n x m`` scores between two piles); the others involve one
ragged size at most (:func:`~plait_batching.ragged.check_one_size`).

Core's ``nested`` rules (calls, custom-rule calls, ``cond``, ``while``,
``scan``) carry sub-programs, which only this interpreter can map over the
piles; they run on the parent trace with :class:`PileEnv`, whose values are
every element's padded data with the batch in front (or unbatched), whose
logical sizes are the lengths (``int32[B]``) and whose ``padded_jaxpr`` maps
a jaxpr over the piles (:func:`~plait_batching.ragged_jaxpr.ragged_call_jaxpr`).
A rule's ``check`` (core's refusals) runs before the element types are
computed, whose error would say less.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_batching import fill_facts
from plait_batching.moves import broadcast_batch, moveaxis
from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    RaggedRule,
    check_one_size,
    check_true_sizes,
    element_abstract_eval,
    env_of,
    fill_padding,
    is_filled,
    names_involved,
    operands,
    padded_rule,
    ragged_axes,
    record_fill,
    refuse,
    several_size_types,
    wrap_results,
)
from plait_batching.ragged_jaxpr import RaggedFrame, ragged_call_jaxpr
from plait_batching.registries import ragged_rules
from plait_batching.rules.ragged_custom_calls import PileFrame
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_core import ClosedJaxpr, Primitive, ShapedArray, Tracer, get_aval, ops, set_current_trace
from plait_core.dims import Dim, is_constant_dim
from plait_core.padded import PaddedEnv, padded_rules
from plait_core.primitives.linalg import conv_general_dilated_p, dilated_size
from plait_core.primitives.structural import pad_p
from plait_core.trace import transformation

__all__ = ["PileElementEnv", "PileEnv", "from_padded_rule"]


class PileEnv(PaddedEnv):
    """The logical sizes of a pile's elements, seen from the parent trace of
    ``trace`` (the ``vmap`` over piles): a ragged size's logical value is its
    lengths, ``int32[B]``, and a value is every element's padded data with
    the batch in front, or unbatched."""

    __slots__ = ("_frames", "ragged", "trace")

    noun = "ragged"

    def __init__(self, trace: BatchTrace) -> None:
        self.trace, self.ragged = trace, env_of(trace)
        self._frames: dict[int, tuple[RaggedFrame, list[bool]]] = {}

    def is_padded(self, d: Dim) -> bool:
        return self.ragged.is_ragged(d)

    def padded_dim(self, d: Dim) -> int:
        return self.ragged.padded(d)  # type: ignore[return-value]  # symbolic only under an enclosing mask

    def value(self, d: Dim, dtype: Any = None) -> Any:
        values = self.ragged.value(d)
        return values if dtype is None else ops.convert(values, np.dtype(dtype))

    def size(self, d: Dim, dtype: Any = None) -> Any:
        lengths = self.ragged.lengths(d)  # memoised for the whole vmap
        return lengths if dtype is None else ops.convert(lengths, np.dtype(dtype))

    def fill(self, x: Any, aval: ShapedArray, axes: Sequence[int] | None, value: Any) -> Any:
        if get_aval(x).ndim == aval.ndim:  # the same for every element, so not ragged
            return x
        return fill_padding(self.ragged, Operand(x, 0, aval), range(aval.ndim) if axes is None else axes, value)

    def unsupported(self, prim: Primitive, avals: Sequence[ShapedArray], why: str) -> Exception:
        names = frozenset().union(*(self.ragged.names_in_shape(a.shape) for a in avals))
        types = ", ".join(a.str_short() for a in avals)
        return ValueError(f"vmap over piles: {prim.name} {why} (element types {types}; {self.ragged.describe(names)})")

    def padded_jaxpr(self, closed: ClosedJaxpr, like: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[Any]]:
        batched = [t.ndim > a.ndim for t, a in zip(like, closed.in_avals)]
        body, lead, frame = ragged_call_jaxpr(self.trace, closed, batched)
        self._frames[id(body)] = frame, batched
        return body, lead

    def carried(self, x: Any, aval: ShapedArray) -> Any:
        # The mapped jaxprs return every result batched.
        return broadcast_batch(x, self.trace.axis.size, 0) if get_aval(x).ndim == aval.ndim else x

    def rule_frame(self, body: ClosedJaxpr, lead: Sequence[Any], like: Sequence[ShapedArray]) -> PileFrame:
        return PileFrame(*self._frames[id(body)])


class PileElementEnv(PileEnv):
    """The logical sizes of one element of a pile, seen from ``inner``, a plain
    batching trace over the pile's elements: a ragged size's logical value is
    its lengths, batched."""

    __slots__ = ("inner", "origin")

    def __init__(self, trace: BatchTrace, inner: BatchTrace, origin: dict[int, BatchTracer]) -> None:
        super().__init__(trace)
        #: The ragged operand of the equation each operand of the rule (by ``id``) stands for.
        self.inner, self.origin = inner, origin

    def sums_as_zero(self, x: Any, aval: ShapedArray, axes: Sequence[int]) -> bool:
        outer = self.origin.get(id(x))
        if outer is None or self.inner.unpack(x)[0] is not outer.val:  # another operand's fill replaced its data
            return False
        return fill_facts.sums_as_zero(outer, [a for a in axes if self.ragged.is_ragged(aval.shape[a])])

    def fill_rows(self, x: Any, aval: ShapedArray, axes: Sequence[int], value: Any) -> Any:
        """Core's fill of the rows a reduction reads; a ``-inf`` fill of an
        operand is remembered as its :class:`~plait_batching.fill_facts.Alt`
        (reused by a second maximum of the same value)."""
        outer = self.origin.get(id(x))
        val, bdim = self.inner.unpack(x)
        if outer is None or bdim is None or outer.bdim != bdim or val is not outer.val:
            return PaddedEnv.fill_rows(self, x, aval, axes, value)
        ragged = [a for a in axes if self.ragged.is_ragged(aval.shape[a])]
        alt = fill_facts.alt_of(outer, ragged, value)
        if alt is not None:
            return BatchTracer(self.inner, alt.tracer().val, bdim)
        out = PaddedEnv.fill_rows(self, x, aval, axes, value)
        fill_facts.record_alt(outer, self.inner.unpack(out)[0], ragged, value)
        return out

    def value(self, d: Dim, dtype: Any = None) -> Any:
        return self._per_element(PileEnv.value, d, dtype)

    def size(self, d: Dim, dtype: Any = None) -> Any:
        return self._per_element(PileEnv.size, d, dtype)

    def _per_element(self, of: Any, d: Dim, dtype: Any) -> Any:
        """``of(self, d, dtype)`` (the batch-level answer) as a value of the element trace."""
        if is_constant_dim(d):
            return int(d) if dtype is None else np.asarray(int(d), dtype)
        with set_current_trace(self.inner.parent_trace):
            values = of(self, d, dtype)
        return BatchTracer(self.inner, values, 0)

    def valid_vector(self, n: int, d: Dim) -> Any:
        with set_current_trace(self.inner.parent_trace):
            mask = self.ragged.mask(d, True)  # (B, n), memoised for the whole vmap
        return BatchTracer(self.inner, mask, 0)

    def fill(self, x: Any, aval: ShapedArray, axes: Sequence[int] | None, value: Any) -> Any:
        """The shortcut of :func:`~plait_batching.ragged.fill_padding`; a fill of
        an operand of the equation is skipped when its padding is known to hold
        ``value`` already, else the filled data replaces the operand's (see
        :func:`~plait_batching.ragged.record_fill`)."""
        val, bdim = self.inner.unpack(x)
        if bdim is None:  # the same for every element, so not ragged
            return x
        if isinstance(value, Tracer):  # a traced fill value (pad's): the generic fill
            return PaddedEnv.fill(self, x, aval, axes, value)
        which = [a for a in (range(aval.ndim) if axes is None else axes) if self.ragged.is_ragged(aval.shape[a])]
        if not which:
            return x
        outer = self.origin.get(id(x))
        if outer is not None and is_filled(outer, which, value):
            # Filled before this equation (x's data is the filled one), or by this rule through another operand
            # that stands for the same value (``dot(e, e)``): then the recorded data is the filled one.
            if val is outer.val:
                return x
            if outer.bdim == bdim:
                return BatchTracer(self.inner, outer.val, bdim)
        with set_current_trace(self.inner.parent_trace):
            out = fill_padding(self.ragged, Operand(val, bdim, aval), which, value)
        if outer is not None and outer.bdim == bdim:
            record_fill(outer, out, which, value)
        return BatchTracer(self.inner, out, bdim)


#: ``check(env, prim, operands, params, result types)``: refuse what the padded rule cannot do for piles.
Check = Callable[[RaggedEnv, Primitive, Sequence[Operand], dict[str, Any], Sequence[ShapedArray]], None]


#: ``types(trace, prim, operands, params)``: the element types of the results, where a pile's differ from core's.
Types = Callable[[BatchTrace, Primitive, Sequence[Operand], dict[str, Any]], list[ShapedArray]]


def from_padded_rule(prim: Primitive, check: Check | None = None, types: Types | None = None) -> RaggedRule:
    """The ragged rule of ``prim``: core's padded rule under a batching trace
    (see the module doc); ``check`` refuses layouts a pile cannot have (a
    result size that is wrong for some concrete lengths); ``types`` computes
    the results' element types instead of the primitive's shape rule."""
    core_rule = padded_rules[prim]
    per_axis = padded_rules.is_per_axis(prim)
    pre_check = padded_rules.check_of(prim)

    def rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        env = env_of(trace)
        ops_ = operands(trace, prim, args)
        if pre_check is not None:
            pre_check(PileEnv(trace), [o.aval for o in ops_], params)
        if types is not None:
            out_avals = types(trace, prim, ops_, params)
        elif per_axis:
            out_avals = several_size_types(env, prim, ops_, params)
        else:
            out_avals = element_abstract_eval(env, prim, ops_, params, check_one_size(env, prim, ops_, params))
        if check is not None:
            check(env, prim, ops_, params, out_avals)
        inner = BatchTrace(AxisData(None, trace.axis.size), trace.parent_trace)
        origin: dict[int, BatchTracer] = {}
        with transformation(inner):
            vals: list[Any] = []
            for o, arg in zip(ops_, args):
                if o.bdim is None:
                    vals.append(o.val)
                    continue
                v = BatchTracer(inner, o.val, o.bdim)
                if type(arg) is BatchTracer and arg.ragged:
                    origin[id(v)] = arg
                vals.append(v)
            out = core_rule(PileElementEnv(trace, inner, origin), vals, [o.aval for o in ops_], **params)
            results = [inner.unpack(v) for v in (out if prim.multiple_results else [out])]
        wrapped = wrap_results(trace, prim, [v for v, _ in results], [d for _, d in results], out_avals)
        if not prim.multiple_results and origin:
            fill_facts.tag_reduction(trace, prim, args, params, wrapped)
        return wrapped

    rule.__name__ = f"{prim.name}_ragged_rule"
    return rule


def from_nested_rule(prim: Primitive) -> RaggedRule:
    """The ragged rule of ``prim``, whose core rule interprets sub-programs:
    run on the parent trace with :class:`PileEnv` (see the module doc)."""
    core_rule = padded_rules[prim]
    one_size = prim.family == "control_flow"  # a loop's carries and a cond's branches keep one ragged size

    def rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        env = env_of(trace)
        ops_ = operands(trace, prim, args)
        names = check_one_size(env, prim, ops_, params) if one_size else names_involved(env, ops_, params)
        out_avals = element_abstract_eval(env, prim, ops_, params, names)
        with set_current_trace(trace.parent_trace):
            vals = [o.val if o.bdim is None else moveaxis(o.val, o.bdim, 0) for o in ops_]
            outs = core_rule(PileEnv(trace), vals, [o.aval for o in ops_], **params)
            dims = [0 if get_aval(v).ndim > a.ndim else None for v, a in zip(outs, out_avals)]
        return wrap_results(trace, prim, outs, dims, out_avals)

    rule.__name__ = f"{prim.name}_ragged_rule"
    return rule


def _checked_passthrough(prim: Primitive) -> RaggedRule:
    """A passthrough rule with core's check first."""
    check = padded_rules.check_of(prim)
    assert check is not None

    def rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        check(PileEnv(trace), [o.aval for o in operands(trace, prim, args)], params)
        return _passthrough(trace, prim, args, params)

    return rule


_passthrough = fill_facts.with_facts(padded_rule(several_sizes=True))


def _check_pad(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any], out: Sequence[ShapedArray]
) -> None:
    """A ragged axis of ``pad``'s result must have its polynomial size for every
    concrete length (interior or negative padding of an element of length 0
    is not what the polynomial says)."""
    x = ops[0]
    for a in ragged_axes(env, x.aval):
        lo, hi, interior = params["padding_config"][a]

        def size(n: int, lo: int = lo, hi: int = hi, interior: int = interior) -> int:
            return lo + hi + n + max(n - 1, 0) * interior

        check_true_sizes(env, prim, ops, x.aval.shape[a], out[0].shape[a], size, f"the ragged axis {a}")


def _check_conv_sizes(
    env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any], out: Sequence[ShapedArray]
) -> None:
    """The output's ragged size along a spatial axis (XLA's formula on the
    length) must be the true size for every concrete length (an element
    shorter than the window has none), and the window must fit the padded size.
    Only piles know their lengths when they trace, hence a check of their own."""
    lhs, rhs = ops
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    for ld, rd, od, s, ldil, rdil, (lo, hi) in zip(
        lhs_spec[2:], rhs_spec[2:], out_spec[2:], params["window_strides"], params["lhs_dilation"],
        params["rhs_dilation"], params["padding"],
    ):  # fmt: skip
        n = lhs.aval.shape[ld]
        if not env.is_ragged(n):
            continue
        window = int(dilated_size(rhs.aval.shape[rd], rdil))

        def size(m: int, ldil: int = ldil, lo: int = lo, hi: int = hi, s: int = s, window: int = window) -> int:
            padded = int(dilated_size(m, ldil)) + lo + hi
            return (padded - window) // s + 1 if padded >= window else 0

        check_true_sizes(env, prim, ops, n, out[0].shape[od], size, f"the ragged spatial dimension {ld} of its lhs")
        if int(env.padded(out[0].shape[od], clamp=False)) < 0:
            raise refuse(prim, ops, env, (
                f"has a window of size {window} along the ragged spatial dimension {ld} of its lhs, longer than "
                f"the padded size {env.padded(n)} there (with padding ({lo}, {hi}))"
            ))  # fmt: skip


_CHECKS: dict[Primitive, Check] = {pad_p: _check_pad, conv_general_dilated_p: _check_conv_sizes}

for _prim, _ in padded_rules.items():
    if padded_rules.is_nested(_prim):
        ragged_rules[_prim] = from_nested_rule(_prim)
    elif not padded_rules.is_passthrough(_prim):
        ragged_rules[_prim] = from_padded_rule(_prim, _CHECKS.get(_prim))
    elif padded_rules.check_of(_prim) is not None:
        ragged_rules[_prim] = _checked_passthrough(_prim)
    else:
        # A passthrough rule is the batching rule on the padded data with padded params: run that directly.
        ragged_rules[_prim] = _passthrough
