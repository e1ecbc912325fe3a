"""Streaming log classifier: finds the catalogue's known failures in logs of any size.

Memory stays bounded: input is read in blocks, and a line longer than
MAX_LINE_BYTES is cut there (the rest of it is still scanned as further pieces).
One combined automaton (google-re2 when installed, else the stdlib) finds the
candidate lines; the per-entry patterns then say which failures a line shows.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from rlcheck.catalog import KnownFailure, load_catalog

try:  # a DFA engine: the scan runs at grep speed instead of ~10x slower.
    import re2 as _fast_re
except ImportError:  # pragma: no cover - depends on the image
    _fast_re = None

BLOCK_BYTES = 8 * 2**20
MAX_LINE_BYTES = 2**20
ENGINE = "re2" if _fast_re is not None else "re"


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
        if engine not in ("re2", "re") or (engine == "re2" and _fast_re is None):
            raise ValueError(f"engine={engine!r}: 're' or, with google-re2 installed, 're2'")
        self.catalog = catalog if catalog is not None else load_catalog()
        self._patterns = [(e.id, p) for e in self.catalog.values() for p in e.patterns]
        combined = "|".join(f"(?:{p.pattern})" for _, p in self._patterns).encode()
        self._any = _fast_re.compile(combined) if engine == "re2" else re.compile(combined)

    def match_line(self, line: str) -> list[str]:
        """Catalogue ids this one line matches, in catalogue order, each once."""
        return list(dict.fromkeys(fid for fid, p in self._patterns if p.search(line)))

    def scan_block(self, block: bytes) -> Iterator[tuple[int, str, list[str]]]:
        """(offset of the line start, line, ids) for each matching line of a block of whole lines."""
        pos = 0
        while True:
            hit = self._any.search(block, pos)
            if hit is None:
                return
            start = block.rfind(b"\n", 0, hit.start()) + 1
            end = block.find(b"\n", hit.start())
            end = len(block) if end < 0 else end
            line = block[start:end].decode("utf-8", errors="replace").rstrip("\r")
            ids = self.match_line(line)
            if ids:
                yield start, line, ids
            pos = end + 1


def _read_some(stream: BinaryIO, pending: list[bytes]) -> bytes:
    """Up to BLOCK_BYTES; on a read error, what was already read is kept in pending for the caller."""
    read = getattr(stream, "read1", stream.read)
    size = 0
    while size < BLOCK_BYTES:
        piece = read(BLOCK_BYTES - size)
        if not piece:
            break
        pending.append(piece)
        size += len(piece)
    data = b"".join(pending)
    pending.clear()
    return data


def _blocks(stream: BinaryIO) -> Iterator[bytes]:
    """Blocks ending on a line boundary (or cut at MAX_LINE_BYTES of an over-long line).

    When the stream breaks (a truncated .gz), the lines read before the break are still yielded.
    """
    carry = b""
    pending: list[bytes] = []
    while True:
        try:
            data = _read_some(stream, pending)
        except (OSError, EOFError):
            tail = carry + b"".join(pending)
            if tail:
                yield tail
            raise
        if not data:
            break
        data = carry + data
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) > MAX_LINE_BYTES:
            cut = MAX_LINE_BYTES
        carry = data[cut:]
        if cut:
            yield data[:cut]
    if carry:
        yield carry


def scan_stream(stream: BinaryIO, name: str, matcher: Matcher) -> Iterator[Finding]:
    line_no = 1
    for block in _blocks(stream):
        counted_to = 0
        for offset, line, ids in matcher.scan_block(block):
            line_no += block.count(b"\n", counted_to, offset)
            counted_to = offset
            for fid in ids:
                yield Finding(failure_id=fid, path=name, line_no=line_no, line=line)
        line_no += block.count(b"\n", counted_to)


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
