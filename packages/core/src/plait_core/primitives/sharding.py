"""Primitives of the sharding family: programs laid out over a device mesh.

``shard_map(*operands; jaxpr, mesh, in_specs, out_specs, check_vma)``
    Runs ``jaxpr`` once per device of ``mesh`` on that device's pieces of
    the operands: operand ``i`` is split as ``in_specs[i]`` (a
    :class:`~plait_core.sharding.PartitionSpec`) says, so ``jaxpr`` sees
    per-device shapes; output ``j``'s pieces are put together as
    ``out_specs[j]`` says (mesh axes an out spec does not name must hold
    equal pieces, e.g. after a ``psum`` over them).  Inside ``jaxpr`` the
    mesh's axis names are bound, so the named-axis collectives (``psum``,
    ``all_gather``, ``axis_index``, ...) act across devices.  ``jaxpr`` is a
    closed jaxpr without constants; constants travel as replicated operands.
    With ``check_vma`` the body's values know the mesh axes they vary over
    (:mod:`plait_core.vma`): mixing an invariant value into a varying one is an
    explicit ``pvary``, whose transpose sums over devices, so the body is
    transposed as it stands.  Without it (JAX's ``check_vma=False``, and
    ``pmap``), transposition corrects at the boundary for values replicated
    over axes a spec does not name.

``sharding_constraint(x; sharding)``
    ``x`` itself, laid out as ``sharding`` from here on (a hint for XLA's
    partitioner; ``with_sharding_constraint``).

Both mean something only on devices: plait-dispatch compiles them; core's
NumPy evaluation of a ``shard_map`` (without plait-dispatch) is not
supported, as it has no devices to run the pieces on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.axes import extend_axis_env
from plait_core.explicit_sharding import register_constraint_primitive
from plait_core.jaxpr import ClosedJaxpr, eval_jaxpr
from plait_core.partial_eval import PartialEvalTrace, partial_eval_jaxpr, partial_eval_rules
from plait_core.primitive import Primitive
from plait_core.primitives.calls import hoist_consts
from plait_core.primitives.structural import reshape_p
from plait_core.sharding import Mesh, PartitionSpec, Sharding, mesh_axis_sizes
from plait_core.staging import trace_to_jaxpr
from plait_core.trace import set_current_trace
from plait_core.vma import tracking

__all__ = [
    "mesh_axis_env",
    "shard_aval",
    "shard_map_p",
    "sharding_constraint_p",
    "unmentioned_axes",
    "unshard_aval",
    "varying_axes",
]

shard_map_p = Primitive("shard_map", family="sharding", multiple_results=True)
sharding_constraint_p = Primitive("sharding_constraint", family="sharding")
register_constraint_primitive(sharding_constraint_p)


@contextlib.contextmanager
def mesh_axis_env(mesh: Mesh, check_vma: bool = False) -> Iterator[None]:
    """Bind the mesh's axis names to their sizes (inside a ``shard_map`` body);
    with ``check_vma``, staging also tracks which of them each value varies over
    (:mod:`plait_core.vma`)."""
    with extend_axis_env(list(mesh.shape.items())), tracking(frozenset(mesh.axis_names) if check_vma else None):
        yield


def varying_axes(spec: PartitionSpec, mesh: Mesh) -> frozenset[Any]:
    """The mesh axes a piece split as ``spec`` varies over: those the spec names."""
    return frozenset(n for n in spec.all_names() if n in mesh.axis_names)


def shard_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh, what: str) -> ShapedArray:
    """The per-device type of a value of ``aval`` split as ``spec`` over ``mesh``;
    ``ValueError`` when a split dimension is not divisible."""
    if len(spec) > len(aval.shape):
        raise ValueError(f"{what}: the spec {spec!r} has more entries than {aval.str_short()} has dimensions")
    shape = list(aval.shape)
    for d in range(len(shape)):
        n = mesh_axis_sizes(mesh, spec.axis_names_of(d))
        if n > 1:
            if type(shape[d]) is not int or shape[d] % n:
                raise ValueError(
                    f"{what}: dimension {d} of {aval.str_short()} is split over the mesh axes "
                    f"{spec.axis_names_of(d)} ({n} pieces), but {shape[d]} is not divisible by {n}"
                )
            shape[d] = shape[d] // n
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def unshard_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh, what: str) -> ShapedArray:
    """The global type of per-device pieces of ``aval`` put together as ``spec``."""
    if len(spec) > len(aval.shape):
        raise ValueError(f"{what}: the out spec {spec!r} has more entries than {aval.str_short()} has dimensions")
    shape = tuple(
        s * mesh_axis_sizes(mesh, spec.axis_names_of(d)) for d, s in enumerate(aval.shape)
    )
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def unmentioned_axes(mesh: Mesh, spec: PartitionSpec) -> tuple[Any, ...]:
    """The mesh axes ``spec`` does not split over (the value is replicated over them)."""
    named = set(spec.all_names())
    return tuple(n for n in mesh.axis_names if n not in named)


def _check(params: dict[str, Any], n: int) -> tuple[ClosedJaxpr, Mesh, tuple[PartitionSpec, ...], tuple[PartitionSpec, ...]]:
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    if not isinstance(jaxpr, ClosedJaxpr) or jaxpr.consts:
        raise TypeError("shard_map: the param jaxpr must be a ClosedJaxpr without constants")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map: the param mesh must be a Mesh, got {mesh!r}")
    if not isinstance(params.get("check_vma"), bool):
        raise TypeError(f"shard_map: the param check_vma must be a bool, got {params.get('check_vma')!r}")
    if len(in_specs) != n or len(jaxpr.in_avals) != n:
        raise TypeError(f"shard_map: {n} operands but {len(in_specs)} in_specs and {len(jaxpr.in_avals)} jaxpr inputs")
    if len(out_specs) != len(jaxpr.out_avals):
        raise TypeError(f"shard_map: {len(jaxpr.out_avals)} outputs but {len(out_specs)} out_specs")
    return jaxpr, mesh, in_specs, out_specs


def _shard_map_abstract_eval(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
    jaxpr, mesh, in_specs, out_specs = _check(params, len(avals))
    for k, (a, spec, want) in enumerate(zip(avals, in_specs, jaxpr.in_avals)):
        got = shard_aval(a, spec, mesh, f"shard_map operand {k}")
        if got.shape != want.shape or got.dtype != want.dtype:
            raise TypeError(
                f"shard_map: operand {k} of type {a.str_short()} split as {spec!r} is {got.str_short()} per device, "
                f"but the body takes {want.str_short()}"
            )
    return [unshard_aval(a, s, mesh, f"shard_map output {j}") for j, (a, s) in enumerate(zip(jaxpr.out_avals, out_specs))]


def _shard_map_impl(*args: Any, **params: Any) -> list[Any]:
    raise NotImplementedError(
        "shard_map is not supported by core's NumPy evaluation: it runs one program per device, and "
        "only plait-dispatch has devices (import plait, or plait_dispatch)"
    )


shard_map_p.def_abstract_eval(_shard_map_abstract_eval)
shard_map_p.def_impl(_shard_map_impl)


def _constraint_abstract_eval(x: ShapedArray, *, sharding: Any) -> ShapedArray:
    if not isinstance(sharding, Sharding):
        raise TypeError(f"sharding_constraint: the param sharding must be a Sharding, got {sharding!r}")
    sharding._tiling(len(x.shape))  # the spec fits the rank
    return x


sharding_constraint_p.def_abstract_eval(_constraint_abstract_eval)
sharding_constraint_p.def_impl(lambda x, *, sharding: x)


# ---------------------------------------------------------------------------
# Partial evaluation: the known half is a shard_map bound now, the unknown
# half a staged one.  Residuals are per-device values: each gets a leading
# axis of size 1, split over every mesh axis, so that they travel between
# the two as one global array.


def _all_axes(mesh: Mesh) -> PartitionSpec:
    names = mesh.axis_names
    return PartitionSpec(names[0] if len(names) == 1 else tuple(names))


def _shard_map_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    closed, mesh, in_specs, out_specs = _check(params, len(args))
    in_unknowns = [trace.is_unknown(x) for x in args]
    with mesh_axis_env(mesh, params["check_vma"]):
        known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, in_unknowns)
        nk = len(known.out_avals) - num_res
        res_avals = known.out_avals[nk:]

        def known_fun(*xs: Any) -> list[Any]:
            outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
            res = [reshape_p.bind(r, new_sizes=(1, *r.aval.shape), dimensions=None) for r in outs[nk:]]
            return [*outs[:nk], *res]

        def unknown_fun(*xs: Any) -> list[Any]:
            res = [reshape_p.bind(r, new_sizes=tuple(a.shape), dimensions=None) for r, a in zip(xs[:num_res], res_avals)]
            return eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *xs[num_res:])

        known_wrapped = trace_to_jaxpr(known_fun, known.in_avals)
        # A residual keeps its varying axes: an invariant one has equal pieces on every device.
        lifted = [ShapedArray((1, *a.shape), a.dtype, a.weak_type, a.vma) for a in res_avals]
        unknown_wrapped = trace_to_jaxpr(unknown_fun, [*lifted, *unknown.in_avals[num_res:]])
    known_body, known_consts = hoist_consts(known_wrapped)
    unknown_body, unknown_consts = hoist_consts(unknown_wrapped)
    res_spec = _all_axes(mesh)
    known_args = [x for x, u in zip(args, in_unknowns) if not u]
    known_in = tuple(s for s, u in zip(in_specs, in_unknowns) if not u)
    known_out = tuple(s for s, u in zip(out_specs, out_unknowns) if not u) + (res_spec,) * num_res
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        known_outs = shard_map_p.bind(
            *known_consts,
            *known_args,
            jaxpr=known_body,
            mesh=mesh,
            in_specs=(PartitionSpec(),) * len(known_consts) + known_in,
            out_specs=known_out,
            check_vma=params["check_vma"],
        )
    unknown_outs: list[Any] = []
    if any(out_unknowns):
        unknown_args = [x for x, u in zip(args, in_unknowns) if u]
        unknown_in = tuple(s for s, u in zip(in_specs, in_unknowns) if u)
        unknown_params = dict(
            params,
            jaxpr=unknown_body,
            in_specs=(PartitionSpec(),) * len(unknown_consts) + (res_spec,) * num_res + unknown_in,
            out_specs=tuple(s for s, u in zip(out_specs, out_unknowns) if u),
        )
        unknown_outs = trace.stage(
            shard_map_p, [*unknown_consts, *known_outs[nk:], *unknown_args], unknown_params
        )
    ki, ui = iter(known_outs[:nk]), iter(unknown_outs)
    return [next(ui) if u else next(ki) for u in out_unknowns]


partial_eval_rules[shard_map_p] = _shard_map_partial_eval
