"""The multi-device differential check: one program on 8 devices and on one.

``python -m fuzz.multidevice [--seconds S] [--programs N] [--seed K]
[--backend plait|jax]`` (with ``tests/`` on ``PYTHONPATH``; ``nox -s fuzz``
runs it after the single-device fuzzer) generates the data-parallel programs
of :mod:`fuzz.multidevice_programs` and runs each under every mode of
:data:`MODES` on 8 CPU devices, comparing with the same program on one
device (forward values, gradients with respect to every input, also taken
inside ``shard_map`` as JAX's ``check_vma`` defines them, and ``vmap`` over
two batches).  The
expectations are JAX 0.10.2's semantics, and ``--backend jax`` (in an
interpreter with JAX) runs the check on JAX itself, where every mode must
pass.

The process needs 8 devices: ``PLAIT_NUM_CPU_DEVICES=8`` for plait (the CLI
sets it when unset, before plait starts), ``jax_num_cpu_devices`` for JAX.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .compare import values_close
from .multidevice_programs import BATCH, DEVICES, ROWS, F, MultiProgram, generate, make_inputs, vmap_batch

#: Forward modes (``step``'s two results) and gradient modes (``grad`` of ``loss`` w.r.t. all four inputs).
FORWARD_MODES = ("shard_map", "pmap", "jit_sharded", "jit_sharded_2d")
GRAD_MODES = ("grad_of_shard_map", "grad_of_pmap", "grad_jit_sharded", "grad_inside_shard_map")
#: ``vmap`` of a forward mode over two batches (``vmap_batch``), against one device batch by batch.
VMAP_MODES = ("vmap_shard_map", "vmap_pmap", "vmap_jit_sharded")
MODES = FORWARD_MODES + GRAD_MODES + VMAP_MODES
#: Sums over the batch are reassociated across devices: float32 rounding, relative to the result's scale.
RTOL = 2e-5
#: ... plus this many times the one-device float32 result's own distance from its float64 value.
SLACK = 8.0


@dataclass
class Backend:
    """What the check needs of a JAX-like library."""

    jax: Any
    jnp: Any
    lax: Any
    nn: Any
    shard_map: Callable[..., Any]
    mesh: Callable[[Any, tuple[str, ...]], Any]  # Mesh(devices, names): Auto axes (make_mesh's are Explicit in JAX)
    named: Callable[[Any, Any], Any]
    spec: Any


def backend(name: str) -> Backend:
    """The backend ``name`` ("plait" or "jax").  Imported here, on purpose
    lazily: the fuzz package never imports JAX and plait in one process."""
    if name == "plait":
        import plait
        from plait.sharding import Mesh, NamedSharding, PartitionSpec

        return Backend(plait, plait.numpy, plait.lax, plait.nn, plait.shard_map, Mesh, NamedSharding, PartitionSpec)
    if name == "jax":
        import jax
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        return Backend(jax, jax.numpy, jax.lax, jax.nn, jax.shard_map, Mesh, NamedSharding, PartitionSpec)
    raise ValueError(f"unknown backend {name!r} (plait or jax)")


@dataclass
class Report:
    programs: int = 0
    checks: dict[str, int] = field(default_factory=lambda: {m: 0 for m in MODES})
    failures: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> str:
        per_mode = ", ".join(f"{m} {n}" for m, n in self.checks.items())
        lines = [f"multidevice: {self.programs} programs; checks per mode: {per_mode}; "
                 f"{len(self.failures)} failures"]
        for f in self.failures:
            lines.append(f"FAILURE seed {f['seed']} mode {f['mode']}: {f['what']}\n{f['source']}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"programs": self.programs, "checks": self.checks, "failures": self.failures}


class Check:
    """Runs programs under the modes of one backend on its first 8 devices."""

    def __init__(self, be: Backend) -> None:
        if be.jax.device_count() < DEVICES:
            raise RuntimeError(
                f"the multi-device check needs {DEVICES} devices, this process has {be.jax.device_count()} "
                "(PLAIT_NUM_CPU_DEVICES=8 / jax_num_cpu_devices=8)"
            )
        self.be = be
        devices = np.empty(DEVICES, dtype=object)
        devices[:] = be.jax.devices()[:DEVICES]
        self.mesh = be.mesh(devices, ("x",))
        self.mesh2 = be.mesh(devices.reshape(DEVICES // 2, 2), ("x", "y"))

    def _namespace(self, program: MultiProgram) -> dict[str, Any]:
        ns: dict[str, Any] = {"jnp": self.be.jnp, "lax": self.be.lax, "nn": self.be.nn}
        exec(compile(program.source, f"<multidevice program {program.seed}>", "exec"), ns)
        return ns

    def _reductions(self, axis: str | None) -> dict[str, Any]:
        jnp, lax = self.be.jnp, self.be.lax
        if axis is None:
            return {"bsum": lambda v: jnp.sum(v, 0), "bmax": lambda v: jnp.max(v, 0), "B": BATCH}
        return {"bsum": lambda v: lax.psum(jnp.sum(v, 0), axis), "bmax": lambda v: lax.pmax(jnp.max(v, 0), axis),
                "B": BATCH}

    def one_device_float64(self, program: MultiProgram, mode: str) -> list[np.ndarray]:
        """The one-device results ("one" or "one_grad") computed in float64 (with 64-bit types enabled)."""
        config = self.be.jax.config
        config.update("jax_enable_x64", True)
        try:
            return self.run(program, mode, wide=True)
        finally:
            config.update("jax_enable_x64", False)

    def run(self, program: MultiProgram, mode: str, wide: bool = False) -> list[np.ndarray]:
        """The results of ``program`` under ``mode`` ("one", "one_grad" and "one_vmap" are one device),
        as NumPy arrays (``wide``: inputs in float64, for :meth:`one_device_float64`)."""
        be, jax, P = self.be, self.be.jax, self.be.spec
        ns = self._namespace(program)
        inputs = make_inputs(program.seed)
        args = [be.jnp.asarray(a.astype(np.float64) if wide else a) for a in inputs]
        if mode.startswith("vmap") or mode == "one_vmap":
            xs = be.jnp.asarray(vmap_batch(inputs[3]).astype(np.float64 if wide else np.float32))
            if mode == "one_vmap":
                one = functools.partial(ns["step"], **self._reductions(None))
                each = [one(*args[:3], xs[k]) for k in range(xs.shape[0])]
                return [np.stack([np.asarray(e[j]) for e in each]) for j in range(2)]
            forward = self._forward(ns["step"], mode.removeprefix("vmap_"))
            return [np.asarray(o) for o in jax.vmap(forward, in_axes=(None, None, None, 0))(*args[:3], xs)]
        grad = mode.startswith("grad") or mode == "one_grad"
        fn = ns["loss"] if grad else ns["step"]
        out: Any
        if mode in ("one", "one_grad"):
            f = functools.partial(fn, **self._reductions(None))
            out = jax.grad(f, argnums=(0, 1, 2, 3))(*args) if grad else f(*args)
        elif mode == "grad_inside_shard_map":
            inside = jax.grad(functools.partial(fn, **self._reductions("x")), argnums=(0, 1, 2, 3))
            specs = (P(), P(), P(), P("x"))
            out = jax.jit(be.shard_map(inside, mesh=self.mesh, in_specs=specs, out_specs=specs))(*args)
        elif grad:
            out = jax.grad(self._forward(fn, mode.removeprefix("grad_of_").removeprefix("grad_"), scalar=True),
                           argnums=(0, 1, 2, 3))(*args)
        elif mode in ("jit_sharded", "jit_sharded_2d"):
            mesh, xspec = (self.mesh2, P("x", "y")) if mode == "jit_sharded_2d" else (self.mesh, P("x"))
            rep, xs = be.named(mesh, P()), be.named(mesh, xspec)
            placed = [jax.device_put(a, s) for a, s in zip(args, (rep, rep, rep, xs))]
            out = self._forward(fn, mode)(*placed)
        else:
            out = self._forward(fn, mode)(*args)
        return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]

    def _forward(self, fn: Callable[..., Any], how: str, scalar: bool = False) -> Callable[..., Any]:
        """``fn`` of ``(p0, p1, p2, x)`` (global ``x``) on 8 devices, ``how``: "shard_map", "pmap",
        "jit_sharded" or "jit_sharded_2d"; ``scalar``: ``fn`` is ``loss`` (one replicated result)."""
        be, jax, P = self.be, self.be.jax, self.be.spec
        if how == "shard_map":
            local = functools.partial(fn, **self._reductions("x"))
            out_specs = P() if scalar else (P("x"), P())
            return jax.jit(be.shard_map(local, mesh=self.mesh, in_specs=(P(), P(), P(), P("x")), out_specs=out_specs))
        if how == "pmap":
            mapped = jax.pmap(functools.partial(fn, **self._reductions("i")), axis_name="i",
                              in_axes=(None, None, None, 0), out_axes=None if scalar else (0, None),
                              devices=jax.devices()[:DEVICES])

            def split(p0: Any, p1: Any, p2: Any, x: Any) -> Any:
                out = mapped(p0, p1, p2, x.reshape(DEVICES, ROWS, F))
                return out if scalar else (out[0].reshape(BATCH, F), out[1])

            return split
        if how in ("jit_sharded", "jit_sharded_2d"):
            mesh, xspec = (self.mesh2, P("x", "y")) if how == "jit_sharded_2d" else (self.mesh, P("x"))
            rep, xs = be.named(mesh, P()), be.named(mesh, xspec)
            out_shardings = rep if scalar else (xs, rep)
            return jax.jit(functools.partial(fn, **self._reductions(None)), in_shardings=(rep, rep, rep, xs),
                           out_shardings=out_shardings)
        raise ValueError(f"unknown mode {how!r}")

    def check(self, program: MultiProgram, modes: Iterable[str], report: Report) -> None:
        """Run ``program`` under ``modes`` and record every difference from one device."""
        want: dict[bool | str, list[np.ndarray] | str] = {}
        slack: dict[bool | str, list[np.ndarray]] = {}
        for grad in (False, True):
            one = "one_grad" if grad else "one"
            try:
                want[grad] = narrow = self.run(program, one)
            except Exception as e:  # a program the library refuses on one device is not a multi-device bug
                want[grad] = f"{type(e).__name__}: {e}"
                continue
            # How far float32 rounding moves each value on one device bounds how far another summation
            # order (across devices) may move it: a difference from float64 there is slack.
            wide = self.one_device_float64(program, one)
            slack[grad] = [SLACK * np.abs(n.astype(np.float64) - w) for n, w in zip(narrow, wide)]
        report.programs += 1
        for mode in modes:
            grad = mode.startswith("grad")
            if grad and not program.differentiable:  # JAX has no derivative of pmax
                continue
            reference, tolerance = want[grad], slack.get(grad)
            if mode.startswith("vmap"):
                if "vmap" not in want:
                    try:
                        want["vmap"] = self.run(program, "one_vmap")
                        wide = self.one_device_float64(program, "one_vmap")
                        slack["vmap"] = [SLACK * np.abs(n.astype(np.float64) - w) for n, w in zip(want["vmap"], wide)]
                    except Exception as e:  # refused on one device: not a multi-device bug
                        want["vmap"] = f"{type(e).__name__}: {e}"
                reference, tolerance = want["vmap"], slack.get("vmap")
            if isinstance(reference, str) or tolerance is None:
                continue
            report.checks[mode] += 1
            try:
                got = self.run(program, mode)
                what = _difference(got, reference, tolerance)
            except Exception as e:  # every error of a mode is a finding
                what = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:600]
                if os.environ.get("PLAIT_FUZZ_TRACEBACK"):
                    traceback.print_exc()
            if what is not None:
                entry = {"seed": program.seed, "mode": mode, "what": what, "source": program.source}
                report.failures.append(entry)


def _difference(got: list[np.ndarray], want: list[np.ndarray], slack: list[np.ndarray]) -> str | None:
    if len(got) != len(want):
        return f"{len(got)} results, one device gives {len(want)}"
    for k, (g, w, s) in enumerate(zip(got, want, slack)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"result {k}: {g.dtype}{list(g.shape)}, one device gives {w.dtype}{list(w.shape)}"
        diff = values_close(g, w, RTOL, s)
        if diff is not None:
            return f"result {k}: {diff}"
    return None


def run(be: Backend, seeds: Iterable[int], modes: Iterable[str] = MODES, seconds: float | None = None) -> Report:
    """Check the programs of ``seeds`` (until ``seconds`` pass, if given)."""
    check, report = Check(be), Report()
    modes = tuple(modes)
    start = time.monotonic()
    for seed in seeds:
        if seconds is not None and time.monotonic() - start > seconds:
            break
        check.check(generate(seed), modes, report)
        # Each program compiles a few dozen 8-device executables that no later program
        # reuses; dropped here, as JAX drops those of a function that dies, so that a long
        # run stays within the process's memory maps (XLA's JIT code is mapped per
        # executable: a 16-minute run without this hit LLVM's "Cannot allocate memory").
        be.jax.clear_caches()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.multidevice", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default 600)")
    parser.add_argument("--programs", type=int, default=1_000_000, help="stop after this many programs")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: from the clock)")
    parser.add_argument("--backend", default="plait", choices=("plait", "jax"))
    parser.add_argument("--multidevice-modes", default=",".join(MODES), help="comma-separated modes of this check")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line")
    args, _ = parser.parse_known_args(argv)  # nox -s fuzz passes the single-device fuzzer's options too
    modes = args.multidevice_modes.split(",")
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"unknown modes {unknown}; the modes are {', '.join(MODES)}")
    os.environ.setdefault("PLAIT_NUM_CPU_DEVICES", str(DEVICES))
    if args.backend == "jax":
        os.environ.setdefault("XLA_FLAGS", f"--xla_force_host_platform_device_count={DEVICES}")
    first = args.seed if args.seed is not None else int(time.time()) % 1_000_000 * 1000
    print(f"multidevice: seeds from {first}, backend {args.backend}", flush=True)
    report = run(backend(args.backend), range(first, first + args.programs), modes, args.seconds)
    print(json.dumps(report.to_json()) if args.json else report.summary(), flush=True)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
