"""Shape primitives: a symbolic dimension used as a value.

Under ``mask`` a dimension such as ``n`` is a polynomial in named sizes, and
``pnp.mean`` must divide by it; inside ``vmap`` over piles a ragged length is
one too.  ``dim_as_value[dim=n]`` is the value of such a dimension, an
integer scalar.  The interpreter that binds the names (masking with its
``logical_env``, batching with the pile's lengths) gives it a value; staging
keeps it as an equation; evaluating it where nothing binds the names is an
error that says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import SymbolicDim, is_symbolic, register_dimension_as_value
from plait_core.primitive import Primitive

dim_as_value_p = Primitive("dim_as_value", family="shape")


@dim_as_value_p.def_abstract_eval
def _dim_as_value_abstract_eval(*, dim: Any) -> ShapedArray:
    return ShapedArray((), dtypes.default_int_dtype(), True)  # weak, like the Python int it stands for


@dim_as_value_p.def_impl
def _dim_as_value_impl(*, dim: Any) -> np.ndarray:
    if is_symbolic(dim):
        assert isinstance(dim, SymbolicDim)
        names = ", ".join(sorted(dim.free_names()))
        raise ValueError(
            f"the symbolic size {dim} has no value here: its names ({names}) take values only "
            "inside mask (from logical_env) or vmap over piles (from the lengths)"
        )
    return np.asarray(int(dim), dtypes.default_int_dtype())


def dimension_as_value(d: Any) -> Any:
    """A dimension as a value: a Python ``int`` stays an ``int``; a symbolic
    dimension becomes the integer scalar ``dim_as_value[dim=d]``."""
    if is_symbolic(d):
        return dim_as_value_p.bind(dim=d)
    return int(d)


register_dimension_as_value(dimension_as_value)
