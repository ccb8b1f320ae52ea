"""The private ``jax._src.*`` names that real libraries import, answered by
``plait.compat`` with plait's objects of the same meaning.

:data:`PRIVATE` is the one table: ``"jax._src.<module>.<name>"`` -> the plait
object that name stands for, each with a comment saying what it means.  The
modules ``jax._src`` and ``jax._src.<module>`` exist under ``plait.compat``
exactly when the table has a name in them (or marks them with
:data:`MODULE_ONLY`); any other private path fails with ``plait.compat``'s
"plait does not have" error, and there is never a fall-back to JAX.

Which libraries import what (optax 0.2.8, chex 0.1.92, flax 0.12.8, equinox
0.13.8, dm-haiku 0.0.17, diffrax 0.7.2, lineax, blackjax) is noted per entry.
"""

from __future__ import annotations

import abc
import os
import types
from collections.abc import Callable
from typing import Any, TypeVar

from plait import typing as _typing
from plait.experimental import checkify as _checkify
from plait_core import dtypes as _dtypes
from plait_core import flatten_util as _flatten_util
from plait_core import tree_util as _tree_util
from plait_core.abstract import ShapedArray
from plait_core.custom_derivatives import CustomVJPException
from plait_core.primitives.ad_helpers import stop_gradient_p
from plait_core.prng import KeyDType
from plait_dispatch import Array, _jaxlib, effects_barrier

F = TypeVar("F", bound=Callable[..., Any])


class Live:
    """A table value computed when it is read (for state that changes, such as
    whether the XLA client exists yet)."""

    def __init__(self, compute: Callable[[], Any], what: str) -> None:
        self.compute = compute
        self.what = what


class _ModuleOnly:
    """Marks a private module that exists (so a library's ``from jax._src
    import X`` succeeds) while none of its names are answered."""

    def __repr__(self) -> str:
        return "MODULE_ONLY"


MODULE_ONLY = _ModuleOnly()


# --- plait's stand-ins for JAX's traceback filtering --------------------------
# JAX hides its own frames from tracebacks; libraries register their source
# folders to be hidden too.  plait keeps every frame (its tracebacks are not
# filtered), so an api_boundary is the function itself; the registered paths
# are kept so that include_frame answers as JAX's would.

_exclude_paths: list[str] = []


def api_boundary(fun: F) -> F:
    """Marks ``fun`` as an entry point whose internal frames JAX would filter
    from tracebacks; plait does not filter tracebacks, so ``fun`` is returned
    unchanged."""
    return fun


def register_exclusion(path: str) -> None:
    """Register ``path`` (a library's source folder) as one whose frames JAX
    would hide; plait records it (``include_frame`` consults it) but does not
    filter tracebacks."""
    _exclude_paths.append(os.fspath(path))


def include_frame(f: types.FrameType) -> bool:
    """Whether a traceback filter would keep frame ``f``: its file is not under
    a path given to :func:`register_exclusion`."""
    filename = f.f_code.co_filename
    return not any(filename.startswith(p) for p in _exclude_paths)


class AbstractRef:
    """JAX's abstract value of a mutable array reference.  plait has no mutable
    references (see ``plait._not_supported``: ``Ref``), so no plait value or
    abstract value is ever one: ``isinstance(x, AbstractRef)`` is False for
    everything, and making one raises ``NotImplementedError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("not supported: plait has no mutable array references (jax.Ref), "
                                  "so there is no AbstractRef to make")


class ExtendedDType(abc.ABC):
    """JAX's base class of extended dtype objects, the dtypes NumPy does not
    know.  plait recognises an extended dtype by its ``type`` attribute, a
    subclass of ``dtypes.extended`` (``plait_core.dtypes.extended_scalar_type``);
    its own, the typed-key dtype ``key<fry>``, is registered as a subclass, so
    ``isinstance(random.key(0).dtype, ExtendedDType)`` holds as in JAX.  A
    library may subclass it to define its own extended dtypes; plait's
    primitives compute only on the extended dtypes plait defines and refuse
    others where they are used."""

    @property
    @abc.abstractmethod
    def type(self) -> type:
        """The dtype's scalar type, a subclass of ``dtypes.extended``."""


ExtendedDType.register(KeyDType)


def _backends() -> dict[str, Any]:
    client = _jaxlib._client
    return {} if client is None else {"cpu": client}


PRIVATE: dict[str, Any] = {
    # ravel_pytree(tree) -> (flat vector, unravel): blackjax (smc)
    "jax._src.flatten_util.ravel_pytree": _flatten_util.ravel_pytree,
    # the annotation types of jax.typing: jaxtyping, chex, optax
    "jax._src.typing.Array": Array,
    "jax._src.typing.ArrayLike": _typing.ArrayLike,
    "jax._src.typing.DTypeLike": _typing.DTypeLike,
    "jax._src.typing.SupportsDType": _typing.SupportsDType,
    # traceback filtering (plait does not filter; see above): equinox, flax, jaxtyping
    "jax._src.traceback_util.api_boundary": api_boundary,
    "jax._src.traceback_util.register_exclusion": register_exclusion,
    "jax._src.traceback_util.include_frame": include_frame,
    "jax._src.traceback_util._exclude_paths": _exclude_paths,
    # block until every ordered effect (callback) issued so far has run: equinox (at exit)
    "jax._src.dispatch.wait_for_tokens": effects_barrier,
    # the XLA clients made so far, by platform ({} before the first computation): chex's fake devices
    "jax._src.xla_bridge._backends": Live(_backends, "the XLA clients made so far"),
    # JAX's compiler module, which chex.restrict_backends patches: plait compiles through
    # plait_dispatch for XLA CPU only and has no backend_compile hook, so the module exists
    # with none of its names (restrict_backends then restricts nothing: CPU is all there is)
    "jax._src.compiler": MODULE_ONLY,
    # the registry of pytree node types (type -> how to flatten it): `type(x) in _registry`, flax nnx
    "jax._src.tree_util._registry": _tree_util._registry,
    # dtype helpers: equinox (TypePromotionError), flax linen fp8_ops
    "jax._src.dtypes.TypePromotionError": _dtypes.TypePromotionError,
    "jax._src.dtypes.issubdtype": _dtypes.issubdtype,
    "jax._src.dtypes.finfo": _dtypes.finfo,
    "jax._src.dtypes.iinfo": _dtypes.iinfo,
    "jax._src.dtypes.canonicalize_dtype": _dtypes.canonicalize_dtype,
    "jax._src.dtypes.result_type": _dtypes.result_type,
    "jax._src.dtypes.float0": _dtypes.float0,
    "jax._src.dtypes.DType": _dtypes.DType,  # the type of dtypes (numpy.dtype), for annotations
    "jax._src.dtypes.ExtendedDType": ExtendedDType,  # the base of extended dtype objects (see above)
    "jax._src.dtypes.extended": _dtypes.extended,  # the scalar type of extended dtypes (issubdtype(key, extended))
    "jax._src.dtypes.prng_key": _dtypes.prng_key,  # the scalar type of typed PRNG key dtypes
    # abstract values: flax linen fp8_ops
    "jax._src.core.ShapedArray": ShapedArray,
    # the primitive of lax.stop_gradient: lineax registers a transpose rule for it
    "jax._src.ad_util.stop_gradient_p": stop_gradient_p,
    # checkify's internals as flax.nnx's checkify transform names them: plait.experimental.checkify's objects
    "jax._src.checkify.checkify": _checkify.checkify,
    "jax._src.checkify.Error": _checkify.Error,
    "jax._src.checkify.JaxException": _checkify.JaxException,
    "jax._src.checkify.Out": _checkify.Out,  # the type variable of a checkified function's output
    "jax._src.checkify.user_checks": _checkify.user_checks,
    # mutable references: plait has none (flax nnx isinstance checks), see AbstractRef
    "jax._src.state.types.AbstractRef": AbstractRef,
    # differentiating a custom_vjp function with respect to a closed-over value (diffrax's test_adjoint)
    "jax._src.interpreters.ad.CustomVJPException": CustomVJPException,
}
"""``jax._src`` path -> plait object of the same meaning (see each comment)."""


def private_modules() -> frozenset[str]:
    """Every ``jax._src...`` module the table makes exist."""
    mods = {"jax._src"}
    for key, value in PRIVATE.items():
        parts = key.split(".")
        upto = len(parts) if value is MODULE_ONLY else len(parts) - 1
        for i in range(2, upto + 1):
            mods.add(".".join(parts[:i]))
    return frozenset(mods)


def lookup(path: str) -> Any:
    """The plait object the table maps ``path`` to (``KeyError`` if none)."""
    value = PRIVATE[path]
    if isinstance(value, Live):
        return value.compute()
    return value
