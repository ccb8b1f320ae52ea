"""What ``jvp`` returns as output tangents, as JAX 0.10.2: a tangent passed through an
operation whose primal result was computed comes back as an array (``x + 1`` with a
Python-float tangent; equinox's ``filter_jvp`` tests), while an output that is the
input itself gives back both as they were passed."""

from __future__ import annotations

import numpy as np

import plait_autodiff as ad
from plait_core import get_aval
from plait_core.numpy.array_type import Array


def test_a_passed_through_python_tangent_of_a_computed_output_is_an_array() -> None:
    p, t = ad.jvp(lambda x: x + 1, (1.0,), (1.0,))
    assert isinstance(p, Array) and isinstance(t, Array)
    assert (float(p), float(t), get_aval(t).dtype) == (2.0, 1.0, np.float32)
    p, t = ad.jvp(lambda x: 2 - x, (1.0,), (0.5,))
    assert isinstance(t, Array) and float(t) == -0.5


def test_the_identity_gives_its_inputs_back() -> None:
    p, t = ad.jvp(lambda x: x, (1.0,), (1.0,))
    assert type(p) is float and type(t) is float and (p, t) == (1.0, 1.0)
    (p1, p2), (t1, t2) = ad.jvp(lambda x: (x, x * 3), (1.0,), (2.0,))
    assert type(p1) is float and float(p2) == 3.0
    assert type(t1) is float and t1 == 2.0
    assert isinstance(t2, Array) and float(t2) == 6.0
