"""``Ref`` and ``new_ref``: JAX's mutable array references, which plait's
language does not have.

JAX 0.10.2's ``jax.new_ref(x)`` makes a ``jax.Ref``, an array that programs
read and write in place (``r[...]``, ``r[...] = v``), threaded through
transformations as an effect.  plait's values are immutable (a program is a
pure function of its inputs), so:

* :class:`Ref` exists as a type (libraries test ``isinstance(x, jax.Ref)``, as
  flax.nnx does for each Variable's value); no plait value is an instance, and
  making one raises ``NotImplementedError``;
* :func:`new_ref` raises ``NotImplementedError`` (not supported: why).
"""

from __future__ import annotations

from typing import Any, NoReturn

_WHY = ("not supported: plait has no mutable array references (jax.Ref): its values are immutable and its "
        "programs pure functions of their inputs; return the new value instead of writing it in place")


class Ref:
    """The type of JAX's mutable array references.  plait has none: nothing is
    an instance, and ``Ref(...)`` raises ``NotImplementedError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_WHY)


def new_ref(init_val: Any, *args: Any, **kwargs: Any) -> NoReturn:
    """JAX's ``new_ref(x)``: a mutable reference initialised to ``x``.  Not
    supported: always raises ``NotImplementedError`` saying why."""
    raise NotImplementedError(f"new_ref: {_WHY}")
