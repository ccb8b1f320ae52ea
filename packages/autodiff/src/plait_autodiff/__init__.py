"""plait-autodiff: forward and reverse mode (jvp, linearize, vjp, grad), custom rules, checkpoint and invertible AD.

This package depends on plait-core alone.  Its rules for core's primitives
live in the registries of :mod:`plait_autodiff.registries`, keyed by
primitive; the coverage test walks core's catalog and names every primitive
without a rule.

The public API follows JAX: :func:`jvp`, :func:`linearize`, :func:`vjp`,
:func:`grad`, :func:`value_and_grad`, :func:`linear_transpose`,
:func:`jacfwd`, :func:`jacrev`, :func:`hessian`.  Custom rules
(``custom_jvp``, ``custom_vjp``), ``checkpoint``, ``invertible`` and
``custom_ivjp`` are core's front-ends; this package gives them their
derivatives (see :mod:`plait_autodiff.invertible` for invertible reverse
mode and :func:`invertible_fallback`).
"""

from plait_autodiff import rules
from plait_autodiff.api import grad, jvp, linear_transpose, linearize, value_and_grad, vjp
from plait_autodiff.invertible import InvertibilityError, invertible_fallback
from plait_autodiff.jacobians import hessian, jacfwd, jacrev
from plait_autodiff.jvp import JVPTrace, JVPTracer
from plait_autodiff.registries import inverse_rules, jvp_rules, transpose_rules
from plait_autodiff.tangents import Zero, to_tangent_type
from plait_autodiff.transpose import NonlinearError, UndefinedPrimal
from plait_core.lax.solves import register_solve_transforms as _register_solve_transforms

# lax.custom_root / custom_linear_solve differentiate the user's functions in their rules.
_register_solve_transforms(jvp, linear_transpose)

__version__ = "0.1.0"

__all__ = [
    "InvertibilityError",
    "JVPTrace",
    "JVPTracer",
    "NonlinearError",
    "UndefinedPrimal",
    "Zero",
    "grad",
    "hessian",
    "inverse_rules",
    "invertible_fallback",
    "jacfwd",
    "jacrev",
    "jvp",
    "jvp_rules",
    "linear_transpose",
    "linearize",
    "rules",
    "to_tangent_type",
    "transpose_rules",
    "value_and_grad",
    "vjp",
]
