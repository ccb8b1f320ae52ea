"""``plait.debug``: printing, callbacks, breakpoints and sharding views for
debugging, with JAX's names (``jax.debug.print``, ``jax.debug.log``,
``jax.debug.callback``, ``jax.debug.breakpoint``,
``jax.debug.inspect_array_sharding``, ``jax.debug.visualize_array_sharding``,
``jax.debug.visualize_sharding``).

The callbacks work eagerly and inside ``jit`` (through XLA's host callbacks,
without leaving the compiled program), ``vmap`` (once per element), ``grad``
(on the primal values) and loops; ``ordered=True`` keeps ordered calls in
program order.
"""

from __future__ import annotations

import builtins
import inspect
import itertools
import pdb
import sys
import threading
from collections.abc import Callable, Sequence
from types import CodeType
from typing import IO, Any, cast

from plait_core import Tracer
from plait_core.host_callbacks import debug_callback as callback
from plait_core.host_callbacks import debug_log as log
from plait_core.host_callbacks import debug_print as print
from plait_core.host_callbacks import pure_callback
from plait_core.lax import stop_gradient
from plait_core.sharding import Sharding
from plait_core.tree_util import tree_flatten, tree_leaves, tree_unflatten

__all__ = [
    "breakpoint",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]

_write = builtins.print  # this module's ``print`` is debug.print


# ---------------------------------------------------------------------------
# Shardings


def inspect_array_sharding(value: Any, *, callback: Callable[[Sharding], None]) -> None:
    """Call ``callback(sharding)`` with the sharding of every Array leaf of the
    pytree ``value``, right away (the shardings of Arrays are known).

    JAX also reports, inside ``jit``, the sharding XLA's partitioner picks for
    an intermediate value, when the program is compiled; plait's compiler does
    not report intermediate layouts, so a traced ``value`` is a
    ``NotImplementedError`` (inspect ``jit(f)(x).sharding``, or use the
    function outside ``jit``)."""
    if not callable(callback):
        raise TypeError(f"inspect_array_sharding: callback must be callable, got {type(callback).__name__}")
    leaves = tree_leaves(value)
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        raise NotImplementedError(
            "inspect_array_sharding of a traced value (inside jit, vmap, grad, ...) is not supported: plait's "
            "compiler does not report the layouts XLA picks for intermediate values; inspect the sharding of "
            "the Arrays jit returns (jit(f)(x).sharding), or call it outside the transformation"
        )
    for leaf in leaves:
        sharding = getattr(leaf, "sharding", None)
        if not isinstance(sharding, Sharding):
            raise TypeError(
                f"inspect_array_sharding: expected Arrays (with a .sharding), got {type(leaf).__name__}: {leaf!r}"
            )
        callback(sharding)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print how the Array ``arr`` (1 or 2 dimensions) is laid out over devices:
    :func:`visualize_sharding` of its shape and sharding (same keywords)."""
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(arr.shape, s, **kwargs))


def visualize_sharding(
    shape: Sequence[int],
    sharding: Sharding,
    *,
    use_color: bool = True,
    scale: float = 1.0,
    min_width: int = 9,
    max_width: int = 80,
    color_map: Any = None,
) -> None:
    """Print a box per piece of an array of ``shape`` (1 or 2 dimensions) laid
    out by ``sharding``, each naming the devices that hold it (``CPU 0,1``),
    sized in proportion to the piece: the table JAX prints when its console
    has no colours.  ``scale`` scales the height (10 lines for a whole 2-d
    array at 1.0; the width follows the aspect ratio), each box is between
    ``min_width`` and ``max_width`` characters wide.  ``use_color`` and
    ``color_map`` are accepted; the text has no colours."""
    del use_color, color_map
    _write(_sharding_table(shape, sharding, scale=scale, min_width=min_width, max_width=max_width))


def _sharding_table(shape: Sequence[int], sharding: Sharding, *, scale: float = 1.0, min_width: int = 9,
                   max_width: int = 80) -> str:  # fmt: skip
    """The text :func:`visualize_sharding` prints."""
    shape = tuple(int(d) for d in shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_sharding: only shapes of 1 or 2 dimensions can be shown, got {shape}")
    if not isinstance(sharding, Sharding):
        raise TypeError(f"visualize_sharding: expected a plait.sharding.Sharding, got {type(sharding).__name__}")
    indices = sharding.devices_indices_map(shape)
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    kind = next(iter(indices)).platform.upper()
    # Per piece (row, column): the device ids holding it, its share of each dimension.
    pieces: dict[tuple[int, int], list[int]] = {}
    fraction: dict[tuple[int, int], tuple[float | None, float]] = {}
    for device, index in indices.items():
        spans = [(s.start or 0, shape[k] if s.stop is None else s.stop) for k, s in enumerate(index)]
        places = [start // (stop - start) if stop > start else 0 for start, stop in spans]
        if len(shape) == 1:
            key = (0, places[0])
            fraction[key] = (None, (spans[0][1] - spans[0][0]) / shape[0])
        else:
            key = (places[0], places[1])
            fraction[key] = ((spans[0][1] - spans[0][0]) / shape[0], (spans[1][1] - spans[1][0]) / shape[1])
        pieces.setdefault(key, []).append(device.id)
    rows = max(r for r, _ in pieces) + 1
    cols = max(c for _, c in pieces) + 1
    # Each cell: its text, its padding around the text (top, right, bottom, left).
    cells: dict[tuple[int, int], tuple[str, tuple[int, int, int, int]]] = {}
    for key, ids in pieces.items():
        text = f"{kind} " + ",".join(str(i) for i in sorted(ids))
        height_share, width_share = fraction[key]
        width = min(max(int(width_share * base_width * 2.5), min_width), max_width)
        height = 1 if height_share is None else int(height_share * base_height)
        left, extra = divmod(width - len(text) - 2, 2)
        top, extra_v = divmod(height - 2, 2)
        cells[key] = (text, (max(top, 0), max(left + extra, 0), max(top + extra_v, 0), max(left, 0)))
    col_width = [max(len(cells[r, c][0]) + cells[r, c][1][1] + cells[r, c][1][3] for r in range(rows))
                 for c in range(cols)]  # fmt: skip
    lines = ["┌" + "┬".join("─" * w for w in col_width) + "┐"]
    for r in range(rows):
        height = max(cells[r, c][1][0] + 1 + cells[r, c][1][2] for c in range(cols))
        block = []
        for c in range(cols):
            text, (top, right, _bottom, left) = cells[r, c]
            content = " " * left + text + " " * right
            lead, rest = divmod(col_width[c] - len(content), 2)
            content = " " * lead + content + " " * (lead + rest)
            column = [" " * col_width[c]] * top + [content]
            column += [" " * col_width[c]] * (height - len(column))
            block.append(column)
        lines += ["│" + "│".join(block[c][k] for c in range(cols)) + "│" for k in range(height)]
        if r + 1 < rows:
            lines.append("├" + "┼".join("─" * w for w in col_width) + "┤")
    lines.append("└" + "┴".join("─" * w for w in col_width) + "┘")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Breakpoints


class _Frame:
    """What pdb reads of a Python frame, for a frame captured when the
    breakpoint was traced: its code and line, its globals, and its locals
    with every traced value replaced by its value in the running program."""

    def __init__(self, code: CodeType, lineno: int, globals_: dict[str, Any], locals_: dict[str, Any]) -> None:
        self.f_code = code
        self.f_lineno = lineno
        self.f_globals = globals_
        self.f_locals = locals_
        self.f_back: _Frame | None = None
        self.f_trace = None


class _Debugger(pdb.Pdb):
    """pdb over captured frames: ``p``, ``pp``, ``up``/``down``, ``where``,
    ``list``, ``longlist``, ``!statements``, ``c`` (continue the program) and
    ``q`` (exit, as JAX's debugger does).  Stepping is not possible: the
    program runs compiled, the frames are a snapshot."""

    def __init__(self, frames: list[_Frame], stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
        super().__init__(stdin=stdin, stdout=stdout, nosigint=True)
        if stdin is not None:
            self.use_rawinput = False
        self.frames = frames

    def setup(self, f: Any, tb: Any) -> None:
        # pdb's frame stack is the captured frames (pdb reads what _Frame has).
        self.forget()
        me: Any = self
        me.stack = [(frame, frame.f_lineno) for frame in self.frames]
        me.curindex = len(self.frames) - 1
        me.curframe = self.frames[-1]
        me.curframe_locals = self.frames[-1].f_locals

    def run_session(self) -> None:
        """Print where the program is, then read commands until ``c``."""
        self.message("Entering pdb (plait.debug.breakpoint):")
        self.interaction(cast(Any, self.frames[-1]), None)

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue)): let the program go on."""
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> bool:
        """q(uit), exit: exit the program (``SystemExit(0)``), as JAX's debugger does."""
        sys.exit(0)

    do_q = do_exit = do_EOF = do_quit

    def do_longlist(self, arg: str) -> None:
        """longlist | ll: the whole source of the current function."""
        frame: Any = self.curframe
        try:
            lines, lineno = inspect.getsourcelines(frame.f_code)
        except OSError as err:
            self.error(str(err))
            return
        self._print_lines(lines, lineno, [], frame)

    do_ll = do_longlist

    def _not_here(self, arg: str) -> None:
        self.error("not available at a plait breakpoint: the program runs compiled and these frames are a "
                   "snapshot of it (c continues)")  # fmt: skip

    do_step = do_s = do_next = do_n = do_until = do_unt = do_return = do_r = do_jump = do_j = _not_here


_debug_lock = threading.Lock()

_INTERNAL = ("plait_core", "plait_autodiff", "plait_batching", "plait_masking", "plait_dispatch")


def _internal(frame: Any) -> bool:
    name = frame.f_globals.get("__name__", "")
    return isinstance(name, str) and (name == "plait" or name == "plait.debug" or name.split(".")[0] in _INTERNAL)


def _split_tracers(locals_: dict[str, Any]) -> tuple[list[Tracer], Callable[[list[Any]], dict[str, Any]]]:
    """The traced values among ``locals_`` (inside pytrees too), and how to put
    values in their places."""
    plans: list[tuple[str, Any, Any, list[bool]]] = []
    tracers: list[Tracer] = []
    for name, value in locals_.items():
        try:
            leaves, tree = tree_flatten(value)
        except Exception:  # not flattenable: kept as it is
            plans.append((name, value, None, []))
            continue
        traced = [isinstance(leaf, Tracer) for leaf in leaves]
        if not any(traced):
            plans.append((name, value, None, []))
            continue
        tracers += [leaf for leaf, t in zip(leaves, traced) if t]
        plans.append((name, leaves, tree, traced))

    def rebuild(values: list[Any]) -> dict[str, Any]:
        it = iter(values)
        out: dict[str, Any] = {}
        for name, value, tree, traced in plans:
            if tree is None:
                out[name] = value
            else:
                out[name] = tree_unflatten(tree, [next(it) if t else leaf for leaf, t in zip(value, traced)])
        return out

    return tracers, rebuild


def breakpoint(
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **kwargs: Any,
) -> Any:
    """Stop the program here and open Python's debugger (pdb) on the host, with
    the Python frames of this call (innermost: the caller's) and their local
    variables, traced ones replaced by their values when the program runs:
    ``p x``, ``pp``, ``up``/``down``, ``where``, ``list``, ``!expr``; ``c``
    continues, ``q`` exits.  Works eagerly and inside ``jit``, ``vmap`` (once
    per element) and loops (a host callback).

    ``filter_frames`` leaves plait's own frames out, ``num_frames`` keeps that
    many innermost frames; ``ordered`` orders the stop with other ordered
    callbacks.  With ``token`` (a pytree of arrays; not with ``ordered``) the
    stop happens once ``token`` is computed and ``token`` is returned, to be
    used by the rest of the program (an unused result lets the stop be
    pruned).  ``backend`` names a debugger; plait has one (pdb), used for every
    name.  Other keywords go to the debugger: ``stdin=`` and ``stdout=`` (file
    objects) replace the terminal."""
    del backend
    if token is not None and ordered:
        raise ValueError("breakpoint: `ordered` and `token` are mutually exclusive arguments")
    stdin, stdout = kwargs.pop("stdin", None), kwargs.pop("stdout", None)
    if kwargs:
        raise TypeError(f"breakpoint: unexpected keyword arguments {sorted(kwargs)} (the debugger takes stdin, stdout)")
    captured: list[tuple[CodeType, int, dict[str, Any], dict[str, Any]]] = []
    frame = inspect.currentframe()
    frame = frame.f_back if frame is not None else None
    while frame is not None:
        if not (filter_frames and _internal(frame)):
            captured.append((frame.f_code, frame.f_lineno, frame.f_globals, dict(frame.f_locals)))
        frame = frame.f_back
    del frame
    if num_frames is not None:
        captured = captured[:num_frames]
    splits = [_split_tracers(loc) for _, _, _, loc in captured]
    counts = [len(tracers) for tracers, _ in splits]
    flat: list[Tracer] = [t for tracers, _ in splits for t in tracers]

    def stop(*values: Any) -> None:
        frames = []
        it = iter(values)
        for (code, lineno, globals_, _), (_, rebuild), n in zip(captured, splits, counts):
            frames.append(_Frame(code, lineno, globals_, rebuild([next(it) for _ in range(n)])))
        frames.reverse()  # outermost first, as pdb's stack
        for outer, inner in itertools.pairwise(frames):
            inner.f_back = outer
        if not frames:
            raise ValueError("breakpoint: no Python frame to show (every frame was filtered out)")
        with _debug_lock:
            _Debugger(frames, stdin, stdout).run_session()

    if token is None:
        callback(stop, *flat, ordered=ordered)
        return None

    def stop_then_pass(tok: Any, *values: Any) -> Any:
        stop(*values)
        return tok

    token, flat = stop_gradient((token, flat))
    return pure_callback(stop_then_pass, token, token, *flat, vmap_method="sequential")
