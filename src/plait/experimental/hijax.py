"""``jax.experimental.hijax``: the names of JAX's "high-level" types, as far as
plait can give them their meaning.

JAX's hijax lets a library define its own kinds of values (a :class:`HiType`,
its abstract value; ``register_hitype`` maps the value's class to it) and
primitives on them (:class:`HiPrimitive`: ``impl``, ``abstract_eval``,
``to_lojax``, ``jvp``, ``transpose`` as methods).  Under a transformation JAX
carries such abstract values in its traces and lowers them to ordinary arrays
with ``to_lojax``.

What plait gives (JAX 0.10.2's meaning, checked against it):

* ``register_hitype(cls, typeof_fn)``: ``plait.typeof(x)`` of an instance of
  ``cls`` is ``typeof_fn(x)``;
* :class:`HiPrimitive` outside every transformation: ``bind`` runs the
  primitive's ``impl`` method on the operands as given, as JAX's evaluation does;
* :func:`cur_qdd` of a value (not a tracer): its ``cur_qdd()``;
* :class:`aval_method`, :class:`aval_property`, :class:`AvalQDD`,
  :class:`AvalMutableQDD`: JAX's records (named tuples, frozen dataclasses);
* ``control_flow_allowed_effects``: a set of effect types (``add_type``,
  ``contains``, ``filter_in``, ``filter_not_in``); plait has no effect types of
  its own, so it starts empty;
* ``Zero``, ``instantiate_zeros``, ``is_undefined_primal``: plait-autodiff's
  symbolic zeros and linear operands (``plait.interpreters.ad``);
* ``ShapedArray``, ``AbstractValue``: plait's abstract value.  plait has one kind
  of abstract value, so ``AbstractValue`` is ``ShapedArray`` and :class:`HiType`
  (which JAX derives from ``AbstractValue``) is a base of its own;
* ``AbstractRef``, ``TransformedRef``: the types of mutable references; plait has
  none, so nothing is an instance of them.

Not supported (``NotImplementedError`` saying so): binding a
:class:`HiPrimitive` under a transformation (``jit``, ``grad``, ``vmap``, ...),
and ``cur_qdd`` of a traced value.  plait's traces carry ``ShapedArray``\\ s
only (arrays, typed keys, piles); a value of a user-defined type has no place in
a plait jaxpr, so there is nothing for ``abstract_eval`` / ``to_lojax`` to
produce.  flax.nnx uses hijax only for Variables made with ``hijax=True``
(default ``False``); its ordinary Variables, Modules and transforms do not bind
these primitives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from plait._hitypes import register_hitype
from plait._jax_private import AbstractRef
from plait.extend._primitive import Primitive
from plait.interpreters.ad import Zero, instantiate_zeros, is_undefined_primal
from plait_core import ShapedArray, current_trace
from plait_core.trace import EvalTrace, Tracer

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "EffectTypeSet",
    "HiPrimitive",
    "HiType",
    "MutableHiType",
    "ShapedArray",
    "TransformedRef",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "cur_qdd",
    "instantiate_zeros",
    "is_undefined_primal",
    "register_hitype",
]

#: plait's one kind of abstract value (see the module's docstring).
AbstractValue = ShapedArray

_WHY = ("plait's traces carry ShapedArrays only (arrays, typed keys, piles): a value of a user-defined "
        "high-level type has no place in a plait jaxpr")


class HiType:
    """The base of a user-defined abstract value (JAX's ``hijax.HiType``).
    Subclasses describe their values; plait does not trace them (see the
    module's docstring)."""

    #: JAX's flags: a high-level type, without quasi-dynamic data.
    is_high = True
    has_qdd = False


class MutableHiType(HiType):
    """The base of a user-defined abstract value whose values mutate, carrying
    quasi-dynamic data (JAX's ``hijax.MutableHiType``)."""

    has_qdd = True


class TransformedRef:
    """JAX's view of a mutable reference through indexing transforms.  plait
    has no mutable references, so nothing is a ``TransformedRef``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("not supported: plait has no mutable array references (jax.Ref), "
                                  "so there is no TransformedRef to make")


class aval_method(NamedTuple):
    """A method of an abstract value's class that JAX binds to the tracers of
    that type (``tracer.name(...)`` calls ``fun(tracer, ...)``): the function, kept."""

    fun: Callable[..., Any]


class aval_property(NamedTuple):
    """As :class:`aval_method`, a property read on the tracers of the type: the getter, kept."""

    fget: Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class AvalQDD:
    """An abstract value with its quasi-dynamic data (the part of a mutable
    value's type that a mutation may change), as ``abstract_eval`` returns it."""

    aval: Any
    qdd: Any


@dataclasses.dataclass(frozen=True)
class AvalMutableQDD:
    """An abstract value with a mutable holder of its quasi-dynamic data, as an
    ``abstract_eval`` rule of a mutating primitive receives it."""

    aval: Any
    mutable_qdd: Any


class EffectTypeSet:
    """A set of effect types: an effect is in it when it is an instance of one of them."""

    def __init__(self) -> None:
        self._types: set[type] = set()

    def add_type(self, effect_type: type) -> None:
        """Add ``effect_type`` (a class) to the set."""
        if not isinstance(effect_type, type):
            raise TypeError(f"EffectTypeSet.add_type: expected an effect class, got {effect_type!r}")
        self._types.add(effect_type)

    def contains(self, effect: Any) -> bool:
        """Whether ``effect`` is an instance of one of the set's types."""
        return isinstance(effect, tuple(self._types))

    def filter_in(self, effects: Iterable[Any]) -> list[Any]:
        """The effects of ``effects`` the set contains, in order."""
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Iterable[Any]) -> list[Any]:
        """The effects of ``effects`` the set does not contain, in order."""
        return [e for e in effects if not self.contains(e)]

    def __repr__(self) -> str:
        return f"EffectTypeSet({sorted(t.__qualname__ for t in self._types)})"


#: The effect types JAX lets through loop and branch bodies (plait has none of its own).
control_flow_allowed_effects = EffectTypeSet()


class HiPrimitive(Primitive):
    """A primitive on high-level values, its rules given as methods (``impl``,
    ``abstract_eval``, ``to_lojax``, ``jvp``, ``transpose``) of a subclass.

    Outside every transformation ``bind`` runs ``self.impl(*args, **params)``,
    as JAX's evaluation does.  Under a transformation it raises
    ``NotImplementedError`` (not supported: plait's traces carry no user-defined
    abstract values; see the module's docstring)."""

    def __init__(self, name: str) -> None:
        # Keep the subclass's methods: Primitive.__init__ sets placeholder
        # impl/abstract_eval attributes that would shadow them.
        impl, abstract_eval = type(self).impl, type(self).abstract_eval
        super().__init__(name)
        del self.impl, self.abstract_eval
        assert type(self).impl is impl and type(self).abstract_eval is abstract_eval

    def impl(self, *args: Any, **params: Any) -> Any:
        """The primitive's evaluation (a subclass defines it)."""
        raise NotImplementedError(f"the high-level primitive {self.name} defines no impl method")

    def abstract_eval(self, *avals: Any, **params: Any) -> Any:
        """The result's abstract value and effects (a subclass defines it)."""
        raise NotImplementedError(f"the high-level primitive {self.name} defines no abstract_eval method")

    def bind(self, *args: Any, **params: Any) -> Any:
        """Run ``impl`` eagerly; refuse under a transformation (see the class)."""
        trace = current_trace()
        if type(trace) is not EvalTrace or any(isinstance(a, Tracer) for a in args):
            raise NotImplementedError(
                f"not supported: the high-level (hijax) primitive {self.name} under a transformation "
                f"({trace.describe()}): {_WHY}. Outside transformations it runs its impl. "
                "(flax.nnx: make Variables with hijax=False, the default.)"
            )
        return self.impl(*args, **params)


def cur_qdd(x: Any) -> Any:
    """The current quasi-dynamic data of a mutable high-level value ``x`` (its
    ``cur_qdd()``).  Not supported for a traced value (see the module's docstring)."""
    if isinstance(x, Tracer):
        raise NotImplementedError(f"not supported: cur_qdd of a traced value: {_WHY}")
    method = getattr(type(x), "cur_qdd", None)
    if method is None:
        raise TypeError(f"cur_qdd: expected a value of a mutable high-level type, got {type(x).__name__}")
    return method(x)
