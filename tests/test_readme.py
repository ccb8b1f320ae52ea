"""Every Python block of the README runs, in order, in one namespace."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 6
    namespace: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, str(README), "exec"), namespace)
    text = out.getvalue()
    assert "(4, 2)" in text
    assert "[0.9 0.9 0.9 0.9] True" in text
    assert "[3. 3. 3. 3. 3.]" in text
    assert "[0.0, 3.0, 28.0]" in text
    assert "True" in text.splitlines()[-3]
    assert text.splitlines()[-2].strip() == "0.5"
    assert text.splitlines()[-1].strip() == "1.0"
