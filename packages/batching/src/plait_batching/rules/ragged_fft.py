"""Ragged rule of ``fft`` (``real``, ``imag``, ``conj`` and ``complex`` are
elementwise: core's passthrough padded rules).

``fft`` runs on the padded data when only its leading
(batch) axes are ragged; a ragged transformed axis is refused, because the
transform of a padded axis mixes the padding into every frequency and its
length is the element's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import env_of, operands, padded_rule, refuse
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import Primitive
from plait_core.primitives.fft import fft_p

_padded = padded_rule()



def _ragged_fft(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    env = env_of(trace)
    ops = operands(trace, prim, args)
    (x,) = ops
    k = len(params["fft_lengths"])
    if any(env.is_ragged(d) for d in x.aval.shape[x.aval.ndim - k :]):
        raise refuse(
            prim, ops, env,
            "transforms a ragged axis, which is not supported: the Fourier transform of an axis depends on its "
            "length and would mix the padding into every frequency; only leading (batch) axes may be ragged",
        )  # fmt: skip
    return _padded(trace, prim, args, params)


ragged_rules[fft_p] = _ragged_fft
