"""Padded semantics, defined once: computing on padded data for a logical shape.

Two interpreters compute on *padded* data standing for arrays of a smaller,
*logical* shape: ``mask`` (one logical size per named size, a scalar) and
``vmap`` over piles (one logical size per element of the batch).  What a
primitive must do so that the padding never reaches a true result is the
same for both — fill the padding with a reduction's identity before
reducing, zero both operands along a contracted axis, sort the padding
last — so it is written here, once:

* :class:`~plait_core.padded.env.PaddedEnv`, the protocol of an environment
  of logical sizes: which dimensions are padded, each one's padded size and
  logical size (as a value), the validity mask along an axis, and filling
  the padding with a value;
* :data:`~plait_core.padded.registry.padded_rules`, one registry of padded
  rules by primitive family (``rule(env, vals, avals, **params)``, with the
  parent trace current, returning the padded results), written against that
  protocol with :mod:`plait_core.ops`;
* each reduction's identity lives on its primitive
  (:attr:`~plait_core.primitive.Primitive.identity`).

``mask`` runs a rule with its environment of scalar sizes; ``vmap`` over
piles runs the same rule under a plain batching trace whose logical sizes
are batched (``vmap`` of the masked rule).  Core defines, the interpreters
interpret: neither imports the other.
"""

from plait_core.padded import bijective_gather as bijective_gather
from plait_core.padded import calls, control_flow, linalg, reductions, structural, windows
from plait_core.padded import indexing as indexing
from plait_core.padded import reshape as reshape
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import PaddedRule, PaddedRules, padded_rules

__all__ = [
    "PaddedEnv", "PaddedRule", "PaddedRules", "calls", "control_flow", "linalg", "padded_rules", "reductions",
    "structural", "windows",
]  # fmt: skip
