"""What the differentiation API functions share: flattening user functions,
checking tangents and cotangents, normalising ``argnums``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff.tangents import Zero, is_float0, to_tangent_type
from plait_core import Tracer, dtypes, get_aval
from plait_core.abstract import ShapedArray
from plait_core.dims import definitely_equal_shapes
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = [
    "FlatFun",
    "check_callable",
    "check_input_dtypes",
    "check_leaves",
    "check_scalar_output",
    "check_tangent",
    "describe",
    "dtype_name",
    "normalize_argnums",
    "primal_aval",
    "split_args",
    "tangent_or_zero",
]



_TRACED = object()


class FlatFun:
    """A pytree function as a flat one; records the output structure (and the
    structure of the auxiliary output with ``has_aux``) when called.

    Of the auxiliary output, only the traced leaves are flat outputs (they leave
    the transformation as their primal values); every other leaf (an array, a
    scalar, a string, any Python object) is kept aside and given back unchanged
    by :meth:`rebuild_aux`, as JAX returns ``aux`` (``grad(f, has_aux=True)``
    of an ``f`` returning ``(loss, "a label")`` is allowed)."""

    def __init__(self, fun: Callable[..., Any], in_tree: PyTreeDef, has_aux: bool, what: str) -> None:
        self.fun, self.in_tree, self.has_aux, self.what = fun, in_tree, has_aux, what
        self.out_tree: PyTreeDef | None = None
        self.aux_tree: PyTreeDef | None = None
        self._aux_kept: list[Any] = []

    def rebuild_aux(self, traced: Sequence[Any]) -> Any:
        """The auxiliary output, from the flat outputs of its traced leaves."""
        assert self.aux_tree is not None
        given = iter(traced)
        leaves = [next(given) if x is _TRACED else x for x in self._aux_kept]
        rest = next(given, _TRACED)
        assert rest is _TRACED, "more traced auxiliary outputs than recorded"
        return tree_unflatten(self.aux_tree, leaves)

    def __call__(self, *leaves: Any) -> list[Any]:
        args = tree_unflatten(self.in_tree, leaves)
        out = self.fun(*args)
        aux_leaves: list[Any] = []
        if self.has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(
                    f"{self.what} with has_aux=True requires the function to return a pair (output, aux), "
                    f"got {describe(out)}"
                )
            out, aux = out
            all_aux, self.aux_tree = tree_flatten(aux)
            self._aux_kept = [_TRACED if isinstance(x, Tracer) else x for x in all_aux]
            aux_leaves = [x for x in all_aux if isinstance(x, Tracer)]
        out_leaves, self.out_tree = tree_flatten(out)
        check_leaves(out_leaves, self.out_tree, f"{self.what}: the function's output")
        return [*out_leaves, *aux_leaves]


def describe(x: Any) -> str:
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of length {len(x)}"
    if isinstance(x, Tracer):
        return f"a single array of type {x.aval.str_short()}"
    return f"a value of type {type(x).__name__}"


def dtype_name(dt: Any) -> str:
    return "float0" if dt == dtypes.float0 else str(np.dtype(dt).name)


def check_leaves(leaves: Sequence[Any], tree: PyTreeDef, where: str) -> None:
    for k, x in enumerate(leaves):
        if isinstance(x, Tracer):
            continue
        try:
            get_aval(x)
        except TypeError:
            raise TypeError(
                f"{where} has a leaf {k} of type {type(x).__name__} (structure {tree}); "
                "only arrays and scalars can be differentiated"
            ) from None


def check_callable(fun: Any, what: str) -> None:
    if not callable(fun):
        raise TypeError(f"{what}: expected a callable function, got {describe(fun)}")


# ---------------------------------------------------------------------------
# Tangent and cotangent checks


def check_tangent(what: str, kind: str, k: int, t: Any, primal: ShapedArray) -> Any:
    """A tangent/cotangent leaf ``t`` for a primal of type ``primal``: returned
    as is, or a TypeError/ValueError.  Its dtype must be the primal's tangent
    dtype exactly: as in JAX, a weakly typed value (``jnp.array(5)``, a Python
    scalar) is not converted (an integer tangent of a float primal is an error)."""
    expected = to_tangent_type(primal)
    try:
        a = get_aval(t)
    except TypeError:
        raise TypeError(
            f"{what}: {kind} leaf {k} has type {type(t).__name__}, expected an array of type {expected.str_short()}"
        ) from None
    if a.dtype != expected.dtype:
        hint = " (integer and boolean values have float0 tangents)" if is_float0(expected) else ""
        raise TypeError(
            f"{what}: {kind} leaf {k} has dtype {dtype_name(a.dtype)}, but its primal has type "
            f"{primal.str_short()} so the {kind} must have dtype {dtype_name(expected.dtype)}{hint}"
        )
    if not definitely_equal_shapes(a.shape, expected.shape):
        raise ValueError(
            f"{what}: {kind} leaf {k} has shape {tuple(a.shape)}, but its primal has shape {tuple(primal.shape)}"
        )
    return t


def tangent_or_zero(t: Any, primal: ShapedArray) -> Any:
    return Zero(to_tangent_type(primal)) if is_float0(to_tangent_type(primal)) else t



def primal_aval(what: str, k: int, x: Any) -> ShapedArray:
    try:
        return get_aval(x)
    except TypeError:
        raise TypeError(
            f"{what}: primal argument leaf {k} has type {type(x).__name__}; only arrays and scalars "
            "can be differentiated"
        ) from None


# ---------------------------------------------------------------------------
# grad / value_and_grad


def normalize_argnums(what: str, argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{what}: argnums must name at least one argument, got {argnums!r}")
    out = []
    for a in nums:
        if type(a) is not int:
            raise TypeError(f"{what}: argnums must be ints, got {a!r} of type {type(a).__name__}")
        m = a + nargs if a < 0 else a
        if not 0 <= m < nargs:
            raise TypeError(
                f"{what}: differentiating with respect to argnums={argnums!r} requires at least {abs(a) + (a >= 0)} "
                f"positional arguments, but the function was called with {nargs}"
            )
        out.append(m)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: argnums {argnums!r} names an argument twice")
    return tuple(out)


def split_args(
    fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], nums: tuple[int, ...]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``fun`` as a function of the arguments at ``nums`` only, and those arguments."""

    def partial_fun(*dyn: Any) -> Any:
        full = list(args)
        for i, x in zip(nums, dyn):
            full[i] = x
        return fun(*full, **kwargs)

    return partial_fun, tuple(args[i] for i in nums)


def check_input_dtypes(what: str, leaves: Sequence[Any], holomorphic: bool, allow_int: bool) -> None:
    for x in leaves:
        dt = get_aval(x).dtype
        if holomorphic:
            if not dtypes.is_complex(dt):
                raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, but got {dt.name}")
        elif not dtypes.is_inexact(dt) and not allow_int:
            raise TypeError(
                f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                f"numpy.inexact), but got {dt.name}. If you want to use boolean- or integer-valued inputs, "
                "use vjp or set allow_int to True"
            )


def check_scalar_output(what: str, out: Any, holomorphic: bool) -> ShapedArray:
    try:
        aval = get_aval(out)
    except TypeError:
        raise TypeError(f"{what}: the function must return a scalar array, got {describe(out)}") from None
    if aval.shape != ():
        raise TypeError(f"{what}: gradient only defined for scalar-output functions; the output had shape {tuple(aval.shape)}")
    if holomorphic:
        if not dtypes.is_complex(aval.dtype):
            raise TypeError(f"{what} with holomorphic=True requires outputs with complex dtype, but got {aval.dtype.name}")
    elif not dtypes.is_float(aval.dtype):
        raise TypeError(
            f"{what} requires real-valued outputs (output dtype that is a sub-dtype of numpy.floating), but got "
            f"{aval.dtype.name}. For holomorphic differentiation pass holomorphic=True; for functions with "
            "complex outputs that are not holomorphic use vjp directly"
        )
    return aval


