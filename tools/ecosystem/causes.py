"""A failure's cause: its error line with the incidental parts taken out, so that
the failures of one cause fall into one group."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![A-Za-z_#])-?\d+(\.\d+)?(e[-+]?\d+)?(?!x#)")
_SPACES = re.compile(r"\s+")
_WIDTH = 110


def cause(error: str) -> str:
    """``error`` (``Type: message``) with addresses and numbers as ``#``, cut to one short line."""
    text = _ADDRESS.sub("0x#", error)
    text = _NUMBER.sub("#", text)
    text = _SPACES.sub(" ", text).strip()
    if not text:
        return "(no message)"
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def group(errors: Iterable[str]) -> list[tuple[str, int]]:
    """The causes of ``errors`` with how many each, most frequent first."""
    return Counter(cause(e) for e in errors).most_common()
