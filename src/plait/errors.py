"""``plait.errors``: the exceptions a user of plait can meet (JAX's ``jax.errors``).

The tracing errors (``ConcretizationTypeError``, ``TracerBoolConversionError``,
``UnexpectedTracerError``, ...) are core's (:mod:`plait_core.errors`), re-exported
here unchanged.

:class:`JaxRuntimeError` is, as in JAX 0.10.2, the runtime error class of the XLA
runtime library (jaxlib) that plait runs programs on: a failure while a compiled
program runs is one, and so is an exception raised by a host callback (``pure_callback``,
``io_callback``, ``debug.callback``) inside a ``jit`` program, whose message then holds
the callback's exception, type name first (``"... MyError: message"``).  Libraries
that raise their own errors from a callback (equinox's ``error_if``) catch this class
and read the message.

Not this class, as in JAX: ``plait.experimental.checkify.JaxRuntimeError`` (what
``Error.throw()`` and ``check`` outside ``checkify`` raise) is a ``ValueError`` of its
own, so ``except plait.errors.JaxRuntimeError`` does not catch a failed ``checkify``
check, exactly as ``except jax.errors.JaxRuntimeError`` does not in JAX.
"""

from __future__ import annotations

from plait_core.errors import (
    ConcretizationTypeError,
    DeletedArrayError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    TracerLeakError,
    UnboundAxisNameError,
    UnexpectedTracerError,
)
from plait_dispatch._jaxlib import XlaRuntimeError

JaxRuntimeError: type[Exception] = XlaRuntimeError
"""jaxlib's runtime error class: a compiled program or a host callback inside it failed."""

__all__ = [
    "ConcretizationTypeError",
    "DeletedArrayError",
    "JaxRuntimeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerLeakError",
    "UnboundAxisNameError",
    "UnexpectedTracerError",
]
