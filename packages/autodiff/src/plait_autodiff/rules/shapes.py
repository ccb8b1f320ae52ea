"""Rules of the shape family: ``dim_as_value`` (a dimension as an integer
value) has no operands and an integer result, so a zero derivative."""

from __future__ import annotations

from plait_autodiff.rules.common import declare_nonlinear, defjvp_zero
from plait_core.primitives.shapes import dim_as_value_p

defjvp_zero(dim_as_value_p)

declare_nonlinear(dim_as_value_p)
