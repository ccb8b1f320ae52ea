"""A library's test files, from its sdist on the package index.

The wheels ship no tests; the sdists of optax, chex, dm-haiku and flax do.  The
sdist is fetched with ``pip download --no-binary <dist> --no-deps`` (only the
package index is needed, no GitHub) and unpacked; its tests run from its root,
so the library they import is the sdist's own source, the same version.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

from tools.ecosystem.libraries import Library


def fetch_sdist(lib: Library, into: Path, python: str = sys.executable) -> Path:
    """Download and unpack ``lib``'s sdist under ``into``; return the unpacked root."""
    into.mkdir(parents=True, exist_ok=True)
    stem = f"{lib.dist.replace('-', '_')}-{lib.version}"
    root = into / stem
    if root.is_dir():
        return root
    archive = into / f"{stem}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [python, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", lib.dist,
             "--dest", str(into), lib.pin],
            check=True,
        )
    if not archive.exists():
        raise FileNotFoundError(f"pip download {lib.pin} gave no {archive.name} in {into}")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    _own_pytest_config(root)
    return root


def fetch_tests(lib: Library, into: Path) -> Path:
    """The root holding ``lib``'s tests: its unpacked sdist, or for a library
    whose sdist ships none (``lib.repo``), a shallow clone of its release tag
    ``v<version>`` (needs git and the repository's host)."""
    if not lib.repo:
        return fetch_sdist(lib, into)
    into.mkdir(parents=True, exist_ok=True)
    root = into / f"{lib.dist}-v{lib.version}-checkout"
    if not root.is_dir():
        subprocess.run(
            ["git", "clone", "--quiet", "--depth", "1", "--branch", f"v{lib.version}", lib.repo, str(root)],
            check=True,
        )
        _own_pytest_config(root)
    return root


def _own_pytest_config(root: Path) -> None:
    """Give ``root`` a pytest config if it has none, so that pytest takes ``root``
    as its rootdir instead of a config found further up (plait's own)."""
    pyproject = root / "pyproject.toml"
    if pyproject.exists() and "[tool.pytest.ini_options]" in pyproject.read_text(encoding="utf-8"):
        return
    setup_cfg = root / "setup.cfg"
    if setup_cfg.exists() and "[tool:pytest]" in setup_cfg.read_text(encoding="utf-8"):
        return
    if not (root / "pytest.ini").exists():
        (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def find_test_paths(lib: Library, root: Path, ci: bool) -> list[str]:
    """The test paths of ``lib`` that exist under ``root`` (the CI subset if ``ci``)."""
    wanted = lib.ci if ci else lib.tests
    present = [p for p in wanted if (root / p).exists()]
    if not present:
        raise FileNotFoundError(
            f"{lib.name}: none of {list(wanted)} under {root} ({lib.note or 'tests missing'})")
    return present
