"""Batching rules of the complex-number primitives.

``real``, ``imag`` and ``conj`` keep the batch where it is; ``complex``
makes its two operands agree on it, as every binary elementwise primitive.
"""

from __future__ import annotations

from plait_batching.factories import defbroadcasting, defvectorized
from plait_core.primitives import complex_numbers as cx

defvectorized(cx.real_p, cx.imag_p, cx.conj_p)
defbroadcasting(cx.complex_p)
