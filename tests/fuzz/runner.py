"""The fuzz loop: generate, run under every mode, compare, shrink, write repros.

Runs in plait's interpreter.  With a JAX interpreter configured (the
``PLAIT_FUZZ_JAX_PYTHON`` environment variable, or ``jax_python=``), the
oracle is JAX 0.10.2 in a worker process fed over a pipe; otherwise NumPy.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import plait

from . import numpy_oracle
from .compare import Checks, compare, program_rtol
from .data import Data, make_data
from .deviations import FLOAT64_AGREES, JIT_CHECKPOINT_AGREES, NO_DERIVATIVE, ZERO_DERIVATIVE, excuse
from .generate import generate
from .modes import DIFF_MODES, ORACLE_MODES, SELF_MODES, Backend, Outcome, run_mode, run_self_check
from .program import Program
from .repro import write_repro
from .shrink import shrink

ALL_MODES = ORACLE_MODES + SELF_MODES
PLAIT = Backend(plait, plait.numpy, plait.lax, plait.nn)
JAX_PYTHON_ENV = "PLAIT_FUZZ_JAX_PYTHON"
ALL_CHECKS = Checks()


class JaxOracle:
    """A JAX worker process (``fuzz.jax_worker``) answering batches over a pipe."""

    def __init__(self, python: str) -> None:
        self.python = python
        self._start()

    def _start(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
        env.setdefault("JAX_PLATFORMS", "cpu")
        self.proc = subprocess.Popen(
            [self.python, "-m", "fuzz.jax_worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )

    def run(self, batch: Sequence[tuple[Program, Data, Sequence[str]]]) -> list[dict[str, Outcome]]:
        """JAX's outcomes for a batch.  A program that crashes JAX's process (an XLA fatal error) gets a
        "skip" outcome in every mode; the worker is restarted and the others are asked one by one."""
        try:
            return self._ask(batch)
        except (EOFError, BrokenPipeError):
            self._start()
        answers: list[dict[str, Outcome]] = []
        for item in batch:
            try:
                answers.extend(self._ask([item]))
            except (EOFError, BrokenPipeError):
                self._start()
                answers.append({m: Outcome("skip", error="JAX's process crashed on this program") for m in item[2]})
        return answers

    def _ask(self, batch: Sequence[tuple[Program, Data, Sequence[str]]]) -> list[dict[str, Outcome]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        pickle.dump([(p.to_json(), d, list(m)) for p, d, m in batch], self.proc.stdin)
        self.proc.stdin.flush()
        answer: list[dict[str, Outcome]] = pickle.load(self.proc.stdout)
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


@dataclass
class Failure:
    program: Program
    mode: str
    message: str
    category: str
    shrunk: Program | None = None
    repro: Path | None = None


@dataclass
class Report:
    programs: int = 0
    checks: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    excused: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [f"{self.programs} programs in {self.seconds:.0f} s; checks per mode (passed+failed / skipped):"]
        for mode in ALL_MODES:
            lines.append(f"  {mode:14s} {self.checks[mode]:6d} / {self.skipped[mode]:5d}")
        for name, n in self.excused.most_common():
            lines.append(f"  excused by deviations.py '{name}': {n}")
        lines.append(f"{len(self.failures)} failures")
        for f in self.failures:
            p = f.shrunk or f.program
            lines.append(f"  [{f.category}] seed {f.program.seed} {f.mode}: {f.message}")
            lines.append(f"      ops: {', '.join(p.ops())}" + (f"  repro: {f.repro}" if f.repro else ""))
        return "\n".join(lines)


def category(message: str) -> str:
    if message.startswith("error class"):
        return "error class"
    if "weak_type" in message:
        return "weak type"
    if "dtype" in message:
        return "dtype"
    if message.startswith("error where"):
        return "plait raises"
    if message.startswith("a value where"):
        return "oracle raises"
    if "shape" in message:
        return "shape"
    return "value"


VALUES_ONLY = Checks(dtypes=False, weak_types=False)


def second_opinion(
    program: Program, data: Data, mode: str, got: Outcome, jax: Outcome, jit_checkpoint: Outcome | None, checks: Checks
) -> str:
    """Evidence appended to a value difference from JAX, for ``deviations.py`` to match ("" when none).

    * ``checkpoint``: plait's checkpointed body runs compiled, so it is compared with JAX's
      ``jit(grad(checkpoint(f)))`` (``jit_checkpoint``) as well;
    * any mode: the float64 NumPy oracle is asked about both answers; the evidence is that it accepts
      plait's and refuses JAX's; for a derivative, that it finds none to check at this point (central
      differences of two step sizes disagree, or plait's is not finite: a kink or a singular point), or that
      the derivative is exactly 0 there (the function is constant along the direction) and plait's is not.
    """
    if jit_checkpoint is not None and compare(got, jit_checkpoint, checks, rtol_floor=program_rtol(program)) is None:
        return f" [{JIT_CHECKPOINT_AGREES}]"
    mine = numpy_oracle.check(program, data, mode, got, VALUES_ONLY)
    if mine is None:
        verdict = numpy_oracle.check(program, data, mode, jax, VALUES_ONLY)
        if verdict not in (None, "skip"):
            return f" [{FLOAT64_AGREES}: {verdict}]"
    elif mine == "skip" and mode in DIFF_MODES:
        return f" [{NO_DERIVATIVE}]"
    elif mine is not None and mine.endswith("finite differences np.float64(0.0)"):
        return f" [{ZERO_DERIVATIVE}]"
    return ""


class Fuzzer:
    """One fuzzing session: the oracle, the checks, and where repros go."""

    def __init__(
        self,
        jax_python: str | None = None,
        checks: Checks = ALL_CHECKS,
        modes: Sequence[str] = ALL_MODES,
        repro_dir: Path | None = None,
        backend: Backend = PLAIT,
        shrink_failures: bool = True,
    ) -> None:
        self.jax = JaxOracle(jax_python) if jax_python else None
        self.checks = checks
        self.modes = list(modes)
        self.repro_dir = repro_dir
        self.backend = backend
        self.shrink_failures = shrink_failures

    def close(self) -> None:
        if self.jax is not None:
            self.jax.close()

    def __enter__(self) -> Fuzzer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # one program ----------------------------------------------------------------------------------------

    def _oracle_outcomes(self, programs: Sequence[Program], modes: Sequence[str]) -> list[dict[str, Outcome]]:
        if self.jax is None:
            return [{} for _ in programs]
        oracle_modes = [m for m in modes if m in ORACLE_MODES]
        return self.jax.run([(p, make_data(p), oracle_modes) for p in programs])

    def check_mode(self, program: Program, data: Data, mode: str, oracle: dict[str, Outcome]) -> str | None:
        """None (agrees), "skip", or what differs."""
        if mode in SELF_MODES:
            got, want = run_self_check(self.backend, program, data, mode)
            if got.status == "skip":
                return "skip"
            return compare(got, want, self.checks, rtol_floor=program_rtol(program))
        got = run_mode(self.backend, program, data, mode)
        if got.status == "skip":
            return "skip"
        if self.jax is None:
            return numpy_oracle.check(program, data, mode, got, self.checks)
        message = compare(got, oracle[mode], self.checks, rtol_floor=program_rtol(program))
        if message is not None and category(message) == "value":
            jitted = None
            if mode == "checkpoint":
                jitted = self.jax.run([(program, data, ["jit_checkpoint"])])[0]["jit_checkpoint"]
            message += second_opinion(program, data, mode, got, oracle[mode], jitted, self.checks)
        return message

    def check_program(self, program: Program, oracle: dict[str, Outcome], report: Report) -> None:
        data = make_data(program)
        report.programs += 1
        for mode in self.modes:
            message = self.check_mode(program, data, mode, oracle)
            if message == "skip":
                report.skipped[mode] += 1
                continue
            report.checks[mode] += 1
            if message is None:
                continue
            deviation = excuse(program, mode, message)
            if deviation is not None:
                report.excused[deviation.name] += 1
                continue
            failure = Failure(program, mode, message, category(message))
            if self.shrink_failures:
                self._shrink(failure)
            report.failures.append(failure)

    # shrinking ------------------------------------------------------------------------------------------

    def _shrink(self, failure: Failure) -> None:
        mode, want = failure.mode, failure.category

        def still_fails(cands: Sequence[Program]) -> int | None:
            oracles = self._oracle_outcomes(cands, [mode])
            for k, (cand, oracle) in enumerate(zip(cands, oracles)):
                message = self.check_mode(cand, make_data(cand), mode, oracle)
                if message not in (None, "skip") and category(message) == want and excuse(cand, mode, message) is None:
                    return k
            return None

        small = shrink(failure.program, mode, still_fails)
        failure.shrunk = small
        message = self.check_mode(small, make_data(small), mode, self._oracle_outcomes([small], [mode])[0])
        failure.message = message or failure.message
        if self.repro_dir is not None:
            failure.repro = write_repro(self.repro_dir, small, make_data(small), mode, failure.message)

    # the loop -------------------------------------------------------------------------------------------

    def run(self, seeds: Sequence[int], seconds: float | None = None, batch: int = 16, progress: bool = False) -> Report:
        report = Report()
        start = time.monotonic()
        for lo in range(0, len(seeds), batch):
            if seconds is not None and time.monotonic() - start > seconds:
                break
            programs = [generate(s) for s in seeds[lo : lo + batch]]
            for program, oracle in zip(programs, self._oracle_outcomes(programs, self.modes)):
                self.check_program(program, oracle, report)
            if progress:
                print(f"{report.programs} programs, {len(report.failures)} failures, "
                      f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        report.seconds = time.monotonic() - start
        return report
