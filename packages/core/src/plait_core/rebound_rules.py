"""The rules of a custom-rule call that an interpreter binds again with sizes.

Some interpreters keep a custom-rule call (``custom_jvp_call``,
``custom_vjp_call``, ``custom_ivjp_call``) a call: they bind it again, on the
parent trace, around the call's function as they interpret it, with
*leading operands* in front of the original ones: constants the
interpreted body hoisted, then the interpreter's *sizes*, one value each
(``mask``: the logical sizes; ``vmap`` over piles: the lengths of the
piles), which may be traced.  The user's rules must follow, so that a
transformation applied outside the interpreter (``grad`` outside ``mask``)
still uses them.  It calls them later, when the interpreter is gone, so each
wrapped rule runs the user's rule under a *fresh* instance of the
interpreter, rebuilt from the sizes among the values it receives:

* :class:`ReboundJvpJaxprFun` (``jvp_jaxpr_fun``) stages the user's JVP
  jaxpr under the interpreter;
* :class:`ReboundFwdJaxprThunk` (``fwd_jaxpr_thunk``) stages the user's
  forward jaxpr under the interpreter, returning the sizes after the
  residuals, so that :class:`ReboundBwd` (``bwd``) can rebuild the
  interpreter from them;
* :class:`ReboundIvjp` (``ivjp``) finds the sizes among its leading operands.

What belongs to one interpreter is a :class:`RuleFrame`, one per re-bound
call: how many leading operands there are (the last ones are the sizes), how
to stage a jaxpr under the interpreter, how to run a function under a fresh
interpreter trace, zeros of a cotangent type, and how to hand values and
cotangents back.  :func:`rebind_custom_call` binds a call again with its
rules wrapped for a frame.

Whatever the interpreter:

* differentiating with respect to a leading operand, a value the custom
  function closes over, is the ``TypeError`` of
  :func:`~plait_core.custom_derivatives.closure_differentiation_error`;
* zero output cotangents (``None``) reach the user's backward rule as the
  frame's zeros, or, with ``symbolic_zeros``, as ``None`` (the user's rule
  then gets a :class:`~plait_core.custom_derivatives.SymbolicZero`);
* the wrapped rules give ``None`` cotangents to the leading operands;
* what a wrapped rule stages is remembered per (wrapped rule, flags), so
  that differentiating the call twice gives the same jaxpr (and hits the
  caches keyed on it), unless its constants hold tracers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from plait_core.abstract import ShapedArray, to_tangent_type
from plait_core.custom_derivatives import FwdJaxpr, JvpJaxpr, closure_differentiation_exception
from plait_core.jaxpr import ClosedJaxpr
from plait_core.primitive import Primitive
from plait_core.primitives.calls import (
    StagingCache,
    custom_ivjp_call_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
    hashable_key,
)

__all__ = [
    "REBOUND_PRIMITIVES",
    "ReboundBwd",
    "ReboundFwdJaxprThunk",
    "ReboundIvjp",
    "ReboundJvpJaxprFun",
    "ReboundRule",
    "RuleFrame",
    "rebind_custom_call",
    "rebound_rules",
    "rule_name",
]

TraceT = TypeVar("TraceT")

#: The custom-rule calls whose rules :func:`rebound_rules` wraps.
REBOUND_PRIMITIVES = (custom_jvp_call_p, custom_vjp_call_p, custom_ivjp_call_p)


class RuleFrame(ABC, Generic[TraceT]):
    """What one interpreter does for the rules of one call it binds again.

    The re-bound call's operands are ``(*leading, *operands)``: ``num_lead``
    leading operands, of which the last ``num_sizes`` are the sizes, then the
    original call's operands in the interpreter's representation (padded
    data, say).  Several methods take ``origin``, one entry per value: the
    index of the original operand the value is (or is the tangent of), or
    ``None`` for a value the re-bound call made (an output, a residual, an
    output cotangent), always in the interpreter's representation.

    ``label`` names the wrapped rules in their ``repr``; ``where`` and
    ``sizes_noun`` speak for the interpreter in error messages."""

    __slots__ = ("num_lead", "num_sizes")

    label: ClassVar[str]
    where: ClassVar[str]
    sizes_noun: ClassVar[str]

    def __init__(self, num_lead: int, num_sizes: int) -> None:
        self.num_lead, self.num_sizes = num_lead, num_sizes

    def sizes_of(self, lead: Sequence[Any]) -> list[Any]:
        """The sizes among the leading operands ``lead``."""
        return list(lead[self.num_lead - self.num_sizes : self.num_lead])

    @abstractmethod
    def stage(self, closed: ClosedJaxpr, origin: Sequence[int | None], with_sizes: bool) -> ClosedJaxpr:
        """``closed`` (a jaxpr of the original types) interpreted, as a jaxpr over
        ``(*leading operands, *inputs in the interpreter's representation)``
        returning its outputs so represented, then the sizes if ``with_sizes``."""

    @abstractmethod
    def run(
        self, sizes: Sequence[Any], fun: Callable[..., Any], values: Sequence[Any], avals: Sequence[ShapedArray],
        origin: Sequence[int | None],
    ) -> tuple[TraceT, Any]:  # fmt: skip
        """``fun`` under a fresh trace of the interpreter with these ``sizes``,
        on ``values`` (so represented, of original types ``avals``; ``None``
        stays ``None``).  Returns the trace and what ``fun`` returned, whose
        values :meth:`operand_values` and :meth:`cotangents` hand back."""

    @abstractmethod
    def zeros(self, aval: ShapedArray) -> Any:
        """Zeros of a cotangent of an output of type ``aval``, so represented."""

    @abstractmethod
    def operand_values(self, trace: TraceT, xs: Sequence[Any]) -> list[Any]:
        """Values for the original operands (``None`` stays ``None``), made by a
        rule run under ``trace``, in the interpreter's representation."""

    @abstractmethod
    def cotangents(self, trace: TraceT, cts: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
        """Cotangents for the original operands (of types ``avals``; ``None``
        stays ``None``), made by a rule run under ``trace``, in the
        interpreter's representation with their padding zero."""


def rule_name(rule: Any) -> str:
    """The custom function's name, as a (possibly wrapped) rule knows it."""
    for path in (("name",), ("spec", "name"), ("inner", "name")):
        obj = rule
        for attr in path:
            obj = getattr(obj, attr, None)
        if isinstance(obj, str):
            return obj
    return repr(rule)


_memo = StagingCache(128)


def _per_flags(owner: Any, flags: Sequence[bool] | None, make: Callable[[], tuple[Any, ClosedJaxpr]]) -> Any:
    """``make()`` once per (rule, flags): it returns the value to remember and
    the jaxpr it staged (not remembered when its constants hold tracers)."""
    key = hashable_key(owner, None if flags is None else tuple(bool(b) for b in flags))
    hit = _memo.get(key)
    if hit is None:
        hit, staged = make()
        _memo.put(key, hit, staged.consts)
    return hit


class ReboundRule:
    """What every wrapped rule knows: the user's rule (``inner``), the
    :class:`RuleFrame` of its call, and the original operand and output types."""

    __slots__ = ("__weakref__", "frame", "in_avals", "inner", "name", "out_avals")

    def __init__(
        self, inner: Any, frame: RuleFrame[Any], in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]
    ) -> None:
        self.inner, self.frame, self.name = inner, frame, rule_name(inner)
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)

    def __repr__(self) -> str:
        return f"{self.frame.label}({self.inner!r})"

    def _own_flags(self, flags: Sequence[bool] | None, kind: str) -> list[bool] | None:
        """The flags of the original operands, after checking that no leading
        operand is differentiated."""
        if flags is None:
            return None
        if any(flags[: self.frame.num_lead]):
            raise closure_differentiation_exception(kind, self.name)
        return list(flags)[self.frame.num_lead :]


class ReboundJvpJaxprFun(ReboundRule):
    """``jvp_jaxpr_fun`` of a re-bound ``custom_jvp_call``: the user's JVP jaxpr
    staged under the interpreter (tangents represented like their primals)."""

    __slots__ = ()

    def __call__(self, in_nonzeros: Sequence[bool]) -> JvpJaxpr:
        nz = self._own_flags(in_nonzeros, "custom_jvp")
        assert nz is not None

        def make() -> tuple[JvpJaxpr, ClosedJaxpr]:
            jj = self.inner(nz)
            origin = [*range(len(nz)), *(i for i, z in enumerate(nz) if z)]
            body = self.frame.stage(jj.jaxpr, origin, False)
            return JvpJaxpr(body, jj.out_nonzeros), body

        return _per_flags(self, nz, make)  # type: ignore[no-any-return]


class ReboundFwdJaxprThunk(ReboundRule):
    """``fwd_jaxpr_thunk`` of a re-bound ``custom_vjp_call``: the user's forward
    jaxpr staged under the interpreter, returning the sizes after the
    residuals.  ``latest`` is the user's :class:`FwdJaxpr` of the latest call."""

    __slots__ = ("latest",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.latest: FwdJaxpr | None = None

    def __call__(self, in_perturbed: Sequence[bool] | None = None) -> FwdJaxpr:
        pert = self._own_flags(in_perturbed, "custom_vjp")

        def make() -> tuple[tuple[FwdJaxpr, FwdJaxpr], ClosedJaxpr]:
            fj = self.inner(pert)
            body = self.frame.stage(fj.jaxpr, range(len(self.in_avals)), True)
            return (fj, FwdJaxpr(body, fj.num_res + self.frame.num_sizes, fj.out_tree, fj.res_tree)), body

        inner, out = _per_flags(self, pert, make)
        self.latest = inner
        return out  # type: ignore[no-any-return]


class ReboundBwd:
    """``bwd`` of a re-bound ``custom_vjp_call``: the user's backward rule under
    the interpreter, rebuilt from the sizes the forward jaxpr of ``thunk``
    returned among the residuals."""

    __slots__ = ("__weakref__", "inner", "symbolic_zeros", "thunk")

    def __init__(self, inner: Callable[..., list[Any]], thunk: ReboundFwdJaxprThunk, symbolic_zeros: bool) -> None:
        self.inner, self.thunk, self.symbolic_zeros = inner, thunk, symbolic_zeros

    def __repr__(self) -> str:
        return f"{self.thunk.frame.label}({self.inner!r})"

    def __call__(self, *res_and_cts: Any) -> list[Any]:
        t, frame = self.thunk, self.thunk.frame
        if t.latest is None:
            t()
        fj = t.latest
        assert fj is not None
        nres, k = fj.num_res, frame.num_sizes
        res_avals = list(fj.jaxpr.out_avals[len(t.out_avals) :])
        ct_avals = [to_tangent_type(a) for a in t.out_avals]
        cts = [
            frame.zeros(a) if c is None and not self.symbolic_zeros else c
            for c, a in zip(res_and_cts[nres + k :], ct_avals)
        ]
        values = [*res_and_cts[:nres], *cts]
        trace, result = frame.run(
            res_and_cts[nres : nres + k], self.inner, values, [*res_avals, *ct_avals], [None] * len(values)
        )
        return [None] * frame.num_lead + frame.cotangents(trace, result, t.in_avals)


class ReboundIvjp(ReboundRule):
    """``ivjp`` of a re-bound ``custom_ivjp_call``: the user's rule under the
    interpreter, rebuilt from the sizes among the leading operands."""

    __slots__ = ()

    def __call__(self, xs: Sequence[Any], ys: Sequence[Any], dys: Sequence[Any] | None) -> tuple[list[Any], list[Any]]:
        frame = self.frame
        lead = list(xs[: frame.num_lead])
        sizes = frame.sizes_of(lead)
        if any(s is None for s in sizes):
            raise ValueError(
                f"{frame.where}: the inverse-VJP rule of the custom_ivjp function {self.name} needs "
                f"{frame.sizes_noun}, but they are not available (a bug in the program being inverted)"
            )
        nx, ny = len(self.in_avals), len(self.out_avals)
        ct_avals = [to_tangent_type(a) for a in self.out_avals]
        given = [] if dys is None else [frame.zeros(a) if d is None else d for d, a in zip(dys, ct_avals)]
        values = [*xs[frame.num_lead :], *ys, *given]
        avals = [*self.in_avals, *self.out_avals, *ct_avals[: len(given)]]

        def run(*ins: Any) -> Any:
            return self.inner(list(ins[:nx]), list(ins[nx : nx + ny]), None if dys is None else list(ins[nx + ny :]))

        trace, (new_xs, dxs) = frame.run(sizes, run, values, avals, [*range(nx), *[None] * (len(values) - nx)])
        out_xs = frame.operand_values(trace, new_xs)
        return [*lead, *out_xs], [None] * frame.num_lead + frame.cotangents(trace, dxs, self.in_avals)


def rebound_rules(prim: Primitive, frame: RuleFrame[Any], params: dict[str, Any]) -> dict[str, Any]:
    """The rule params of a call of ``prim`` (one of :data:`REBOUND_PRIMITIVES`)
    with params ``params``, wrapped for ``frame``."""
    closed: ClosedJaxpr = params["call_jaxpr"]
    avals = (closed.in_avals, closed.out_avals)
    if prim is custom_jvp_call_p:
        return {"jvp_jaxpr_fun": ReboundJvpJaxprFun(params["jvp_jaxpr_fun"], frame, *avals)}
    if prim is custom_vjp_call_p:
        thunk = ReboundFwdJaxprThunk(params["fwd_jaxpr_thunk"], frame, *avals)
        return {"fwd_jaxpr_thunk": thunk, "bwd": ReboundBwd(params["bwd"], thunk, params["symbolic_zeros"])}
    if prim is custom_ivjp_call_p:
        return {"ivjp": ReboundIvjp(params["ivjp"], frame, *avals)}
    raise ValueError(f"rebound_rules: {prim.name} is not a custom-rule call whose rules can be wrapped")


def rebind_custom_call(
    prim: Primitive, frame: RuleFrame[Any], body: ClosedJaxpr, lead: Sequence[Any], operands: Sequence[Any],
    params: dict[str, Any], rules: dict[str, Any] | None = None,
) -> list[Any]:  # fmt: skip
    """Bind the custom-rule call ``prim`` (params ``params``) again on the
    current trace: over ``(*lead, *operands)``, with ``body`` (a const-free
    jaxpr over them) as its ``call_jaxpr`` and its rules wrapped for
    ``frame`` (:func:`rebound_rules`, or the given ``rules``)."""
    new = dict(params, call_jaxpr=body, num_consts=len(lead) + params["num_consts"])
    new.update(rebound_rules(prim, frame, params) if rules is None else rules)
    return list(prim.bind(*lead, *operands, **new))
