"""JVP and transpose rules of the host-callback primitive.

* ``debug`` callbacks (``debug.print``, ``debug.callback``) run on the
  primal values only and have no outputs, so their JVP is the call itself
  and their transpose gives nothing back (as in JAX: a print under ``grad``
  shows the primal values, once, in the forward pass).
* ``pure_callback`` and ``io_callback`` run Python that plait cannot
  differentiate: a nonzero tangent is JAX's ValueError, pointing to
  ``custom_jvp``/``custom_vjp``.  With zero tangents they simply run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import def_transpose
from plait_autodiff.tangents import Zero
from plait_core.primitives.callbacks import callback_p

_WHAT = {"pure": "Pure callbacks (pure_callback)", "io": "IO callbacks (io_callback)"}


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    kind = params["kind"]
    if kind != "debug" and any(type(t) is not Zero for t in tangents):
        raise ValueError(
            f"{_WHAT[kind]} do not support differentiation ({params['callback'].name}): plait cannot see into "
            "the Python function; wrap it in plait.custom_jvp or plait.custom_vjp to give its derivative"
        )
    outs = callback_p.bind(*primals, **params)
    return outs, [Zero.from_primal_value(o) for o in outs]


jvp_rules[callback_p] = _jvp


@def_transpose(callback_p)
def _transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    if params["kind"] != "debug":
        raise ValueError(
            f"{_WHAT[params['kind']]} do not support transposition ({params['callback'].name}); "
            "wrap it in plait.custom_vjp to give its derivative"
        )
    return [None] * len(args)
