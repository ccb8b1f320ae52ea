"""Host callbacks: Python functions called from inside a program, with JAX's
names and signatures (``pure_callback``, ``io_callback``, ``debug.callback``,
``debug.print``).  They bind the one ``callback`` primitive (see
:mod:`plait_core.primitives.callbacks`); compiled code calls back into
Python through XLA's host-callback mechanism, without leaving ``jit``.

Array arguments (pytrees of them) reach the Python function as NumPy
arrays; leaves that are not arrays (strings, dtypes, ``None``) are passed
as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval
from plait_core.primitives.callbacks import VMAP_METHODS, HostCallback, callback_p
from plait_core.sharding import NamedSharding, SingleDeviceSharding
from plait_core.tree_util import tree_flatten, tree_unflatten

__all__ = ["debug_callback", "debug_callback_per_device", "debug_log", "debug_print", "io_callback", "pure_callback"]

#: The logger :func:`debug_log` writes to.
logger = logging.getLogger("plait.debug")


def _is_array(x: Any) -> bool:
    if isinstance(x, (str, bytes, np.dtype, type)) or x is None:
        return False
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def _split(args: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """The array leaves of ``args``, and how to rebuild ``args`` from them
    (the other leaves are kept as they are)."""
    leaves, tree = tree_flatten(args)
    dynamic = [_is_array(x) for x in leaves]
    arrays = [x for x, d in zip(leaves, dynamic) if d]

    def rebuild(values: list[Any]) -> Any:
        it = iter(values)
        return tree_unflatten(tree, [next(it) if d else x for x, d in zip(leaves, dynamic)])

    return arrays, rebuild


def _canonical(value: np.ndarray) -> np.ndarray:
    """``value`` in its canonical dtype (64-bit values narrowed unless x64 is
    on), as JAX treats a callback's results."""
    dtype = dtypes.canonicalize_dtype(value.dtype)
    return value if dtype == value.dtype else value.astype(dtype)


def _result_avals(fn: str, result_shape_dtypes: Any) -> tuple[list[ShapedArray], Any]:
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(
                f"{fn}: result_shape_dtypes must be a pytree of values with .shape and .dtype "
                f"(e.g. plait.ShapeDtypeStruct), got {leaf!r}"
            )
        avals.append(ShapedArray(tuple(int(d) for d in shape), dtypes.canonicalize_dtype(np.dtype(dtype))))
    return avals, tree


def _check_sharding(fn: str, sharding: Any) -> None:
    """``sharding=`` of a callback names one device: a ``SingleDeviceSharding``
    (or a ``NamedSharding`` over a mesh without axes), as in JAX."""
    if sharding is None or isinstance(sharding, SingleDeviceSharding):
        return
    if isinstance(sharding, NamedSharding) and not sharding.mesh.axis_names:
        return
    raise NotImplementedError(
        f"not supported: {fn}(sharding=...) with a {type(sharding).__name__}: a callback runs on one device "
        "(give a SingleDeviceSharding) or, inside shard_map, on every device with its pieces (give none)"
    )


def _bind(
    fn: str, callback: Callable[..., Any], result_shape_dtypes: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
    *, kind: str, ordered: bool, vmap_method: str | None, sharding: Any = None, partitioned: bool = False,
    order_per_device: bool = False,
) -> Any:  # fmt: skip
    if not callable(callback):
        raise TypeError(f"{fn}: callback must be callable, got {type(callback).__name__}")
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"{fn}: vmap_method must be one of {VMAP_METHODS}, got {vmap_method!r}")
    _check_sharding(fn, sharding)
    arrays, rebuild = _split((args, kwargs))
    avals, out_tree = _result_avals(fn, result_shape_dtypes) if result_shape_dtypes is not None else ([], None)

    def flat(*values: np.ndarray) -> list[Any]:
        call_args, call_kwargs = rebuild(list(values))
        out = callback(*call_args, **call_kwargs)
        if out_tree is None:
            return []
        leaves, tree = tree_flatten(out)
        if tree != out_tree:
            raise RuntimeError(f"{fn}: the callback returned the structure {tree}, expected {out_tree}")
        return [_canonical(np.asarray(v)) for v in leaves]

    name = getattr(callback, "__name__", type(callback).__name__)
    host = HostCallback(flat, f"{fn}({name})", order_per_device=order_per_device)
    outs = callback_p.bind(
        *arrays, callback=host, result_avals=tuple(avals), kind=kind, ordered=ordered, vmap_method=vmap_method,
        sharding=sharding, partitioned=bool(partitioned),
    )  # fmt: skip
    return None if out_tree is None else tree_unflatten(out_tree, list(outs))


def pure_callback(
    callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: Any = None,
    vmap_method: str | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """Call the pure Python function ``callback(*args, **kwargs)`` on the host
    and return its results, whose structure, shapes and dtypes
    ``result_shape_dtypes`` gives (a pytree of ``ShapeDtypeStruct``-likes; a
    mismatch is a RuntimeError when it runs).

    ``callback`` must have no side effects: an unused call may be removed,
    and transformations may call it any number of times.  It is not
    differentiable (wrap it in ``custom_jvp``/``custom_vjp``).  Under ``vmap``,
    ``vmap_method`` says how it is called: ``'sequential'`` (once per
    element, in a loop), ``'sequential_unrolled'`` (the same, unrolled),
    ``'expand_dims'`` (once, unbatched arguments given a leading axis of
    size 1) or ``'broadcast_all'`` (once, every argument with the full
    batch axis); ``None`` makes ``vmap`` an error.

    In a program over several devices (a ``jit`` of sharded values), one
    device calls it once on the whole values: the program's first device,
    or that of ``sharding`` (a ``SingleDeviceSharding``); inside
    ``shard_map`` (and ``pmap``) every device calls it on its own pieces,
    and ``sharding`` must be ``None``."""
    return _bind("pure_callback", callback, result_shape_dtypes, args, kwargs, kind="pure", ordered=False,
                 vmap_method=vmap_method, sharding=sharding)  # fmt: skip


def io_callback(
    callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: Any = None, ordered: bool = False,
    **kwargs: Any,
) -> Any:  # fmt: skip
    """Call ``callback(*args, **kwargs)``, which may have side effects, on the
    host and return its results (shaped like ``result_shape_dtypes``, which
    may be ``None`` for no results).  The call always happens, even when its
    results are unused; ``ordered=True`` keeps ordered calls in program
    order.  Under ``vmap`` an unordered call runs once per element; an
    ordered one cannot be batched.  It is not differentiable.  Over
    several devices it runs as :func:`pure_callback` does (``sharding``
    likewise); an ordered call keeps its order on each device."""
    return _bind("io_callback", callback, result_shape_dtypes, args, kwargs, kind="io", ordered=ordered,
                 vmap_method="sequential", sharding=sharding)  # fmt: skip


def debug_callback(callback: Callable[..., Any], *args: Any, ordered: bool = False, partitioned: bool = False,
                   **kwargs: Any) -> None:  # fmt: skip
    """Call ``callback(*args, **kwargs)`` on the host for its effects (its
    return value is ignored), also inside ``jit``, ``vmap`` (once per element),
    ``grad`` (on the primal values) and loops.  ``ordered=True`` keeps
    ordered calls in program order.

    In a program over several devices: where XLA chooses the layout (a
    ``jit`` of sharded values) the first device calls it once, on the whole
    values; inside ``shard_map`` (and ``pmap``) every device calls it on its
    own pieces; ``partitioned=True`` makes every device call it on its own
    pieces everywhere.  ``ordered=True`` is then an error (ValueError when
    the program is compiled), as in JAX: the devices' calls would have no
    order among themselves."""
    _debug(callback, args, kwargs, ordered=ordered, partitioned=partitioned, order_per_device=False)


def debug_callback_per_device(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """An ordered :func:`debug_callback` that may also run in a program over
    several devices, each device's calls in program order (what plait's
    ``checkify`` needs for its checks; JAX refuses a user's ordered debug
    callback there)."""
    _debug(callback, args, kwargs, ordered=True, partitioned=False, order_per_device=True)


def _debug(callback: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *, ordered: bool,
           partitioned: bool, order_per_device: bool) -> None:  # fmt: skip
    if not callable(callback):
        raise TypeError(f"debug.callback: callback must be callable, got {type(callback).__name__}")

    def effect(*a: Any, **k: Any) -> None:
        callback(*a, **k)

    effect.__name__ = getattr(callback, "__name__", "callback")
    _bind("debug.callback", effect, None, args, kwargs, kind="debug", ordered=ordered, vmap_method="sequential",
          partitioned=partitioned, order_per_device=order_per_device)  # fmt: skip


def debug_print(fmt: str, *args: Any, ordered: bool = False, partitioned: bool = False, **kwargs: Any) -> None:
    """Print ``fmt.format(*args, **kwargs)`` on the host when the program
    runs (also inside ``jit``, ``vmap``, ``grad`` and loops), with the
    arguments' values as NumPy arrays: ``debug.print("x = {}", x)``,
    ``debug.print("{a:.2f}", a=y)``.  ``ordered=True`` keeps ordered prints
    in program order; over several devices, ``partitioned=True`` prints each
    device's pieces (see :func:`debug_callback`)."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a string, got {type(fmt).__name__}")

    def show(*a: Any, **k: Any) -> None:
        print(fmt.format(*a, **k), flush=True)

    show.__name__ = "print"
    _bind("debug.print", show, None, args, kwargs, kind="debug", ordered=ordered, vmap_method="sequential",
          partitioned=partitioned)  # fmt: skip


def debug_log(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """:func:`debug_print`, but the text goes to the ``plait.debug`` logger
    at level INFO instead of standard output."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.log: the format must be a string, got {type(fmt).__name__}")

    def emit(*a: Any, **k: Any) -> None:
        logger.info(fmt.format(*a, **k))

    emit.__name__ = "log"
    _bind("debug.log", emit, None, args, kwargs, kind="debug", ordered=ordered, vmap_method="sequential")
