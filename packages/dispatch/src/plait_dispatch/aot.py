"""Ahead-of-time stages of a jitted function: ``Traced``, ``Lowered``, ``Compiled``.

``jit(f).trace(*args)`` stages ``f`` for the arguments' types and returns a
:class:`Traced` (its jaxpr, input and output structure); ``.lower()`` turns
it into StableHLO (:class:`Lowered`, ``.as_text()``); ``.compile()`` compiles
it (:class:`Compiled`), which can be called on arguments of the same types
and reports XLA's ``cost_analysis()`` and ``memory_analysis()``.

As in JAX, static arguments are fixed by ``trace``/``lower`` and are not
passed to a ``Compiled`` again: call it with the dynamic arguments only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plait_core import ClosedJaxpr, ShapedArray, ShapeDtypeStruct, get_aval
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from plait_dispatch import _jaxlib
from plait_dispatch.cache import CompiledCall, JitInfo, compiled_call, computation_device, lower_for_call

__all__ = ["Compiled", "Lowered", "MemoryAnalysis", "StagedCall", "Traced"]


@dataclass(frozen=True, eq=False)
class StagedCall:
    """A jitted function staged for one signature (what the tracing cache holds).

    ``body`` is the const-free jaxpr taking ``consts`` then the argument
    leaves; ``operand_avals`` are its input types; ``info`` carries device,
    donations and argument names per operand; ``closed`` is the same program
    with its constants closed over (for reading)."""

    fun_name: str
    desc: str
    closed: ClosedJaxpr
    body: ClosedJaxpr
    consts: list[Any]
    operand_avals: tuple[ShapedArray, ...]
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    info: JitInfo
    leaf_names: tuple[str, ...]
    donate_argnums: tuple[int, ...]

    @property
    def in_avals(self) -> tuple[ShapedArray, ...]:
        """Types of the argument leaves (without captured constants)."""
        return self.operand_avals[len(self.consts) :]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return list(self.body.out_avals)

    def out_info(self) -> Any:
        """The output tree of ``ShapeDtypeStruct``s."""
        return tree_unflatten(self.out_tree, [_struct(a) for a in self.body.out_avals])

    def args_info(self) -> Any:
        """The dynamic arguments' tree of ``ShapeDtypeStruct``s."""
        return tree_unflatten(self.in_tree, [_struct(a) for a in self.in_avals])

    def target_device(self) -> _jaxlib.Device:
        """The device this signature compiles for ahead of time: ``jit``'s
        ``device=``, or the committed device of a captured constant, or the default."""
        device, _ = computation_device(self.consts, self.info.device, self.desc, self.info.names)
        return device


def _struct(a: ShapedArray) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)



class _Stage:
    """What every stage of ``jit(f).trace(...).lower().compile()`` knows about
    its signature."""

    _staged: StagedCall

    @property
    def in_tree(self) -> PyTreeDef:
        """Structure of the dynamic arguments: ``(args, kwargs)``."""
        return self._staged.in_tree

    @property
    def out_tree(self) -> PyTreeDef:
        return self._staged.out_tree

    @property
    def in_avals(self) -> tuple[ShapedArray, ...]:
        return self._staged.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self._staged.out_avals

    @property
    def out_info(self) -> Any:
        """The output as a tree of ``ShapeDtypeStruct``."""
        return self._staged.out_info()

    @property
    def args_info(self) -> Any:
        """The dynamic arguments as a tree of ``ShapeDtypeStruct``."""
        return self._staged.args_info()

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        return self._staged.donate_argnums


class Traced(_Stage):
    """A jitted function traced for one signature (``jit(f).trace(*args)``)."""

    def __init__(self, staged: StagedCall) -> None:
        self._staged = staged

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The staged program (constants closed over)."""
        return self._staged.closed

    @property
    def fun_name(self) -> str:
        return self._staged.fun_name

    def lower(self, *, lowering_platforms: Sequence[str] | None = None) -> Lowered:
        """Lower to StableHLO.  ``lowering_platforms`` may only name ``"cpu"``."""
        if lowering_platforms is not None:
            platforms = tuple(lowering_platforms)
            bad = [p for p in platforms if p != _jaxlib.PLATFORM]
            if not platforms or bad:
                raise ValueError(
                    f"{self._staged.desc}.trace(...).lower: lowering_platforms={platforms!r}: plait lowers "
                    f"for {_jaxlib.PLATFORM!r} only"
                )
        return Lowered(self._staged)

    def __repr__(self) -> str:
        return f"Traced({self._staged.desc})"


class Lowered(_Stage):
    """A jitted function lowered to StableHLO for one signature."""

    def __init__(self, staged: StagedCall) -> None:
        self._staged = staged
        s = staged
        self._lowered, self._kept = lower_for_call(s.body, s.operand_avals, s.info, s.desc)

    def as_text(self) -> str:
        """The StableHLO module, as MLIR text."""
        return str(self._lowered.text)

    def compiler_ir(self, dialect: str = "stablehlo") -> Any:
        """The lowered program as a compiler's object, as JAX's: ``"stablehlo"``
        (the default) gives an MLIR ``Module`` (``str()`` of it is
        :meth:`as_text`), ``"hlo"`` an XLA ``XlaComputation`` converted from
        it (``as_hlo_text()``, ``as_hlo_module()``).  Other dialects are a
        ``ValueError``."""
        if dialect == "stablehlo":
            return _jaxlib.mlir_module(self.as_text())
        if dialect == "hlo":
            return _jaxlib.xla_computation(self.as_text())
        raise ValueError(f"compiler_ir: unknown dialect {dialect!r}; plait has 'stablehlo' and 'hlo'")

    def compile(self, compiler_options: Mapping[str, str | bool | int | float] | None = None) -> Compiled:
        """Compile for the device the function runs on (the default device,
        ``jit``'s ``device=``, or that of a committed captured constant).

        ``compiler_options`` (as JAX's) overrides XLA's compile options by name
        (``{"xla_cpu_enable_fast_math": True}``); values are strings, booleans,
        integers or floats (else a ``TypeError``), and a name XLA does not know
        is a ``JaxRuntimeError`` ("No such compile option").  Options meant for
        another platform (``xla_gpu_*``) are accepted and change nothing on CPU,
        as with JAX."""
        s = self._staged
        call = compiled_call(
            s.body, s.operand_avals, s.target_device(), s.info, s.desc, lowered=(self._lowered, self._kept),
            compiler_options=_options(compiler_options, s.desc),
        )  # fmt: skip
        return Compiled(s, call)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimate of the compiled program (compiles it if needed)."""
        return self.compile().cost_analysis()

    def __repr__(self) -> str:
        return f"Lowered({self._staged.desc})"


@dataclass(frozen=True)
class MemoryAnalysis:
    """XLA's memory statistics of a compiled program, in bytes."""

    generated_code_size_in_bytes: int
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0
    peak_memory_in_bytes: int = 0


class Compiled(_Stage):
    """A jitted function compiled for one signature; call it with the dynamic
    arguments (static ones were fixed when it was traced)."""

    def __init__(self, staged: StagedCall, call: CompiledCall) -> None:
        self._staged = staged
        self._call = call

    def as_text(self) -> str:
        """The optimised HLO XLA compiled, as text."""
        return _jaxlib.hlo_text(self._call.executable)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimate: ``flops``, ``bytes accessed``, ... (a dict)."""
        return _jaxlib.cost_analysis(self._call.executable)

    def memory_analysis(self) -> MemoryAnalysis:
        """XLA's compiled memory statistics (argument, output, alias,
        temporary and generated-code sizes in bytes)."""
        raw = _jaxlib.memory_stats(self._call.executable)
        fields = set(MemoryAnalysis.__dataclass_fields__)
        return MemoryAnalysis(**{k: v for k, v in raw.items() if k in fields})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        s = self._staged
        leaves, tree = tree_flatten((args, kwargs))
        if tree != s.in_tree:
            raise TypeError(
                f"{s.desc} compiled ahead of time was called with arguments of structure {tree}, but it was "
                f"compiled for {s.in_tree} (static arguments are not passed to a Compiled function)"
            )
        for k, (x, want) in enumerate(zip(leaves, s.in_avals)):
            got = get_aval(x, f"argument {s.leaf_names[k]} of {s.desc}")
            if not got.same_type(want):
                raise TypeError(
                    f"{s.desc} compiled ahead of time for argument {s.leaf_names[k]} of type "
                    f"{want.str_short()} was called with {got.str_short()}; trace and compile again "
                    "for the new type (or call the jitted function, which does)"
                )
        operands = [*s.consts, *leaves]
        _, committed = computation_device(operands, self._call.device, s.desc, s.info.names)
        committed = committed and (s.info.device is not None or _any_committed(operands))
        outs = self._call.call(operands, committed, s.desc)
        return tree_unflatten(s.out_tree, outs)

    def __repr__(self) -> str:
        return f"Compiled({self._staged.desc})"


def _options(given: Mapping[str, Any] | None, desc: str) -> _jaxlib.CompilerOptions:
    """``compile(compiler_options=...)`` checked, as hashable ``(name, value)`` pairs."""
    if given is None:
        return ()
    if not isinstance(given, Mapping):
        raise TypeError(f"{desc}: compiler_options must be a dict of option names to values, got {type(given).__name__}")
    pairs = []
    for name, value in given.items():
        if not isinstance(name, str) or not isinstance(value, (str, bool, int, float)):
            raise TypeError(
                f"{desc}: compiler_options entry {name!r}: {value!r}: names are strings and values strings, "
                "booleans, integers or floats"
            )
        pairs.append((name, value))
    return tuple(pairs)


def _any_committed(operands: Sequence[Any]) -> bool:
    from plait_dispatch.array import Array

    return any(type(x) is Array and x._committed for x in operands)
