"""Global configuration flags of plait.

Flags are read on hot paths, so they live as plain attributes of one object.
`x64` follows JAX's meaning: when it is off (the default), 64-bit dtypes are
canonicalised to their 32-bit counterparts and Python floats default to
``float32``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, ClassVar


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


class Config:
    """The mutable set of global flags (one instance: :data:`config`)."""

    def __init__(self) -> None:
        self.guarded: bool = False
        self.x64_enabled: bool = _env_flag("PLAIT_ENABLE_X64", False)
        self.explain_cache_misses: bool = _env_flag("PLAIT_EXPLAIN_CACHE_MISSES", False)
        self.check_tracer_leaks: bool = True
        self.jit_disabled: bool = _env_flag("PLAIT_DISABLE_JIT", False)
        self.log_compiles: bool = _env_flag("PLAIT_LOG_COMPILES", False)
        self.no_tracing: bool = False
        self.no_execution: bool = False
        self.default_device: Any = None
        # The persistent compilation cache (plait-dispatch reads these): a
        # directory (None: off), and the least compile time and entry size
        # worth writing, as JAX's options of the same names.
        self.compilation_cache_dir: str | None = os.environ.get("PLAIT_COMPILATION_CACHE_DIR") or None
        self.persistent_cache_min_compile_time_secs: float = 1.0
        self.persistent_cache_min_entry_size_bytes: int = 0
        # JAX's NumPy-semantics options: implicit rank promotion in binary
        # functions ("allow", "warn", "raise") and the promotion lattice
        # ("standard", or "strict": no implicit promotion between dtypes).
        self.numpy_rank_promotion: str = "allow"
        self.numpy_dtype_promotion: str = "standard"
        # CPU devices plait-dispatch makes (-1: its default, $PLAIT_NUM_CPU_DEVICES
        # or 1); settable only before the first device is used.
        self.num_cpu_devices: int = -1
        # JAX's switch making random.PRNGKey return a typed key array (its
        # custom-PRNG upgrade); off by default, as in JAX 0.10.2.
        self.custom_prng_enabled: bool = False
        self.validators: dict[str, Callable[[Any], Any]] = {}
        # Called after ``update`` changes x64_enabled: modules above this one that
        # cache dtype decisions register here (dtypes does when imported).
        self.x64_listeners: list[Callable[[], None]] = []

    _ALIASES: ClassVar[dict[str, str]] = {
        "enable_x64": "x64_enabled",
        "x64_enabled": "x64_enabled",
        "explain_cache_misses": "explain_cache_misses",
        "check_tracer_leaks": "check_tracer_leaks",
        "disable_jit": "jit_disabled",
        "log_compiles": "log_compiles",
        "no_tracing": "no_tracing",
        "no_execution": "no_execution",
        "default_device": "default_device",
        "compilation_cache_dir": "compilation_cache_dir",
        "persistent_cache_min_compile_time_secs": "persistent_cache_min_compile_time_secs",
        "persistent_cache_min_entry_size_bytes": "persistent_cache_min_entry_size_bytes",
        "numpy_rank_promotion": "numpy_rank_promotion",
        "numpy_dtype_promotion": "numpy_dtype_promotion",
        "num_cpu_devices": "num_cpu_devices",
        "enable_custom_prng": "custom_prng_enabled",
    }

    _VALUED: ClassVar[dict[str, Callable[[str, Any], Any]]] = {}
    """Options that hold a value rather than a flag, with their checks (filled below)."""

    _GUARDS: ClassVar[frozenset[str]] = frozenset({"jit_disabled", "no_execution", "default_device"})

    def __setattr__(self, name: str, value: Any) -> None:
        # ``guarded`` is one flag the hot dispatch paths read: it is set while
        # any option that changes how (or whether) a computation runs is on,
        # and they then take their general paths, which honour each option.
        object.__setattr__(self, name, value)
        if name in self._GUARDS:
            d = self.__dict__
            guarded = d.get("jit_disabled", False) or d.get("no_execution", False)
            object.__setattr__(self, "guarded", bool(guarded or d.get("default_device") is not None))

    def register_validator(self, name: str, validate: Callable[[Any], Any]) -> None:
        """Let an interpreter check (and canonicalise) the values of the option
        ``name`` (``default_device``: plait-dispatch knows what a device is)."""
        self.validators[self._ALIASES[name]] = validate

    def update(self, name: str, value: Any) -> None:
        """Set a flag by name; JAX's ``jax_`` and our ``plait_`` prefixes are accepted.

        Example: ``config.update("jax_enable_x64", True)``.
        """
        key = name
        for prefix in ("jax_", "plait_"):
            if key.startswith(prefix):
                key = key[len(prefix):]
        attr = self._ALIASES.get(key)
        if attr is None:
            known = ", ".join(sorted(self._ALIASES))
            raise AttributeError(f"unknown configuration option {name!r}; known options: {known}")
        valued = attr in self._VALUED or attr == "default_device"
        if attr in self._VALUED:
            value = self._VALUED[attr](name, value)
        validate = self.validators.get(attr)  # an interpreter's check, after core's
        if validate is not None:
            setattr(self, attr, validate(value))
        else:
            setattr(self, attr, value if valued else bool(value))
        if attr == "x64_enabled":
            for listener in self.x64_listeners:
                listener()

    def read(self, name: str) -> Any:
        """Return the current value of a flag (same names as :meth:`update`)."""
        key = name
        for prefix in ("jax_", "plait_"):
            if key.startswith(prefix):
                key = key[len(prefix):]
        attr = self._ALIASES.get(key)
        if attr is None:
            raise AttributeError(f"unknown configuration option {name!r}")
        return getattr(self, attr)

    def __getattr__(self, name: str) -> Any:
        # Only for names not found as attributes: ``config.jax_enable_x64``
        # reads an option by its JAX name, as in JAX.
        if name.startswith(("jax_", "plait_")):
            try:
                return self.read(name)
            except AttributeError:
                pass
        raise AttributeError(f"'Config' object has no attribute {name!r}")

    @property
    def values(self) -> dict[str, Any]:
        """Every option's current value by its JAX name (``config.values["jax_enable_x64"]``)."""
        return {f"jax_{key}": getattr(self, attr) for key, attr in self._ALIASES.items() if key != "x64_enabled"}

    def config_with_absl(self) -> None:
        """Does nothing: plait has no absl flags (JAX defines its options as absl
        flags here); set options with :meth:`update` or environment variables."""

    def parse_flags_with_absl(self) -> None:
        """Does nothing: plait has no absl flags to parse (see :meth:`config_with_absl`)."""


def _cache_dir(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, (str, os.PathLike)):
        return None if value is None or os.fspath(value) == "" else os.fspath(value)
    raise TypeError(f"{name} must be a path (str) or None, got a value of type {type(value).__name__}")


def _non_negative(kind: type) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
            what = "a number" if kind is float else "an integer"
            raise TypeError(f"{name} must be {what}, got a value of type {type(value).__name__}")
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
        return kind(value)

    return check


def _one_of(*allowed: str) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
        return value

    return check


def _device_count(name: str, value: Any) -> Any:
    if type(value) is not int or (value < 1 and value != -1):
        raise ValueError(f"{name} must be a positive int (or -1 for the default), got {value!r}")
    return value


Config._VALUED.update(
    {
        "numpy_rank_promotion": _one_of("allow", "warn", "raise"),
        "numpy_dtype_promotion": _one_of("standard", "strict"),
        "num_cpu_devices": _device_count,
        "compilation_cache_dir": _cache_dir,
        "persistent_cache_min_compile_time_secs": _non_negative(float),
        "persistent_cache_min_entry_size_bytes": _non_negative(int),
    }
)

config = Config()


@contextlib.contextmanager
def enable_x64(enabled: bool = True) -> Iterator[None]:
    """Context manager turning 64-bit types on (or off) inside its block."""
    previous = config.x64_enabled
    config.update("enable_x64", enabled)
    try:
        yield
    finally:
        config.update("enable_x64", previous)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Context manager under which jitted functions run their Python body
    directly, operation by operation (for debugging with prints and
    breakpoints); donation is then ignored.  Also ``config.update("jax_disable_jit", True)``
    or ``$PLAIT_DISABLE_JIT=1``."""
    previous = config.jit_disabled
    config.update("disable_jit", disable)
    try:
        yield
    finally:
        config.update("disable_jit", previous)


_NO_VALUE: Any = object()


class State:
    """One option as JAX's top level exposes it (``jax.log_compiles``):
    calling it with a value gives a context manager that sets the option
    inside its block (the value is checked at the call), and ``.value`` is
    the option's current value.  Also ``config.update("jax_<name>", value)``."""

    def __init__(self, name: str, doc: str, default_arg: Any = _NO_VALUE) -> None:
        self.name = name
        self._attr = Config._ALIASES[name]
        self._default_arg = default_arg
        self.__doc__ = doc

    @property
    def value(self) -> Any:
        """The option's current value."""
        return getattr(config, self._attr)

    def __repr__(self) -> str:
        return f"State({self.name}={self.value!r})"

    def __call__(self, new_val: Any = _NO_VALUE) -> contextlib.AbstractContextManager[None]:
        if new_val is _NO_VALUE:
            if self._default_arg is _NO_VALUE:
                raise TypeError(f"{self.name}() needs a value: {self.name}(value) sets it inside a with block")
            new_val = self._default_arg
        validate = config.validators.get(self._attr)
        value = validate(new_val) if validate is not None else new_val if self._default_arg is _NO_VALUE else bool(new_val)
        return _set_option(self._attr, value)


@contextlib.contextmanager
def _set_option(attr: str, value: Any) -> Iterator[None]:
    previous = getattr(config, attr)
    setattr(config, attr, value)
    try:
        yield
    finally:
        setattr(config, attr, previous)


log_compiles = State(
    "log_compiles",
    "Log each compilation (and each trace of a jitted function) at WARNING level of the ``plait`` logger "
    "while on (at DEBUG level otherwise).",
    True,
)
no_tracing = State(
    "no_tracing",
    "While on, staging a Python function to a program (a jit cache miss, make_jaxpr, ...) is a RuntimeError.",
    True,
)
no_execution = State(
    "no_execution",
    "While on, running a compiled computation (jit, an eager operation on devices) is a RuntimeError.",
    True,
)
enable_custom_prng = State(
    "enable_custom_prng",
    "While on, ``random.PRNGKey(seed)`` returns a typed key array (as ``random.key(seed)`` does) instead of "
    "raw ``uint32[2]`` key data (JAX's ``jax_enable_custom_prng``; off by default).",
    True,
)
default_device = State(
    "default_device",
    "The device (or platform name) where uncommitted values and computations on them are placed; "
    "``None``: the first device.",
)
