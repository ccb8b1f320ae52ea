"""Top-level JAX names that are small wrappers over plait's machinery.

``typeof``, ``ensure_compile_time_eval``, ``named_scope``, ``custom_gradient``,
``closure_convert``, ``copy_to_host_async``, ``print_environment_info`` and the
configuration context managers (``jax.debug_nans(False)``, ``jax.numpy_rank_promotion("allow")``,
...), each with JAX 0.10.2's semantics.  A configuration value plait cannot honour
is refused with ``NotImplementedError`` naming the option and the values it accepts,
never silently ignored.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import platform
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from plait._compile_time_eval import CompileTimeEvalTrace
from plait._hitypes import HITYPES
from plait_autodiff import vjp
from plait_core import custom_vjp
from plait_core.abstract import ShapedArray, get_aval
from plait_core.config import config
from plait_core.jaxpr import eval_jaxpr
from plait_core.prng import KEY_DTYPE, PRNGKeyArray
from plait_core.source_info import extend_name_stack
from plait_core.staging import make_jaxpr
from plait_core.trace import set_current_trace
from plait_core.tree_util import tree_flatten, tree_unflatten


def typeof(x: Any) -> Any:
    """The abstract value (shape, dtype, weak type) of an array, scalar or tracer;
    of a value of a class given to ``experimental.hijax.register_hitype``, what
    that registration's function returns."""
    hi = HITYPES.get(type(x))
    if hi is not None:
        return hi(x)
    if isinstance(x, PRNGKeyArray):
        return _key_aval(x)
    return get_aval(x, "typeof")


def _key_aval(keys: PRNGKeyArray) -> ShapedArray:
    """JAX's abstract value of a typed key array: ``ShapedArray(key<fry>[shape])``.

    plait carries a key array through its transformations as a pytree over its
    ``uint32`` data, so core never makes this abstract value; ``typeof`` makes it
    for the user to read (shape, dtype ``key<fry>``, ``str_short``), bypassing
    ``ShapedArray.__init__``, which takes NumPy dtypes only."""
    aval = object.__new__(ShapedArray)
    aval.shape = keys.shape
    aval.dtype = KEY_DTYPE  # type: ignore[assignment]
    aval.weak_type = False
    aval.vma = get_aval(keys.data).vma
    aval._sharding = None
    aval._hash = -1
    return aval


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside the block, operations on concrete values run eagerly even under a
    transformation (``jit``): their results are concrete, so Python control flow
    can use them.  Operations on traced values are staged into the transformation
    they belong to, as outside the block (as in JAX)."""
    with set_current_trace(CompileTimeEvalTrace()):
        yield


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Name a region of a program: the operations staged inside the block have
    ``name`` on their name stack (``eqn.source_info.name_stack``, as in JAX).
    Values are unaffected; ``name`` must be a string."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope: the name must be a string, got {type(name).__name__}")
    with extend_name_stack(name):
        yield


def custom_gradient(fun: Callable[..., tuple[Any, Callable[..., Any]]]) -> Callable[..., Any]:
    """``fun(*args)`` returns ``(value, vjp)``; the decorated function returns ``value``
    and reverse mode uses ``vjp(cotangent)``, which returns one cotangent per
    positional argument (a tuple; a single value is accepted for one argument)."""

    @custom_vjp
    def wrapped(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple[Any, Any]:
        value, _ = fun(*args)
        return value, args

    def bwd(args: Any, g: Any) -> tuple[Any, ...]:
        _, vjp = fun(*args)
        cts = vjp(g)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        if len(cts) != len(args):
            raise TypeError(
                f"custom_gradient: the vjp returned {len(cts)} cotangents for {len(args)} positional arguments"
            )
        return tuple(cts)

    wrapped.defvjp(fwd, bwd)
    return wrapped


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """Hoist the values ``fun`` closes over into arguments: returns ``(converted, consts)``
    with ``converted(*args, *consts) == fun(*args)`` for arguments shaped like
    ``example_args`` (useful for ``custom_vjp`` rules that must see closed-over values)."""
    closed, out_shape = make_jaxpr(fun, return_shape=True)(*example_args)
    _, out_tree = tree_flatten(out_shape)
    consts = list(closed.consts)
    n_consts = len(consts)

    def converted(*args_and_consts: Any) -> Any:
        args, cs = args_and_consts[: len(args_and_consts) - n_consts], args_and_consts[len(args_and_consts) - n_consts :]
        flat, _ = tree_flatten(args)
        return tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, cs, *flat))

    return converted, consts


def copy_to_host_async(x: Any) -> None:
    """Start copying an array's data to the host (a hint: ``np.asarray(x)`` later is
    fast); plait's device arrays on CPU are already host-visible, so this only checks ``x``."""
    for leaf in tree_flatten(x)[0]:
        get_aval(leaf, "copy_to_host_async")


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions of plait's packages, NumPy, jaxlib and Python."""
    import plait  # the meta-package, imported here because it imports this module

    lines = [f"plait: {plait.__version__}"]
    lines += [f"{name}: {version}" for name, version in plait.package_versions.items()]
    lines.append(f"jaxlib: {importlib.metadata.version('jaxlib')}")
    lines += [f"numpy: {np.__version__}", f"python: {sys.version.split()[0]}", f"platform: {platform.platform()}"]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)
    return None


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The forward and backward passes of ``fun`` as two functions:
    ``fwd(*args)`` returns ``(out, residuals)`` (``(out, residuals, aux)`` with
    ``has_aux``) and ``bwd(residuals, cotangent)`` returns the cotangents of the
    ``argnums`` arguments (a tuple when ``argnums`` is a sequence).  In plait the
    residuals are the pullback itself, an opaque value to hand back to ``bwd``;
    ``jitted`` is accepted (the passes' operations compile as usual)."""
    del jitted
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def fwd(*args: Any) -> Any:
        def partial_fun(*diff: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, diff):
                full[i] = v
            return fun(*full)

        result = vjp(partial_fun, *[args[i] for i in nums], has_aux=has_aux)
        if has_aux:
            out, pullback, aux = result
            return out, pullback, aux
        out, pullback = result
        return out, pullback

    def bwd(residuals: Any, cotangent: Any) -> Any:
        cts = residuals(cotangent)
        return cts[0] if isinstance(argnums, int) else tuple(cts)

    return fwd, bwd


def _flag_context(option: str, attr: str, doc: str) -> Callable[[bool], contextlib.AbstractContextManager[None]]:
    @contextlib.contextmanager
    def context(value: bool = True) -> Iterator[None]:
        previous = getattr(config, attr)
        setattr(config, attr, bool(value))
        try:
            yield
        finally:
            setattr(config, attr, previous)

    context.__name__ = option
    context.__doc__ = doc
    return context


check_tracer_leaks = _flag_context(
    "check_tracer_leaks", "check_tracer_leaks", "Context manager turning the leaked-tracer check on (or off) inside its block."
)
explain_cache_misses = _flag_context(
    "explain_cache_misses", "explain_cache_misses", "Context manager: explain why jit traces again inside its block."
)


def checking_leaks() -> contextlib.AbstractContextManager[None]:
    """``check_tracer_leaks(True)``: leaked tracers are errors inside the block."""
    return check_tracer_leaks(True)


def _fixed_context(option: str, accepted: tuple[Any, ...], doc: str) -> Callable[..., contextlib.AbstractContextManager[None]]:
    """A JAX option whose only values plait honours are ``accepted`` (plait's fixed behaviour)."""

    @contextlib.contextmanager
    def context(value: Any = accepted[0]) -> Iterator[None]:
        if value not in accepted:
            raise NotImplementedError(
                f"jax.{option}({value!r}) is not supported by plait: it accepts only {', '.join(map(repr, accepted))}"
                f" ({doc.rstrip('.')})"
            )
        yield

    context.__name__ = option
    context.__doc__ = f"Context manager for JAX's ``{option}`` option. {doc}"
    return context


debug_nans = _fixed_context("debug_nans", (False,), "plait does not re-run computations to locate NaNs.")
debug_infs = _fixed_context("debug_infs", (False,), "plait does not re-run computations to locate infinities.")
debug_key_reuse = _fixed_context("debug_key_reuse", (False,), "plait does not track PRNG key reuse.")
enable_checks = _fixed_context("enable_checks", (False,), "plait's internal checks are always the same.")
def _option_context(option: str, doc: str) -> Callable[[Any], contextlib.AbstractContextManager[None]]:
    """A context manager setting the configuration option ``option`` inside its
    block (the value checked as ``config.update`` checks it)."""

    @contextlib.contextmanager
    def context(value: Any) -> Iterator[None]:
        previous = config.read(option)
        config.update(option, value)
        try:
            yield
        finally:
            config.update(option, previous)

    context.__name__ = option
    context.__doc__ = f"Context manager for JAX's ``{option}`` option. {doc}"
    return context


numpy_rank_promotion = _option_context(
    "numpy_rank_promotion",
    "Broadcasting operands of different ranks in NumPy's binary functions: 'allow' (NumPy's rule), 'warn' "
    "(a UserWarning) or 'raise' (ValueError).",
)
numpy_dtype_promotion = _option_context(
    "numpy_dtype_promotion",
    "'standard' (JAX's promotion lattice) or 'strict' (only weakly typed values promote implicitly; other "
    "mixed dtypes are a TypePromotionError).",
)
threefry_partitionable = _fixed_context(
    "threefry_partitionable", (True,), "plait draws JAX 0.10.2's default partitionable Threefry streams."
)
default_prng_impl = _fixed_context(
    "default_prng_impl", ("threefry2x32",), "plait's keys are Threefry-2x32 keys."
)
default_matmul_precision = _fixed_context(
    "default_matmul_precision",
    (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "ANY_F32_F32_F32", "F32_F32_F32"),
    "on CPU, XLA computes float32 matmuls in full precision whatever is asked.",
)
transfer_guard = _fixed_context("transfer_guard", ("allow",), "plait does not guard transfers.")
transfer_guard_host_to_device = _fixed_context(
    "transfer_guard_host_to_device", ("allow",), "plait does not guard transfers."
)
transfer_guard_device_to_host = _fixed_context(
    "transfer_guard_device_to_host", ("allow",), "plait does not guard transfers."
)
transfer_guard_device_to_device = _fixed_context(
    "transfer_guard_device_to_device", ("allow",), "plait does not guard transfers."
)

__all__ = [
    "check_tracer_leaks", "checking_leaks", "closure_convert", "copy_to_host_async",
    "custom_gradient", "debug_infs", "fwd_and_bwd", "debug_key_reuse", "debug_nans", "default_matmul_precision",
    "default_prng_impl", "enable_checks", "ensure_compile_time_eval", "explain_cache_misses", "named_scope",
    "numpy_dtype_promotion", "numpy_rank_promotion", "print_environment_info",
    "threefry_partitionable", "transfer_guard", "transfer_guard_device_to_device", "transfer_guard_device_to_host",
    "transfer_guard_host_to_device", "typeof",
]
