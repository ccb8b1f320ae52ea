"""A fuzz program: typed inputs, one-line statements, one output.

A program is plain data (JSON-serialisable) that renders to JAX-style source
text: ``def f(x0, x1): v2 = jnp.sin(x0) ...; return v5``.  The source names
only ``jnp``, ``lax`` and ``nn``, so the same text runs with JAX's modules,
with plait's, or with the NumPy shim of ``numpy_oracle``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

#: The size that ``mask`` treats as the polymorphic ``n`` and piles as ragged.
N = 5
#: The other sizes a generated shape uses.
OTHER_SIZES = (3, 2)
#: ``mask``'s logical size for ``n``; piles' element lengths along ``n``.
LOGICAL_N = 3
PILE_LENGTHS = (5, 2, 4)
#: The batch size of ``vmap`` modes.
BATCH = 3

#: Kinds of values: float, integer, boolean.
KINDS = ("f", "i", "b")


@dataclass(frozen=True)
class Var:
    """A value of the program: its name, shape, kind and (for inputs) dtype."""

    name: str
    shape: tuple[int, ...]
    kind: str
    dtype: str = ""


@dataclass(frozen=True)
class Stmt:
    """``target = expr.format(*args)``; ``op`` names the generator that made it."""

    target: Var
    expr: str
    args: tuple[str, ...]
    op: str

    def render(self) -> str:
        return self.expr.format(*self.args)


@dataclass(frozen=True)
class Program:
    inputs: tuple[Var, ...]
    stmts: tuple[Stmt, ...]
    out: str
    seed: int = 0
    tags: frozenset[str] = field(default_factory=frozenset)

    @property
    def out_var(self) -> Var:
        for v in self.all_vars():
            if v.name == self.out:
                return v
        raise KeyError(self.out)

    def all_vars(self) -> list[Var]:
        return [*self.inputs, *(s.target for s in self.stmts)]

    def ops(self) -> list[str]:
        return [s.op for s in self.stmts]

    def source(self, name: str = "f") -> str:
        params = ", ".join(v.name for v in self.inputs)
        body = [f"    {s.target.name} = {s.render()}" for s in self.stmts]
        return "\n".join([f"def {name}({params}):", *body, f"    return {self.out}", ""])

    def float_inputs(self) -> list[int]:
        """Positions of the floating inputs (the arguments differentiated)."""
        return [i for i, v in enumerate(self.inputs) if v.kind == "f"]

    def differentiable(self) -> bool:
        return self.out_var.kind == "f" and bool(self.float_inputs())

    def dce(self) -> Program:
        """Drop statements the output does not use."""
        live = {self.out}
        kept: list[Stmt] = []
        for s in reversed(self.stmts):
            if s.target.name in live:
                kept.append(s)
                live.update(s.args)
        return replace(self, stmts=tuple(reversed(kept)))

    def to_json(self) -> dict[str, Any]:
        def var(v: Var) -> dict[str, Any]:
            return {"name": v.name, "shape": list(v.shape), "kind": v.kind, "dtype": v.dtype}

        return {
            "inputs": [var(v) for v in self.inputs],
            "stmts": [{"target": var(s.target), "expr": s.expr, "args": list(s.args), "op": s.op} for s in self.stmts],
            "out": self.out,
            "seed": self.seed,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> Program:
        def var(v: dict[str, Any]) -> Var:
            return Var(v["name"], tuple(v["shape"]), v["kind"], v["dtype"])

        return Program(
            inputs=tuple(var(v) for v in d["inputs"]),
            stmts=tuple(Stmt(var(s["target"]), s["expr"], tuple(s["args"]), s["op"]) for s in d["stmts"]),
            out=d["out"],
            seed=d["seed"],
        )
