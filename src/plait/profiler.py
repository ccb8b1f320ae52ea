"""``plait.profiler``: JAX's profiling entry points, as documented no-ops.

plait does not collect profiles: it has no profiler server and writes no
trace files.  So that programs instrumented for JAX's profiler run unchanged,
the annotations (``TraceAnnotation``, ``StepTraceAnnotation``,
``annotate_function``) and the trace session calls (``trace``,
``start_trace``, ``stop_trace``) exist and do nothing except check their use:
``start_trace`` while a trace is running and ``stop_trace`` without one raise
``RuntimeError`` as JAX's do.  Each says in its docstring that it records
nothing.  The memory-profile and server functions, which must return or serve
real data, are not provided (see ``plait._not_supported``); ``ProfileOptions``
holds JAX's session options, which change nothing here.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, TypeVar

__all__ = [
    "ProfileOptions", "StepTraceAnnotation", "TraceAnnotation", "annotate_function", "start_trace", "stop_trace",
    "trace",
]

F = TypeVar("F", bound=Callable[..., Any])

_active_trace: list[str] = []


class ProfileOptions:
    """The options of a profiling session (``start_trace(...,
    profiler_options=...)``), with JAX's fields and defaults.  plait records no
    profiles, so the options are kept and checked but change nothing."""

    def __init__(self) -> None:
        self.host_tracer_level = 2
        self.python_tracer_level = 1
        self.enable_hlo_proto = True
        self.include_dataset_ops = True
        self.start_timestamp_ns = 0
        self.duration_ms = 0
        self.repository_path = ""
        self.session_id = ""
        self.raise_error_on_start_failure = False
        self.advanced_configuration: dict[str, Any] = {}


class TraceAnnotation(contextlib.ContextDecorator):
    """Names a region of host execution in a profile.  A no-op in plait, which
    records no profiles: usable as a context manager or a decorator, it only
    keeps its ``name`` and keyword arguments."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        if not isinstance(name, str):
            raise TypeError(f"TraceAnnotation: the name must be a string, got {type(name).__name__}")
        self.name = name
        self.kwargs = kwargs

    def __enter__(self) -> TraceAnnotation:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None


class StepTraceAnnotation(TraceAnnotation):
    """Names one training step (``step_num``) in a profile.  A no-op in plait,
    which records no profiles."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)


def annotate_function(func: F, name: str | None = None, **kwargs: Any) -> F:
    """``func`` wrapped so that its calls would be named ``name`` (default: its
    qualified name) in a profile.  A no-op in plait, which records no profiles:
    the wrapper just calls ``func``."""
    label = name if name is not None else getattr(func, "__qualname__", repr(func))

    @functools.wraps(func)
    def wrapper(*args: Any, **kw: Any) -> Any:
        with TraceAnnotation(label, **kwargs):
            return func(*args, **kw)

    return wrapper  # type: ignore[return-value]


def start_trace(log_dir: str | os.PathLike[str], create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """Start a profiling session that would write to ``log_dir``.  plait records
    no profiles and writes nothing there; a second ``start_trace`` before
    ``stop_trace`` raises ``RuntimeError``, as JAX's does."""
    if profiler_options is not None and not isinstance(profiler_options, ProfileOptions):
        raise TypeError(f"start_trace: profiler_options must be a ProfileOptions, got {type(profiler_options).__name__}")
    if _active_trace:
        raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
    _active_trace.append(os.fspath(log_dir))


def stop_trace() -> None:
    """End the session ``start_trace`` began (nothing was recorded);
    ``RuntimeError`` when none is running, as JAX's."""
    if not _active_trace:
        raise RuntimeError("No profile started")
    _active_trace.pop()


@contextlib.contextmanager
def trace(log_dir: str | os.PathLike[str], create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False, profiler_options: Any = None) -> Iterator[None]:
    """A profiling session around a block (``start_trace`` / ``stop_trace``).
    plait records no profiles: the block just runs."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()
