"""The libraries measured, pinned, and which of their tests run.

``tests`` are paths inside the library's sdist (globs allowed).  ``extra`` are
packages the tests need beyond the library's own non-JAX dependencies.
``sample`` N runs one test in N (``record``'s stable sample) so that a suite
too long for its 15-minute budget on 2 cores is sampled across all its modules
rather than cut after its first ones.  ``ci`` is the fixed fast subset (``nox -s ecosystem -- --ci``), a few test files
chosen to run in well under a minute each on plait.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Library:
    """One library: its distribution pin, its tests, and what they need."""

    name: str
    dist: str
    version: str
    tests: tuple[str, ...]
    deps: tuple[str, ...]
    ci: tuple[str, ...] = ()
    deselect: tuple[str, ...] = ()
    note: str = ""
    sample: int = 1
    repo: str = ""
    """For a library whose sdist ships no tests: the git repository whose release
    tag ``v<version>`` holds them (cloned by ``sources.fetch_tests``)."""

    @property
    def pin(self) -> str:
        return f"{self.dist}=={self.version}"


# The non-JAX requirements of the six libraries and of their tests.  Installed
# normally; the libraries themselves go in with --no-deps so that JAX never does.
COMMON_DEPS = (
    "absl-py", "typing_extensions", "toolz", "msgpack", "rich", "PyYAML", "treescope", "tabulate",
    "six", "decorator", "cloudpickle", "gast", "dm-tree", "opt_einsum", "scipy", "numpy",
    "jaxtyping", "wadler-lindig", "beartype", "pytest>=8",
)
# Libraries of the JAX ecosystem the six import, installed --no-deps too.
JAX_SIDE = ("jmp==0.0.4", "lineax==0.1.1", "optimistix==0.1.0")

LIBRARIES = {
    lib.name: lib
    for lib in (
        Library("optax", "optax", "0.2.8", ("optax",), ("chex", "flax"),
                ci=("optax/_src/update_test.py", "optax/transforms/_clipping_test.py", "optax/losses/_regression_test.py"),
                note="every test module of the sdist", sample=2),
        Library("chex", "chex", "0.1.92", ("chex",), (),
                ci=("chex/_src/dataclass_test.py",),
                note="every test module of the sdist"),
        Library("haiku", "dm-haiku", "0.0.17", ("haiku/_src",), ("chex", "optax", "flax"),
                ci=("haiku/_src/module_test.py",),
                deselect=("haiku/_src/integration", "haiku/_src/flax", "haiku/_src/jax2tf"),
                note="haiku/_src without integration/ (whole-model tests needing TensorFlow), flax/ and jax2tf",
                sample=2),
        Library("flax.linen", "flax", "0.12.8", ("tests/linen", "tests/core"), (),
                ci=("tests/linen/linen_activation_test.py", "tests/linen/linen_combinators_test.py",
                    "tests/linen/linen_dtypes_test.py"),
                note="tests/linen and tests/core"),
        Library("flax.nnx", "flax", "0.12.8", ("tests/nnx",), ("optax",),
                ci=("tests/nnx/rngs_test.py", "tests/nnx/containers_test.py"),
                note="tests/nnx (one test in 2)", sample=2),
        Library("equinox", "equinox", "0.13.8", ("tests",), ("optax",),
                note="tests/ of the v0.13.8 tag (the sdist ships none; one test in 2)", sample=2,
                repo="https://github.com/patrick-kidger/equinox"),
        Library("diffrax", "diffrax", "0.7.2", ("test",), ("optax", "equinox"),
                note="test/ of the v0.7.2 tag (the sdist ships none; one test in 3)", sample=3,
                repo="https://github.com/patrick-kidger/diffrax"),
    )
}
