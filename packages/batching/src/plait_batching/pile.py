"""Piles: batches whose elements have different lengths along one axis.

A :class:`Pile` of ``B`` elements holds

* ``data``: every element padded to the largest along its ragged axis and
  stacked along a leading batch axis (shape ``(B, *padded element shape)``);
* ``lengths``: one ``int32`` per element, its true size along the ragged axis;
* ``ragged_axis``: which axis of an element is ragged (element coordinates),
  or a tuple of axes that all have the element's length (an ``n x n``
  matrix per element: attention scores, pairwise distances).

``vmap(f, in_axes=pile_axis)`` maps over a pile and ``out_axes=pile_axis``
builds one (see :mod:`plait_batching.ragged`).  A pile is a pytree whose
leaves are ``data`` (``values`` when stored packed) and ``lengths``, so it crosses ``jit`` (lengths become
traced values, the padded size stays static) and ``grad``.  Padding is zero
in the piles plait makes; the mapped function never reads it into a true
result.

A pile may store its values *packed* instead (``Pile.storage == "packed"``,
see :mod:`plait_batching.storage`): ``values``, the elements' true rows
concatenated along the ragged axis (``capacity`` rows, at least the sum of
the lengths, and no batch axis), with ``lengths``; ``data`` is then the
padded view, made when read.  It holds the sum of the lengths, not
``B x max length``.  Made by :meth:`Pile.packed`, ``Pile.from_arrays(...,
storage="packed")`` or :meth:`Pile.with_storage`; ``vmap`` computes on the
values directly.

A pile is *full* (``Pile.full``, static) when every length is known to be
the padded size: then there is no padding, and ``vmap`` over it computes as
over a dense batch (no masks, no fills, no packing; see
:func:`plait_batching.ragged.process_ragged`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import numpy as np

from plait_batching.length_plan import LengthPlan, make_plan
from plait_batching.storage import (
    STORAGES,
    concrete,
    default_storage,
    packed_from_arrays,
    packed_from_padded,
    padded_from_packed,
)
from plait_batching.vmappable import register_vmappable
from plait_core import Tracer, dtypes, get_aval
from plait_core.dims import Dim
from plait_core.tree_util import GetAttrKey, register_pytree_with_keys

__all__ = ["LAYOUTS", "Pile", "PileAxis", "pile_axis", "pile_static_lengths"]

#: The layouts a pile may ask for: ``None`` lets plait choose per operation.
LAYOUTS = (None, "packed", "padded")


class PileAxis:
    """The type of :data:`pile_axis`, the ``in_axes``/``out_axes`` entry that maps over piles."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "pile_axis"

    def __reduce__(self) -> str:
        return "pile_axis"


#: ``in_axes``/``out_axes`` entry: map over (or build) a :class:`Pile`.
pile_axis = PileAxis()


#: What of a pile's lengths is static: nothing, the lengths themselves, or a coarse plan of buckets.
StaticKind = bool | str


def _static_from_environment() -> StaticKind | None:
    given = os.environ.get("PLAIT_PILE_STATIC_LENGTHS")
    if given is None:
        return None
    if given not in ("0", "1", "plan"):
        raise ValueError(f"PLAIT_PILE_STATIC_LENGTHS must be '0', '1' or 'plan', got {given!r}")
    return "plan" if given == "plan" else given == "1"


_ENVIRONMENT_STATIC = _static_from_environment()
_static_by_default: contextvars.ContextVar[tuple[StaticKind | None]] = contextvars.ContextVar(
    "plait_pile_static_lengths", default=(_ENVIRONMENT_STATIC,)
)


@contextlib.contextmanager
def pile_static_lengths(static: StaticKind | None) -> Iterator[None]:
    """Within the block, piles built without ``static_lengths`` (left at
    ``None``) take ``static``: with ``True`` every pile whose lengths are
    concrete carries them in its structure, so ``vmap`` computes it in
    buckets (see :mod:`plait_batching.buckets`); ``"plan"`` gives them a
    coarse plan of buckets instead (``static_lengths="plan"``); ``False``
    keeps every pile's lengths values only (one compilation for every set of
    lengths of one shape); piles with traced lengths stay as they are.
    ``None`` restores the library's defaults (a plan for the piles
    :meth:`Pile.from_arrays` builds without ``pad_to`` or ``capacity``,
    nothing static otherwise).  Meant for testing (it runs a test suite's
    piles through buckets or whole).  The default comes from the environment
    variable ``PLAIT_PILE_STATIC_LENGTHS`` (``1`` on, ``plan`` plans, ``0``
    off; unset: the library's defaults)."""
    if static is not None and not isinstance(static, (bool, np.bool_)) and static != "plan":
        raise TypeError(f"pile_static_lengths: static must be True, False, 'plan' or None, got {static!r}")
    token = _static_by_default.set((None if static is None else "plan" if static == "plan" else bool(static),))
    try:
        yield
    finally:
        _static_by_default.reset(token)


def _as_array(x: Any, what: str) -> Any:
    """``x`` when core knows it as an array (NumPy, device arrays, tracers); lists become NumPy."""
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    try:
        get_aval(x)
    except TypeError:
        raise TypeError(f"Pile: {what} must be an array, got a value of type {type(x).__name__}") from None
    return x


class Pile:
    """A ragged batch: ``data`` padded along one axis, and each element's ``lengths``.

    ``Pile(data, lengths, ragged_axis=0)``: ``data`` has the batch first and
    at least one element axis; ``lengths`` is a vector of integers, one per
    element, with ``0 <= lengths[i] <= data.shape[1 + ragged_axis]`` (checked
    when the lengths are concrete).  Most piles are built with
    :meth:`from_arrays` or returned by ``vmap(..., out_axes=pile_axis)``.

    ``len(pile)`` is the number of elements, ``pile[i]`` element ``i``'s true
    slice and :meth:`unpack` all of them.

    A pile is a pytree whose leaves are ``data`` (``values`` when stored packed) and ``lengths`` (so ``jit``
    traces the lengths and ``grad`` returns a pile of gradients); note that
    ``tree_map(f, pile)`` therefore applies ``f`` to the lengths too.  A
    rebuilt pile whose lengths are no longer integers is a ``TypeError``.

    Inside ``vmap`` plait computes on one of two layouts, chosen per
    operation while tracing (see :mod:`plait_batching.packed`): *padded*
    blocks ``(B, max length, ...)``, or *packed* values, the elements
    concatenated along the ragged axis (``capacity`` rows).  ``layout``
    (static, part of the pytree structure) forces one: ``"packed"`` computes
    every operation that treats positions independently on packed values,
    ``"padded"`` never packs, ``None`` (the default) lets plait choose.
    ``capacity`` (static) is the number of rows of packed values: at least
    the sum of the lengths and at most ``B * max length``; ``None`` means the
    sum of the lengths where they are concrete when the pile is mapped, and
    ``B * max length`` where they are traced (under ``jit``: give a capacity
    to pack there; :meth:`from_arrays` records the sum when its lengths are
    not planned).

    ``full`` (static) says that every length is the padded size, so the pile
    has no padding and ``vmap`` computes on it as on a dense batch: the same
    program as ``vmap`` over ``data`` with ``in_axes=0`` (no masks, no fills,
    no packing), the results' piles full too.  ``None`` (the default) infers
    it from concrete lengths (full exactly when there is at least one element
    and every length is the padded size) and takes traced lengths as not
    full.  ``True`` claims it: checked against concrete lengths (a
    ``ValueError`` naming them otherwise); with traced lengths (a pile built
    inside ``jit``) it is the caller's promise, not checked: if some length
    is shorter, its padding is computed with as if it were true entries and
    the results' lengths are the padded size.  ``False`` computes with masks
    even when the lengths are all the padded size.  Like ``layout`` and
    ``capacity`` it is part of the pytree structure, so ``jit`` compiles a
    full pile and a pile of the same shapes that is not full separately, and
    ``grad`` returns a full pile's gradients as a full pile.

    ``static_lengths=True`` makes the concrete lengths themselves part of the
    static structure (``Pile.static_lengths``, a tuple; ``None`` otherwise):
    ``vmap`` then computes the elements in *buckets* of similar lengths, each
    padded only to its own longest element (see
    :mod:`plait_batching.buckets`), which cuts the work of operations that
    mix positions (attention, whose cost grows with the square of the padded
    length) to near that of the true elements.  The price is compilation:
    ``jit`` compiles anew for every new set of lengths, as a loop of
    ``jit(f)`` per element compiles once per new length.
    ``static_lengths="plan"`` keeps the lengths as leaves (traced under
    ``jit``) and makes only a coarse plan of buckets static
    (``Pile.static_lengths`` is then a
    :class:`~plait_batching.length_plan.LengthPlan`: per bucket, how many of
    the sorted elements it holds and the size it is padded to, on a coarse
    grid): ``vmap`` sorts the elements by their lengths while running, so one
    compilation serves every batch with the same plan, a little slower than
    buckets of the exact lengths.  The plan is made from the concrete
    lengths and fits them by construction; a pile rebuilt from other leaves
    (``tree_unflatten``) keeps its plan, which is then the builder's claim:
    concrete lengths that do not fit it are a ``ValueError`` when mapped,
    traced ones are not checked (lengths longer than their bucket's bound
    would be cut).  Lengths that are traced cannot be static nor planned (a
    ``TypeError``).  ``None`` (the default) is ``False`` here (and a plan in
    :meth:`from_arrays` without ``pad_to`` or ``capacity``) unless
    :func:`pile_static_lengths` (for testing) says otherwise, and then only
    for concrete lengths.

    *Storage* (``storage``, static): a pile stores its values ``"padded"``
    (``data``, as above: ``B x max length`` rows) or ``"packed"``
    (``values``: the elements' true rows concatenated along the ragged axis,
    element ``b`` at rows ``[start_b, start_b + length_b)`` with ``start_b``
    the sum of the lengths before it, in ``capacity`` rows and no batch axis;
    see :mod:`plait_batching.storage`).  A packed pile holds the sum of the
    lengths, not ``B x max length``: lengths ``[3, 100]`` store 103 rows, not
    200.  Build one with :meth:`packed`, ``from_arrays(..., storage="packed")``
    or :meth:`with_storage`; its ``max_length`` (the padded size) is part of
    its static structure, and its pytree leaves are ``values`` and
    ``lengths``.  ``data`` of a packed pile is the padded view ``(B, ...,
    max length, ...)`` with zero padding, made when read (NumPy when the
    values are concrete, a gather when traced), and ``values`` of a padded
    pile the packed rows, made when read.  ``vmap`` over a packed pile
    computes on its values directly (no padded data is made unless an
    operation needs it), and returns results of its ragged size packed too.
    Only a pile of one ragged axis can be packed: the ``n x n`` elements of a
    pile with several ragged axes are not rows of one axis (a ``ValueError``).
    A packed pile with static lengths (or a plan) is computed in buckets from
    its padded view; results of its ragged size are stored packed again, in
    its capacity, as without buckets.  A gradient's packed
    pile has ``float0`` lengths, so only its ``values`` can be read (rebuild
    it with the lengths for a padded view).
    """

    __slots__ = (
        "_data", "_max_length", "_values", "capacity", "full", "layout", "lengths", "ragged_axis", "static_lengths",
    )  # fmt: skip

    _data: Any
    _values: Any
    _max_length: int | None
    lengths: Any
    ragged_axis: int | tuple[int, ...]
    layout: str | None
    capacity: int | None
    full: bool
    static_lengths: tuple[int, ...] | LengthPlan | None

    def __init__(
        self, data: Any, lengths: Any, ragged_axis: int | Sequence[int] = 0, *, layout: str | None = None,
        capacity: int | None = None, full: bool | None = None, static_lengths: bool | str | None = None,
    ) -> None:  # fmt: skip
        data = _as_array(data, "data")
        lengths = _as_array(lengths, "lengths")
        shape, laval = get_aval(data).shape, get_aval(lengths)
        if len(shape) < 2:
            raise ValueError(
                f"Pile: data must have a batch axis and at least one element axis, got data of shape {tuple(shape)}"
            )
        rank = len(shape) - 1
        axes = _normalize_axes(ragged_axis, rank, f"data of shape {tuple(shape)}", "Pile")
        for what, k in (("number of elements", 0), *(("padded size", 1 + a) for a in axes)):
            if type(shape[k]) is not int:
                raise TypeError(
                    f"Pile: a Pile's {what} must be a concrete integer, got {shape[k]} (axis {k} of data of "
                    f"shape {tuple(shape)}); inside mask, sizes are symbolic: build the pile outside mask"
                )
        if len({shape[1 + a] for a in axes}) > 1:
            raise ValueError(
                f"Pile: the ragged axes {axes} share the elements' lengths, so they must have one padded size, "
                f"got {[shape[1 + a] for a in axes]} (data of shape {tuple(shape)})"
            )
        ax = axes[0]
        if not dtypes.is_int(laval.dtype):
            raise TypeError(f"Pile: lengths must be integers, got lengths of dtype {laval.dtype}")
        if laval.ndim != 1 or laval.shape[0] != shape[0]:
            raise ValueError(
                f"Pile: lengths must be a vector with one length per element ({shape[0]} elements in data of "
                f"shape {tuple(shape)}), got lengths of shape {tuple(laval.shape)}"
            )
        if isinstance(lengths, (np.ndarray, np.generic)) and lengths.dtype != np.int32:
            lengths = lengths.astype(np.int32)
        conc = concrete(lengths)
        if conc is not None:
            padded = shape[1 + ax]
            bad = np.flatnonzero((conc < 0) | (conc > padded))
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"Pile: the length {int(conc[i])} of element {i} is out of range: the lengths must be in "
                    f"[0, {padded}], the size of the ragged axis {ax} of the padded elements"
                )
        _check_layout(layout, "Pile")
        padded = int(shape[1 + ax])
        is_full = _check_full(full, conc, padded, "Pile")
        capacity = _check_capacity(capacity, conc, int(shape[0]) * padded, "Pile", is_full)
        self._data, self._values, self._max_length = data, None, None
        self.lengths, self.ragged_axis = lengths, ax if len(axes) == 1 else axes
        self.layout, self.capacity, self.full = layout, capacity, is_full
        self.static_lengths = _static_lengths(static_lengths, conc, "Pile", padded)

    @classmethod
    def _make(
        cls, data: Any, lengths: Any, ragged_axis: int | tuple[int, ...], layout: str | None = None,
        capacity: int | None = None, full: bool = False, static_lengths: tuple[int, ...] | LengthPlan | None = None,
    ) -> Pile:  # fmt: skip
        """A pile from trusted parts, without checks (used by pytrees and ``vmap``)."""
        p = object.__new__(cls)
        p._data, p._values, p._max_length = data, None, None
        p.lengths, p.ragged_axis, p.layout, p.capacity = lengths, ragged_axis, layout, capacity
        p.full, p.static_lengths = full, static_lengths
        return p

    @classmethod
    def _make_packed(
        cls, values: Any, lengths: Any, ragged_axis: int, max_length: int, layout: str | None, capacity: int,
        full: bool = False, static_lengths: tuple[int, ...] | LengthPlan | None = None,
    ) -> Pile:  # fmt: skip
        """A packed pile from trusted parts, without checks (used by pytrees and ``vmap``)."""
        p = cls._make(None, lengths, ragged_axis, layout, capacity, full, static_lengths)
        p._values, p._max_length = values, max_length
        return p

    @classmethod
    def packed(
        cls, values: Any, lengths: Any, ragged_axis: int = 0, *, max_length: int | None = None,
        layout: str | None = None, full: bool | None = None, static_lengths: bool | str | None = None,
    ) -> Pile:  # fmt: skip
        """A pile stored packed: ``values`` are the elements' true rows
        concatenated along ``ragged_axis`` (element coordinates: ``values``
        has no batch axis), element ``b`` at rows ``[start_b, start_b +
        lengths[b])`` where ``start_b`` is the sum of the lengths before it.

        The size of ``values`` along ``ragged_axis`` is the pile's
        ``capacity`` (static): at least the sum of the lengths (checked when
        they are concrete) and at most ``len(lengths) * max_length``; rows past
        the sum must be finite (they are zeroed where ``vmap`` cannot tell
        where they start).  ``lengths`` is a vector of integers, one per
        element, in ``[0, max_length]``.  ``max_length`` is the padded size
        (static), the largest length by default, which needs concrete lengths
        (a ``TypeError`` with traced ones: give it).  ``layout``, ``full`` and
        ``static_lengths`` are as for :class:`Pile`; a full pile's capacity is
        ``len(lengths) * max_length``.  Only one ragged axis can be packed (a
        sequence of axes is a ``ValueError``)."""
        values = _as_array(values, "values")
        lengths = _as_array(lengths, "lengths")
        shape, laval = get_aval(values).shape, get_aval(lengths)
        if len(shape) < 1:
            raise ValueError("Pile.packed: values must have at least the ragged axis, got a scalar")
        if isinstance(ragged_axis, Sequence) and len(ragged_axis) > 1:
            _refuse_several_axes(ragged_axis, "Pile.packed")
        ax = _normalize_axes(ragged_axis, len(shape), f"values of shape {tuple(shape)}", "Pile.packed")[0]
        if type(shape[ax]) is not int:
            raise TypeError(
                f"Pile.packed: the capacity (axis {ax} of values of shape {tuple(shape)}) must be a concrete integer, "
                f"got {shape[ax]}"
            )
        if not dtypes.is_int(laval.dtype):
            raise TypeError(f"Pile.packed: lengths must be integers, got lengths of dtype {laval.dtype}")
        if laval.ndim != 1 or type(laval.shape[0]) is not int:
            raise ValueError(
                f"Pile.packed: lengths must be a vector with one length per element, got lengths of shape "
                f"{tuple(laval.shape)}"
            )
        if isinstance(lengths, (np.ndarray, np.generic)) and lengths.dtype != np.int32:
            lengths = lengths.astype(np.int32)
        conc = concrete(lengths)
        if max_length is None:
            if conc is None:
                raise TypeError(
                    "Pile.packed: the lengths are traced (for example inside jit), so max_length (the padded size, "
                    "static) must be given"
                )
            max_length = int(conc.max()) if conc.size else 0
        if not (isinstance(max_length, (int, np.integer)) and not isinstance(max_length, bool)) or max_length < 0:
            raise TypeError(f"Pile.packed: max_length must be a non-negative int, got {max_length!r}")
        padded = int(max_length)
        if conc is not None:
            bad = np.flatnonzero((conc < 0) | (conc > padded))
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"Pile.packed: the length {int(conc[i])} of element {i} is out of range: the lengths must be in "
                    f"[0, {padded}] (max_length)"
                )
        _check_layout(layout, "Pile.packed")
        is_full = _check_full(full, conc, padded, "Pile.packed")
        rows = _check_capacity(int(shape[ax]), conc, int(laval.shape[0]) * padded, "Pile.packed", is_full)
        assert rows is not None
        static = _static_lengths(static_lengths, conc, "Pile.packed", padded)
        return cls._make_packed(values, lengths, ax, padded, layout, rows, is_full, static)

    @classmethod
    def from_arrays(
        cls, arrays: Sequence[Any], ragged_axis: int | Sequence[int] | None = None, dtype: Any = None,
        pad_to: int | None = None, *, layout: str | None = None, capacity: int | None = None,
        full: bool | None = None, static_lengths: bool | str | None = None, storage: str | None = None,
    ) -> Pile:  # fmt: skip
        """Stack ``arrays`` (concrete arrays of one rank) into a pile, padding with zeros.

        The elements may differ in size along one axis, which becomes the
        ragged axis, or along several axes that have one size in each element
        (``(n, n)`` matrices), which become the ragged axes; when they all have
        the same shape it is ``ragged_axis`` (default 0).  ``dtype`` defaults to the arrays' common type (with
        plait's canonicalisation: 64-bit types become 32-bit unless x64 is
        enabled).  ``pad_to`` pads the ragged axis to a fixed size, at least
        the largest length (useful to compile once for several piles).
        ``layout`` and ``capacity`` are as for :class:`Pile`.

        What is static, so what ``jit`` compiles once for (``static_lengths``
        is as for :class:`Pile`):

        * by default (neither ``pad_to`` nor ``capacity`` given, the pile not
          full) a coarse plan of buckets (``static_lengths="plan"``, see
          :mod:`plait_batching.length_plan`): ``vmap`` computes the elements
          in at most 3 buckets of similar lengths sorted while running, so
          attention-like work falls to near that of the true elements, and
          batches of the same largest length and plan share a compilation
          (50 batches of 32 random lengths in 8-125 make 29 plans and
          largest lengths; padded to one size, with ``pad_to`` and
          ``static_lengths="plan"``, 9 plans);
        * with ``pad_to`` (and no ``static_lengths``) nothing but the shapes:
          one compilation for every batch of that padded size, the lengths
          traced and the work that of the padded size (give ``capacity`` as
          well to pack the operations that treat positions independently);
        * ``capacity`` alone (or ``static_lengths=False`` without ``pad_to``,
          which records the sum of the lengths): the lengths traced, the
          capacity static;
        * ``static_lengths=True``: the exact lengths, the least work and one
          compilation per set of lengths.

        ``full`` is as for
        :class:`Pile`: by default the pile is full when every array has the
        padded size along the ragged axes (arrays of one shape, without a
        larger ``pad_to``), and then computes as a dense batch.
        ``storage="packed"`` stores the pile packed (see :class:`Pile`): the
        arrays concatenated along the ragged axis, in ``capacity`` rows (by
        default the sum of the lengths; with ``pad_to``, ``B * pad_to``, so
        that piles of one padded size share a compilation as ``pad_to``
        promises: give a smaller ``capacity`` to save memory), zeros past the
        sum (the rows are the values' shape, so without ``pad_to`` or
        ``capacity`` a batch of another total compiles anew even with a plan:
        give both a ``capacity`` and ``static_lengths="plan"`` to share one
        program); a pile with several ragged axes cannot be packed (a ``ValueError``).  ``"padded"`` pads them;
        ``None`` (the default) is ``"padded"`` unless
        :func:`~plait_batching.storage.pile_storage` (for testing) says
        otherwise, and then only for piles of one ragged axis."""
        if storage is not None and storage not in STORAGES:
            raise ValueError(f"Pile.from_arrays: storage must be None, 'padded' or 'packed', got {storage!r}")
        if isinstance(arrays, (np.ndarray, Tracer)) or not isinstance(arrays, Sequence) or not arrays:
            raise ValueError("Pile.from_arrays needs a non-empty list of arrays")
        elems = [np.asarray(a) for a in arrays]
        ranks = {e.ndim for e in elems}
        if len(ranks) != 1:
            listed = ", ".join(str(e.shape) for e in elems)
            raise ValueError(f"Pile.from_arrays: the arrays must have the same rank, got shapes {listed}")
        rank = ranks.pop()
        if rank == 0:
            raise ValueError("Pile.from_arrays: the elements must have at least one axis (got scalars)")
        differ = [k for k in range(rank) if len({e.shape[k] for e in elems}) > 1]
        listed = ", ".join(str(e.shape) for e in elems)
        given = None if ragged_axis is None else _normalize_axes(ragged_axis, rank, "arrays", "Pile.from_arrays")
        if differ and given is not None and not set(differ) <= set(given):
            raise ValueError(
                f"Pile.from_arrays: the arrays differ along the axes {differ} (shapes {listed}), which are not "
                f"among the ragged axes {list(given)}"
            )
        axes = given if given is not None else tuple(differ) if differ else (0,)
        if any(len({e.shape[a] for a in axes}) > 1 for e in elems):
            raise ValueError(
                f"Pile.from_arrays: the arrays differ along the axes {list(axes)} (shapes {listed}); a pile's "
                "elements may differ along one axis only, or along several axes that have one size in each element"
            )
        ax = axes[0]
        lengths = np.array([e.shape[ax] for e in elems], np.int32)
        padded = int(lengths.max())
        if pad_to is not None:
            if pad_to < padded:
                raise ValueError(f"Pile.from_arrays: pad_to={pad_to} is smaller than the largest length {padded}")
            padded = int(pad_to)
        dt = np.result_type(*elems) if dtype is None else np.dtype(dtype)
        dt = dtypes.canonicalize_dtype(dt)
        if storage == "packed" and len(axes) > 1:
            _refuse_several_axes(axes, "Pile.from_arrays")
        if (storage or (default_storage() if len(axes) == 1 else "padded")) == "packed":
            _check_layout(layout, "Pile.from_arrays")
            is_full = _check_full(full, lengths, padded, "Pile.from_arrays")
            planned = _plan_by_default(pad_to, capacity, is_full)
            if capacity is None:  # (pad_to: piles of one padded size share a structure, so a compilation)
                capacity = int(lengths.sum()) if pad_to is None else len(elems) * padded
            rows = _check_capacity(capacity, lengths, len(elems) * padded, "Pile.from_arrays", is_full)
            assert rows is not None
            values = packed_from_arrays(elems, ax, dt, rows)
            static = _static_lengths(static_lengths, lengths, "Pile.from_arrays", padded, planned)
            return cls._make_packed(values, lengths, ax, padded, layout, rows, is_full, static)
        shape = list(elems[0].shape)
        for a in axes:
            shape[a] = padded
        data = np.zeros((len(elems), *shape), dt)
        for i, e in enumerate(elems):
            index: tuple[Any, ...] = (i, *_true_slice(axes, rank, e.shape[ax]))
            data[index] = e
        _check_layout(layout, "Pile.from_arrays")
        is_full = _check_full(full, lengths, padded, "Pile.from_arrays")
        static = _static_lengths(
            static_lengths, lengths, "Pile.from_arrays", padded, _plan_by_default(pad_to, capacity, is_full)
        )
        if capacity is None and pad_to is None and not isinstance(static, LengthPlan):
            capacity = int(lengths.sum())  # (a plan's piles keep none, so that batches of one plan share a program)
        capacity = _check_capacity(capacity, lengths, len(elems) * padded, "Pile.from_arrays", is_full)
        return cls._make(data, lengths, ax if len(axes) == 1 else axes, layout, capacity, is_full, static)

    # -- reading ---------------------------------------------------------------

    @property
    def storage(self) -> str:
        """How the pile stores its values: ``"padded"`` (``data``) or ``"packed"`` (``values``)."""
        return "padded" if self._values is None else "packed"

    @property
    def data(self) -> Any:
        """The padded data ``(B, *element shape)``, the ragged axis at ``max_length``.
        For a packed pile, made from its values when read (zero padding)."""
        if self._values is None:
            return self._data
        ax = self.ragged_axis
        assert isinstance(ax, int) and self._max_length is not None
        if getattr(self.lengths, "dtype", None) == dtypes.float0:
            raise TypeError(
                "Pile.data: this packed pile's lengths are float0 (a gradient's pile), so its padded view cannot be "
                "made; read .values, or rebuild it with the lengths: Pile.packed(g.values, pile.lengths, "
                "max_length=pile.max_length)"
            )
        return padded_from_packed(self._values, self.lengths, ax, self._max_length, self.full)

    @property
    def values(self) -> Any:
        """The packed values: the elements' true rows concatenated along the
        ragged axis (``capacity`` rows, no batch axis).  For a padded pile,
        made from its data when read (as :meth:`with_storage` makes them)."""
        if self._values is not None:
            return self._values
        return self.with_storage("packed")._values

    def with_storage(self, storage: str, *, capacity: int | None = None) -> Pile:
        """This pile stored as ``storage`` (``"padded"`` or ``"packed"``), with
        the same lengths, layout, fullness and static lengths.

        Packing keeps ``capacity`` rows: by default the pile's ``capacity``,
        else the sum of the lengths (concrete), else ``B * max_length``
        (traced lengths, as inside ``jit``, where the sum is not static: give
        a capacity to save memory there).  The pile itself when it already is
        so stored (and ``capacity`` is not given or is its own).  A pile with
        several ragged axes cannot be packed (a ``ValueError``)."""
        if storage not in STORAGES:
            raise ValueError(f"Pile.with_storage: storage must be 'padded' or 'packed', got {storage!r}")
        if storage == "padded":
            if capacity is not None:
                raise TypeError("Pile.with_storage: capacity applies to packed storage only")
            if self._values is None:
                return self
            return Pile._make(
                self.data, self.lengths, self.ragged_axis, self.layout, self.capacity, self.full, self.static_lengths
            )  # fmt: skip
        ax = self.ragged_axis
        if not isinstance(ax, int):
            _refuse_several_axes(ax, "Pile.with_storage")
        if self._values is not None and capacity in (None, self.capacity):
            return self
        conc = concrete(self.lengths)
        padded = int(self.max_length)
        if capacity is None:
            capacity = self.capacity
        if capacity is None:
            capacity = int(conc.sum()) if conc is not None else self.num_elements * padded
        rows = _check_capacity(capacity, conc, self.num_elements * padded, "Pile.with_storage", self.full)
        assert rows is not None
        values = packed_from_padded(self.data, self.lengths, ax, rows)
        return Pile._make_packed(
            values, self.lengths, ax, padded, self.layout, rows, self.full, self.static_lengths
        )  # fmt: skip

    @property
    def num_elements(self) -> int:
        """How many elements the pile holds."""
        if self._values is not None:
            return int(get_aval(self.lengths).shape[0])
        n: Dim = get_aval(self.data).shape[0]
        return int(n)

    @property
    def max_length(self) -> Dim:
        """The padded size of the ragged axis (or axes)."""
        if self._max_length is not None:
            return self._max_length
        return get_aval(self._data).shape[1 + self.ragged_axes[0]]

    @property
    def ragged_axes(self) -> tuple[int, ...]:
        """The ragged axes, as a tuple (one axis, or several of one length)."""
        ax = self.ragged_axis
        return (ax,) if isinstance(ax, int) else ax

    @property
    def dtype(self) -> np.dtype[Any]:
        """The elements' dtype."""
        return get_aval(self._data if self._values is None else self._values).dtype

    def __len__(self) -> int:
        return self.num_elements

    def __getitem__(self, i: int) -> Any:
        """Element ``i``: its true slice of the padded data (needs concrete lengths)."""
        n = self.num_elements
        if not (isinstance(i, (int, np.integer)) and not isinstance(i, bool)):
            raise TypeError(f"Pile indices must be integers, got {type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"Pile index {i} is out of range for a pile of {n} elements")
        i = int(i) % n
        conc = concrete(self.lengths)
        if conc is None:
            raise TypeError(
                "Pile: reading element slices needs concrete lengths, but the lengths are traced "
                "(for example inside jit); use vmap over the pile instead"
            )
        if self._values is not None:
            start = int(conc[:i].sum())
            return self._values[(*(slice(None),) * self.ragged_axes[0], slice(start, start + int(conc[i])))]
        rank = len(get_aval(self._data).shape) - 1
        return self._data[(i, *_true_slice(self.ragged_axes, rank, int(conc[i])))]

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self.num_elements))

    def unpack(self) -> list[Any]:
        """Every element's true slice, in order."""
        return list(self)

    def __repr__(self) -> str:
        packed = self._values is not None
        aval = get_aval(self._values if packed else self._data)
        dims = [str(d) for d in (aval.shape if packed else aval.shape[1:])]
        for a in self.ragged_axes:
            dims[a] = "≤" + (str(self._max_length) if packed else dims[a])
        conc = concrete(self.lengths)
        lengths = f"traced {get_aval(self.lengths).str_short()}" if conc is None else np.array2string(conc)
        stored = f" packed in {self.capacity} rows" if packed else ""
        return (
            f"Pile[{self.num_elements}] of {dtypes.dtype_short_name(aval.dtype)}[{', '.join(dims)}] "
            f"lengths {lengths}{stored}{' (full)' if self.full else ''}{_static_repr(self.static_lengths)}"
        )


def _refuse_several_axes(axes: Any, who: str) -> NoReturn:
    """Packed storage concatenates the elements along one ragged axis."""
    raise ValueError(
        f"{who}: packed storage concatenates the elements' rows along their one ragged axis, but the ragged axes "
        f"are {tuple(axes)}: an element of several ragged axes (an n x n matrix) is not a run of rows of one axis; "
        "store such a pile padded"
    )


def _check_layout(layout: Any, who: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"{who}: layout must be None, 'packed' or 'padded', got {layout!r}")


def _check_full(full: Any, lengths: np.ndarray | None, padded: int, who: str) -> bool:
    """Whether the pile is full: ``full`` checked against concrete ``lengths``,
    or inferred from them when ``None`` (traced lengths: only a claim makes it full)."""
    if full is not None and not isinstance(full, (bool, np.bool_)):
        raise TypeError(f"{who}: full must be True, False or None, got {full!r}")
    if lengths is None:
        return bool(full)
    every = bool(lengths.size > 0 and (lengths == padded).all())
    if full and not every:
        got = f"the lengths are {np.array2string(lengths)}" if lengths.size else "the pile has no elements"
        raise ValueError(f"{who}: full=True says every length is the padded size {padded}, but {got}")
    return every if full is None else bool(full)


def _static_lengths(
    static: Any, lengths: np.ndarray | None, who: str, padded: int, default: StaticKind = False
) -> tuple[int, ...] | LengthPlan | None:  # fmt: skip
    """The lengths as a static tuple when ``static`` is true, their coarse plan
    of buckets when it is ``"plan"`` (either needs concrete lengths), else
    ``None``; ``static=None`` takes the default of :func:`pile_static_lengths`
    where the lengths are concrete, and where that is ``None`` the caller's
    ``default``."""
    if static is None:
        chosen = _static_by_default.get()[0]
        static = (default if chosen is None else chosen) if lengths is not None else False
    if not isinstance(static, (bool, np.bool_)) and not (isinstance(static, str) and static == "plan"):
        raise TypeError(f"{who}: static_lengths must be True, False, 'plan' or None, got {static!r}")
    if not static:
        return None
    if lengths is None:
        raise TypeError(
            f"{who}: static_lengths={static!r} needs concrete lengths, but the lengths are traced (for example "
            "inside jit); build the pile outside jit and pass it in, so that its lengths (or their plan) are part "
            "of its structure"
        )
    if static == "plan":
        return make_plan(lengths, padded)
    return tuple(int(n) for n in lengths)


def _plan_by_default(pad_to: int | None, capacity: int | None, full: bool) -> StaticKind:
    """What :meth:`Pile.from_arrays` makes static by default: a plan, unless
    ``pad_to`` or ``capacity`` asks for one structure for every batch (or the
    pile is full, and computes as a dense batch anyway)."""
    return "plan" if pad_to is None and capacity is None and not full else False


def _static_repr(static: tuple[int, ...] | LengthPlan | None) -> str:
    if isinstance(static, LengthPlan):
        return f" (plan {', '.join(f'{n} ≤{b}' for n, b in static.buckets)})"
    return " (static)" if static else ""


def _check_capacity(
    capacity: Any, lengths: np.ndarray | None, most: int, who: str, full: bool = False
) -> int | None:  # fmt: skip
    """``capacity`` checked: an int in ``[sum of the lengths (when concrete), B * padded size]``,
    exactly ``B * padded size`` for a full pile."""
    if capacity is None:
        return None
    if not (isinstance(capacity, (int, np.integer)) and not isinstance(capacity, bool)):
        raise TypeError(f"{who}: capacity must be an int or None, got {capacity!r}")
    rows = int(capacity)
    least = 0 if lengths is None else int(np.sum(lengths))
    if not least <= rows <= most:
        raise ValueError(
            f"{who}: capacity={rows} is out of range: it must be at least the sum of the lengths ({least}) "
            f"and at most the number of elements times the padded size ({most})"
        )
    if full and rows != most:
        raise ValueError(
            f"{who}: capacity={rows} is less than the number of elements times the padded size ({most}), "
            "which a full pile (full=True) has"
        )
    return rows


def _normalize_axes(ragged_axis: Any, rank: int, what: str, who: str) -> tuple[int, ...]:
    """``ragged_axis`` (an int or a sequence of ints) as sorted, distinct, non-negative axes."""
    def is_int(a: Any) -> bool:
        return isinstance(a, (int, np.integer)) and not isinstance(a, bool)

    given = [ragged_axis] if is_int(ragged_axis) else list(ragged_axis) if isinstance(ragged_axis, Sequence) else None
    if not given or not all(is_int(a) for a in given):
        raise TypeError(f"{who}: ragged_axis must be an int or a non-empty sequence of ints, got {ragged_axis!r}")
    for a in given:
        if not -rank <= a < rank:
            raise ValueError(
                f"{who}: ragged_axis={a} is out of range for elements of rank {rank} ({what}): it must be in "
                f"[-{rank}, {rank})"
            )
    axes = sorted({int(a) % rank for a in given})
    if len(axes) != len(given):
        raise ValueError(f"{who}: ragged_axis {ragged_axis!r} names an axis twice")
    return tuple(axes)


def _true_slice(axes: Sequence[int], rank: int, length: int) -> tuple[slice, ...]:
    """The index of an element's true part: ``[:length]`` along each ragged axis."""
    return tuple(slice(0, length) if k in axes else slice(None) for k in range(rank))


#: A pile's static structure: ragged axis, layout, capacity, full, static lengths, and the padded size of
#: a packed pile (``None``: stored padded, its leaf is ``data``; else packed, its leaf is ``values``).
_Aux = tuple[Any, str | None, int | None, bool, tuple[int, ...] | LengthPlan | None, int | None]


def _aux(p: Pile) -> _Aux:
    return (p.ragged_axis, p.layout, p.capacity, p.full, p.static_lengths, p._max_length)


def _flatten_with_keys(p: Pile) -> tuple[tuple[tuple[Any, Any], ...], _Aux]:
    first = (GetAttrKey("data"), p._data) if p._values is None else (GetAttrKey("values"), p._values)
    return (first, (GetAttrKey("lengths"), p.lengths)), _aux(p)


def _flatten(p: Pile) -> tuple[tuple[Any, Any], _Aux]:
    return (p._data if p._values is None else p._values, p.lengths), _aux(p)


def _unflatten(aux: _Aux, children: Any) -> Pile:
    data, lengths = children
    _check_rebuilt_lengths(lengths)
    ragged_axis, layout, capacity, full, static, max_length = aux
    if isinstance(static, LengthPlan) and isinstance(lengths, np.ndarray) and lengths.dtype.kind in "iu":
        why = static.misfit(lengths)
        if why is not None:  # concrete NumPy lengths are checked here; others when mapped (plait_batching.buckets)
            raise ValueError(
                f"Pile: rebuilt with lengths {np.array2string(lengths)} that do not fit its plan {static!r} ({why}); "
                "build a pile anew (static_lengths='plan') for other lengths"
            )
    if max_length is not None:
        assert capacity is not None
        return Pile._make_packed(data, lengths, ragged_axis, max_length, layout, capacity, full, static)
    return Pile._make(data, lengths, ragged_axis, layout, capacity, full, static)


def _check_rebuilt_lengths(lengths: Any) -> None:
    """A pile rebuilt from leaves (``tree_map``, ``tree_unflatten``) must still
    have integer lengths: ``tree_map(f, pile)`` maps the lengths too, and a
    cast or float arithmetic there would silently break the pile.  Leaves
    that are not arrays (specs, ``None``) and ``float0`` (the tangent type of
    integers) pass."""
    dtype = getattr(lengths, "dtype", None)
    if not isinstance(dtype, np.dtype) or not hasattr(lengths, "shape") or dtype == dtypes.float0:
        return
    if dtype.kind not in "iu":
        raise TypeError(
            f"Pile: rebuilt with lengths of dtype {dtype}; a pile's lengths are integers. A tree_map over a "
            "pile maps its lengths too (the pile's leaves are data and lengths): map over pile.data and "
            "rebuild with Pile(new_data, pile.lengths, pile.ragged_axis)"
        )


register_pytree_with_keys(Pile, _flatten_with_keys, _unflatten, _flatten)


# ---------------------------------------------------------------------------
# vmap: piles are mapped with pile_axis only (api.py enters and builds them)


def _pile_size(p: Pile, spec: Any) -> Dim:
    if not isinstance(spec, PileAxis):
        raise TypeError(f"vmap: a Pile must be mapped with in_axes=pile_axis, got the in_axes entry {spec!r}")
    return get_aval(p.lengths if p._values is not None else p._data).shape[0]


def _no_generic(*args: Any) -> Any:
    raise AssertionError("plait_batching: piles are entered and built by vmap itself")


register_vmappable(Pile, PileAxis, _pile_size, _no_generic, _no_generic)
