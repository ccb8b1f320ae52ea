"""Exceptions a user of plait can meet, each with a message that says what to do."""

from __future__ import annotations


class ConcretizationTypeError(TypeError):
    """A traced value was used where a concrete Python value is needed
    (``if x > 0:``, ``int(x)``, ``float(x)``, a shape taken from data)."""


class TracerLeakError(RuntimeError):
    """A traced value escaped the transformation that made it and was used later."""


class UnexpectedTracerError(TracerLeakError):
    """A traced value of a transformation that is not active here was used."""


class DeletedArrayError(RuntimeError, ValueError):
    """An array that was deleted or donated was used again.

    Subclasses both ``RuntimeError`` (raised by JAX on eager use) and
    ``ValueError`` (raised by JAX when such an array is passed to a jitted
    function) so code catching either keeps working."""


class UnboundAxisNameError(NameError):
    """A named-axis collective (``psum``, ``axis_index``, ...) names an axis that
    no enclosing ``vmap``/mapping binds."""
