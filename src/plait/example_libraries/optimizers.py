"""First-order optimizers as triples of functions, as ``jax.example_libraries.optimizers``.

An optimizer is ``Optimizer(init_fn, update_fn, params_fn)``:
``opt_state = init_fn(params)`` (any pytree of arrays),
``opt_state = update_fn(step, grads, opt_state)`` with ``grads`` of the
parameters' tree structure, and ``params = params_fn(opt_state)``.  The
optimizers below are written for one array and lifted to pytrees by the
:func:`optimizer` decorator.  Step sizes are numbers or schedules (functions
of the integer step ``i``).  ``OptimizerState`` is a pytree (so it passes
through ``jit``); :func:`unpack_optimizer_state` and
:func:`pack_optimizer_state` turn it into a plain pytree and back (to save it).
"""

from __future__ import annotations

import builtins
import functools
from collections import namedtuple
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from plait import numpy as pnp
from plait import tree_util

register_pytree_node = tree_util.register_pytree_node
tree_flatten = tree_util.tree_flatten
tree_map = tree_util.tree_map
tree_unflatten = tree_util.tree_unflatten



def safe_map(f: Callable[..., Any], *iterables: Iterable[Any]) -> list[Any]:
    """``list(map(f, *iterables))`` for iterables of one length: a ``ValueError``
    (naming the argument) when one is longer or shorter than the first."""
    if not iterables:
        raise TypeError("safe_map requires a function and at least one iterable")
    lists = [list(it) for it in iterables]
    _check_lengths("safe_map", lists)
    return [f(*args) for args in _builtin_zip(*lists)]


def safe_zip(*iterables: Iterable[Any]) -> list[tuple[Any, ...]]:
    """``list(zip(*iterables))`` for iterables of one length: a ``ValueError``
    (naming the argument and every length) otherwise."""
    if not iterables:
        raise TypeError("safe_zip requires at least one iterable")
    lists = [list(it) for it in iterables]
    _check_lengths("safe_zip", lists)
    return list(_builtin_zip(*lists))


def _check_lengths(name: str, lists: list[list[Any]]) -> None:
    first = len(lists[0])
    for k, items in enumerate(lists[1:], 1):
        if len(items) != first:
            lengths = tuple(len(x) for x in lists)
            raise ValueError(
                f"{name}() argument {k} has length {len(items)} but argument 0 has length {first}. "
                f"All lengths: {lengths}"
            )


def unzip2(pairs: Iterable[tuple[Any, Any]]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Split an iterable of pairs into a tuple of firsts and a tuple of seconds
    (``((), ())`` for no pairs)."""
    xs: list[Any] = []
    ys: list[Any] = []
    for x, y in pairs:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


_builtin_zip = builtins.zip
# As in JAX's module: its ``map`` and ``zip`` are the length-checked forms (and
# ``namedtuple``/``partial`` are the standard library's), so code that imports
# these names from it gets the same objects' behaviour.
map = safe_map
zip = safe_zip

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], Any]
InitFn = Callable[[Params], Any]
UpdateFn = Callable[[Step, Updates, Any], Any]
ParamsFn = Callable[[Any], Params]


class OptimizerState(NamedTuple):
    """An optimizer's state for a pytree of parameters: each leaf's state
    flattened (``packed_state``), the parameters' tree structure and each
    leaf state's tree structure."""

    packed_state: Any
    tree_def: Any
    subtree_defs: Any


register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)


class Optimizer(NamedTuple):
    """The functions of an optimizer over pytrees: ``init_fn``, ``update_fn``, ``params_fn``."""

    init_fn: Callable[[Params], OptimizerState]
    update_fn: Callable[[Step, Updates, OptimizerState], OptimizerState]
    params_fn: Callable[[OptimizerState], Params]


def _flatten_states(states: Sequence[Any]) -> tuple[tuple[list[Any], ...], tuple[Any, ...]]:
    """Each state's leaves and tree structure, as tuples (hashable, so the
    structures can be a pytree's auxiliary data)."""
    flat = [tree_flatten(s) for s in states]
    return tuple(leaves for leaves, _ in flat), tuple(tree for _, tree in flat)


def optimizer(opt_maker: Callable[..., tuple[Callable[..., Any], ...]]) -> Callable[..., Optimizer]:
    """Lift an optimizer written for one array — ``opt_maker(*args)`` returning
    ``(init(x0), update(i, g, state), get_params(state))`` — to one over
    pytrees of arrays, each leaf with its own state."""

    @functools.wraps(opt_maker)
    def make(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_states([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_def = tree_flatten(grad_tree)
            if grad_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that does not match the parameter "
                    f"tree structure it was initialized with: parameter tree {tree} and grad tree {grad_def}"
                )
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat)]
            new_flat, new_subtrees = _flatten_states([update(i, g, s) for g, s in zip(grad_flat, states)])
            for old, new in zip(subtrees, new_subtrees):
                if old != new:
                    raise TypeError(
                        "optimizer update function produced a state whose structure does not match its input: "
                        f"input {old} and output {new}"
                    )
            return OptimizerState(new_flat, tree, subtrees)

        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, tree, subtrees = opt_state
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return make


# ---------------------------------------------------------------------------
# Optimizers


@optimizer
def sgd(step_size: float | Schedule) -> tuple[Callable[..., Any], ...]:
    """Stochastic gradient descent: ``x <- x - step_size(i) * g``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> Array:
        return x0

    def update(i: Step, g: Array, x: Array) -> Array:
        return x - step(i) * g

    def get_params(x: Array) -> Array:
        return x

    return init, update, get_params


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> tuple[Callable[..., Any], ...]:
    """Heavy-ball momentum: ``v <- mass * v + g``, ``x <- x - step_size(i) * v``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, pnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step(i) * velocity, velocity

    def get_params(state: tuple[Array, Array]) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> tuple[Callable[..., Any], ...]:
    """Nesterov's accelerated gradient: ``v <- mass * v + g``,
    ``x <- x - step_size(i) * (mass * v + g)``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, pnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step(i) * (mass * velocity + g), velocity

    def get_params(state: tuple[Array, Array]) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> tuple[Callable[..., Any], ...]:
    """Adagrad with momentum: ``s <- s + g**2``,
    ``m <- (1 - momentum) * g / sqrt(s) + momentum * m`` (0 where ``s == 0``),
    ``x <- x - step_size(i) * m``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, pnp.zeros_like(x0), pnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, g_sq, m = state
        g_sq = g_sq + pnp.square(g)
        inv_sqrt = pnp.where(g_sq > 0, 1.0 / pnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step(i) * m, g_sq, m

    def get_params(state: tuple[Array, Array, Array]) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> tuple[Callable[..., Any], ...]:
    """RMSProp: ``a <- gamma * a + (1 - gamma) * g**2``,
    ``x <- x - step_size(i) * g / sqrt(a + eps)``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, pnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + pnp.square(g) * (1.0 - gamma)
        return x - step(i) * g / pnp.sqrt(avg_sq + eps), avg_sq

    def get_params(state: tuple[Array, Array]) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple[Callable[..., Any], ...]:
    """RMSProp with momentum: ``a`` as :func:`rmsprop`,
    ``m <- momentum * m + step_size(i) * g / sqrt(a + eps)``, ``x <- x - m``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, pnp.zeros_like(x0), pnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + pnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step(i) * g / pnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    def get_params(state: tuple[Array, Array, Array]) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> tuple[Callable[..., Any], ...]:
    """Adam (Kingma and Ba, 2015): moment estimates ``m``, ``v`` with bias
    correction ``1 - b**(i + 1)``, ``x <- x - step_size(i) * m_hat / (sqrt(v_hat) + eps)``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, pnp.zeros_like(x0), pnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * pnp.square(g) + b2 * v
        m_hat = m / (1 - pnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - pnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step(i) * m_hat / (pnp.sqrt(v_hat) + eps), m, v

    def get_params(state: tuple[Array, Array, Array]) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> tuple[Callable[..., Any], ...]:
    """AdaMax, Adam's infinity-norm variant: ``u <- max(b2 * u, |g|)``,
    ``x <- x - step_size(i) / (1 - b1**(i + 1)) * m / (u + eps)``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, pnp.zeros_like(x0), pnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = pnp.maximum(b2 * u, pnp.abs(g))
        return x - (step(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u

    def get_params(state: tuple[Array, Array, Array]) -> Array:
        return state[0]

    return init, update, get_params


def _without(seq: Sequence[int], j: int) -> tuple[int, ...]:
    return tuple(v for k, v in enumerate(seq) if k != j)


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> tuple[Callable[..., Any], ...]:
    """SM3 (Anil et al., "Memory-efficient adaptive optimization", 2019): one
    accumulator vector per axis instead of one per entry; each entry's
    accumulator is the minimum over its axes' vectors plus ``g**2``."""
    step = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, list[Array], tuple[int, ...]]:
        x_shape = tuple(np.shape(x0))
        x0 = pnp.atleast_1d(x0)
        vs = [pnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, pnp.zeros_like(x0), vs, x_shape

    def update(i: Step, g: Array, state: Any) -> Any:
        x, m, vs, x_shape = state
        ndim = pnp.ndim(g)
        spread = [pnp.expand_dims(v, _without(range(max(ndim, 1)), j)) if ndim else v for j, v in enumerate(vs)]
        accum = functools.reduce(pnp.minimum, spread) + pnp.square(g)
        inv_sqrt = pnp.where(accum > 0, 1.0 / pnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step(i) * m
        vs = [pnp.max(accum, axis=_without(range(x.ndim), j)) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state: Any) -> Array:
        x, _, _, x_shape = state
        return pnp.reshape(x, x_shape)

    return init, update, get_params


# ---------------------------------------------------------------------------
# Schedules


def constant(step_size: float) -> Schedule:
    """The schedule ``i -> step_size``."""

    def schedule(i: Step) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """``i -> step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i: Step) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size: float, decay_steps: float, decay_rate: float, staircase: bool = False) -> Schedule:
    """``i -> step_size / (1 + decay_rate * i / decay_steps)`` (with
    ``floor(i / decay_steps)`` when ``staircase``)."""

    def schedule(i: Step) -> Any:
        if staircase:
            return step_size / (1 + decay_rate * pnp.floor(i / decay_steps))
        return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size: float, decay_steps: float, final_step_size: float, power: float = 1.0) -> Schedule:
    """From ``step_size`` at 0 to ``final_step_size`` at ``decay_steps`` (then
    constant) along ``(1 - i / decay_steps) ** power``."""

    def schedule(i: Step) -> Any:
        t = pnp.minimum(i, decay_steps)
        mult = (1 - t / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps ``i`` with exactly ``k`` boundaries below ``i``
    (``values`` has one entry more than ``boundaries``)."""
    bounds = pnp.array(boundaries)
    vals = pnp.array(values)
    if not bounds.ndim == vals.ndim == 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences")
    if bounds.shape[0] != vals.shape[0] - 1:
        raise ValueError("piecewise_constant: boundaries must have one entry fewer than values")

    def schedule(i: Step) -> Any:
        return vals[pnp.sum(i > bounds)]

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule from a step size: callables are schedules already, scalars are constant."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"optimizers: a step size must be a scalar or a schedule, got {type(scalar_or_schedule).__name__}")


# ---------------------------------------------------------------------------
# Utilities


def l2_norm(tree: Any) -> Array:
    """The Euclidean norm of all the leaves of ``tree`` taken together."""
    leaves = tree_util.tree_leaves(tree)
    return pnp.sqrt(sum(pnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """``grad_tree`` scaled by ``max_norm / l2_norm(grad_tree)`` when its norm exceeds ``max_norm``."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: pnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where a leaf's optimizer state joins the parameters' tree in an
    unpacked state (see :func:`unpack_optimizer_state`)."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as a pytree of the parameters' structure whose leaves are
    :class:`JoinPoint` s holding each leaf's state (picklable, for saving)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(t, s) for t, s in zip(subtree_defs, states_flat)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of :func:`unpack_optimizer_state`."""
    sentinels, tree_def = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: expected a pytree from unpack_optimizer_state (JoinPoint leaves)")
    states_flat, subtree_defs = _flatten_states([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)


__all__ = [
    "Array", "InitFn", "JoinPoint", "Optimizer", "OptimizerState", "Params", "ParamsFn", "Schedule", "State",
    "Step", "UpdateFn", "Updates", "adagrad", "adam", "adamax", "clip_grads", "constant", "exponential_decay",
    "inverse_time_decay", "l2_norm", "make_schedule", "momentum", "nesterov", "optimizer", "pack_optimizer_state",
    "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3",
    "unpack_optimizer_state", "map", "namedtuple", "partial", "safe_map", "safe_zip", "unzip2", "zip",
]
