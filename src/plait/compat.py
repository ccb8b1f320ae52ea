"""Run an unmodified JAX program on plait.

``python -m plait.compat PROGRAM.py [args...]`` (or ``python -m plait.compat
-m package.module [args...]``) runs the program with an import hook that
answers ``jax`` and every ``jax.*`` module with plait's module of the same
path: ``jax.numpy`` is ``plait.numpy``, ``jax.scipy.stats`` is
``plait.scipy.stats``, and so on.  The hook never falls back to JAX, even when
JAX is installed: a module or a name that plait does not have fails with an
``ImportError`` / ``AttributeError`` that names it and says that plait does not
have it, so a run either is plait's or says precisely why it is not.

A few private paths that real libraries import (``jax._src.flatten_util``,
``jax._src.typing``, ``jax._src.traceback_util``, ...) are answered from one
explicit table, :data:`plait._jax_private.PRIVATE`, that names the plait
object each stands for; every other ``jax._src`` path fails as above.

Under the hook ``jax.__version__`` is :data:`JAX_VERSION` (``"0.10.2"``), the
JAX version whose semantics plait implements, and ``jax.__version_info__`` is
its tuple (and so are ``jax.version.__version__`` / ``__version_info__``), so
that libraries comparing versions take the code paths of that JAX;
``plait.__version__`` stays plait's own.

``install()`` puts the same hook in the current process (for notebooks and
test harnesses); ``uninstall()`` removes it and forgets the aliases it made.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import re
import runpy
import sys
import types
from collections.abc import Sequence
from typing import Any

from plait import _jax_private
from plait._not_supported import NOT_SUPPORTED_MODULES

_PREFIX = "jax"
_TARGET = "plait"
_PRIVATE_PREFIX = "jax._src"

#: The JAX version whose semantics plait implements, presented as ``jax.__version__``.
JAX_VERSION = "0.10.2"
JAX_VERSION_INFO = (0, 10, 2)


def _target_name(alias: str) -> str:
    """``jax.numpy.linalg`` -> ``plait.numpy.linalg``."""
    return _TARGET + alias[len(_PREFIX) :]


def _missing(alias: str, name: str) -> str:
    return (
        f"plait does not have {alias}.{name} (JAX's name, looked up in {_target_name(alias)}); "
        "plait.compat never falls back to JAX"
    )


_ABSENT = object()


class _JaxAlias(types.ModuleType):
    """A module named ``jax...`` whose names are those of a plait module.

    Plain values are copied into the alias; sub-modules are answered with their
    own aliases, so ``jax.numpy`` reached as an attribute of ``jax`` is the same
    object as ``import jax.numpy``.
    """

    def __init__(self, alias: str, real: types.ModuleType) -> None:
        super().__init__(alias, real.__doc__)
        for key, value in vars(real).items():
            if key in ("__name__", "__spec__", "__loader__", "__package__", "__path__", "__getattr__", "__dir__"):
                continue
            if not isinstance(value, types.ModuleType):
                self.__dict__[key] = value
        self.__dict__["_plait_module"] = real
        if alias == _PREFIX:
            self.__dict__["__version__"] = JAX_VERSION
            self.__dict__["__version_info__"] = JAX_VERSION_INFO

    def __getattr__(self, name: str) -> Any:
        real = self.__dict__["_plait_module"]
        if name.startswith("__"):
            raise AttributeError(name)
        if self.__name__ == _PREFIX and name in ("_src", "version"):
            value_mod = importlib.import_module(f"{_PREFIX}.{name}")
            self.__dict__[name] = value_mod
            return value_mod
        try:
            found = getattr(real, name)
        except AttributeError:
            found = _ABSENT
        except NotImplementedError as err:  # a "not supported" name: still an AttributeError, so hasattr is False
            raise AttributeError(f"{_missing(self.__name__, name)}: {err}", name=name, obj=self) from err
        if isinstance(found, types.ModuleType) or _has_submodule(real, name):
            value: Any = importlib.import_module(f"{self.__name__}.{name}")
        elif found is not _ABSENT:
            value = found
        else:
            raise AttributeError(_missing(self.__name__, name), name=name, obj=self)
        self.__dict__[name] = value
        return value

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self.__dict__["_plait_module"])) | set(self.__dict__))


def _has_submodule(real: types.ModuleType, name: str) -> bool:
    return f"{real.__name__}.{name}" in sys.modules


def _missing_private(fullname: str) -> str:
    return (
        f"plait does not have {fullname}, a private JAX path that plait.compat does not map "
        "(its table, plait._jax_private.PRIVATE, names the private paths it answers); "
        "plait.compat never falls back to JAX"
    )


class _PrivateAlias(types.ModuleType):
    """A private ``jax._src...`` module: its names are the entries of
    :data:`plait._jax_private.PRIVATE` under its path, looked up on every read."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        path = f"{self.__name__}.{name}"
        if path in _jax_private.private_modules():
            return importlib.import_module(path)
        try:
            return _jax_private.lookup(path)
        except KeyError:
            raise AttributeError(_missing_private(path), name=name, obj=self) from None

    def __dir__(self) -> list[str]:
        prefix = self.__name__ + "."
        names = {k[len(prefix):].split(".")[0] for k in _jax_private.PRIVATE if k.startswith(prefix)}
        return sorted(names | set(self.__dict__))


class _VersionLoader(importlib.abc.Loader):
    """``jax.version``: the version of the JAX whose semantics plait implements."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name, "The JAX version plait presents under plait.compat.")
        module.__version__ = JAX_VERSION  # type: ignore[attr-defined]
        module.__version_info__ = JAX_VERSION_INFO  # type: ignore[attr-defined]
        module._version = JAX_VERSION  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _PrivateLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _PrivateAlias(spec.name, f"plait's answers to JAX's private module {spec.name}")

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, real: types.ModuleType) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _JaxAlias(spec.name, self.real)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class JaxToPlaitFinder(importlib.abc.MetaPathFinder):
    """Answers ``import jax[...]`` with plait's module of the same path."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        if fullname == f"{_PREFIX}.version":
            return importlib.machinery.ModuleSpec(fullname, _VersionLoader())
        if fullname == _PRIVATE_PREFIX or fullname.startswith(_PRIVATE_PREFIX + "."):
            if fullname not in _jax_private.private_modules():
                raise ModuleNotFoundError(_missing_private(fullname), name=fullname)
            spec = importlib.machinery.ModuleSpec(fullname, _PrivateLoader(), is_package=True)
            spec.submodule_search_locations = []
            return spec
        if fullname in NOT_SUPPORTED_MODULES:
            raise ModuleNotFoundError(
                f"plait does not have the module {fullname}: not supported: {NOT_SUPPORTED_MODULES[fullname]}; "
                "plait.compat never falls back to JAX",
                name=fullname,
            )
        target_name = _target_name(fullname)
        try:
            real = importlib.import_module(target_name)
        except ModuleNotFoundError as err:
            if err.name is not None and not target_name.startswith(err.name) and err.name != target_name:
                raise  # a dependency of plait's module is missing: say that, not "no such module"
            raise ModuleNotFoundError(
                f"plait does not have the module {fullname} (looked for {target_name}); "
                "plait.compat never falls back to JAX",
                name=fullname,
            ) from None
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(real), is_package=True)
        spec.submodule_search_locations = []
        return spec


_FINDER = JaxToPlaitFinder()


def install() -> None:
    """Make ``import jax`` (and ``jax.*``) import plait in this process.

    Modules named ``jax...`` that were imported before are dropped from
    ``sys.modules`` first, so every later import sees plait.
    """
    if _FINDER not in sys.meta_path:
        for name in [n for n in sys.modules if n == _PREFIX or n.startswith(_PREFIX + ".")]:
            del sys.modules[name]
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Remove the hook and the ``jax`` aliases it made."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if isinstance(module, (_JaxAlias, _PrivateAlias)) or isinstance(getattr(spec, "loader", None), _VersionLoader):
            del sys.modules[name]


_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '(jax(?:\.[\w.]+)?)'")


def _explain(err: ImportError) -> ImportError | None:
    """Python words a failed ``from jax.x import y`` generically; say it is plait's gap."""
    match = _CANNOT_IMPORT.match(str(err))
    if match is None:
        return None
    name, alias = match.groups()
    if alias == _PRIVATE_PREFIX or alias.startswith(_PRIVATE_PREFIX + "."):
        return ImportError(_missing_private(f"{alias}.{name}"), name=alias)
    if f"{alias}.{name}" in NOT_SUPPORTED_MODULES:
        return ImportError(
            f"plait does not have the module {alias}.{name}: not supported: {NOT_SUPPORTED_MODULES[f'{alias}.{name}']}; "
            "plait.compat never falls back to JAX",
            name=alias,
        )
    return ImportError(_missing(alias, name), name=alias)


_USAGE = "usage: python -m plait.compat PROGRAM.py [args...]  |  python -m plait.compat -m MODULE [args...]"


def main(argv: Sequence[str] | None = None) -> int:
    """Run a JAX program (a path, or ``-m module``) on plait; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    install()
    try:
        if args[0] == "-m":
            if len(args) < 2:
                print(_USAGE, file=sys.stderr)
                return 2
            sys.argv = [args[1], *args[2:]]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(args)
            runpy.run_path(args[0], run_name="__main__")
    except ImportError as err:
        explained = _explain(err)
        if explained is None:
            raise
        raise explained from err
    return 0


if __name__ == "__main__":
    sys.exit(main())
