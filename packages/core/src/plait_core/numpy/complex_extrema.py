"""``max``/``min`` reductions of complex arrays, in JAX's lexicographic order.

JAX orders complex numbers by real part, then by imaginary part, for
``jnp.max``/``jnp.min`` (and ``lax.max``/``lax.min``).  Core's ordered
reductions take real dtypes only, so the reduction is composed here: the
extreme real part, then the extreme imaginary part among the elements that
have it.  Its derivative follows JAX's rule for ``reduce_max``: the tangent
of the result is the mean of the tangents of the elements equal to it.

Deviation: when any reduced element has a NaN part the result is
``nan+nanj``; JAX's result then depends on the order XLA reduces in
(``max([1+1j, nan])`` is NaN but ``max([nan, 1+1j])`` is ``1+1j``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from plait_core import lax
from plait_core.lax import _lenient
from plait_core.numpy._util import Array, dtype_of, full_like_value
from plait_core.primitives import reductions as _rp


def _keep(r: Array, axes: tuple[int, ...]) -> Array:
    return lax.expand_dims(r, tuple(sorted(axes))) if axes else r


def _lexicographic(x: Array, axes: tuple[int, ...], largest: bool) -> Array:
    reduce = _rp.reduce_max_p if largest else _rp.reduce_min_p
    extreme = np.inf * (-1 if largest else 1)
    re, im = lax.real(x), lax.imag(x)
    best_re = reduce.bind(re, axes=axes)
    on_best = _lenient.eq(re, lax.broadcast_in_dim(_keep(best_re, axes), x.shape, tuple(range(x.ndim))))
    masked_im = _lenient.select_n(on_best, full_like_value(im, extreme), im)
    best = _lenient.complex(best_re, reduce.bind(masked_im, axes=axes))
    has_nan = _rp.reduce_or_p.bind(_lenient.bitwise_or(lax.ne(re, re), lax.ne(im, im)), axes=axes)
    nan = full_like_value(best, complex(np.nan, np.nan))
    return _lenient.select_n(has_nan, best, nan)


def _reducer(largest: bool) -> Callable[[Array, tuple[int, ...]], Array]:
    def reduce(x: Array, axes: tuple[int, ...]) -> Array:
        ans = lax.stop_gradient(_lexicographic(x, axes, largest))
        # The value is ``ans`` exactly; the derivative is the mean of the
        # tangents of the elements equal to it (JAX's reduce_max rule).
        hits = _lenient.eq(x, lax.broadcast_in_dim(_keep(ans, axes), x.shape, tuple(range(x.ndim))))
        zero = full_like_value(x, 0)
        moved = _lenient.select_n(hits, zero, _lenient.sub(x, lax.stop_gradient(x)))
        count = _rp.reduce_sum_p.bind(lax.convert_element_type(hits, dtype_of(x)), axes=axes)
        return _lenient.add(ans, _lenient.div(_rp.reduce_sum_p.bind(moved, axes=axes), count))

    reduce.__name__ = "reduce_max_complex" if largest else "reduce_min_complex"
    return reduce


reduce_max_complex = _reducer(True)
reduce_min_complex = _reducer(False)

__all__ = ["reduce_max_complex", "reduce_min_complex"]
