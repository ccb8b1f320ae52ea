"""The public API: jvp, linearize, vjp, grad, value_and_grad, linear_transpose,
jacfwd, jacrev, hessian -- values against NumPy, structures, options, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_core import dtypes, lax

X3 = np.array([0.5, -1.25, 2.0], np.float32)


def poly(x: Any) -> Any:
    return (x**3 - 2.0 * x).sum()


def poly_grad(x: np.ndarray) -> np.ndarray:
    return 3 * x**2 - 2


# ---------------------------------------------------------------------------
# jvp / linearize


def test_jvp_pytrees_and_zero_tangents_of_integers() -> None:
    def f(p: dict[str, Any], n: Any) -> Any:
        return {"y": p["a"] * pnp.sin(p["b"]), "n": n * 2}

    primals = ({"a": np.float32(2.0), "b": X3}, np.int32(3))
    tangents = ({"a": np.float32(1.0), "b": np.ones(3, np.float32)}, np.zeros((), dtypes.float0))
    out, t_out = ad.jvp(f, primals, tangents)
    np.testing.assert_allclose(out["y"], 2 * np.sin(X3), rtol=1e-6)
    np.testing.assert_allclose(t_out["y"], np.sin(X3) + 2 * np.cos(X3), rtol=1e-6)
    assert out["n"] == 6
    assert t_out["n"].dtype == dtypes.float0 and t_out["n"].shape == ()


def test_jvp_has_aux_returns_aux_primal() -> None:
    _out, t, aux = ad.jvp(lambda x: (pnp.exp(x), x * 3), (np.float32(0.5),), (np.float32(2.0),), has_aux=True)
    np.testing.assert_allclose(t, 2 * np.exp(0.5), rtol=1e-6)
    np.testing.assert_allclose(aux, 1.5)
    assert not isinstance(aux, pc.Tracer)


def test_jvp_output_independent_of_input_has_zero_tangent() -> None:
    out, t = ad.jvp(lambda x: np.float32(4.0), (X3,), (np.ones(3, np.float32),))
    assert out == 4.0 and t == 0.0


def test_linearize_matches_jvp_and_reuses_the_linear_program() -> None:
    f = lambda x: pnp.sin(x) * x  # noqa: E731
    out, f_jvp = ad.linearize(f, X3)
    np.testing.assert_allclose(out, np.sin(X3) * X3, rtol=1e-6)
    for t in (np.ones(3, np.float32), np.array([1, 0, -2], np.float32)):
        np.testing.assert_allclose(f_jvp(t), ad.jvp(f, (X3,), (t,))[1], rtol=1e-6)


def test_linearize_takes_tangents_only() -> None:
    _, f_jvp = ad.linearize(lambda x, y: x * y, np.float32(2.0), np.float32(3.0))
    np.testing.assert_allclose(f_jvp(np.float32(1.0), np.float32(0.0)), 3.0)
    with pytest.raises(TypeError, match="linearize: the linearized function expects tangents with the structure"):
        f_jvp(np.float32(1.0))


def test_python_control_flow_on_primal_values() -> None:
    def f(x: Any) -> Any:
        if x > 0:
            return pnp.sin(x) * 2
        return x**3

    assert float(ad.grad(f)(1.0)) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
    assert float(ad.grad(f)(-1.0)) == pytest.approx(3.0)
    assert float(ad.jvp(f, (1.0,), (1.0,))[1]) == pytest.approx(2 * np.cos(1.0), rel=1e-6)


# ---------------------------------------------------------------------------
# vjp / grad / value_and_grad


def test_vjp_pytree_cotangents() -> None:
    def f(x: Any, y: Any) -> Any:
        return {"s": x * y, "t": (pnp.exp(x),)}

    y = np.array([1.0, 2.0, 3.0], np.float32)
    _out, pullback = ad.vjp(f, X3, y)
    ct = {"s": np.ones(3, np.float32), "t": (np.full(3, 2.0, np.float32),)}
    gx, gy = pullback(ct)
    np.testing.assert_allclose(gx, y + 2 * np.exp(X3), rtol=1e-6)
    np.testing.assert_allclose(gy, X3, rtol=1e-6)


def test_vjp_integer_inputs_get_float0() -> None:
    _, pullback = ad.vjp(lambda x, n: x * n, np.float32(2.0), np.int32(3))
    gx, gn = pullback(np.float32(1.0))
    assert gx == 3.0
    assert gn.dtype == dtypes.float0


def test_grad_values_and_dtype() -> None:
    g = ad.grad(poly)(X3)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, poly_grad(X3), rtol=1e-6)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_argnums(argnums: Any) -> None:
    x, y = np.float32(1.5), np.float32(-0.5)
    f = lambda a, b: a * a * b  # noqa: E731
    g = ad.grad(f, argnums=argnums)(x, y)
    expected = {0: 2 * x * y, 1: x * x, -1: x * x}
    if isinstance(argnums, tuple):
        assert isinstance(g, tuple) and len(g) == 2
        for gi, a in zip(g, argnums):
            np.testing.assert_allclose(gi, expected[a], rtol=1e-6)
    else:
        np.testing.assert_allclose(g, expected[argnums], rtol=1e-6)


def test_grad_has_aux_and_kwargs() -> None:
    def f(x: Any, scale: float = 1.0) -> Any:
        return (x * x).sum() * scale, {"norm": pnp.sqrt((x * x).sum())}

    g, aux = ad.grad(f, has_aux=True)(X3, scale=3.0)
    np.testing.assert_allclose(g, 6 * X3, rtol=1e-6)
    np.testing.assert_allclose(aux["norm"], np.linalg.norm(X3), rtol=1e-6)
    (v, _aux2), g2 = ad.value_and_grad(f, has_aux=True)(X3, 2.0)
    np.testing.assert_allclose(v, 2 * (X3 * X3).sum(), rtol=1e-6)
    np.testing.assert_allclose(g2, 4 * X3, rtol=1e-6)


def test_value_and_grad() -> None:
    v, g = ad.value_and_grad(poly)(X3)
    np.testing.assert_allclose(v, (X3**3 - 2 * X3).sum(), rtol=1e-6)
    np.testing.assert_allclose(g, poly_grad(X3), rtol=1e-6)


def test_grad_allow_int() -> None:
    g = ad.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(np.float32(2.0), np.int32(3))
    assert g[0] == 3.0 and g[1].dtype == dtypes.float0


def test_grad_holomorphic() -> None:
    z = np.complex64(1.0 + 2.0j)
    g = ad.grad(lambda z: z * z + pnp.exp(z), holomorphic=True)(z)
    np.testing.assert_allclose(g, 2 * z + np.exp(z), rtol=1e-5)


def test_higher_order_and_no_perturbation_confusion() -> None:
    np.testing.assert_allclose(ad.grad(ad.grad(ad.grad(pnp.sin)))(0.5), -np.cos(0.5), rtol=1e-6)

    # d/dx [x * d/dy (x + y)] = d/dx [x] = 1: the inner derivative must not see x's perturbation.
    def outer(x: Any) -> Any:
        return x * ad.grad(lambda y: x + y)(np.float32(1.0))

    np.testing.assert_allclose(ad.grad(outer)(np.float32(3.0)), 1.0)


def test_grad_under_make_jaxpr_and_of_staged_values() -> None:
    closed = pc.make_jaxpr(ad.grad(poly))(X3)
    pc.check_jaxpr(closed)
    np.testing.assert_allclose(pc.eval_jaxpr(closed.jaxpr, closed.consts, X3)[0], poly_grad(X3), rtol=1e-6)


def test_tracer_leak_is_reported() -> None:
    box: list[Any] = []

    def f(x: Any) -> Any:
        box.append(x)
        return x * 2

    ad.grad(f)(np.float32(1.0))
    with pytest.raises(pc.TracerLeakError, match="after that transformation ended"):
        box[0] + 1


# ---------------------------------------------------------------------------
# linear_transpose


def test_linear_transpose() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = lambda x, y: (a @ x + 2.0 * y, x.sum())  # noqa: E731
    f_t = ad.linear_transpose(f, np.zeros(3, np.float32), pc.ShapeDtypeStruct((2,), np.float32))
    ct = (np.array([1.0, -1.0], np.float32), np.float32(0.5))
    cx, cy = f_t(ct)
    np.testing.assert_allclose(cx, a.T @ ct[0] + 0.5, rtol=1e-6)
    np.testing.assert_allclose(cy, 2 * ct[0], rtol=1e-6)


def test_linear_transpose_errors() -> None:
    with pytest.raises(TypeError, match=r"linear_transpose only supports floating or complex inputs and outputs, but got \(int32\)"):
        ad.linear_transpose(lambda x: x * 2, np.int32(1))
    f_t = ad.linear_transpose(lambda x: x * x, np.float32(1.0))
    with pytest.raises(ad.NonlinearError, match="cannot transpose mul of two values that both depend on the linear inputs"):
        f_t(np.float32(1.0))
    f_t = ad.linear_transpose(lambda x: pnp.exp(x), np.float32(1.0))
    with pytest.raises(TypeError, match="cannot transpose exp"):
        f_t(np.float32(1.0))
    f_t = ad.linear_transpose(lambda x: x * 2, np.float32(1.0))
    with pytest.raises(TypeError, match="linear_transpose: the cotangent has the structure"):
        f_t((np.float32(1.0),))


# ---------------------------------------------------------------------------
# Jacobians


def _f_jac(x: Any, y: Any) -> Any:
    return {"u": pnp.sin(x) * y[0], "v": (x * x).sum() * y}


def _jac_expected(x: np.ndarray, y: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    du_dx = np.diag(np.cos(x) * y[0])
    du_dy = np.zeros((x.size, y.size))
    du_dy[:, 0] = np.sin(x)
    dv_dx = np.outer(y, 2 * x)
    dv_dy = np.eye(y.size) * (x * x).sum()
    return {"u": (du_dx, du_dy), "v": (dv_dx, dv_dy)}


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev])
def test_jacobians(jac: Any) -> None:
    x = np.array([0.5, 1.0, -2.0], np.float32)
    y = np.array([2.0, -1.0], np.float32)
    j = jac(_f_jac, argnums=(0, 1))(x, y)
    expected = _jac_expected(x, y)
    for key in ("u", "v"):
        for got, want in zip(j[key], expected[key]):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    j0 = jac(_f_jac)(x, y)
    np.testing.assert_allclose(j0["v"], expected["v"][0], rtol=1e-5)


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev])
def test_jacobian_matrix_shapes_and_aux(jac: Any) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    j, aux = jac(lambda v: (pnp.tanh(v).T, v.sum()), has_aux=True)(x)
    assert j.shape == (3, 2, 2, 3)
    expected = np.zeros((3, 2, 2, 3), np.float32)
    for a in range(2):
        for b in range(3):
            expected[b, a, a, b] = 1 - np.tanh(x[a, b]) ** 2
    np.testing.assert_allclose(j, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(aux, x.sum())


def test_hessian() -> None:
    x = np.array([0.5, -1.0, 2.0])
    h = ad.hessian(lambda v: (v**3).sum() + v[0] * v[1])(x)
    expected = np.diag(6 * x)
    expected[0, 1] = expected[1, 0] = 1
    np.testing.assert_allclose(h, expected, rtol=1e-6)


# ---------------------------------------------------------------------------
# Errors


def test_grad_errors() -> None:
    with pytest.raises(TypeError, match=r"grad: gradient only defined for scalar-output functions; the output had shape \(3,\)"):
        ad.grad(lambda x: x * 2)(X3)
    with pytest.raises(TypeError, match=r"grad requires real- or complex-valued inputs .* but got int32"):
        ad.grad(lambda x: x * 2)(np.int32(1))
    with pytest.raises(TypeError, match=r"grad requires real-valued outputs .* but got int32"):
        ad.grad(lambda x: lax.convert_element_type(x, np.int32))(np.float32(1.0))
    with pytest.raises(TypeError, match=r"grad requires real-valued outputs .* but got complex64"):
        ad.grad(lambda z: z * z)(np.complex64(1.0))
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs with complex dtype, but got float32"):
        ad.grad(lambda z: z * z, holomorphic=True)(np.float32(1.0))
    with pytest.raises(TypeError, match=r"grad: differentiating with respect to argnums=2 requires at least 3 positional arguments"):
        ad.grad(lambda x, y: x, argnums=2)(np.float32(1.0), np.float32(1.0))
    with pytest.raises(TypeError, match=r"grad with has_aux=True requires the function to return a pair \(output, aux\)"):
        ad.grad(lambda x: x, has_aux=True)(np.float32(1.0))
    with pytest.raises(TypeError, match="grad: expected a callable function, got a value of type int"):
        ad.grad(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="grad: the function's output has a leaf 0 of type str"):
        ad.grad(lambda x: "nope")(np.float32(1.0))


def test_jvp_errors() -> None:
    with pytest.raises(TypeError, match="jvp: primal and tangent arguments must be tuples or lists; found float and tuple"):
        ad.jvp(pnp.sin, 1.0, (1.0,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="jvp: primal and tangent arguments must have the same tree structure"):
        ad.jvp(lambda x, y: x, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match=r"jvp: tangent leaf 0 has shape \(2,\), but its primal has shape \(3,\)"):
        ad.jvp(pnp.sin, (X3,), (np.ones(2, np.float32),))
    expected = r"jvp: tangent leaf 0 has dtype float64, but its primal has type f32\[3\] so the tangent must have dtype float32"
    with pytest.raises(TypeError, match=expected), pc.enable_x64():
        ad.jvp(pnp.sin, (X3,), (np.ones(3, np.float64),))
    with pytest.raises(TypeError, match=r"tangent must have dtype float0 .integer and boolean values have float0 tangents"):
        ad.jvp(lambda n: n, (np.int32(1),), (np.int32(1),))


def test_vjp_pullback_errors() -> None:
    _, pullback = ad.vjp(lambda x: (x, x * 2), X3)
    with pytest.raises(TypeError, match="vjp: the cotangent given to the pullback has the structure"):
        pullback(X3)
    with pytest.raises(ValueError, match=r"vjp pullback: cotangent leaf 1 has shape \(2,\), but its primal has shape \(3,\)"):
        pullback((X3, np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="vjp pullback: cotangent leaf 0 has dtype int32"):
        pullback((np.ones(3, np.int32), X3))


def test_jacobian_errors() -> None:
    with pytest.raises(TypeError, match=r"jacfwd requires real-valued inputs .* but got int32"):
        ad.jacfwd(lambda x: x * 2)(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match=r"jacrev requires real-valued outputs .* but got int32"):
        ad.jacrev(lambda x: lax.convert_element_type(x, np.int32))(X3)


# ---------------------------------------------------------------------------
# Tangent types and symbolic zeros


@pytest.mark.parametrize(
    "value,expected",
    [
        (np.float32(1.0), "float32"),
        (np.ones((2, 3), np.float16), "float16"),
        (np.complex64(1j), "complex64"),
        (np.int32(1), "float0"),
        (np.ones(3, bool), "float0"),
        (1.0, "float32"),
    ],
)
def test_tangent_types(value: Any, expected: str) -> None:
    z = ad.Zero.from_primal_value(value)
    assert ("float0" if z.aval.dtype == dtypes.float0 else z.aval.dtype.name) == expected
    assert z.aval.shape == np.shape(value)
    assert not z.aval.weak_type
    assert ad.to_tangent_type(pc.get_aval(value)) == z.aval


def test_symbolic_zeros_do_no_work() -> None:
    c = np.array([0.5, 1.5], np.float32)

    def f(x: Any) -> Any:
        return x * 2.0 + pnp.sin(c) * pnp.cos(c)

    closed = pc.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(c, c)
    names = [e.primitive.name for e in closed.eqns]
    # The constant part is computed once for the primal; its zero tangent costs nothing.
    assert names.count("sin") == 1 and names.count("cos") == 1 and "add_any" not in names
