"""What `rlcheck scan` reads: paths walked into files, and any stream opened with its compression detected.

Compression is told from the first bytes of the stream itself, never from the name and never by
opening the file twice: a pipe (`<(cmd)`), a FIFO or stdin gives its bytes once. Directories are
walked in sorted order, symlinked directories followed once each (no loops), and every entry that
cannot be listed or is not a file rlcheck can read is reported, never skipped in silence.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import lzma
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO, cast

try:
    import zstandard
except ImportError:  # optional: without it a zstd stream is named as unreadable
    zstandard = None

# Full magic numbers, not just their first bytes, so a plain log that starts with "BZh" stays plain.
_BZ2_BLOCKS = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")  # first block, or end of stream
HEAD_BYTES = 10


def sniff(head: bytes) -> str:
    """plain, gzip, bz2, xz or zstd, from a stream's first HEAD_BYTES bytes."""
    if head.startswith(b"\x1f\x8b\x08"):  # gzip with deflate, the only method it has
        return "gzip"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[3:4] != b"0" and head[4:10] in _BZ2_BLOCKS:
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    return "plain"


# What a broken compressed stream raises, besides OSError (gzip.BadGzipFile, bz2's invalid data, I/O).
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError) + (
    (zstandard.ZstdError,) if zstandard is not None else ())


class Unreadable(Exception):
    """An input that rlcheck cannot read; the message says what it is and why."""


class _Prefixed(io.RawIOBase):
    """The first bytes (already read to sniff the format) followed by the rest of the stream."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        readinto = getattr(self._rest, "readinto1", None) or self._rest.readinto  # type: ignore[attr-defined]
        return int(readinto(view) or 0)


def _read_head(stream: BinaryIO) -> bytes:
    head = b""
    while len(head) < HEAD_BYTES:  # a pipe may hand out one byte at a time
        got = stream.read(HEAD_BYTES - len(head))
        if not got:
            break
        head += got
    return head


def decompressed(stream: BinaryIO, name: str) -> tuple[BinaryIO, str]:
    """(the stream to scan, its format: plain, gzip, bz2, xz or zstd), detected from the first bytes."""
    head = _read_head(stream)
    fmt = sniff(head)
    raw = io.BufferedReader(_Prefixed(head, stream), buffer_size=2**20)
    if fmt == "plain":
        return cast(BinaryIO, raw), fmt
    if fmt == "gzip":
        return cast(BinaryIO, gzip.GzipFile(fileobj=raw, mode="rb")), fmt
    if fmt == "bz2":
        return cast(BinaryIO, bz2.BZ2File(raw, "rb")), fmt
    if fmt == "xz":
        return cast(BinaryIO, lzma.LZMAFile(raw, "rb")), fmt
    if zstandard is None:
        raise Unreadable(f"{name}: zstd-compressed, and the zstandard module is not installed "
                         f"(pip install zstandard, or decompress it first: zstd -dc {name} | rlcheck scan -)")
    return cast(BinaryIO, zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)), fmt


def open_input(path: str) -> BinaryIO:
    """The raw byte stream of a path ('-' is stdin); OSError when it cannot be opened."""
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")  # noqa: SIM115 - closed by the caller after the scan


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    path: str
    """A file (or '-') to scan; '' when this entry only reports an error."""
    error: str = ""
    """What could not be read, with the path and why ('' for a file to scan)."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def _walk(top: str, seen: set[tuple[int, int]]) -> Iterator[Entry]:
    try:
        st = os.stat(top)
        if (st.st_dev, st.st_ino) in seen:
            return  # a symlink back into a directory already walked: scanning it again would loop
        seen.add((st.st_dev, st.st_ino))
        with os.scandir(top) as it:
            children = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield Entry(path="", error=f"{top}: cannot list the directory: {exc.strerror or exc}")
        return
    for child in children:
        try:
            mode = os.stat(child.path).st_mode  # follows symlinks: a link to a file or a directory is read
        except OSError as exc:
            yield Entry(path="", error=f"{child.path}: {exc.strerror or exc}"
                        + (" (a dangling symlink)" if child.is_symlink() else ""))
            continue
        if stat.S_ISDIR(mode):
            yield from _walk(child.path, seen)
        elif stat.S_ISREG(mode):
            yield Entry(path=child.path)
        else:  # reading a FIFO found in a tree could block forever: name it; given by name it is read
            yield Entry(path="", error=f"{child.path}: {_kind(mode)} inside a directory, not read "
                                       f"(give it by name to scan it)")


def expand(paths: Iterable[str]) -> Iterator[Entry]:
    """Files as given (any kind: pipes and FIFOs too), directories walked, '-' kept for stdin."""
    seen: set[tuple[int, int]] = set()
    for path in paths:
        if path != "-" and os.path.isdir(path):
            yield from _walk(path, seen)
        else:
            yield Entry(path=path)
