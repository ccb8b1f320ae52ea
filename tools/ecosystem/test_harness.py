"""The harness's own checks (``python -m pytest tools/ecosystem``; nox's ecosystem_ci runs them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.ecosystem import run, sources
from tools.ecosystem.causes import cause, group
from tools.ecosystem.libraries import LIBRARIES
from tools.ecosystem.record import in_sample
from tools.ecosystem.report import compare, load, main
from tools.ecosystem.run import pytest_command, run_suite
from tools.ecosystem.sources import find_test_paths


def test_cause_drops_numbers_and_addresses() -> None:
    assert cause("ValueError: shape (3, 4) at 0x7f3a2b") == "ValueError: shape (#, #) at 0x#"
    assert cause("") == "(no message)"
    assert len(cause("E: " + "x" * 500)) == 110


def test_group_counts_one_cause_once() -> None:
    errors = ["TypeError: got 3", "TypeError: got 4", "KeyError: 'a'"]
    assert group(errors) == [("TypeError: got #", 2), ("KeyError: 'a'", 1)]


def _write(path: Path, outcomes: dict[str, tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "outcome": o, "error": e}) + "\n"
                            for k, (o, e) in outcomes.items()))
    return path


def test_compare_counts_only_tests_both_runs_reached(tmp_path: Path) -> None:
    jax = load(_write(tmp_path / "chex-jax.jsonl", {
        "a": ("passed", ""), "b": ("passed", ""), "c": ("failed", "E: x"), "d": ("passed", "")}))
    plait = load(_write(tmp_path / "chex-plait.jsonl", {
        "a": ("passed", ""), "b": ("failed", "TypeError: 2 args"), "c": ("passed", "")}))
    c = compare("chex", jax, plait)
    assert (c.reached, c.jax_passed, c.plait_passed, c.plait_extra) == (3, 2, 1, 1)
    assert c.causes == [("TypeError: # args", 1)]
    assert c.rate == 0.5


def test_report_min_rate_fails_below_it(tmp_path: Path) -> None:
    _write(tmp_path / "chex-jax.jsonl", {"a": ("passed", ""), "b": ("passed", "")})
    _write(tmp_path / "chex-plait.jsonl", {"a": ("passed", ""), "b": ("error", "E: y")})
    out = tmp_path / "table.md"
    assert main([str(tmp_path), "--out", str(out), "--min-rate", "0.95"]) == 1
    assert main([str(tmp_path), "--out", str(out), "--min-rate", "0.5"]) == 0
    assert "| chex | 2 (" in out.read_text() and "50.0%" in out.read_text()


def test_command_runs_pytest_through_plait_compat() -> None:
    cmd = pytest_command(LIBRARIES["haiku"], "plait", "py", ["haiku/_src"])
    assert cmd[:5] == ["py", "-m", "plait.compat", "-m", "pytest"]
    assert "--ignore=haiku/_src/integration" in cmd and cmd[-1] == "haiku/_src"
    assert pytest_command(LIBRARIES["chex"], "jax", "py", ["chex"])[:3] == ["py", "-m", "pytest"]
    with pytest.raises(ValueError, match="backend must be 'plait' or 'jax', got 'torch'"):
        pytest_command(LIBRARIES["chex"], "torch", "py", [])


def test_missing_tests_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="equinox: none of \\['tests'\\]"):
        find_test_paths(LIBRARIES["equinox"], tmp_path, ci=False)


def test_sample_is_stable_and_about_one_in_n() -> None:
    ids = [f"pkg/mod_test.py::T::test_{i}" for i in range(4000)]
    kept = [t for t in ids if in_sample(t, 4)]
    assert kept == [t for t in ids if in_sample(t, 4)]
    assert 800 < len(kept) < 1200
    assert all(in_sample(t, 1) for t in ids)


def test_a_module_plait_cannot_collect_counts_its_tests_as_failed(tmp_path: Path) -> None:
    jax = load(_write(tmp_path / "eqx-jax.jsonl", {
        "t/a.py::x": ("passed", ""), "t/a.py::y": ("passed", ""), "t/b.py::z": ("passed", "")}))
    plait = load(_write(tmp_path / "eqx-plait.jsonl", {
        "t/a.py": ("error", "collection: E   ImportError: no jax.lib"), "t/b.py::z": ("passed", "")}))
    c = compare("equinox", jax, plait)
    assert (c.reached, c.jax_passed, c.plait_passed) == (3, 3, 1)
    assert c.causes == [("collection: E ImportError: no jax.lib", 2)]


def test_only_paths_must_exist_under_the_tests_root(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"diffrax: no \['test/test_nope.py'\] under"):
        run_suite(LIBRARIES["diffrax"], "plait", "py", tmp_path / "out.jsonl", tmp_path, 1.0, 1.0, False,
                  tests_from=tmp_path, only=["test/test_nope.py"])


def test_a_library_without_tests_in_its_sdist_clones_its_tag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], check: bool) -> None:
        calls.append(cmd)
        Path(cmd[-1], "tests").mkdir(parents=True)

    monkeypatch.setattr(sources.subprocess, "run", fake_run)
    root = sources.fetch_tests(LIBRARIES["equinox"], tmp_path)
    assert calls == [["git", "clone", "--quiet", "--depth", "1", "--branch", "v0.13.8",
                      "https://github.com/patrick-kidger/equinox", str(root)]]
    assert (root / "tests").is_dir() and (root / "pytest.ini").exists()
    assert sources.fetch_tests(LIBRARIES["equinox"], tmp_path) == root  # cloned once
    assert len(calls) == 1


def test_tests_that_cannot_be_fetched_are_recorded_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_git(lib: object, into: Path) -> Path:
        raise FileNotFoundError(2, "No such file or directory", "git")

    monkeypatch.setattr(run, "fetch_tests", no_git)
    out = tmp_path / "r.jsonl"
    status = run.run_suite(LIBRARIES["diffrax"], "plait", "python", out, tmp_path, 1.0, 1.0, False)
    assert status == run.NOT_RUN
    rec = json.loads(out.read_text())
    assert rec["id"] == "<run>" and rec["outcome"] == "not-run" and "tests not fetched" in rec["error"]
