"""The one stable ``logaddexp`` of plait's own code, with a smooth derivative.

``log(exp(a) + exp(b))`` is computed as ``max(a, b) + log1p(exp(-|a - b|))``,
which does not overflow; but differentiating that expression goes through
``max`` and ``abs``, whose derivatives jump where ``a == b``.  The first
derivative happens to come out right there (the halves of the tie add up), the
second does not: the tie-breaking leaks into it.  The function itself is smooth,
so its derivative rule is written from the smooth formula instead,
``d out = exp(a - out) da + exp(b - out) db``, and every higher derivative
differentiates that rule.  ``numpy.logaddexp``, ``lax.cumlogsumexp`` and the
reductions built on them share this one definition; ``logaddexp2`` (base 2,
weights ``2 ** (a - out)``) is its twin.

Operands must already have one dtype (callers promote first).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core.abstract import get_aval
from plait_core.custom_derivatives import custom_jvp
from plait_core.lax import _lenient
from plait_core.lax import elementwise as _ew
from plait_core.lax.structural import full

Array = Any

__all__ = ["logaddexp", "logaddexp2"]


@custom_jvp
def logaddexp(a: Array, b: Array) -> Array:
    """``log(exp(a) + exp(b))`` of two same-dtype operands, stably, with the smooth
    derivative ``exp(a - out)``, ``exp(b - out)`` (also where they tie)."""
    larger = _lenient.max(a, b)
    delta = _lenient.sub(a, b)
    stable = _lenient.add(larger, _ew.log1p(_ew.exp(_ew.neg(_ew.abs(delta)))))
    # delta is NaN when an input is NaN or both are the same infinity: a + b is right there.
    return _lenient.select_n(_lenient.ne(delta, delta), stable, _lenient.add(a, b))


def _posinf_to_zero(x: Array) -> Array:
    aval = get_aval(x)
    is_posinf = _lenient.eq(x, full(aval.shape, np.inf, aval.dtype))
    return _lenient.select_n(is_posinf, x, full(aval.shape, 0, aval.dtype))


@logaddexp.defjvp
def _logaddexp_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]) -> tuple[Array, Array]:
    a, b = primals
    ta, tb = tangents
    out = logaddexp(a, b)
    # exp(a - out) is 0 for a = -inf (out finite); +inf (an input and the output are
    # +inf) counts as 0 on both sides, so that operand's weight is 1.  Both -inf: NaN.
    safe_out = _posinf_to_zero(out)
    wa = _ew.exp(_lenient.sub(_posinf_to_zero(a), safe_out))
    wb = _ew.exp(_lenient.sub(_posinf_to_zero(b), safe_out))
    return out, _lenient.add(_lenient.mul(ta, wa), _lenient.mul(tb, wb))


@custom_jvp
def logaddexp2(a: Array, b: Array, ln2: Array) -> Array:
    """``log2(2 ** a + 2 ** b)`` of two same-dtype operands, stably, with the smooth
    derivative ``2 ** (a - out)``, ``2 ** (b - out)`` (also where they tie).  ``ln2``
    is the constant ``log(2)`` as the caller types it (its weak type decides the
    result's, as in JAX); it is not differentiated."""
    larger = _lenient.max(a, b)
    delta = _lenient.sub(a, b)
    tail = _lenient.div(_ew.log1p(_ew.exp2(_ew.neg(_ew.abs(delta)))), ln2)
    return _lenient.select_n(_lenient.ne(delta, delta), _lenient.add(larger, tail), _lenient.add(a, b))


@logaddexp2.defjvp
def _logaddexp2_jvp(primals: tuple[Array, Array, Array], tangents: tuple[Array, Array, Array]) -> tuple[Array, Array]:
    a, b, ln2 = primals
    ta, tb, _ = tangents
    out = logaddexp2(a, b, ln2)
    safe_out = _posinf_to_zero(out)
    wa = _ew.exp2(_lenient.sub(_posinf_to_zero(a), safe_out))
    wb = _ew.exp2(_lenient.sub(_posinf_to_zero(b), safe_out))
    return out, _lenient.add(_lenient.mul(ta, wa), _lenient.mul(tb, wb))
