"""Explicit sharding (JAX 0.10's sharding in types) on 8 CPU devices (run by
``test_explicit_sharding.py`` with ``PLAIT_NUM_CPU_DEVICES=8``).

Each rule is checked by the type of its result (``typeof(y).sharding.spec``),
by the layout of the value ``jit`` returns, and by its numbers, which must be
those of the same computation on one device (NumPy arrays, no mesh)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax
from plait.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    ShardingTypeError,
    auto_axes,
    explicit_axes,
    get_abstract_mesh,
    reshard,
    use_abstract_mesh,
)
from plait.sharding import PartitionSpec as P

RNG = np.random.default_rng(0)
A = RNG.standard_normal((8, 4)).astype(np.float32)
B = RNG.standard_normal((8, 4)).astype(np.float32)
W = RNG.standard_normal((4, 6)).astype(np.float32)
E = (AxisType.Explicit, AxisType.Explicit)


@pytest.fixture(scope="module")
def mesh() -> Mesh:
    assert plait.device_count() == 8
    return plait.make_mesh((2, 4), ("x", "y"), axis_types=E)


def put(mesh: Mesh, x: np.ndarray, spec: P) -> Any:
    return plait.device_put(x, NamedSharding(mesh, spec))


def spec_of(x: Any) -> P:
    return plait.typeof(x).sharding.spec


def test_axis_types_meshes_and_abstract_meshes(mesh: Mesh) -> None:
    assert mesh.axis_types == E and mesh.explicit_axes == ("x", "y")
    assert plait.make_mesh((8,), ("b",)).axis_types == (AxisType.Auto,)
    assert Mesh(np.array(plait.devices()[:2]), ("a",)).axis_types == (AxisType.Auto,)
    am = mesh.abstract_mesh
    assert am == AbstractMesh((2, 4), ("x", "y"), E) and am.shape == {"x": 2, "y": 4}
    assert repr(am) == "AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))"
    assert repr(get_abstract_mesh()) == "AbstractMesh((), axis_types=())" and get_abstract_mesh().empty
    with plait.set_mesh(mesh):
        assert get_abstract_mesh() == am
        with use_abstract_mesh(am.update_axis_types({"x": AxisType.Auto})):
            assert get_abstract_mesh().axis_types == (AxisType.Auto, AxisType.Explicit)
        assert get_abstract_mesh() == am
    assert get_abstract_mesh().empty
    with pytest.raises(ValueError, match=r"axis_types must be one AxisType per axis \(2 for axes"):
        plait.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 3)


def test_values_carry_their_sharding_in_types(mesh: Mesh) -> None:
    x = put(mesh, A, P("x", "y"))
    t = plait.typeof(x)
    assert t.sharding.spec == P("x", "y") and t.sharding.mesh == mesh.abstract_mesh
    assert t.str_short() == "f32[8@x,4@y]"
    assert spec_of(np.ones(3)) == P(None) and plait.typeof(np.ones(3)).sharding.mesh.empty
    # Auto axes are not part of types
    auto = plait.make_mesh((8,), ("b",))
    assert spec_of(plait.device_put(A, NamedSharding(auto, P("b")))) == P(None, None)


def _trim(spec: P) -> tuple[Any, ...]:
    entries = list(spec)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def _jit_case(mesh: Mesh, f: Any, *args: Any) -> Any:
    """``f`` under jit on the mesh: the result's type, layout and numbers (equal
    to ``f`` on one device)."""
    host = [np.asarray(a) for a in args]
    with plait.set_mesh(mesh):
        seen: list[Any] = []

        def traced(*xs: Any) -> Any:
            out = f(*xs)
            seen.append(plait.typeof(out))
            return out

        y = plait.jit(traced)(*args)
    assert plait.typeof(y).sharding.spec == seen[0].sharding.spec
    assert _trim(y.sharding.spec) == _trim(seen[0].sharding.spec)
    np.testing.assert_allclose(np.asarray(y), np.asarray(f(*host)), rtol=1e-5, atol=1e-5)
    return seen[0].sharding.spec


def test_elementwise(mesh: Mesh) -> None:
    x, xn, ny = put(mesh, A, P("x", "y")), put(mesh, B, P("x", None)), put(mesh, B, P(None, "y"))
    assert _jit_case(mesh, lambda a, b: a + b, x, xn) == P("x", "y")
    assert _jit_case(mesh, lambda a, b: a * b, xn, ny) == P("x", "y")
    assert _jit_case(mesh, lambda a: pnp.tanh(a) * 2.0 + 1, xn) == P("x", None)
    yn = put(mesh, B, P("y", None))
    with plait.set_mesh(mesh), pytest.raises(ShardingTypeError, match=r"add got incompatible shardings for broadcasting: \('x', 'y'\), \('y', None\)"):
        plait.jit(lambda a, b: a + b)(x, yn)
    nx = put(mesh, B, P(None, "x"))
    with plait.set_mesh(mesh), pytest.raises(ShardingTypeError, match=r"produces an illegally sharded result: f32\[8@x,4@x\]"):
        plait.jit(lambda a, b: a + b)(xn, nx)


def test_reductions_transpose_broadcast(mesh: Mesh) -> None:
    x = put(mesh, A, P("x", "y"))
    assert _jit_case(mesh, lambda a: a.sum(0), x) == P("y")
    assert _jit_case(mesh, lambda a: a.max(1), x) == P("x")
    assert _jit_case(mesh, lambda a: pnp.argmax(a, axis=1), x) == P("x")
    assert _jit_case(mesh, lambda a: a.sum(), x) == P()
    assert _jit_case(mesh, lambda a: a.T, x) == P("y", "x")
    assert _jit_case(mesh, lambda a: pnp.broadcast_to(a, (3, 8, 4)), x) == P(None, "x", "y")
    assert _jit_case(mesh, lambda a: a[None], x) == P(None, "x", "y")
    assert _jit_case(mesh, lambda a: lax.slice(a, (2, 0), (6, 4)), x) == P("x", "y")
    assert _jit_case(mesh, lambda a: pnp.concatenate([a, a], 0), x) == P("x", "y")
    assert _jit_case(mesh, lambda a: pnp.cumsum(a, 1), put(mesh, A, P("x", None))) == P("x", None)
    with plait.set_mesh(mesh), pytest.raises(ShardingTypeError, match=r"Input should be unsharded over the axis being reduced. Got input type=f32\[8@x,4@y\] and axis=0"):
        plait.jit(lambda a: pnp.cumsum(a, 0))(x)


def test_reshape(mesh: Mesh) -> None:
    x, xn = put(mesh, A, P("x", "y")), put(mesh, A, P("x", None))
    assert _jit_case(mesh, lambda a: a.reshape(32), x) == P(("x", "y"))
    assert _jit_case(mesh, lambda a: a.reshape(32), xn) == P("x")
    assert _jit_case(mesh, lambda a: a.reshape(2, 4, 4), xn) == P("x", None, None)
    assert _jit_case(mesh, lambda a: a.reshape(4, 2, 4), xn) == P("x", None, None)
    with plait.set_mesh(mesh), pytest.raises(ShardingTypeError, match=r"This reshape is not supported.*Got operand type: f32\[8@x,4@y\], new sizes: \(8, 2, 2\)"):
        plait.jit(lambda a: a.reshape(8, 2, 2))(x)


def test_dot_general(mesh: Mesh) -> None:
    xn = put(mesh, A, P("x", None))
    w = put(mesh, W, P())
    assert _jit_case(mesh, lambda a, b: a @ b, xn, w) == P("x", None)
    wy = put(mesh, RNG.standard_normal((4, 8)).astype(np.float32), P(None, "y"))
    assert _jit_case(mesh, lambda a, b: a @ b, xn, wy) == P("x", "y")
    bx = put(mesh, RNG.standard_normal((8, 2, 3)).astype(np.float32), P("x"))
    cx = put(mesh, RNG.standard_normal((8, 3, 2)).astype(np.float32), P("x"))
    assert _jit_case(mesh, lambda a, b: pnp.einsum("bij,bjk->bik", a, b), bx, cx) == P("x", None, None)
    with plait.set_mesh(mesh), pytest.raises(ShardingTypeError, match=r"Contracting dimensions are sharded and it is ambiguous how the output should be sharded.*lhs_contracting_spec=\('x',\) and rhs_contracting_spec=\('x',\)"):
        plait.jit(lambda a: a.T @ a)(xn)
    cy = put(mesh, RNG.standard_normal((8, 3, 2)).astype(np.float32), P("y"))
    with plait.set_mesh(mesh), pytest.raises(ShardingTypeError, match=r"dot_general requires lhs batch dimensions and rhs batch dimensions to have the consistent sharding, got \('x',\) and \('y',\)"):
        plait.jit(lambda a, b: pnp.einsum("bij,bjk->bik", a, b))(bx, cy)
    wx = put(mesh, RNG.standard_normal((4, 8)).astype(np.float32), P(None, "x"))
    with plait.set_mesh(mesh), pytest.raises(ShardingTypeError, match=r"illegally sharded result: f32\[8@x,8@x\]"):
        plait.jit(lambda a, b: a @ b)(xn, wx)


def test_out_sharding_resolves_a_split_contraction(mesh: Mesh) -> None:
    xn = put(mesh, A, P("x", None))
    with plait.set_mesh(mesh):
        g = plait.jit(lambda a: pnp.matmul(a.T, a, out_sharding=P()))(xn)
        h = plait.jit(lambda a: lax.dot_general(a, a, (((0,), (0,)), ((), ())), out_sharding=P("y")))(xn)
        d = pnp.dot(xn.T, xn, out_sharding=P(None, "y"))
    assert spec_of(g) == P(None, None) and g.sharding.is_fully_replicated
    assert spec_of(h) == P("y", None) and _trim(h.sharding.spec) == ("y",) and spec_of(d) == P(None, "y")
    for r in (g, h, d):
        np.testing.assert_allclose(np.asarray(r), A.T @ A, rtol=1e-5, atol=1e-5)


def test_eager_operations_are_typed_and_checked(mesh: Mesh) -> None:
    x = put(mesh, A, P("x", "y"))
    assert spec_of(x * 2) == P("x", "y") and spec_of(x.sum(0)) == P("y") and spec_of(x.T) == P("y", "x")
    assert spec_of(x.reshape(32)) == P(("x", "y"))
    np.testing.assert_allclose(np.asarray(x.T * 2), A.T * 2)
    with pytest.raises(ShardingTypeError, match=r"add got incompatible shardings for broadcasting"):
        x + put(mesh, B, P("y", None))
    with pytest.raises(ShardingTypeError, match=r"Contracting dimensions are sharded"):
        x @ x.T


def test_with_sharding_constraint_under_explicit_axes(mesh: Mesh) -> None:
    x = put(mesh, A, P("x", None))
    with pytest.raises(ValueError, match=r"can only refer to Auto axes of the mesh. Got spec=P\(None, 'x'\).*reshard"):
        plait.jit(lambda a: lax.with_sharding_constraint(a, NamedSharding(mesh, P(None, "x"))))(x)
    with plait.set_mesh(mesh):
        with pytest.raises(AssertionError, match=r"acts as an assert when all axes of mesh are of type `Explicit`"):
            plait.jit(lambda a: lax.with_sharding_constraint(a, P(None, "x")))(x)
        same = plait.jit(lambda a: lax.with_sharding_constraint(a, P("x")))(x)
    assert spec_of(same) == P("x", None)


def test_grad_of_a_data_parallel_loss(mesh: Mesh) -> None:
    # The cotangent of replicated weights contracts the split batch: summed over devices, replicated.
    xn = put(mesh, A, P("x", None))
    w = put(mesh, W, P())

    def loss(w: Any, a: Any) -> Any:
        return pnp.mean(pnp.tanh(a @ w) ** 2)

    with plait.set_mesh(mesh):
        g = plait.jit(plait.grad(loss))(w, xn)
    assert spec_of(g) == P(None, None) and g.sharding.is_fully_replicated
    np.testing.assert_allclose(np.asarray(g), np.asarray(plait.grad(loss)(W, A)), rtol=1e-5, atol=1e-6)


def test_reshard_and_layouts(mesh: Mesh) -> None:
    x = put(mesh, A, P("x", "y"))
    with plait.set_mesh(mesh):
        y = reshard(x, P(None, "x"))
        assert spec_of(y) == P(None, "x") and _trim(y.sharding.spec) == (None, "x")
        z = plait.jit(lambda a: reshard(a * 2, P("y", None)))(x)
    assert spec_of(z) == P("y", None) and _trim(z.sharding.spec) == ("y",)
    np.testing.assert_array_equal(np.asarray(z), A * 2)
    with pytest.raises(ValueError, match=r"reshard: a bare PartitionSpec P\('x',\) needs a context mesh"):
        reshard(A, P("x"))


def test_auto_and_explicit_axes(mesh: Mesh) -> None:
    xn = put(mesh, A, P("x", None))
    seen: list[Any] = []

    def inner(a: Any) -> Any:
        seen.append(get_abstract_mesh().axis_types)
        return a.T @ a  # ambiguous under explicit axes, fine under auto ones

    with plait.set_mesh(mesh):
        out = plait.jit(lambda a: auto_axes(inner, out_sharding=P("x", None))(a))(xn)
    assert seen == [(AxisType.Auto, AxisType.Auto)] and spec_of(out) == P("x", None)
    np.testing.assert_allclose(np.asarray(out), A.T @ A, rtol=1e-5)
    auto = plait.make_mesh((2, 4), ("x", "y"))
    types: list[Any] = []
    with plait.set_mesh(auto):
        f = explicit_axes(lambda a: (types.append(plait.typeof(a).sharding.spec), a * 3)[1], in_sharding=P("x"))
        r = plait.jit(f)(A)
    assert types == [P("x", None)] and _trim(r.sharding.spec) == ("x",)
    np.testing.assert_allclose(np.asarray(r), A * 3)
    with pytest.raises(ValueError, match="auto_axes: there is no context mesh"):
        auto_axes(inner, out_sharding=P())(xn)


def test_mnist_example_runs_on_eight_and_one_device(tmp_path: Path) -> None:
    """JAX's examples/spmd_mnist_classifier_fromscratch.py (explicit axes,
    reshard) through plait.compat, when the mirror of JAX is here: the
    accuracies on 8 devices equal those on 1."""
    repo = Path("/work/.mirror/jax-ml+jax/repo")
    if not repo.exists():
        pytest.skip("no mirror of JAX's repository to take the example from")
    script = subprocess.run(
        ["git", "-C", str(repo), "show", "HEAD:examples/spmd_mnist_classifier_fromscratch.py"],
        capture_output=True, text=True, check=True,
    ).stdout
    (tmp_path / "mnist_spmd.py").write_text(script)
    (tmp_path / "datasets.py").write_text(textwrap.dedent("""
        import numpy as np
        def mnist():
            rng = np.random.RandomState(1234)
            def part(n):
                x = rng.rand(n, 784).astype(np.float32)
                y = np.eye(10, dtype=np.float32)[rng.randint(0, 10, n)]
                return x, y
            a, b = part(256)
            c, d = part(64)
            return a, b, c, d
    """))
    runs = {}
    for n in ("8", "1"):
        env = {**os.environ, "PLAIT_NUM_CPU_DEVICES": n, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
        proc = subprocess.run(
            [sys.executable, "-m", "plait.compat", "mnist_spmd.py"],
            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=240,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert f"Using {n} devices" in proc.stdout
        runs[n] = [line for line in proc.stdout.splitlines() if "accuracy" in line]
    assert len(runs["8"]) == 20 and runs["8"] == runs["1"]
