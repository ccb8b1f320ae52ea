"""``jax.interpreters``: how libraries give their own primitives rules.

Each module is a view of one plait interpreter's rule registry, for
primitives made with :class:`plait.extend.core.Primitive`: :mod:`.ad`
(plait-autodiff), :mod:`.batching` (plait-batching), :mod:`.mlir`
(plait-dispatch's lowering, and what ``mask`` and piles follow),
:mod:`.partial_eval` and :mod:`.xla`.  See ``docs/extending.md``.
"""

from __future__ import annotations

from plait.interpreters import _expansion as _expansion
from plait.interpreters import ad as ad
from plait.interpreters import batching as batching
from plait.interpreters import mlir as mlir
from plait.interpreters import partial_eval as partial_eval
from plait.interpreters import xla as xla

__all__ = ["ad", "batching", "mlir", "partial_eval", "xla"]
