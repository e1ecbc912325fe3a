"""Reading what a sandboxed script hands back, within bounds: its output (the tail of at most OUTPUT_CAP_BYTES,
within one wall-clock deadline) and its call record (at most RECORD_CAP_BYTES), decoded with replacement."""

from __future__ import annotations

import dataclasses
import os
import selectors
import time
from typing import IO

OUTPUT_CAP_BYTES = 32 << 20
"""Output read from a script before the sandbox is ended: a launch script prints kilobytes."""
TAIL_BYTES = 64 << 10
"""Output kept (the last bytes): why a script stopped is in its last lines."""
RECORD_CAP_BYTES = 4 << 20
"""Call record read back (and the most the fakes will write): thousands of launch commands."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Output:
    """What was read from a process's output pipe."""

    tail: str
    """The last TAIL_BYTES, decoded with replacement."""
    read_bytes: int
    eof: bool
    """The pipe closed (every writer is gone) before the deadline or the cap."""
    over_cap: bool
    """More than the cap was written: reading stopped there."""


def pump(stream: IO[bytes], *, deadline: float, cap_bytes: int = OUTPUT_CAP_BYTES,
         tail_bytes: int = TAIL_BYTES) -> Output:
    """Read stream until it closes, the monotonic deadline passes or cap_bytes were read; keep only the tail."""
    fd = stream.fileno()
    tail = bytearray()
    total = 0
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while total <= cap_bytes:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(timeout=left):
                return Output(tail=_decode(tail), read_bytes=total, eof=False, over_cap=False)
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return Output(tail=_decode(tail), read_bytes=total, eof=True, over_cap=False)
            total += len(chunk)
            tail += chunk
            del tail[:-tail_bytes]
    return Output(tail=_decode(tail), read_bytes=total, eof=False, over_cap=True)


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def read_capped(path: str, cap_bytes: int = RECORD_CAP_BYTES) -> tuple[str, bool]:
    """(the first cap_bytes of the file, decoded with replacement; whether there was more). A missing file is ''.
    Never follows a link the script could have planted (O_NOFOLLOW) and never reads past the cap; what cannot be
    read as a file (a directory or socket planted in its place) is ''."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:  # a directory opens, and fails only here (EISDIR)
            data = f.read(cap_bytes + 1)
    except OSError:
        return "", False
    return _decode(data[:cap_bytes]), len(data) > cap_bytes
