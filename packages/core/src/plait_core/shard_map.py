"""``shard_map``, its single-axis form ``smap``, and ``with_sharding_constraint``:
the front-ends of the sharding primitives (:mod:`plait_core.primitives.sharding`)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from plait_core.abstract import get_aval
from plait_core.explicit_sharding import check_constraint
from plait_core.primitives.calls import fun_name, hoist_consts
from plait_core.primitives.sharding import (
    mesh_axis_env,
    shard_aval,
    shard_map_p,
    sharding_constraint_p,
    unmentioned_axes,
    varying_axes,
)
from plait_core.sharding import (
    AbstractMesh,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    explicit_state,
    get_mesh,
)
from plait_core.staging import check_output_leaves, trace_to_jaxpr
from plait_core.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["shard_map", "smap", "with_sharding_constraint"]


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _broadcast_specs(specs: Any, tree: Any, what: str, where: str) -> list[PartitionSpec]:
    """One spec per leaf of ``tree``, from ``specs``, a pytree prefix of it."""
    # A None spec over a subtree without leaves (an output None) asks for nothing, as in JAX.
    if _is_spec(specs):
        n = len(tree_flatten(tree)[0])
        return [_spec(specs, what, where)] * n if n else []
    spec_leaves, spec_tree = tree_flatten(specs, is_leaf=_is_spec)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(
            f"{where}: {what} must be a pytree prefix of the {'arguments' if what == 'in_specs' else 'outputs'}, "
            f"got {specs!r}: {str(e).splitlines()[0]}"
        ) from None
    out: list[PartitionSpec] = []
    for s, sub in zip(spec_leaves, subtrees):
        n = len(tree_flatten(sub)[0])
        if n:
            out.extend([_spec(s, what, where)] * n)
    return out


def _spec(s: Any, what: str, where: str) -> PartitionSpec:
    if s is None:
        raise TypeError(
            f"{where}: {what} has None where a PartitionSpec belongs; use P() for a replicated value"
        )
    return s  # type: ignore[no-any-return]


class _Tracing(threading.local):
    def __init__(self) -> None:
        self.meshes: list[Mesh] = []


_tracing = _Tracing()
"""The meshes of the shard_map functions being traced now (innermost last)."""


def shard_map(
    f: Callable[..., Any] | None = None,
    /,
    *,
    mesh: Mesh | None = None,
    in_specs: Any,
    out_specs: Any,
    check_rep: bool = True,
    check_vma: bool | None = None,
    axis_names: Any = None,
) -> Any:
    """Map ``f`` over the devices of ``mesh``: each device runs ``f`` on its
    pieces of the arguments.

    ``in_specs`` is a pytree prefix of the argument tuple whose leaves are
    :class:`~plait_core.sharding.PartitionSpec`\\ s: argument dimensions
    named in a spec are split over those mesh axes (they must be divisible);
    ``f`` sees the per-device shapes.  ``out_specs`` (a prefix of ``f``'s
    output) says how the outputs' pieces are put back together.  Inside ``f``
    the mesh axis names are bound for ``lax.psum``, ``pmean``, ``pmax``,
    ``pmin``, ``all_gather``, ``psum_scatter``, ``ppermute``, ``all_to_all``
    and ``axis_index``.

    With ``check_vma=True`` (the default, as in JAX 0.10) every value inside
    ``f`` knows the mesh axes it varies over (``plait.typeof(x).vma``): an
    argument split over ``x`` varies over ``x``, a replicated one (``P()``)
    does not.  Combining an invariant value with a varying one casts it with
    ``lax.pvary`` first, whose transpose is ``psum``: so ``grad`` inside ``f``
    of a loss of replicated parameters and split data is the gradient summed
    over devices, as in JAX.  An output whose out spec leaves out an axis it
    varies over is a ``ValueError`` naming the axis (reduce it with
    ``lax.psum`` first, or name the axis in the spec).  ``check_vma=False``
    (or JAX's older ``check_rep=False``) turns this off: nothing is checked,
    the pieces over an axis an out spec leaves out are assumed equal, and
    ``grad`` inside ``f`` is each device's own.

    ``out_specs`` may also be a function of the output's tree structure
    returning the specs, for callers that learn them while ``f`` is traced
    (``pmap`` does).

    ``mesh`` defaults to the context mesh (``with mesh:``); ``axis_names``
    (a subset of the mesh's axes to map manually) must be all of them, or
    empty or ``None`` (all of them, as JAX's empty default).  Works under
    ``jit``, ``grad`` and ``vmap``.
    """
    if f is None:
        return functools.partial(
            shard_map, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_rep=check_rep,
            check_vma=check_vma, axis_names=axis_names,
        )
    if not callable(f):
        raise TypeError(f"shard_map: expected a function, got {type(f).__name__}: {f!r}")
    the_mesh = mesh if mesh is not None else get_mesh()
    if not isinstance(the_mesh, Mesh):
        raise TypeError(
            f"shard_map: mesh must be a Mesh (or use a context mesh: with mesh: ...), got {the_mesh!r}"
        )
    # An empty set means every mesh axis, as in JAX (its default is frozenset()).
    if axis_names is not None and set(axis_names) and set(axis_names) != set(the_mesh.axis_names):
        raise NotImplementedError(
            f"shard_map(axis_names={set(axis_names)}): mapping only some mesh axes manually is not supported "
            f"(the mesh's axes: {the_mesh.axis_names}); plait maps all of them"
        )
    name = fun_name(f)
    where = f"shard_map of {name}"
    check = bool(check_rep if check_vma is None else check_vma)

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        if _tracing.meshes:
            raise NotImplementedError(
                f"{where}: a shard_map (or pmap) inside the function of another one is not supported; map over "
                "one mesh with several axes instead (make_mesh((a, b), ('i', 'j')) and specs naming both), or "
                "use vmap(..., axis_name=...) inside"
            )
        leaves, in_tree = tree_flatten(args)
        specs = _broadcast_specs(tuple(in_specs) if isinstance(in_specs, list) else in_specs, args, "in_specs", where)
        avals = [get_aval(x, f"an argument of {where}") for x in leaves]
        shard_avals = [shard_aval(a, s, the_mesh, f"{where}, argument leaf {k}") for k, (a, s) in enumerate(zip(avals, specs))]
        if check:
            shard_avals = [a.update(vma=varying_axes(s, the_mesh)) for a, s in zip(shard_avals, specs)]
        out_trees: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            out = f(*tree_unflatten(in_tree, xs))
            out_leaves, out_tree = tree_flatten(out)
            check_output_leaves(out_leaves, out_tree, where)
            out_trees.append(out_tree)
            return out_leaves

        _tracing.meshes.append(the_mesh)
        try:
            with mesh_axis_env(the_mesh, check):
                closed = trace_to_jaxpr(flat, shard_avals)
        finally:
            _tracing.meshes.pop()
        body, consts = hoist_consts(closed)
        out_tree = out_trees[0]
        placeholder = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        if callable(out_specs):
            given = out_specs(out_tree)
        else:
            given = tuple(out_specs) if isinstance(out_specs, list) else out_specs
        ospecs = _broadcast_specs(given, placeholder, "out_specs", where)
        if check:
            _check_out_vma(body.out_avals, ospecs, the_mesh, where)
        outs = shard_map_p.bind(
            *consts,
            *leaves,
            jaxpr=body,
            mesh=the_mesh,
            in_specs=(PartitionSpec(),) * len(consts) + tuple(specs),
            out_specs=tuple(ospecs),
            check_vma=check,
        )
        return tree_unflatten(out_tree, outs)

    return mapped


def _check_out_vma(avals: Any, specs: list[PartitionSpec], mesh: Mesh, where: str) -> None:
    """``ValueError`` for an output that varies over a mesh axis its out spec
    leaves out (it would be put together from one device's piece)."""
    for k, (aval, spec) in enumerate(zip(avals, specs)):
        bad = [a for a in unmentioned_axes(mesh, spec) if a in aval.vma]
        if bad:
            raise ValueError(
                f"{where}: the out spec {spec!r} of output leaf {k} ({aval.str_short()}) says it is "
                f"replicated over the mesh axes {tuple(bad)}, but it varies over them (it depends on values split over "
                f"them, or on axis_index). Reduce it over those axes (lax.psum / pmean / all_gather), name them in "
                f"the out spec, or pass check_vma=False to take the pieces as equal unchecked"
            )


class _InferAxes:
    def __repr__(self) -> str:
        return "Infer"


_INFER: Any = _InferAxes()


def _axis_spec(axis_name: Any, axis: int | None) -> PartitionSpec:
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*([None] * axis), axis_name)


def smap(
    f: Callable[..., Any] | None = None, /, *, in_axes: Any = _INFER, out_axes: Any, axis_name: Any
) -> Any:
    """``shard_map`` over the one mesh axis ``axis_name`` of the context mesh
    (``set_mesh`` / ``with mesh:``), with ``vmap``-style axes: ``in_axes`` (an
    int, ``None`` or a tuple with one entry per positional argument, pytrees
    of those allowed) says which array axis of each argument is split over the
    mesh axis (``None``: every device gets all of it), ``out_axes`` along which
    axis the outputs' pieces are put back together (``None``: equal on every
    device).  ``f`` sees its pieces.  Usable as a decorator
    (``@smap(in_axes=0, out_axes=0, axis_name='x')``).

    ``in_axes`` must be given: JAX infers it only from explicit-sharding types,
    which plait does not have.  The context mesh must have no axis besides
    ``axis_name`` (plait's shard_map maps every mesh axis manually)."""
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap: axis_name must be one (hashable) axis name, got {axis_name!r}")
    if in_axes is _INFER:
        raise ValueError(
            "smap: in_axes is required: JAX infers it only from explicit-sharding types, which plait does not "
            "have; give an int, None or a tuple with one entry per positional argument"
        )
    if in_axes is not None and not isinstance(in_axes, (int, tuple)):
        raise TypeError(
            f"smap: in_axes must be an int, None or a tuple with one entry per positional argument, got {in_axes!r}"
        )
    for what, axes in (("in_axes", in_axes), ("out_axes", out_axes)):
        for leaf in tree_flatten(axes, is_leaf=lambda x: x is None)[0]:
            if leaf is not None and (type(leaf) is not int or leaf < 0):
                raise TypeError(f"smap: the leaves of {what} must be non-negative ints or None, got {axes!r}")
    in_specs = tree_map(lambda a: _axis_spec(axis_name, a), in_axes, is_leaf=lambda x: x is None)
    out_specs = tree_map(lambda a: _axis_spec(axis_name, a), out_axes, is_leaf=lambda x: x is None)
    fun = f

    @functools.wraps(fun)
    def mapped(*args: Any) -> Any:  # the context mesh is the one of the call
        if get_mesh() is None:
            raise ValueError("smap: the context mesh is empty; enter one with plait.set_mesh(mesh) or `with mesh:`")
        return shard_map(fun, mesh=None, in_specs=in_specs, out_specs=out_specs, axis_names={axis_name})(*args)

    return mapped


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (a pytree), laid out as ``shardings`` says from here on.

    ``shardings`` is one sharding for every leaf or a pytree prefix of
    ``x``; a bare :class:`PartitionSpec` refers to the context mesh (``with
    mesh:``).  Under ``jit`` it is a layout request to XLA's partitioner;
    eagerly it places the value (as ``device_put`` would).  The values are
    unchanged."""

    def resolve(s: Any) -> Sharding:
        if isinstance(s, PartitionSpec):
            mesh = get_mesh()
            if mesh is None:
                raise ValueError(
                    f"with_sharding_constraint: a bare PartitionSpec {s!r} needs a context mesh (with mesh: ...); "
                    "or pass NamedSharding(mesh, spec)"
                )
            return NamedSharding(mesh, s)
        if not isinstance(s, Sharding):
            raise TypeError(f"with_sharding_constraint: expected a sharding or PartitionSpec, got {s!r}")
        if isinstance(s, NamedSharding) and isinstance(s.mesh, AbstractMesh):
            # A sharding over the context mesh's abstract mesh (get_abstract_mesh(): flax.nnx
            # builds its Variables' shardings so) means that mesh's devices, as in JAX.
            mesh = get_mesh()
            if mesh is not None and mesh.abstract_mesh == s.mesh:
                return NamedSharding(mesh, s.spec)
        given: Sharding = s
        return given

    def constrain(sub: Any, s: Any) -> Any:
        sharding = resolve(s)
        if explicit_state.active:
            tree_map(lambda leaf: check_constraint(leaf, sharding, isinstance(s, PartitionSpec)), sub)
        return tree_map(lambda leaf: sharding_constraint_p.bind(leaf, sharding=sharding), sub)

    def is_leaf(s: Any) -> bool:
        return isinstance(s, (Sharding, PartitionSpec))

    if is_leaf(shardings):
        return constrain(x, shardings)
    spec_leaves, spec_tree = tree_flatten(shardings, is_leaf=is_leaf)
    subtrees = spec_tree.flatten_up_to(x)
    return tree_unflatten(spec_tree, [constrain(sub, s) for s, sub in zip(spec_leaves, subtrees)])
