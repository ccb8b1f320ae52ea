"""Rules of the sharding family: ``shard_map`` and ``sharding_constraint``.

* ``sharding_constraint`` is the identity on values: linear, its tangent and
  cotangent keep the same layout.
* ``shard_map``'s JVP is a ``shard_map`` of the JVP of its body (tangents
  split as their primals).  Its transpose is a ``shard_map`` of the
  transposed body.  With ``check_vma`` the body says where values stop
  varying and start (``psum`` of a varying value, ``pvary`` of an invariant
  one) and those transpose to each other, so the transposed body is right as
  it stands.  Without it (``check_vma=False``, ``pmap``) there is one
  correction on each side for the values that are replicated over mesh axes
  a spec does not name: an output's cotangent is divided by the number of
  devices holding the same piece (each device's body transposes a copy of
  it), and an input's cotangent is summed over those axes (each device
  contributed to the one replicated input); ``psum``'s transpose stays
  ``psum`` there (as under ``vmap``).

Bodies are traced again with the mesh's axis names bound, as ``shard_map``
binds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_autodiff.jaxpr_util import eval_jaxpr, hoist_consts
from plait_autodiff.jvp import jvp_jaxpr
from plait_autodiff.registries import jvp_rules, transpose_rules
from plait_autodiff.rules.common import deflinear
from plait_autodiff.tangents import Zero, to_tangent_type
from plait_autodiff.transpose import is_undefined, transpose_jaxpr
from plait_core import ClosedJaxpr, dtypes, ops
from plait_core.primitives.collectives import psum_p
from plait_core.primitives.sharding import mesh_axis_env, shard_map_p, sharding_constraint_p, unmentioned_axes
from plait_core.sharding import Mesh, PartitionSpec, mesh_axis_sizes
from plait_core.staging import trace_to_jaxpr

deflinear(sharding_constraint_p, lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)])


def _shard_map_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    jaxpr: ClosedJaxpr,
    mesh: Mesh,
    in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...],
    check_vma: bool,
) -> tuple[list[Any], list[Any]]:
    nz = [type(t) is not Zero for t in tangents]
    with mesh_axis_env(mesh, check_vma):
        body, out_nz = jvp_jaxpr(jaxpr, nz, False)
    body, consts = hoist_consts(body)
    given = [t for t in tangents if type(t) is not Zero]
    outs = shard_map_p.bind(
        *consts,
        *primals,
        *given,
        jaxpr=body,
        mesh=mesh,
        in_specs=(PartitionSpec(),) * len(consts) + in_specs + tuple(s for s, z in zip(in_specs, nz) if z),
        out_specs=out_specs + tuple(s for s, z in zip(out_specs, out_nz) if z),
        check_vma=check_vma,
    )
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    out_tangents = [next(it) if z else Zero.from_primal_value(p) for z, p in zip(out_nz, outs[:n])]
    return list(outs[:n]), out_tangents


def _shard_map_transpose(
    cts: Sequence[Any],
    *args: Any,
    jaxpr: ClosedJaxpr,
    mesh: Mesh,
    in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...],
    check_vma: bool,
) -> list[Any]:
    linear = [is_undefined(x) for x in args]
    ct_nz = [type(ct) is not Zero for ct in cts]
    res_avals = [a for a, lin in zip(jaxpr.in_avals, linear) if not lin]
    ct_avals = [to_tangent_type(a) for a, nz in zip(jaxpr.out_avals, ct_nz) if nz]
    ct_specs = [s for s, nz in zip(out_specs, ct_nz) if nz]
    lin_specs = [s for s, lin in zip(in_specs, linear) if lin]

    def body(*xs: Any) -> list[Any]:
        res, given = xs[: len(res_avals)], list(xs[len(res_avals) :])
        if check_vma:
            return eval_jaxpr(transposed.jaxpr, transposed.consts, *res, *given)
        for k, spec in enumerate(ct_specs):
            copies = mesh_axis_sizes(mesh, unmentioned_axes(mesh, spec))
            if copies > 1 and dtypes.is_inexact(ops.aval(given[k]).dtype):
                given[k] = ops.div(given[k], ops.full((), copies, ops.aval(given[k]).dtype))
        cts_in = eval_jaxpr(transposed.jaxpr, transposed.consts, *res, *given)
        out = []
        for ct, spec in zip(cts_in, lin_specs):
            axes = unmentioned_axes(mesh, spec)
            out.append(psum_p.bind(ct, axes=axes) if axes and dtypes.is_inexact(ops.aval(ct).dtype) else ct)
        return out

    with mesh_axis_env(mesh, check_vma):
        transposed = transpose_jaxpr(jaxpr, linear, ct_nz)
        closed = trace_to_jaxpr(body, [*res_avals, *ct_avals])
    closed, consts = hoist_consts(closed)
    residuals = [x for x, lin in zip(args, linear) if not lin]
    given = [ct for ct in cts if type(ct) is not Zero]
    outs = iter(
        shard_map_p.bind(
            *consts,
            *residuals,
            *given,
            jaxpr=closed,
            mesh=mesh,
            in_specs=(PartitionSpec(),) * len(consts)
            + tuple(s for s, lin in zip(in_specs, linear) if not lin)
            + tuple(ct_specs),
            out_specs=tuple(lin_specs),
            check_vma=check_vma,
        )
    )
    return [next(outs) if lin else None for lin in linear]


jvp_rules[shard_map_p] = _shard_map_jvp
transpose_rules[shard_map_p] = _shard_map_transpose
