"""``python -m plait.demo`` runs and the numbers it computes say what it claims,
and the progress bar it uses behaves on terminals and elsewhere."""

from __future__ import annotations

import io
import itertools
import re
import subprocess
import sys
import time

import pytest

from plait._progress import Progress, progress

NUMBER = r"([0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?)"


@pytest.fixture(scope="module")
def demo() -> dict[str, str]:
    """The demo's output, split into its header (key "0") and numbered sections."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "plait.demo"], capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    parts = re.split(r"^(\d)\. ", proc.stdout, flags=re.M)
    sections = {"0": parts[0], "all": proc.stdout, "wall": str(wall)}
    sections.update(zip(parts[1::2], parts[2::2]))
    return sections


def grab(pattern: str, text: str) -> list[float]:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not found in:\n{text}"
    return [float(g) for g in m.groups()]


def losses(text: str) -> list[float]:
    m = re.search(r"^  loss +(.*?)  \(steps", text, flags=re.M)
    assert m, text
    return [float(v) for v in m.group(1).split(" -> ")]


def test_all_four_sections_run_on_the_cpu(demo: dict[str, str]) -> None:
    assert set("1234") <= set(demo)
    assert "demo on cpu" in demo["0"]
    total = grab(rf"done in {NUMBER} s", demo["4"])[0]
    # The goal is well under a minute on two cores; leave room for a loaded machine.
    assert total < 120 and float(demo["wall"]) < 150


def test_progress_bars_degrade_without_a_terminal(demo: dict[str, str]) -> None:
    assert "\r" not in demo["all"]
    assert re.search(r"^  mlp +\[#{24}\]  300/300  loss ", demo["1"], flags=re.M)
    assert re.search(r"^  revnet +\[#{24}\]  200/200  loss ", demo["2"], flags=re.M)


def test_mlp_learns_with_donated_parameters(demo: dict[str, str]) -> None:
    text = demo["1"]
    curve = losses(text)
    assert curve[-1] < 0.2 * curve[0]
    assert all(b < a for a, b in itertools.pairwise(curve)), curve
    assert grab(rf"accuracy +{NUMBER}%", text)[0] > 90.0
    assert "deleted=True; reading one raises DeletedArrayError" in text
    assert "traced once for 300 steps" in text


def test_revnet_gradients_training_and_memory(demo: dict[str, str]) -> None:
    text = demo["2"]
    diff, largest = grab(rf"max \|invertible - ordinary\| = {NUMBER} .*largest \|gradient\| {NUMBER}", text)
    assert diff <= 1e-5 * max(1.0, largest)
    curve = losses(text)
    assert curve[-1] < 0.2 * curve[0]
    assert grab(rf"accuracy +{NUMBER}%", text)[0] > 90.0

    rows = [tuple(map(float, r)) for r in re.findall(r"^ +(\d+) +([\d.]+) KiB +([\d.]+) KiB +([\d.]+) KiB$", text, re.M)]
    assert [r[0] for r in rows] == [4, 16, 64]
    ordinary, inverted = [r[2] for r in rows], [r[3] for r in rows]
    assert ordinary[0] < ordinary[1] < ordinary[2] and ordinary[2] > 4 * ordinary[0]  # grows with depth
    assert max(inverted) <= 1.1 * min(inverted)  # flat
    assert all(i < o for i, o in zip(inverted, ordinary))
    growth = grab(rf"ordinary x{NUMBER}, invertible x{NUMBER}", text)
    assert growth == pytest.approx([ordinary[2] / ordinary[0], inverted[2] / inverted[0]], abs=0.01)


def test_pile_matches_each_sequence(demo: dict[str, str]) -> None:
    text = demo["3"]
    assert grab(rf"max \|pile - per-sequence\| = {NUMBER} over 8 sequences", text)[0] < 1e-4
    assert "lengths [ 5 17  3 12  9  1 24  8]" in text
    assert grab(rf"without a pile is off by {NUMBER}", text)[0] > 1e-2
    pile_time, compiles, loop_time = grab(rf"pile: one compile, {NUMBER} s; per sequence: (\d+) compiles, {NUMBER} s", text)
    assert compiles == 8 and pile_time > 0 and loop_time > 0


def test_masked_rnn_compiles_once(demo: dict[str, str]) -> None:
    text = demo["4"]
    n_lengths = grab(r"(\d+) lengths from 1 to 64", text)[0]
    assert re.search(r"masked +traced once,", text)
    masked_time = grab(rf"masked +traced once, {NUMBER} s", text)[0]
    plain_traces, plain_time = grab(rf"plain jit +traced (\d+) times, {NUMBER} s", text)
    assert plain_traces == n_lengths == 22
    assert masked_time < plain_time  # one compilation against 22
    assert grab(rf"max \|masked - plain\| = {NUMBER}", text)[0] < 1e-5


# ---------------------------------------------------------------------------
# The progress bar


def test_progress_without_a_terminal_writes_one_final_line() -> None:
    out = io.StringIO()  # not a TTY
    with Progress(10, "train", stream=out) as bar:
        for i in range(10):
            bar.update(note=f"loss {1.0 / (i + 1):.3f}")
        assert out.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "\r" not in out.getvalue()
    assert re.match(r"train +\[#{24}\]  10/10  loss 0\.100  [0-9.]+s$", lines[0])


def test_progress_on_a_terminal_redraws_in_place() -> None:
    out = io.StringIO()
    bar = Progress(4, "t", stream=out, interactive=True, min_interval=0.0, width=4)
    for _ in range(2):
        bar.update()
    assert out.getvalue().count("\r") == 3 and "\n" not in out.getvalue()  # the empty bar, then two redraws
    assert "[##..]  2/4" in out.getvalue().split("\r")[-1]
    bar.close()
    bar.close()  # closing twice writes nothing more
    assert out.getvalue().endswith("\n") and out.getvalue().count("\n") == 1


def test_progress_iterates_and_closes_early() -> None:
    out = io.StringIO()
    seen = []
    for x in progress([3, 1, 4, 1, 5], "it", stream=out):
        seen.append(x)
        if len(seen) == 3:
            break
    assert seen == [3, 1, 4]
    # An item counts once the loop asks for the next one: the third was not finished.
    assert re.match(r"it +\[#{10}\.{14}\]  2/5  [0-9.]+s\n$", out.getvalue())


def test_progress_errors() -> None:
    with pytest.raises(TypeError, match="progress: give total= for an iterable without a length"):
        list(progress(iter([1, 2]), stream=io.StringIO()))
    with pytest.raises(ValueError, match="Progress: total must be non-negative, got -1"):
        Progress(-1)
