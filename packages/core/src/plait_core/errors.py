"""Exceptions a user of plait can meet, each with a message that says what to do."""

from __future__ import annotations


class ConcretizationTypeError(TypeError):
    """A traced value was used where a concrete Python value is needed
    (``if x > 0:``, ``int(x)``, ``float(x)``, a shape taken from data)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced value (``if x > 0:`` inside a transformation)."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int()`` or ``operator.index()`` of a traced value."""


class TracerLeakError(RuntimeError, TypeError):
    """A traced value escaped the transformation that made it and was used later.

    A ``TypeError`` as JAX's ``UnexpectedTracerError`` is (and a
    ``RuntimeError``, as plait raised before), so code catching either works."""


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
