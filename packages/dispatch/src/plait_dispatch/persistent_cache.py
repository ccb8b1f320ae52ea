"""The persistent compilation cache: XLA executables kept on disk, so that a
second process running the same program loads them instead of compiling.

It is JAX's cache as its users know it, with JAX's option names
(``plait.config.update(name, value)``):

* ``jax_compilation_cache_dir``: the directory (``None``, the default: off;
  also ``$PLAIT_COMPILATION_CACHE_DIR``);
* ``jax_persistent_cache_min_compile_time_secs`` (default 1.0): a program
  that compiled faster than this is not written (loading it would not pay);
* ``jax_persistent_cache_min_entry_size_bytes`` (default 0): nor one whose
  serialized executable is smaller than this.

An entry's key is the SHA-256 of the StableHLO text (which spells out
everything the program computes, donation included), the compile options
plait uses (one device, one replica) and :func:`_jaxlib.compiler_fingerprint`
(jaxlib's version, the platform's version, the device kind): a different
jaxlib or device kind misses instead of loading code made for another.  An
entry is written to a temporary file and renamed, so a concurrent reader
sees a whole entry or none.  Programs with host callbacks (``pure_callback``,
``debug.print``) are never cached: their executables call Python functions of
the process that compiled them.  Multi-device (SPMD) computations are not
cached either.

A file that exists but does not load (truncated by a full disk, written by a
build that reads differently) is reported with a warning naming it and
compiled again, and the new executable replaces it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Sequence
from typing import Any, Literal

from plait_core import config
from plait_dispatch import _jaxlib

__all__ = ["Outcome", "compile_stablehlo", "entry_path"]

logger = logging.getLogger("plait_dispatch.persistent_cache")

Outcome = Literal["off", "hit", "written", "not_written"]
"""What the cache did for one compilation: ``off`` (no directory set, or a
program it never caches), ``hit`` (loaded, nothing compiled), ``written``
(compiled and stored), ``not_written`` (compiled; below the thresholds)."""

_OPTIONS = "single-device; replicas 1; partitions 1"
_SUFFIX = ".plait-xla"


def entry_path(directory: str, text: str, device: _jaxlib.Device) -> str:
    """The file that holds (or would hold) the executable of ``text`` for
    ``device``'s kind in ``directory``."""
    h = hashlib.sha256()
    for part in (text, _OPTIONS, _jaxlib.compiler_fingerprint(device)):
        h.update(part.encode())
        h.update(b"\0")
    return os.path.join(directory, h.hexdigest() + _SUFFIX)


def _load(path: str, device: _jaxlib.Device) -> Any | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    try:
        return _jaxlib.deserialize_executable(data, device)
    except Exception as err:  # an unreadable entry: say so, then compile again
        logger.warning("persistent compilation cache: cannot load %s (%s); compiling again", path, err)
        return None


def _store(directory: str, path: str, data: bytes) -> None:
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def compile_stablehlo(
    text: str, device: _jaxlib.Device, host_callbacks: Sequence[Any] = (),
    compiler_options: _jaxlib.CompilerOptions = (),
) -> tuple[Any, Outcome, float]:  # fmt: skip
    """The executable of ``text`` for ``device``: loaded from the cache
    directory when an entry is there, else compiled by XLA (and stored when
    the thresholds allow).  Returns the executable, what the cache did, and
    the seconds XLA spent compiling (0.0 on a hit).  A module with host
    callbacks or compiled with ``compiler_options`` bypasses the cache."""
    directory = config.compilation_cache_dir
    if directory is None or host_callbacks or compiler_options:
        start = time.perf_counter()
        executable = _jaxlib.compile_stablehlo(text, device, host_callbacks, compiler_options)
        return executable, "off", time.perf_counter() - start
    path = entry_path(directory, text, device)
    loaded = _load(path, device)
    if loaded is not None:
        return loaded, "hit", 0.0
    start = time.perf_counter()
    executable = _jaxlib.compile_stablehlo(text, device)
    seconds = time.perf_counter() - start
    if seconds < config.persistent_cache_min_compile_time_secs:
        return executable, "not_written", seconds
    data = _jaxlib.serialize_executable(executable)
    if len(data) < config.persistent_cache_min_entry_size_bytes:
        return executable, "not_written", seconds
    try:
        _store(directory, path, data)
    except OSError as err:  # a read-only or full disk must not fail the program
        logger.warning("persistent compilation cache: cannot write %s (%s)", path, err)
        return executable, "not_written", seconds
    return executable, "written", seconds
