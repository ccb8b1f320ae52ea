"""The small public names added for JAX coverage: top-level helpers and config
contexts, tree_util one-level/broadcast/associative helpers, and nn activations,
against NumPy float64 and closed forms."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import nn, tree, tree_util

X = np.array([-3.0, -1.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 4.0])


def _close(a: object, b: object, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=tol, atol=tol)


def test_typeof_and_named_scope() -> None:
    t = plait.typeof(pnp.ones((2, 3), pnp.int32))
    assert t.shape == (2, 3) and t.dtype == np.int32
    assert plait.typeof(1.0).weak_type
    with plait.named_scope("block"):
        _close(pnp.sin(1.0), np.sin(1.0))
    with pytest.raises(TypeError, match="named_scope: the name must be a string"):
        plait.named_scope(3).__enter__()  # type: ignore[arg-type]


def test_ensure_compile_time_eval_gives_concrete_values_under_jit() -> None:
    seen = []

    @plait.jit
    def f(x: object) -> object:
        with plait.ensure_compile_time_eval():
            y = pnp.arange(4.0).sum()
            seen.append(float(y))  # concrete: float() works under jit
        return x * y

    _close(f(2.0), 12.0)
    assert seen == [6.0]


def test_custom_gradient_uses_the_given_vjp() -> None:
    @plait.custom_gradient
    def f(x: object, y: object) -> object:
        return x * y, lambda g: (g * 10.0, g * 20.0)

    _close(f(2.0, 3.0), 6.0)
    _close(plait.grad(f, argnums=(0, 1))(2.0, 3.0), (10.0, 20.0))

    @plait.custom_gradient
    def bad(x: object) -> object:
        return x, lambda g: (g, g)

    with pytest.raises(TypeError, match="2 cotangents for 1 positional arguments"):
        plait.grad(bad)(1.0)


def test_closure_convert_hoists_constants() -> None:
    c = pnp.array([1.0, 2.0, 3.0])
    conv, consts = plait.closure_convert(lambda x: {"y": x * c}, pnp.ones(3))
    assert len(consts) == 1
    _close(conv(pnp.full(3, 2.0), *consts)["y"], [2.0, 4.0, 6.0])
    _close(conv(pnp.full(3, 2.0), pnp.ones(3))["y"], [2.0, 2.0, 2.0])


def test_config_contexts() -> None:
    with plait.debug_nans(False), plait.numpy_rank_promotion("allow"), plait.default_matmul_precision("highest"):
        _close(pnp.dot(pnp.ones(3), pnp.ones(3)), 3.0)
    with pytest.raises(NotImplementedError, match=r"jax.debug_nans\(True\) is not supported by plait"):
        plait.debug_nans(True).__enter__()
    with plait.numpy_rank_promotion("raise"), pytest.raises(
        ValueError, match=r"add: operands of shapes \(3,\) \(2, 3\) have different ranks"
    ):
        pnp.ones(3) + pnp.ones((2, 3))
    assert plait.config.jax_numpy_rank_promotion == "allow"
    with pytest.raises(ValueError, match=r"numpy_rank_promotion must be one of 'allow', 'warn', 'raise'; got 'no'"):
        plait.numpy_rank_promotion("no").__enter__()
    before = plait.config.check_tracer_leaks
    with plait.check_tracer_leaks(not before):
        assert plait.config.check_tracer_leaks is (not before)
    with plait.checking_leaks():
        assert plait.config.check_tracer_leaks is True
    assert plait.config.check_tracer_leaks is before
    text = plait.print_environment_info(return_string=True)
    assert text is not None and "plait-core: " in text and "jaxlib: " in text
    plait.copy_to_host_async(pnp.ones(2))


def test_tree_util_one_level_and_node_queries() -> None:
    assert tree_util.flatten_one_level({"b": [2, 3], "a": 1}) == ((1, [2, 3]), ("a", "b"))
    assert tree_util.flatten_one_level([1, (2,)]) == ([1, (2,)], None)
    keyed, aux = tree_util.flatten_one_level_with_keys({"a": 1, "b": 2})
    assert [k.key for k, _ in keyed] == ["a", "b"] and [v for _, v in keyed] == [1, 2] and aux == ("a", "b")
    with pytest.raises(ValueError, match="can't tree-flatten a leaf of type float"):
        tree_util.flatten_one_level(1.0)
    assert tree_util.is_tree_node(list) and tree_util.is_tree_node(type(None)) and not tree_util.is_tree_node(int)


def test_tree_broadcast_and_reduce_associative() -> None:
    out = tree.broadcast([1, {"a": 2}], [[3, 4], {"a": (5, 6)}])
    assert out == [[1, 1], {"a": (2, 2)}]
    with pytest.raises(ValueError, match="not a prefix of full_tree"):
        tree.broadcast([1, 2, 3], [1, 2])
    calls: list[tuple[str, str]] = []

    def cat(a: str, b: str) -> str:
        calls.append((a, b))
        return a + b

    assert tree.reduce_associative(cat, list("abcde")) == "abcde"
    assert ("a", "b") in calls and ("c", "d") in calls  # balanced: pairs first
    assert tree.reduce_associative(cat, [], identity="") == ""
    with pytest.raises(TypeError, match="needs identity"):
        tree.reduce_associative(cat, [])


def test_register_pytree_with_keys_class_and_static() -> None:
    @tree_util.register_pytree_with_keys_class
    class Pair:
        def __init__(self, a: object, b: object) -> None:
            self.a, self.b = a, b

        def tree_flatten_with_keys(self) -> tuple[object, None]:
            return ((tree_util.GetAttrKey("a"), self.a), (tree_util.GetAttrKey("b"), self.b)), None

        @classmethod
        def tree_unflatten(cls, aux: None, children: list[object]) -> Pair:
            return cls(*children)

    leaves = tree_util.tree_leaves_with_path(Pair(1, 2))
    assert [tree_util.keystr(p) for p, _ in leaves] == [".a", ".b"]
    doubled = tree.map(lambda v: v * 2, Pair(1, 2))
    assert (doubled.a, doubled.b) == (2, 4)

    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        name: str = tree.static(default="add")

    assert tree.leaves(Op(3.0)) == [3.0]
    assert tree.structure(Op(3.0)) != tree.structure(Op(3.0, "mul"))


def test_nn_activations_against_numpy() -> None:
    x = pnp.asarray(X, pnp.float32)
    sp = np.logaddexp(X, 0)
    _close(nn.identity(x), X)
    _close(nn.tanh(x), np.tanh(X))
    _close(nn.soft_sign(x), X / (np.abs(X) + 1))
    _close(nn.mish(x), X * np.tanh(sp))
    _close(nn.hard_silu(x), X * np.clip(X + 3, 0, 6) / 6)
    _close(nn.squareplus(x), (X + np.sqrt(X**2 + 4)) / 2)
    _close(nn.squareplus(x, 1.0), (X + np.sqrt(X**2 + 1)) / 2)
    _close(nn.sparse_plus(x), np.where(X <= -1, 0, np.where(X >= 1, X, (X + 1) ** 2 / 4)))
    _close(nn.sparse_sigmoid(x), np.where(X <= -1, 0, np.where(X >= 1, 1, (X + 1) / 2)))
    pos = np.array([1e-4, 0.1, 0.69, 0.7, 3.0, 30.0])
    _close(nn.log1mexp(pnp.asarray(pos, pnp.float32)), np.log(-np.expm1(-pos)), 1e-4)
    m = np.array([[1.0, 2.0, 3.0], [0.0, 5.0, -1.0]])
    ref = np.log(np.mean(np.exp(m), axis=1))
    _close(nn.logmeanexp(pnp.asarray(m, pnp.float32), axis=1), ref)
    _close(nn.logmeanexp(pnp.asarray(m, pnp.float32)), np.log(np.mean(np.exp(m))))
    w = m > 0.5
    _close(nn.logmeanexp(pnp.asarray(m, pnp.float32), axis=1, where=w), [np.log(np.mean(np.exp([1.0, 2, 3]))), 5.0])
    big = pnp.asarray([1000.0, 1000.0], pnp.float32)
    _close(nn.logmeanexp(big), 1000.0)
    # Derivatives: mish'(x) and sparse_plus' = sparse_sigmoid.
    g = plait.vmap(plait.grad(nn.sparse_plus))(x)
    _close(g, nn.sparse_sigmoid(x))
    s = 1 / (1 + np.exp(-X))
    _close(plait.vmap(plait.grad(nn.mish))(x), np.tanh(sp) + X * (1 - np.tanh(sp) ** 2) * s, 1e-4)


def test_orthogonal_initializers() -> None:
    key = plait.random.PRNGKey(0)
    wide = np.asarray(nn.initializers.orthogonal()(key, (3, 5)), np.float64)
    _close(wide @ wide.T, np.eye(3))
    tall = np.asarray(nn.initializers.orthogonal(scale=2.0)(key, (6, 4)), np.float64)
    _close(tall.T @ tall, 4 * np.eye(4))
    conv = np.asarray(nn.initializers.orthogonal(column_axis=0)(key, (4, 2, 3)), np.float64)
    flat = np.moveaxis(conv, 0, -1).reshape(6, 4)
    _close(flat.T @ flat, np.eye(4))
    delta = np.asarray(nn.initializers.delta_orthogonal()(key, (3, 3, 2, 4)), np.float64)
    centre = delta[1, 1]
    _close(centre @ centre.T, np.eye(2))
    delta[1, 1] = 0
    assert not delta.any()
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        nn.initializers.orthogonal()(key, (3,))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`"):
        nn.initializers.delta_orthogonal()(key, (3, 3, 4, 2))


def test_logaddexp_is_smooth_at_ties_as_jax() -> None:
    f = lambda z: pnp.logaddexp(0.0, z)  # noqa: E731
    _close(plait.grad(f)(0.0), 0.5)
    _close(plait.hessian(f)(0.0), 0.25)
    _close(plait.vmap(plait.hessian(f))(pnp.array([-1.0, 0.0, 2.0])),
           [np.exp(v) / (1 + np.exp(v)) ** 2 for v in (-1.0, 0.0, 2.0)])
    _close(plait.grad(lambda x: pnp.logaddexp(x, 1.0))(np.inf), 1.0)
    _close(plait.jit(plait.grad(lambda x: pnp.logaddexp(x, x)))(3.0), 1.0)
    _close(pnp.logaddexp(np.inf, 1.0), np.inf)
    _close(pnp.logaddexp(-np.inf, -np.inf), -np.inf)


def test_fwd_and_bwd() -> None:
    x, w = pnp.ones((2, 2)), pnp.eye(2) * 2.0
    fwd, bwd = plait.fwd_and_bwd(lambda a, b: a @ b, argnums=(0, 1))
    y, res = fwd(x, w)
    _close(y, 2 * np.ones((2, 2)))
    cx, cw = bwd(res, pnp.ones((2, 2)))
    _close(cx, np.ones((2, 2)) @ (2 * np.eye(2)).T)
    _close(cw, np.ones((2, 2)).T @ np.ones((2, 2)))
    fwd1, bwd1 = plait.fwd_and_bwd(lambda a, b: (a @ b, pnp.sum(b)), argnums=1, has_aux=True)
    y, res, aux = fwd1(x, w)
    _close(aux, 4.0)
    _close(bwd1(res, pnp.ones((2, 2))), 2 * np.ones((2, 2)))
