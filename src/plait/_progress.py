"""A small progress bar for training loops, with no dependencies.

On a terminal the bar redraws itself in place (``\\r``) at most every
``min_interval`` seconds::

    mlp  [##########..........]  150/300  loss 0.0412  0.6s

When the stream is not a terminal (a pipe, a file, a test capturing output)
nothing is redrawn: one line is written when the loop finishes, so logs stay
readable.  Use it as an iterator wrapper or as a context manager::

    for step in progress(range(300), desc="mlp"):
        ...

    with Progress(300, desc="mlp") as bar:
        for step in range(300):
            ...
            bar.update(note=f"loss {loss:.4f}")
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import TextIO, TypeVar

__all__ = ["Progress", "progress"]

T = TypeVar("T")


def _is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


def _format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


class Progress:
    """A progress bar over ``total`` steps, written to ``stream`` (stdout by default).

    ``update(n, note=...)`` advances it by ``n`` steps; ``note`` (e.g. the
    current loss) is shown after the count.  ``close()`` finishes the line;
    it is called on leaving a ``with`` block.  ``interactive`` defaults to
    whether ``stream`` is a terminal (and ``TERM`` is not ``dumb``): when it
    is false only the final line is written.
    """

    def __init__(
        self,
        total: int,
        desc: str = "",
        *,
        width: int = 24,
        stream: TextIO | None = None,
        interactive: bool | None = None,
        min_interval: float = 0.05,
    ) -> None:
        if total < 0:
            raise ValueError(f"Progress: total must be non-negative, got {total}")
        self.total = total
        self.desc = desc
        self.width = max(1, width)
        self.stream = sys.stdout if stream is None else stream
        if interactive is None:
            interactive = _is_tty(self.stream) and os.environ.get("TERM") != "dumb"
        self.interactive = interactive
        self.min_interval = min_interval
        self.count = 0
        self.note = ""
        self.start = time.perf_counter()
        self._last_draw = -float("inf")
        self._last_len = 0
        self._closed = False
        if self.interactive:
            self._draw()

    def line(self) -> str:
        """The bar as one line of text (no newline)."""
        frac = 1.0 if self.total == 0 else min(1.0, self.count / self.total)
        filled = round(frac * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        digits = len(str(self.total))
        parts = [f"{self.desc:<6}" if self.desc else "", f"[{bar}]", f"{self.count:>{digits}}/{self.total}"]
        if self.note:
            parts.append(self.note)
        parts.append(_format_seconds(time.perf_counter() - self.start))
        return "  ".join(p for p in parts if p)

    def _draw(self) -> None:
        text = self.line()
        pad = " " * max(0, self._last_len - len(text))
        self.stream.write("\r" + text + pad)
        self.stream.flush()
        self._last_len = len(text)
        self._last_draw = time.perf_counter()

    def update(self, n: int = 1, *, note: str | None = None) -> None:
        """Advance by ``n`` steps; ``note`` replaces the text shown after the count."""
        self.count += n
        if note is not None:
            self.note = note
        if self.interactive and not self._closed:
            now = time.perf_counter()
            if now - self._last_draw >= self.min_interval or self.count >= self.total:
                self._draw()

    def close(self) -> None:
        """Write the final line (once)."""
        if self._closed:
            return
        self._closed = True
        if self.interactive:
            self._draw()
            self.stream.write("\n")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def progress(
    iterable: Iterable[T], desc: str = "", *, total: int | None = None, stream: TextIO | None = None
) -> Iterator[T]:
    """Yield the items of ``iterable`` while showing a :class:`Progress` bar.

    ``total`` defaults to ``len(iterable)``; the bar is closed when the loop
    ends, also when it ends early."""
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError("progress: give total= for an iterable without a length") from None
    bar = Progress(total, desc, stream=stream)
    try:
        for item in iterable:
            yield item
            bar.update()
    finally:
        bar.close()
