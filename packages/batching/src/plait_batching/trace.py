"""The batching interpreter: a trace whose values carry a batch dimension.

A :class:`BatchTracer` stands for ``axis.size`` values at once: its ``val``
is one array of the parent trace holding all of them, stacked along the
dimension ``bdim``.  Values that are the same for every element of the batch
are not wrapped at all: they are plain values of the parent trace (constants
to this one), so nothing is ever broadcast until an operation needs it.

:meth:`BatchTrace.process_primitive` unwraps its own tracers, looks the
primitive's rule up in :data:`~plait_batching.registries.batching_rules` and
runs it with the parent trace current, so the rule's own operations are
interpreted one level down.  A primitive none of whose operands is batched is
simply bound on the parent, except for the named-axis collectives (which may
refer to this vmap's axis) and higher-order primitives whose bodies use this
vmap's axis name.

Inside ``vmap`` over piles, a primitive with a ragged operand, or whose
params mention one of this vmap's ragged sizes, goes to its ragged rule
instead (:func:`plait_batching.ragged.process_ragged`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

from plait_batching.axis_use import params_use_axis
from plait_batching.registries import always_run, batching_rules
from plait_core import ClosedJaxpr, Primitive, ShapedArray, Trace, Tracer, get_aval, set_current_trace
from plait_core.dims import Dim

#: The families whose primitives carry jaxprs in their params.
_HIGHER_ORDER_FAMILIES = frozenset({"control_flow", "call"})


class AxisData(NamedTuple):
    """What a batching rule knows of the vmap it works for: the axis ``name``
    (``None`` when unnamed), its ``size`` and the ``spmd_axis_name`` (kept for
    API compatibility; it has no effect without a device mesh)."""

    name: Hashable | None
    size: Dim
    spmd_name: Any = None


class BatchTracer(Tracer):
    """``axis.size`` values stacked along dimension ``bdim`` of ``val``.

    A *ragged* tracer (``ragged`` true, inside ``vmap`` over piles) is given
    its element type ``aval``, whose shape has symbolic sizes along its ragged
    axes (see :mod:`plait_batching.ragged`); ``val`` holds the elements padded
    along those axes.  Its padding is unspecified, so a rule that fills it
    may replace ``val`` by the filled data, and ``filled`` records, per ragged
    element axis, the value its padding is known to hold (so a later fill
    with the same value is skipped).  ``derived`` may hold what else is known
    of its values (other data whose padding is a maximum's ``-inf`` fill, which
    only the rules that know it safe read, see :mod:`plait_batching.fill_facts`).

    A ragged tracer may also (or only) hold its elements *packed*
    (``packed``, a :class:`~plait_batching.packed.Packed`: the elements
    concatenated along their one ragged axis, see
    :mod:`plait_batching.packed`); its padded ``val`` is then made from the
    packed values when first read (its ``bdim`` is 0)."""

    __slots__ = ("_aval", "_val", "bdim", "derived", "filled", "packed", "ragged")

    _trace: BatchTrace  # (always: a batch tracer is made by its BatchTrace)

    def __init__(self, trace: BatchTrace, val: Any, bdim: int, aval: ShapedArray | None = None) -> None:
        self._trace = trace
        self._val = val
        self.bdim = bdim
        self._aval: ShapedArray | None = aval
        self.ragged = aval is not None
        self.filled: dict[int, Any] | None = None
        self.derived: Any = None
        self.packed: Any = None

    @property
    def val(self) -> Any:
        """The batched value of the parent trace (padded along ragged axes)."""
        v = self._val
        if v is None:
            v = self._val = self.packed.unpack(self)
        return v

    @val.setter
    def val(self, v: Any) -> None:
        self._val = v

    @property
    def aval(self) -> ShapedArray:
        """The abstract value of one element of the batch."""
        a = self._aval
        if a is None:
            full = get_aval(self.val)
            d = self.bdim
            a = self._aval = ShapedArray(full.shape[:d] + full.shape[d + 1 :], full.dtype, full.weak_type)
        return a


class BatchTrace(Trace):
    """Interprets primitives on batches: one trace per ``vmap`` (and per
    batched sub-jaxpr)."""

    __slots__ = ("axis", "ragged")

    def __init__(self, axis: AxisData, parent: Trace | None = None) -> None:
        super().__init__(parent)
        self.axis = axis
        #: The ragged sizes of piles mapped by this vmap (a
        #: :class:`~plait_batching.ragged.RaggedEnv`), made when the first one enters.
        self.ragged: Any = None

    @property
    def parent_trace(self) -> Trace:
        """The trace this vmap runs on: rules bind their operations there."""
        parent = self.parent
        assert parent is not None, "a BatchTrace is always made on top of another trace"
        return parent

    def describe(self) -> str:
        name = "" if self.axis.name is None else f" {self.axis.name!r}"
        return f"vmap over the axis{name} of size {self.axis.size}"

    def unpack(self, x: Any) -> tuple[Any, int | None]:
        """``(value, batch dimension)`` of ``x`` as seen by this trace."""
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        return x, None

    def wrap(self, val: Any, bdim: int | None) -> Any:
        """A value of this trace: a tracer when batched, else ``val`` itself."""
        return val if bdim is None else BatchTracer(self, val, bdim)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        env = self.ragged
        if env is not None and (
            any(type(x) is BatchTracer and x._trace is self and x.ragged for x in args) or env.mentions(params)
        ):
            from plait_batching.ragged import process_ragged

            return process_ragged(self, prim, args, params)
        vals: list[Any] = []
        dims: list[int | None] = []
        batched = False
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                vals.append(x.val)
                dims.append(x.bdim)
                batched = True
            else:
                if isinstance(x, Tracer):
                    self.check_foreign_tracer(x, prim)
                vals.append(x)
                dims.append(None)
        parent = self.parent_trace
        if not batched and prim not in always_run and not self._uses_axis(prim, params):
            with set_current_trace(parent):
                return prim.bind(*vals, **params)
        rule = batching_rules[prim]
        with set_current_trace(parent):
            out, out_dims = rule(self.axis, vals, dims, **params)
        if prim.multiple_results:
            return [v if d is None else BatchTracer(self, v, d) for v, d in zip(out, out_dims)]
        return out if out_dims is None else BatchTracer(self, out, out_dims)

    def to_symbolic_dim(self, x: Tracer, what: str) -> Dim | None:
        """The size standing for the batched integer ``x`` when it is used as a
        shape (``arange(n)``, ``ones((7, n))``): a fresh ragged size bound to
        the values of ``x`` (see :func:`plait_batching.ragged.symbolic_size`)."""
        from plait_batching.ragged import symbolic_size

        return symbolic_size(self, x, what)

    def _uses_axis(self, prim: Primitive, params: dict[str, Any]) -> bool:
        """Whether a higher-order primitive's bodies use this vmap's axis name
        (then it must be batched even though no operand is)."""
        name = self.axis.name
        if name is None or prim.family not in _HIGHER_ORDER_FAMILIES:
            return False
        return any(isinstance(p, (ClosedJaxpr, tuple)) and params_use_axis(p, name) for p in params.values())
