"""Explicit sharding: layouts over ``Explicit`` mesh axes as part of types.

Under a mesh whose axes are of type ``AxisType.Explicit`` (JAX's *explicit
sharding mode*), a value's type records how it is split over those axes:
``ShapedArray.sharding`` is a ``NamedSharding`` of the abstract mesh
(``f32[8@x,4]``: dimension 0 split over ``x``).  Arrays laid out over such a
mesh carry it; staging computes the types of results from the types of
operands with the rules below, before anything runs, and raises
:class:`ShardingTypeError` (JAX's messages) where the layout of a result would
be ambiguous or illegal:

* elementwise operations: the operands' specs must agree dimension by
  dimension (an unsplit dimension or a scalar agrees with anything);
* ``dot_general``: batch dimensions must be split alike; the result keeps the
  batch, then the free dimensions' specs; contracting dimensions split on both
  sides are ambiguous when the user writes the product (JAX asks for
  ``out_sharding``: :func:`check_user_dot_general`, called by
  ``lax.dot_general``), and are reduced over (summed across the devices) when
  the product comes from a transformation (a transpose's cotangent);
* reductions drop the reduced dimensions' specs; cumulative reductions and
  sorts refuse a split reduced dimension;
* ``reshape`` keeps a split dimension when it maps onto one dimension whose
  size it divides, merges specs of merged dimensions, and otherwise asks for a
  ``reshard`` (JAX's error);
* ``transpose`` permutes the spec, ``broadcast_in_dim`` / ``expand_dims`` /
  ``squeeze`` move it with the dimensions;
* ``reshard`` (a ``sharding_constraint``) sets it.

A result whose type names an axis twice is an error.  Primitives without a
rule refuse split operands (reshard them to replicated first, or compute
inside ``auto_axes``).  Calls and control flow take their bodies' types.

Under ``jit`` each typed result is followed by a ``sharding_constraint`` of
its type on the mesh's devices, so XLA's partitioner lays values out as their
types say (as JAX lowers every value of an explicit type with its sharding).

Nothing here runs until a mesh with an ``Explicit`` axis has been made
(``plait_core.sharding.explicit_state.active``).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.primitive import Primitive
from plait_core.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    concrete_mesh,
    explicit_state,
    get_abstract_mesh,
    get_mesh,
)

__all__ = [
    "ShardingTypeError",
    "check_user_dot_general",
    "explicit_type",
    "suspended",
    "type_results",
    "with_out_sharding",
]

Dims = list[tuple[Hashable, ...]]
"""Per dimension, the explicit mesh axes it is split over (``()``: none)."""


class ShardingTypeError(Exception):
    """A layout that explicit sharding cannot type: ambiguous or illegal
    (JAX's ``ShardingTypeError``)."""


class _Suspended(threading.local):
    def __init__(self) -> None:
        self.axes: list[frozenset[Hashable]] = []


_suspended = _Suspended()


@contextlib.contextmanager
def suspended(axes: frozenset[Hashable]) -> Iterator[None]:
    """Inside the block, types do not record splits over ``axes`` (they are
    ``Auto`` there: ``auto_axes``)."""
    _suspended.axes.append(axes)
    try:
        yield
    finally:
        _suspended.axes.pop()


def _is_suspended(name: Hashable) -> bool:
    return any(name in s for s in _suspended.axes)


def explicit_type(aval: ShapedArray, sharding: Sharding | None) -> ShapedArray:
    """``aval`` with the explicit part of ``sharding`` as its type: the spec's
    entries over ``Explicit`` axes of a named sharding's mesh (none: no
    explicit sharding, the type is replicated)."""
    if not isinstance(sharding, NamedSharding):
        return aval if aval._sharding is None else aval.update(sharding=None)
    mesh = sharding.mesh
    explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is AxisType.Explicit}
    dims: Dims = []
    for d in range(aval.ndim):
        dims.append(tuple(n for n in sharding.spec.axis_names_of(d) if n in explicit and not _is_suspended(n)))
    return _with_dims(aval, mesh.abstract_mesh, dims)


def _with_dims(aval: ShapedArray, mesh: AbstractMesh | None, dims: Dims) -> ShapedArray:
    if mesh is None or not any(dims):
        return aval if aval._sharding is None else aval.update(sharding=None)
    spec = _spec(dims)
    old = aval._sharding
    if old is not None and old.mesh == mesh and tuple(old.spec) == tuple(spec):
        return aval
    return aval.update(sharding=NamedSharding(mesh, spec))


def _spec(dims: Dims) -> PartitionSpec:
    return PartitionSpec(*(None if not e else (e[0] if len(e) == 1 else e) for e in dims))


def _dims(aval: ShapedArray) -> Dims:
    s = aval._sharding
    if s is None:
        return [()] * aval.ndim
    dims = [s.spec.axis_names_of(d) for d in range(aval.ndim)]
    if _suspended.axes:
        dims = [tuple(n for n in e if not _is_suspended(n)) for e in dims]
    return dims


def _type_str(aval: ShapedArray, dims: Dims) -> str:
    """``f32[8@x,4@x]``: the type ``aval`` would have with ``dims`` (also when illegal)."""
    parts = [str(n) if not e else f"{n}@{e[0]}" if len(e) == 1 else f"{n}@({','.join(map(str, e))})"
             for n, e in zip(aval.shape, dims)]
    return f"{aval.str_short().split('[')[0]}[{','.join(parts)}]"


def _entries(dims: Dims) -> tuple[Any, ...]:
    """JAX's way of printing a spec in messages: ``('x', None)``."""
    return tuple(None if not e else (e[0] if len(e) == 1 else e) for e in dims)


def _mesh_of(prim: Primitive, avals: Sequence[ShapedArray]) -> AbstractMesh | None:
    mesh: AbstractMesh | None = None
    for a in avals:
        s = a._sharding
        if s is None:
            continue
        m = s.mesh
        if not isinstance(m, AbstractMesh):
            m = m.abstract_mesh
        if mesh is None:
            mesh = m
        elif m != mesh:
            raise ShardingTypeError(
                f"{prim.name}: operands are typed with shardings of different meshes, {mesh!r} and {m!r}; "
                "reshard them onto one mesh"
            )
    return mesh


# ---------------------------------------------------------------------------
# The rules: (prim, in avals, in dims, params, out avals) -> out dims


Rule = Callable[[Primitive, Sequence[ShapedArray], Sequence[Dims], dict[str, Any], Sequence[ShapedArray]], list[Dims]]


def _merge(prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], ndim: int) -> Dims:
    out: Dims = [()] * ndim
    for a, d in zip(avals, dims):
        if a.ndim == 0:
            continue
        for k, e in enumerate(d):
            if not e:
                continue
            if out[k] and out[k] != e:
                specs = ", ".join(repr(_entries(dd)) for aa, dd in zip(avals, dims) if aa.ndim)
                raise ShardingTypeError(f"{prim.name} got incompatible shardings for broadcasting: {specs}.")
            out[k] = e
    return out


def _elementwise(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    for a in avals:
        if a.ndim and a.ndim != outs[0].ndim and any(_dims(a)):
            raise ShardingTypeError(
                f"{prim.name}: an operand of type {a.str_short()} changes rank to {outs[0].str_short()}; plait "
                "has no explicit-sharding rule for that; reshard it to replicated (reshard(x, P())) first"
            )
    merged = _merge(prim, avals, dims, outs[0].ndim)
    return [list(merged) for _ in outs]


def _keep_each(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    """Each result typed as the operand at its position (``optimization_barrier``)."""
    return [list(d) for d in dims[: len(outs)]]


def _reduce(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    axes = set(params["axes"])
    kept = [e for k, e in enumerate(dims[0]) if k not in axes]
    return [kept for _ in outs]


def _cumulative(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    axis = params["axis"]
    if dims[0][axis]:
        raise ShardingTypeError(
            f"Input should be unsharded over the axis being reduced. Got input type={avals[0].str_short()} "
            f"and axis={axis}"
        )
    return [list(dims[0])]


def _sort(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    dim = params["dimension"]
    for a, d in zip(avals, dims):
        if d[dim]:
            raise ShardingTypeError(
                f"Arguments to sort must be unsharded over the sorting dimension. Got arg sharding={a._sharding!r} "
                f"and sorting dimension={dim}"
            )
    merged = _merge(prim, avals, dims, outs[0].ndim)
    return [list(merged) for _ in outs]


def _transpose(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    return [[dims[0][p] for p in params["permutation"]]]


def _broadcast_in_dim(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    out: Dims = [()] * outs[0].ndim
    for i, d in enumerate(params["broadcast_dimensions"]):
        out[d] = dims[0][i]
    return [out]


def _expand_dims(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    new = {d % outs[0].ndim for d in params["dimensions"]}
    it = iter(dims[0])
    return [[() if k in new else next(it) for k in range(outs[0].ndim)]]


def _squeeze(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    gone = {d % avals[0].ndim for d in params["dimensions"]}
    return [[e for k, e in enumerate(dims[0]) if k not in gone]]


def _slicing(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    """``slice``, ``pad``, ``rev``: the operand's spec (JAX keeps it)."""
    return [list(dims[0])]


def _dynamic_slice(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    operand = avals[0]
    for k, (e, full, part) in enumerate(zip(dims[0], operand.shape, outs[0].shape)):
        if e and full != part:
            raise ShardingTypeError(
                f"{prim.name}: dimension {k} of the operand {operand.str_short()} is split over {e} and sliced to "
                f"{part}; the result's sharding is ambiguous. Reshard the operand (reshard(x, P(...))) so that "
                "the sliced dimension is not split"
            )
    if any(any(d) for d in dims[1:]):
        raise ShardingTypeError(f"{prim.name}: the start indices must not be split over mesh axes")
    return [list(dims[0])]


def _dynamic_update_slice(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    operand, update = avals[0], avals[1]
    for k, (e, full, part) in enumerate(zip(dims[0], operand.shape, update.shape)):
        if (e or dims[1][k]) and (full != part or e != dims[1][k]):
            raise ShardingTypeError(
                f"{prim.name}: the operand {operand.str_short()} and the update {update.str_short()} must be split "
                f"alike, and only over dimensions updated whole (dimension {k})"
            )
    return [list(dims[0])]


def _concatenate(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    return [_merge(prim, avals, dims, outs[0].ndim)]


def _reshape(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    operand, out = avals[0], outs[0]
    src, dst = [int(d) for d in operand.shape], [int(d) for d in out.shape]
    spec = dims[0]
    result: Dims = [()] * len(dst)
    mesh = operand._sharding.mesh if operand._sharding is not None else None

    def fail() -> ShardingTypeError:
        return ShardingTypeError(
            "This reshape is not supported: the sharding of the result is ambiguous. Reshard the operand first "
            "(reshard(x, P(...)); plait's lax.reshape has no `out_sharding` argument). Got operand type: "
            f"{operand.str_short()}, new sizes: {tuple(dst)}"
        )

    i = j = 0
    while i < len(src) or j < len(dst):
        # one group: the fewest dims on each side with equal products
        i0, j0 = i, j
        pi = src[i] if i < len(src) else 1
        pj = dst[j] if j < len(dst) else 1
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj and i < len(src):
                pi *= src[i]
                i += 1
            elif j < len(dst):
                pj *= dst[j]
                j += 1
            else:
                raise fail()
        gi, gj = range(i0, min(i, len(src))), range(j0, min(j, len(dst)))
        names = tuple(n for k in gi for n in spec[k])
        if not names:
            continue
        # one dimension split into several (its split goes to the first, which it must divide), or
        # several merged into one (their splits, major to minor); anything else needs a reshard
        if mesh is None or len(gj) == 0 or (len(gi) > 1 and len(gj) > 1):
            raise fail()
        if dst[gj[0]] % math.prod(mesh.axis_size(n) for n in names):
            raise fail()
        result[gj[0]] = names
    return [result]


def _dot_general(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    ld, rd = dims[0], dims[1]
    lbs, rbs = [ld[k] for k in lb], [rd[k] for k in rb]
    for a, b in zip(lbs, rbs):
        if a != b:
            raise ShardingTypeError(
                "dot_general requires lhs batch dimensions and rhs batch dimensions to have the consistent "
                f"sharding, got {_entries(lbs)} and {_entries(rbs)}."
            )
    lfree = [ld[k] for k in range(avals[0].ndim) if k not in lc and k not in lb]
    rfree = [rd[k] for k in range(avals[1].ndim) if k not in rc and k not in rb]
    return [lbs + lfree + rfree]


def check_user_dot_general(lhs: ShapedArray, rhs: ShapedArray, dimension_numbers: Any) -> None:
    """JAX's error for a product the user writes whose contracting dimensions
    are split alike on both sides (the result's layout is ambiguous: JAX asks for
    ``out_sharding``, which plait's ``dot_general`` does not take)."""
    if lhs._sharding is None or rhs._sharding is None or _resolving.depth:
        return
    (lc, rc), _ = dimension_numbers
    ls, rs = [_dims(lhs)[k] for k in lc], [_dims(rhs)[k] for k in rc]
    if any(a and a == b for a, b in zip(ls, rs)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please "
            "reshard an operand, or compute the product inside auto_axes (plait's dot_general has no "
            f"`out_sharding` parameter). Got lhs_contracting_spec={_entries(ls)} and "
            f"rhs_contracting_spec={_entries(rs)}"
        )


def _reshard(
    prim: Primitive, avals: Sequence[ShapedArray], dims: Sequence[Dims], params: dict[str, Any], outs: Sequence[ShapedArray]
) -> list[Dims]:
    typed = explicit_type(outs[0], params["sharding"])
    return [_dims(typed)]


_BY_FAMILY: dict[str, Rule] = {"elementwise": _elementwise}
_BY_NAME: dict[str, Rule] = {
    "add_any": _elementwise,
    "stop_gradient": _elementwise,
    "zeros_like": _elementwise,
    "copy": _elementwise,
    "optimization_barrier": _keep_each,
    **dict.fromkeys(
        ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "argmax", "argmin"], _reduce
    ),
    **dict.fromkeys(["cumsum", "cumprod", "cummax", "cummin"], _cumulative),
    "sort": _sort,
    "transpose": _transpose,
    "broadcast_in_dim": _broadcast_in_dim,
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    "reshape": _reshape,
    "slice": _slicing,
    "pad": _slicing,
    "rev": _slicing,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "concatenate": _concatenate,
    "dot_general": _dot_general,
    "sharding_constraint": _reshard,
}

BODY_TYPED = frozenset({"call", "control_flow"})
"""Families whose results take the types their bodies' results have."""

ALWAYS = frozenset({"sharding_constraint"})
"""Primitives typed by their parameters even when no operand is split."""


def type_results(prim: Primitive, avals: Sequence[ShapedArray], params: dict[str, Any], out: Any) -> tuple[Any, Mesh | None]:
    """The results ``out`` of ``prim`` (its abstract evaluation) with their
    explicit types, and the devices to lay them out on (``None``: leave them to
    XLA, e.g. the results of calls, whose bodies are laid out already)."""
    outs: list[ShapedArray] = list(out) if prim.multiple_results else [out]
    if prim.family in BODY_TYPED or prim.name == "shard_map":
        return out, None
    mesh = _mesh_of(prim, avals)
    rule = _BY_NAME.get(prim.name) or _BY_FAMILY.get(prim.family)
    if rule is None:
        if mesh is None:
            return out, None
        types = ", ".join(a.str_short() for a in avals)
        raise ShardingTypeError(
            f"plait has no explicit-sharding rule for {prim.name} (operands {types}); reshard the split operands "
            "to replicated first (reshard(x, P())), or compute it inside auto_axes"
        )
    dims = [_dims(a) for a in avals]
    new_dims = rule(prim, avals, dims, params, outs)
    if prim.name == "sharding_constraint":
        s = params["sharding"]
        mesh = s.mesh.abstract_mesh if isinstance(s, NamedSharding) else mesh
    typed: list[ShapedArray] = []
    for o, d in zip(outs, new_dims):
        used = [n for e in d for n in e]
        if len(used) != len(set(used)):
            ins = ", ".join(a.str_short() for a in avals)
            bad = _type_str(o, d)
            raise ShardingTypeError(f"{prim.name} operation with inputs: {ins} produces an illegally sharded result: {bad}")
        typed.append(_with_dims(o, mesh, d))
    devices = None if _suspended.axes else _concrete(mesh)
    return (typed if prim.multiple_results else typed[0]), devices


def _concrete(mesh: AbstractMesh | None) -> Mesh | None:
    return None if mesh is None else concrete_mesh(mesh)


def needs_typing(prim: Primitive, avals: Sequence[ShapedArray]) -> bool:
    """Whether staging must type ``prim``'s results (an operand is split, or
    ``prim`` sets types itself)."""
    return prim.name in ALWAYS or any(a._sharding is not None for a in avals)


def is_active() -> bool:
    """Whether any mesh with ``Explicit`` axes exists (else no typing runs)."""
    return explicit_state.active


def context_explicit_axes() -> tuple[Hashable, ...]:
    """The ``Explicit`` axes of the abstract mesh in context."""
    return get_abstract_mesh().explicit_axes


def check_constraint(x: Any, sharding: Sharding, bare_spec: bool) -> None:
    """JAX's checks of ``with_sharding_constraint`` under explicit axes: a
    :class:`NamedSharding` may name only ``Auto`` axes (``reshard`` changes
    explicit layouts); a bare ``PartitionSpec`` over a mesh whose axes are all
    ``Explicit`` asserts the value's type (``AssertionError`` if it differs)."""
    if not isinstance(sharding, NamedSharding):
        return
    mesh = sharding.mesh
    explicit = set(_axes_of_type(mesh, AxisType.Explicit))
    if not explicit:
        return
    aval = getattr(x, "aval", None)
    if bare_spec and len(explicit) == len(mesh.axis_names):
        mine = _spec(_dims(aval)) if isinstance(aval, ShapedArray) else PartitionSpec()
        if _trimmed(mine) != _trimmed(sharding.spec):
            raise AssertionError(
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The "
                f"array sharding: {mine!r} did not match the sharding provided: {sharding.spec!r}. Please use "
                "`plait.sharding.reshard` to shard your input to the sharding you want."
            )
        return
    if any(n in explicit for n in sharding.spec.all_names()):
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of the mesh. "
            f"Got spec={sharding.spec!r} and mesh={mesh.abstract_mesh!r}. You probably meant to use `reshard` API?"
        )


def _axes_of_type(mesh: Mesh | AbstractMesh, kind: AxisType) -> tuple[Hashable, ...]:
    return tuple(n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is kind)


def _trimmed(spec: PartitionSpec) -> tuple[Any, ...]:
    entries = list(spec)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


class _Resolving(threading.local):
    depth = 0


_resolving = _Resolving()


def with_out_sharding(compute: Callable[[], Any], out_sharding: Any) -> Any:
    """``compute()`` (a product the user asked for with ``out_sharding=``), its
    contracting dimensions split alike allowed (reduced over the devices), the
    result laid out and typed as ``out_sharding`` (a sharding, or a
    ``PartitionSpec`` of the context mesh).  A ``NamedSharding`` over the empty
    abstract mesh (``typeof(x).sharding`` outside every mesh; flax.nnx's Dropout
    passes it) asks for nothing, as in JAX: the result is ``compute()``'s."""
    if (isinstance(out_sharding, NamedSharding) and isinstance(out_sharding.mesh, AbstractMesh)
            and out_sharding.mesh.empty):
        return compute()
    _resolving.depth += 1
    try:
        out = compute()
    finally:
        _resolving.depth -= 1
    return reshard_to(out, out_sharding, "out_sharding")


def reshard_to(x: Any, sharding: Any, what: str) -> Any:
    """``x`` laid out and typed as ``sharding`` (a bare ``PartitionSpec``
    refers to the context mesh)."""
    if isinstance(sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            abstract = get_abstract_mesh()
            mesh = None if abstract.empty else concrete_mesh(abstract)
        if mesh is None:
            raise ValueError(f"{what}: a bare PartitionSpec {sharding!r} needs a context mesh (plait.set_mesh(mesh))")
        sharding = NamedSharding(mesh, sharding)
    if not isinstance(sharding, Sharding):
        raise TypeError(f"{what}: expected a sharding or PartitionSpec, got {sharding!r}")
    return constraint_primitive().bind(x, sharding=sharding)


_constraint_prim: list[Primitive] = []


def register_constraint_primitive(prim: Primitive) -> None:
    """Install ``sharding_constraint`` (defined by the primitives' layer above this
    module, which registers it when it is imported)."""
    _constraint_prim[:] = [prim]


def constraint_primitive() -> Primitive:
    """The ``sharding_constraint`` primitive that lays typed results out."""
    if not _constraint_prim:
        raise RuntimeError("plait_core.explicit_sharding: sharding_constraint is not registered (import plait_core)")
    return _constraint_prim[0]
