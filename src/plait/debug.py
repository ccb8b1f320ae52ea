"""``plait.debug``: printing and callbacks for debugging, with JAX's names
(``jax.debug.print``, ``jax.debug.log``, ``jax.debug.callback``).

They work eagerly and inside ``jit`` (through XLA's host callbacks, without
leaving the compiled program), ``vmap`` (once per element), ``grad`` (on the
primal values) and loops; ``ordered=True`` keeps ordered calls in program
order.
"""

from __future__ import annotations

from plait_core.host_callbacks import debug_callback as callback
from plait_core.host_callbacks import debug_log as log
from plait_core.host_callbacks import debug_print as print

__all__ = ["callback", "log", "print"]
