"""A stderr stand-in for tests: it keeps apart what was written and what was flushed (a tool that prints its error
and exits must flush it, or a pipe loses it)."""

from __future__ import annotations


class FlushedStream:
    """A stderr that keeps what was flushed."""

    def __init__(self) -> None:
        self.pending, self.flushed = "", ""

    def write(self, text: str) -> None:
        self.pending += text

    def flush(self) -> None:
        self.flushed, self.pending = self.flushed + self.pending, ""
