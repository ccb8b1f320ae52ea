"""Vmappable types: values that ``vmap`` maps over in their own way.

An array is mapped by slicing one of its axes.  A *vmappable* type says
itself how one of its values splits into elements and how the elements are
rebuilt into one: :func:`register_vmappable` records

* ``axis_size(value, spec)``: how many elements ``value`` holds;
* ``to_elt(value, spec, wrap)``: what the mapped function sees for one
  element, built with ``wrap(array, axis)`` (the batched view of an array
  whose axis ``axis`` runs over the elements);
* ``from_elt(elt, spec, axis_size, unwrap)``: the value rebuilt from what the
  function returned for one element, with ``unwrap(x, axis)`` (the array
  holding ``x`` for every element along ``axis``).

``spec`` is the ``in_axes``/``out_axes`` entry: an ``int``, or an instance of
the type's own ``spec_type`` (so ``in_axes=my_axis`` can mean "map this the
way my type maps", as ``pile_axis`` does for piles).  Values of a registered
type are leaves of the argument trees even if the type is also a pytree node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from plait_core.dims import Dim

Wrap = Callable[[Any, int], Any]
Unwrap = Callable[[Any, int], Any]


class Vmappable(NamedTuple):
    """How ``vmap`` maps values of ``data_type`` (see the module docs)."""

    data_type: type
    spec_type: type | None
    axis_size: Callable[[Any, Any], Dim]
    to_elt: Callable[[Any, Any, Wrap], Any]
    from_elt: Callable[[Any, Any, Dim, Unwrap], Any]


_by_data: dict[type, Vmappable] = {}
_by_spec: dict[type, Vmappable] = {}


def register_vmappable(
    data_type: type,
    spec_type: type | None,
    axis_size: Callable[[Any, Any], Dim],
    to_elt: Callable[[Any, Any, Wrap], Any],
    from_elt: Callable[[Any, Any, Dim, Unwrap], Any],
) -> None:
    """Teach ``vmap`` to map over values of ``data_type``.

    ``spec_type`` is the type of the ``in_axes``/``out_axes`` entries that
    select this mapping (``None``: only ints).  ``axis_size(value, spec)``
    counts the elements; ``to_elt(value, spec, wrap)`` returns what the
    function sees for one element (any pytree), using ``wrap(array, axis)``
    for each array whose axis ``axis`` runs over the elements;
    ``from_elt(elt, spec, axis_size, unwrap)`` rebuilds a value from one
    element's result (the output subtree at an ``out_axes`` entry of
    ``spec_type``), using ``unwrap(x, axis)``."""
    for what, f in (("axis_size", axis_size), ("to_elt", to_elt), ("from_elt", from_elt)):
        if not callable(f):
            raise TypeError(f"register_vmappable: {what} must be callable, got {type(f).__name__}")
    if not isinstance(data_type, type) or (spec_type is not None and not isinstance(spec_type, type)):
        raise TypeError(
            f"register_vmappable: data_type and spec_type must be classes, got {data_type!r} and {spec_type!r}"
        )
    entry = Vmappable(data_type, spec_type, axis_size, to_elt, from_elt)
    _by_data[data_type] = entry
    if spec_type is not None:
        _by_spec[spec_type] = entry


def vmappable_of(x: Any) -> Vmappable | None:
    """The registration of ``x``'s type, if any."""
    return _by_data.get(type(x))


def spec_of(x: Any) -> Vmappable | None:
    """The registration whose ``spec_type`` ``x`` is an instance of, if any."""
    return _by_spec.get(type(x))


def is_vmappable_value(x: Any) -> bool:
    """Whether ``x`` is a value of a registered vmappable type."""
    return type(x) in _by_data
