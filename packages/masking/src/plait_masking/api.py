"""``mask`` and ``shapecheck``: the public entry points."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from plait_core import numpy as pnp
from plait_core.abstract import ShapedArray, ShapeDtypeStruct, get_aval
from plait_core.dims import Dim, InconclusiveDimensionOperation, SymbolicDim, definitely_equal
from plait_core.staging import eval_shape
from plait_core.trace import Tracer, transformation
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from plait_core.wrapping import wraps
from plait_masking.env import MaskEnv
from plait_masking.errors import ShapeError
from plait_masking.sizes import check_logical_fits, concrete_int, logical_sizes, padded_sizes
from plait_masking.specs import SpecDim, Wildcard, parse_spec, spec_names, spec_str
from plait_masking.trace import MaskTrace, MaskTracer

__all__ = ["mask", "shapecheck"]

F = TypeVar("F", bound=Callable[..., Any])


class _Specs:
    """Parsed ``in_shapes``: one spec tree per argument."""

    def __init__(self, in_shapes: Any, what: str) -> None:
        if isinstance(in_shapes, str) or not isinstance(in_shapes, (list, tuple)):
            raise TypeError(
                f"{what}: in_shapes must be a list of shape specs, one per argument (e.g. ['(n, 3)', 'n']), "
                f"got {type(in_shapes).__name__} {in_shapes!r}"
            )
        self.trees: list[PyTreeDef] = []
        self.specs: list[tuple[SpecDim, ...]] = []
        self.wheres: list[str] = []
        self.counts: list[int] = []
        for i, arg_spec in enumerate(in_shapes):
            leaves, tree = tree_flatten(arg_spec)
            self.trees.append(tree)
            self.counts.append(len(leaves))
            for j, leaf in enumerate(leaves):
                self.specs.append(parse_spec(leaf))
                self.wheres.append(f"argument {i}" if len(leaves) == 1 and tree.num_nodes == 1 else f"argument {i} leaf {j}")
        self.names = spec_names(self.specs)


def _parse_out(out_shape: Any, what: str) -> tuple[PyTreeDef, list[tuple[SpecDim, ...]]]:
    if out_shape is None:
        raise TypeError(f"{what}: out_shape is required (a shape spec, or a tree of them matching the output)")
    return _parse_out_specs(out_shape)


def _parse_out_specs(out_shape: Any) -> tuple[PyTreeDef, list[tuple[SpecDim, ...]]]:
    leaves, tree = tree_flatten(out_shape)
    return tree, [parse_spec(s) for s in leaves]


def _check_output(
    what: str, out_tree: PyTreeDef, out_specs: Sequence[tuple[SpecDim, ...]], tree: PyTreeDef, avals: Sequence[ShapedArray]
) -> None:
    """``ShapeError`` unless the outputs have ``out_shape``'s tree and shapes."""
    if tree != out_tree:
        raise ShapeError(f"{what}: the function returned a tree {tree}, which does not match out_shape's {out_tree}")
    for i, (spec, aval) in enumerate(zip(out_specs, avals)):
        shape = aval.shape
        label = "the output" if len(avals) == 1 else f"output {i}"
        if len(spec) != len(shape):
            raise ShapeError(
                f"{what}: {label} has the shape {spec_str(shape)} of rank {len(shape)}, but out_shape says "
                f"{spec_str(spec)} of rank {len(spec)}"
            )
        for k, (want, got) in enumerate(zip(spec, shape)):
            if isinstance(want, Wildcard) or definitely_equal(want, got):
                continue
            raise ShapeError(
                f"{what}: {label} has the shape {spec_str(shape)} but out_shape says {spec_str(spec)}: "
                f"dimension {k} is {got}, not {want}"
            )


def mask(
    fun: Callable[..., Any], in_shapes: Any, out_shape: Any = None
) -> Callable[[Sequence[Any], Mapping[str, Any]], Any]:
    """Make ``fun`` work on padded arrays at any logical shape.

    ``in_shapes`` is a list of polymorphic shape specs, one per argument of
    ``fun`` (a pytree of specs for a pytree argument): ``'n'``, ``'(m, n)'``,
    ``'(n + 1, 3)'``, ``'2 * n'``, ``'_'`` (any size, not tracked), ``''``
    (a scalar).  ``out_shape`` is the spec (or tree of specs) of the result.

    The returned ``masked(args, logical_env)`` takes the list of padded
    arguments and a dict giving each named size its logical value (an integer
    scalar; traced under ``jit``, batched under ``vmap``); names no spec of
    ``in_shapes`` uses are ignored, so one environment can serve several
    masked functions.  It returns the padded result, shaped as ``out_shape``
    at the padded sizes, whose logical part equals ``fun`` applied to the
    logical parts of the arguments; values past the logical end are
    unspecified.  Inside ``fun`` shapes are symbolic: ``x.shape[0]`` is the
    polynomial ``n``.

    Without ``out_shape``, ``masked(args, logical_env)`` returns ``(outputs,
    logical_shapes)``: the padded outputs and, in the same tree, one
    :class:`ShapeDtypeStruct` per output giving its logical shape in concrete
    sizes (so the logical sizes its shape uses must be concrete: an error
    under ``jit`` or ``vmap`` of the sizes, where ``out_shape`` is needed).

    Padded sizes are read off the padded arguments.  Errors:
    :class:`ShapeError` for a padded shape that does not fit its spec (its
    rank, a constant dimension, a size no whole value gives) and for a name
    whose padded size two arguments disagree on, naming both dimensions and
    both sizes; also when the result does not match ``out_shape``.
    ``ValueError`` for a logical size that is larger than its padded size
    (when concrete) and for names the specs use but ``logical_env`` lacks.
    """
    what = f"mask({getattr(fun, '__name__', 'fun')})"
    specs = _Specs(in_shapes, what)
    out_tree, out_specs = _parse_out_specs(out_shape) if out_shape is not None else (None, [])
    unknown = sorted(set(spec_names(out_specs)) - set(specs.names))
    if unknown:
        raise ValueError(
            f"{what}: out_shape names the size {', '.join(unknown)}, which no input spec names, so its padded "
            "size is unknown"
        )

    @wraps(fun)
    def masked(args: Sequence[Any], logical_env: Mapping[str, Any]) -> Any:
        if not isinstance(args, (list, tuple)):
            raise TypeError(f"{what}: args must be a list of padded arrays, one per spec, got {type(args).__name__}")
        if len(args) != len(specs.trees):
            raise TypeError(f"{what}: in_shapes has {len(specs.trees)} specs but {len(args)} arguments were given")
        padded_leaves: list[Any] = []
        for i, (tree, arg) in enumerate(zip(specs.trees, args)):
            try:
                padded_leaves.extend(tree.flatten_up_to(arg))
            except ValueError as e:
                raise ShapeError(f"{what}: argument {i} does not match its spec tree {tree}: {e}") from None
        avals = [get_aval(x, f"{what} {w}") for x, w in zip(padded_leaves, specs.wheres)]
        shapes: list[tuple[int, ...]] = []
        for a, w in zip(avals, specs.wheres):
            if any(type(d) is not int for d in a.shape):
                raise ValueError(f"{what}: {w} has the shape {spec_str(a.shape)}; padded shapes must be concrete")
            shapes.append(tuple(int(d) for d in a.shape))
        padded = padded_sizes(specs.specs, shapes, specs.wheres)
        logical = logical_sizes(specs.names, logical_env)
        check_logical_fits(specs.specs, shapes, specs.wheres, logical_env)
        # a NumPy argument becomes an array (with ``.at``, jnp semantics) even where no size is masked
        padded_leaves = [pnp.asarray(x) if isinstance(x, (np.ndarray, np.generic)) else x for x in padded_leaves]
        env = MaskEnv(padded, logical)
        trace = MaskTrace(env)
        with transformation(trace):
            wrapped = [
                trace.wrap(x, ShapedArray(_logical_shape(spec, shape), a.dtype, a.weak_type))
                for x, spec, shape, a in zip(padded_leaves, specs.specs, shapes, avals)
            ]
            it = iter(wrapped)
            call_args = [tree.unflatten([next(it) for _ in range(n)]) for tree, n in zip(specs.trees, specs.counts)]
            out = fun(*call_args)
            leaves, tree = tree_flatten(out)
            out_avals = [_out_aval(x, trace, what, i) for i, x in enumerate(leaves)]
            if out_tree is not None:
                _check_output(what, out_tree, out_specs, tree, out_avals)
            results = [trace.unwrap(x) for x in leaves]
        outputs = tree_unflatten(tree, results)
        if out_tree is not None:
            return outputs
        return outputs, tree_unflatten(tree, [_logical_struct(what, a, logical) for a in out_avals])

    return masked


def _logical_struct(what: str, aval: ShapedArray, logical: Mapping[str, Any]) -> ShapeDtypeStruct:
    """An output's logical shape in concrete sizes, for ``mask`` without ``out_shape``."""
    dims: list[int] = []
    for d in aval.shape:
        if not isinstance(d, SymbolicDim):
            dims.append(int(d))
            continue
        values: dict[str, int] = {}
        for n in sorted(d.free_names()):
            c = concrete_int(logical[n])
            if c is None:
                raise ValueError(
                    f"{what}: without out_shape the masked function returns each output's logical shape in "
                    f"concrete sizes, but the logical size {n} is traced (under jit or vmap); pass out_shape "
                    "to mask instead"
                )
            values[n] = c
        dims.append(int(d.evaluate(values)))
    return ShapeDtypeStruct(tuple(dims), aval.dtype, weak_type=aval.weak_type)


def _logical_shape(spec: tuple[SpecDim, ...], padded: tuple[int, ...]) -> tuple[Dim, ...]:
    """A spec with ``'_'`` replaced by the padded size (logical = padded there)."""
    return tuple(p if isinstance(d, Wildcard) else d for d, p in zip(spec, padded))


def _out_aval(x: Any, trace: MaskTrace, what: str, i: int) -> ShapedArray:
    if type(x) is MaskTracer and x._trace is trace:
        return x.aval
    if isinstance(x, Tracer):
        trace.check_foreign_tracer(x)
    return get_aval(x, f"{what}: output leaf {i}")


def _fresh_names(specs: Sequence[tuple[SpecDim, ...]], taken: Sequence[str]) -> list[tuple[Dim, ...]]:
    """Specs with every ``'_'`` replaced by a fresh size name (``_1``, ``_2``, ...)."""
    used = set(taken)
    counter = 0
    out = []
    for spec in specs:
        dims: list[Dim] = []
        for d in spec:
            if isinstance(d, Wildcard):
                counter += 1
                while f"_{counter}" in used:
                    counter += 1
                dims.append(SymbolicDim.var(f"_{counter}"))
            else:
                dims.append(d)
        out.append(tuple(dims))
    return out


def shapecheck(in_shapes: Any, out_shape: Any, dtype: Any = np.float32) -> Callable[[F], F]:
    """Check a function's shapes symbolically; a decorator returning ``fun`` itself.

    ``fun`` is staged with one ``ShapeDtypeStruct`` per spec of ``in_shapes``
    (symbolic shapes, ``dtype`` elements; ``'_'`` is a fresh size of its own),
    and its result is compared with ``out_shape``.  Raises :class:`ShapeError`
    naming the dimensions for an operation on dimensions that differ or cannot
    be shown equal (``n`` vs ``m``, ``n`` vs ``2*n``), for a result whose shape
    is not ``out_shape``, and for a result tree that does not match it."""

    def check(fun: F) -> F:
        what = f"shapecheck({getattr(fun, '__name__', 'fun')})"
        specs = _Specs(in_shapes, what)
        out_tree, out_specs = _parse_out(out_shape, what)
        shapes = _fresh_names(specs.specs, specs.names)
        structs = iter(ShapeDtypeStruct(s, dtype) for s in shapes)
        args = [tree.unflatten([next(structs) for _ in range(n)]) for tree, n in zip(specs.trees, specs.counts)]
        try:
            out = eval_shape(fun, *args)
        except ShapeError:
            raise
        except (InconclusiveDimensionOperation, ValueError, TypeError) as e:
            # Shape mismatches are ValueErrors, or TypeErrors where JAX raises those
            # (contractions); a dtype error is reported as a shape error too, with its message.
            raise ShapeError(f"{what}: {e}") from e
        leaves, tree = tree_flatten(out)
        avals = [ShapedArray(x.shape, x.dtype) for x in leaves]
        _check_output(what, out_tree, out_specs, tree, avals)
        return fun

    return check
