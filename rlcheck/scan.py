"""Streaming log classifier: finds the catalogue's known failures in logs of any size.

Memory stays bounded: input is read in blocks, and a line longer than
MAX_LINE_BYTES is cut there (the rest of it is still scanned as further pieces).
One combined automaton (google-re2 when installed, else the stdlib) finds the
candidate lines; the per-entry patterns then say which failures a line shows.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from rlcheck.catalog import KnownFailure, load_catalog


def _optional(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:  # depends on the image: the stdlib engine always works
        return None


_hyperscan = _optional("hyperscan")  # SIMD multi-pattern matching, several GB/s
_re2 = _optional("re2")  # a DFA engine, ~10x the stdlib on many patterns

BLOCK_BYTES = 16 * 2**20
MAX_LINE_BYTES = 2**20
ENGINES = tuple(name for name, mod in (("hyperscan", _hyperscan), ("re2", _re2), ("re", re)) if mod is not None)
ENGINE = ENGINES[0]


class _HyperscanFinder:
    """Match end offsets of any signature in a block.

    A first pass reports each signature at most once per block (much faster); only a block
    where something matched is scanned again for every match.
    """

    def __init__(self, patterns: list[str]) -> None:
        assert _hyperscan is not None
        exprs = [p.encode() for p in patterns]
        self._any, self._all = _hyperscan.Database(), _hyperscan.Database()
        for db, flag in ((self._any, _hyperscan.HS_FLAG_SINGLEMATCH), (self._all, 0)):
            db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=[flag] * len(exprs))

    def offsets(self, block: bytes | bytearray, length: int) -> list[int]:
        data: Any = block if length == len(block) else memoryview(block)[:length]
        ends: list[int] = []
        self._any.scan(data, match_event_handler=lambda _id, _from, to, _flags, _ctx: ends.append(to - 1))
        if ends:
            ends.clear()
            self._all.scan(data, match_event_handler=lambda _id, _from, to, _flags, _ctx: ends.append(to - 1))
        return sorted(ends)


class _RegexFinder:
    """Match start offsets of any signature in a block, with re2 or the stdlib."""

    def __init__(self, patterns: list[str], module: object) -> None:
        combined = "|".join(f"(?:{p})" for p in patterns).encode()
        self._any = module.compile(combined)  # type: ignore[attr-defined]

    def offsets(self, block: bytes | bytearray, length: int) -> list[int]:
        found, pos = [], 0
        while (hit := self._any.search(block, pos, length)) is not None:
            found.append(hit.start())
            pos = max(block.find(b"\n", hit.start(), length), hit.start()) + 1
        return found


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    failure_id: str
    path: str
    line_no: int
    """1-based; a cut over-long line keeps the number of the line it came from."""
    line: str

    def to_dict(self, catalog: dict[str, KnownFailure]) -> dict[str, object]:
        entry = catalog[self.failure_id]
        return {**dataclasses.asdict(self), "layer": entry.layer, "title": entry.title,
                "cause": entry.cause, "remedy": entry.remedy}


class Matcher:
    """Which catalogue entries a line (or a block of lines) shows."""

    def __init__(self, catalog: dict[str, KnownFailure] | None = None, engine: str = ENGINE) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine={engine!r}: one of the installed engines {', '.join(ENGINES)}")
        self.catalog = catalog if catalog is not None else load_catalog()
        self.engine = engine
        self._patterns = [(e.id, p) for e in self.catalog.values() for p in e.patterns]
        sources = [p.pattern for _, p in self._patterns]
        self._finder = _HyperscanFinder(sources) if engine == "hyperscan" else \
            _RegexFinder(sources, _re2 if engine == "re2" else re)

    def match_line(self, line: str) -> list[str]:
        """Catalogue ids this one line matches, in catalogue order, each once."""
        return list(dict.fromkeys(fid for fid, p in self._patterns if p.search(line)))

    def scan_block(self, block: bytes | bytearray, length: int | None = None) -> Iterator[tuple[int, str, list[str]]]:
        """(offset of the line start, line, ids) for each matching line in block[:length] (whole lines)."""
        length = len(block) if length is None else length
        last_start = -1
        for offset in self._finder.offsets(block, length):
            start = block.rfind(b"\n", 0, offset) + 1
            if start == last_start:
                continue
            last_start = start
            end = block.find(b"\n", offset, length)
            line = bytes(block[start:length if end < 0 else end]).decode("utf-8", errors="replace").rstrip("\r")
            ids = self.match_line(line)
            if ids:
                yield start, line, ids


def _fill(stream: BinaryIO, view: memoryview) -> int:
    """Read into view until it is full or the stream ends; a read error keeps what was read (see _blocks)."""
    readinto = getattr(stream, "readinto1", None) or stream.readinto  # type: ignore[attr-defined]
    filled = 0
    while filled < len(view):
        try:
            got = readinto(view[filled:])
        except (OSError, EOFError) as exc:
            exc.filled = filled  # type: ignore[union-attr]
            raise
        if not got:
            break
        filled += got
    return filled


def _blocks(stream: BinaryIO) -> Iterator[tuple[bytearray, int]]:
    """(buffer, length): buffer[:length] holds whole lines (or MAX_LINE_BYTES of an over-long line).

    One buffer is reused: a consumer handles each block before asking for the next. When the
    stream breaks (a truncated .gz), the lines read before the break are still yielded.
    """
    buf = bytearray(BLOCK_BYTES + MAX_LINE_BYTES)
    view = memoryview(buf)
    kept = 0  # bytes of an unfinished line carried to the front of the buffer
    while True:
        try:
            end = kept + _fill(stream, view[kept:kept + BLOCK_BYTES])
        except (OSError, EOFError) as exc:
            partial = kept + getattr(exc, "filled", 0)
            if partial:
                yield buf, partial
            raise
        if end == kept:
            break
        cut = buf.rfind(b"\n", 0, end) + 1
        if end - cut >= MAX_LINE_BYTES:  # an over-long line: cut it here rather than hold it
            cut = end
        if cut:
            yield buf, cut
        buf[: end - cut] = buf[cut:end]
        kept = end - cut
    if kept:
        yield buf, kept


def scan_stream(stream: BinaryIO, name: str, matcher: Matcher) -> Iterator[Finding]:
    line_no = 1
    for block, length in _blocks(stream):
        counted_to = 0
        for offset, line, ids in matcher.scan_block(block, length):
            line_no += block.count(b"\n", counted_to, offset)
            counted_to = offset
            for fid in ids:
                yield Finding(failure_id=fid, path=name, line_no=line_no, line=line)
        line_no += block.count(b"\n", counted_to, length)


def _open(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")  # type: ignore[return-value]


def expand(paths: Iterable[str]) -> Iterator[str]:
    """Files as given, directories walked in sorted order, '-' kept for stdin."""
    for path in paths:
        if path != "-" and os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                yield from (str(Path(root, f)) for f in sorted(files))
        else:
            yield path


@dataclasses.dataclass(kw_only=True, slots=True)
class ScanResult:
    findings: list[Finding] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)
    """One line per file that could not be read in full: the path and why."""
    files: int = 0
    bytes_read: int = 0


def scan_paths(paths: Iterable[str], matcher: Matcher | None = None) -> ScanResult:
    """Scan every path; a missing, unreadable or corrupt file is an error and the others still run."""
    matcher = matcher or Matcher()
    result = ScanResult()
    for path in expand(paths):
        try:
            stream = _open(path)
        except OSError as exc:
            result.errors.append(f"{path}: {exc.strerror or exc}")
            continue
        name = "<stdin>" if path == "-" else path
        try:
            result.findings.extend(scan_stream(stream, name, matcher))
            result.files += 1
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            result.errors.append(f"{name}: read failed ({exc}); findings before that point are kept")
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
    return result
