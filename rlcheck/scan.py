"""Streaming log classifier: finds the catalogue's known failures in logs of any size.

Memory stays flat in the input size: input is read in blocks into one reused buffer, a line longer
than MAX_LINE_BYTES that crosses a block edge is cut there (the rest is still scanned), and findings
are kept as per-id counts plus the first KEEP_PER_ID lines of each id. Time stays linear: the engine
(scan_engines) finds the next candidate line from where the last one ended, and confirms it in
pieces of at most PIECE_BYTES, so no line is ever searched from its start once per match.
"""

from __future__ import annotations

import dataclasses
import sys
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from rlcheck.catalog import FALLBACK_ID, KnownFailure, is_loaded, load_catalog
from rlcheck.scan_engines import ENGINES, OVERLAP_BYTES, make_finder
from rlcheck.scan_input import READ_ERRORS, Unreadable, decompressed, expand, open_input

BLOCK_BYTES = 16 * 2**20
MAX_LINE_BYTES = 2**20
"""A line that crosses a block edge is cut after this many bytes; the rest is scanned as more pieces."""
PIECE_BYTES = 2**13
"""The most of one line a signature is matched against at once (pieces overlap by OVERLAP_BYTES)."""
SHOWN_BYTES = 2**11
"""The most of a line a finding keeps: the part around where it matched."""
KEEP_PER_ID = 20
"""Findings kept (with their lines) per failure id; every further one is only counted."""
KEEP_ERRORS = 100
ENGINE = ENGINES[0]
_READ_ERRORS: tuple[type[BaseException], ...] = (*READ_ERRORS, zlib.error)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    failure_id: str
    path: str
    line_no: int
    """1-based; a cut over-long line keeps the number of the line it came from."""
    line: str
    """The line, or at most SHOWN_BYTES of it around the match ('…' marks what was left out)."""

    def to_dict(self, catalog: dict[str, KnownFailure]) -> dict[str, object]:
        entry = catalog[self.failure_id]
        return {**dataclasses.asdict(self), "layer": entry.layer, "title": entry.title,
                "cause": entry.cause, "remedy": entry.remedy}


def _pieces(start: int, end: int) -> Iterator[tuple[int, int]]:
    """[start, end) in windows of PIECE_BYTES that overlap by OVERLAP_BYTES."""
    step = PIECE_BYTES - OVERLAP_BYTES
    pos = start
    while True:
        yield pos, min(end, pos + PIECE_BYTES)
        if pos + PIECE_BYTES >= end:
            return
        pos += step


def _excerpt(block: bytes | bytearray, start: int, end: int, anchor: int) -> str:
    if end - start > SHOWN_BYTES:
        lo = max(start, min(anchor - SHOWN_BYTES // 2, end - SHOWN_BYTES))
        hi = lo + SHOWN_BYTES
        text = bytes(block[lo:hi]).decode("utf-8", errors="replace")
        return ("…" if lo > start else "") + text + ("…" if hi < end else "")
    return bytes(block[start:end]).decode("utf-8", errors="replace")


class Matcher:
    """Which catalogue entries a line (or a block of lines) shows."""

    def __init__(self, catalog: dict[str, KnownFailure] | None = None, engine: str = ENGINE) -> None:
        """catalog: the packaged one by default; a catalogue load_catalog gave keeps its compiled form in the
        cache directory (a hand-made one is compiled in memory only)."""
        self.catalog = catalog if catalog is not None else load_catalog()
        self.engine = engine
        self._ids = [e.id for e in self.catalog.values() for _ in e.signatures]
        self._order = {fid: i for i, fid in enumerate(self.catalog)}
        self._finder = make_finder(engine, [s for e in self.catalog.values() for s in e.signatures],
                                   cache=is_loaded(self.catalog))
        self._named: dict[frozenset[int], list[str]] = {}

    def _ids_between(self, data: bytes | bytearray, start: int, end: int) -> list[str]:
        if end - start <= PIECE_BYTES:  # the common case: one short line, one engine call
            found = self._finder.ids_in(bytes(data[start:end]))
        else:
            found = set()
            for lo, hi in _pieces(start, end):
                found |= self._finder.ids_in(bytes(data[lo:hi]))
        key = frozenset(found)
        ids = self._named.get(key)
        if ids is None:  # a handful of distinct sets in any log: name and order each once
            named = sorted({self._ids[i] for i in found}, key=self._order.__getitem__)
            if len(named) > 1 and FALLBACK_ID in named:  # uncatalogued only where nothing else names the line
                named.remove(FALLBACK_ID)
            ids = self._named[key] = named
        return ids

    def match_line(self, line: str) -> list[str]:
        """Catalogue ids this one line matches, in catalogue order, each once (any length: matched in pieces). Text
        with line breaks is matched line by line, as a scan of it is, so every engine gives the same ids (Hyperscan's
        ^ and $ hold at every line of what it is given, re's and re2's only at its ends)."""
        if "\n" not in line:
            data = line.encode("utf-8", errors="replace")
            return list(self._ids_between(data, 0, len(data))) if data else []
        found = {fid for part in line.split("\n") for fid in self.match_line(part)}
        return sorted(found, key=self._order.__getitem__)

    def hits(self, block: bytes | bytearray, length: int) -> Iterator[tuple[int, int, int, list[str]]]:
        """(line start, line stop, anchor, ids) for each matching line in block[:length] (whole lines)."""
        pos = 0
        for anchor in self._finder.anchors(block, length):
            if anchor < pos:
                continue
            start = block.rfind(b"\n", pos, anchor) + 1 or pos
            end = block.find(b"\n", anchor, length)
            end = length if end < 0 else end
            stop = end - 1 if end > start and block[end - 1] == 0x0D else end  # CRLF logs
            ids = self._ids_between(block, start, stop)
            if ids:
                yield start, stop, anchor, ids
            pos = end + 1

    def scan_block(self, block: bytes | bytearray, length: int | None = None) -> Iterator[tuple[int, str, list[str]]]:
        """(offset of the line start, line, ids) for each matching line in block[:length] (whole lines)."""
        for start, stop, anchor, ids in self.hits(block, len(block) if length is None else length):
            yield start, _excerpt(block, start, stop, anchor), ids


def _fill(stream: BinaryIO, view: memoryview) -> int:
    """Read into view until it is full or the stream ends; a read error keeps what was read (see _blocks)."""
    readinto = getattr(stream, "readinto1", None) or stream.readinto  # type: ignore[attr-defined]
    filled = 0
    while filled < len(view):
        try:
            got = readinto(view[filled:])
        except _READ_ERRORS as exc:
            exc.filled = filled  # type: ignore[attr-defined]
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
        except _READ_ERRORS as exc:
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
    """Every finding in the stream, in order (the caller bounds what it keeps; scan_paths does)."""
    result = ScanResult(keep_per_id=sys.maxsize)
    for _ in _scan_into(stream, name, matcher, result):
        yield from result.findings
        result.findings.clear()


def _scan_into(stream: BinaryIO, name: str, matcher: Matcher, result: ScanResult) -> Iterator[None]:
    """Add the stream's findings to result; yields after each block. A line whose ids are all past the
    result's keep limit is only counted: no text is decoded and nothing is held for it."""
    line_no = 1
    for block, length in _blocks(stream):
        counted_to = 0
        for start, stop, anchor, ids in matcher.hits(block, length):
            line_no += block.count(b"\n", counted_to, start)
            counted_to = start
            if result.wants(ids):
                line = _excerpt(block, start, stop, anchor)
                for fid in ids:
                    result.add(Finding(failure_id=fid, path=name, line_no=line_no, line=line))
            else:
                result.count(ids)
        line_no += block.count(b"\n", counted_to, length)
        yield


@dataclasses.dataclass(kw_only=True, slots=True)
class ScanResult:
    """What a scan found, bounded: per-id counts, the first KEEP_PER_ID findings of each id, the first
    KEEP_ERRORS errors (with the total)."""

    findings: list[Finding] = dataclasses.field(default_factory=list)
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    """Every finding, counted per failure id (also those not kept)."""
    errors: list[str] = dataclasses.field(default_factory=list)
    """One line per input that could not be read in full: the path and why."""
    errors_total: int = 0
    files: int = 0
    keep_per_id: int = KEEP_PER_ID

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def wants(self, ids: list[str]) -> bool:
        return any(self.counts.get(fid, 0) < self.keep_per_id for fid in ids)

    def count(self, ids: list[str]) -> None:
        for fid in ids:
            self.counts[fid] = self.counts.get(fid, 0) + 1

    def add(self, finding: Finding) -> None:
        seen = self.counts.get(finding.failure_id, 0)
        self.counts[finding.failure_id] = seen + 1
        if seen < self.keep_per_id:
            self.findings.append(finding)

    def error(self, message: str) -> None:
        self.errors_total += 1
        if len(self.errors) < KEEP_ERRORS:
            self.errors.append(message)


def _scan_one(path: str, matcher: Matcher, result: ScanResult) -> None:
    name, fmt = ("<stdin>" if path == "-" else path), "plain"
    try:
        raw = open_input(path)
    except OSError as exc:
        result.error(f"{path}: {exc.strerror or exc}")
        return
    try:
        stream, fmt = decompressed(raw, name)
        for _ in _scan_into(stream, name, matcher, result):
            pass
        result.files += 1
    except Unreadable as exc:
        result.error(str(exc))
    except _READ_ERRORS as exc:
        what = "read failed" if fmt == "plain" else f"{fmt} stream broken"
        result.error(f"{name}: {what} ({exc}); findings before that point are kept")
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


def scan_paths(paths: Iterable[str], matcher: Matcher | None = None) -> ScanResult:
    """Scan every path; a missing, unreadable or corrupt input is an error and the others still run."""
    matcher = matcher or Matcher()
    result = ScanResult()
    for entry in expand(paths):
        if entry.error:
            result.error(entry.error)
        else:
            _scan_one(entry.path, matcher, result)
    return result
