"""The regex engines behind the log scanner: hyperscan, google-re2 or Python's re, in that order of choice.

Each engine answers two questions in time linear in the text: where in a block something may match
(candidate offsets), and which signatures one bounded piece of a line matches. The catalogue compiles
every signature with every installed engine when it loads, so a pattern one engine refuses is an error
at load, never a silent miss at scan time.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Protocol


def _optional(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:  # depends on the image: the stdlib engine always works
        return None


_hyperscan = _optional("hyperscan")  # SIMD multi-pattern automaton, several GB/s, linear
_re2 = _optional("re2")  # a DFA engine, linear, ~10x the stdlib on many patterns

ENGINES = tuple(name for name, mod in (("hyperscan", _hyperscan), ("re2", _re2), ("re", re)) if mod is not None)


WINDOW_BYTES = 2**12
"""The stdlib engine backtracks: it never searches more than this much text in one call."""
OVERLAP_BYTES = 2**9
"""Windows overlap by this much, so a match shorter than it is never split by a window edge."""
MATCHES_PER_LINE = 64
"""Past this many matches in one line the block scan stops and resumes at the next line."""


class Finder(Protocol):
    def anchors(self, block: bytes | bytearray, length: int) -> list[int]:
        """Sorted offsets in block[:length], at most one per line, where a signature may match (its start
        or its end); nothing matches in a line without one."""

    def ids_in(self, piece: bytes) -> set[int]:
        """Indexes of the signatures that match somewhere in piece (one bounded piece of one line)."""


class HyperscanFinder:
    """One automaton for all signatures. The block scan keeps the first match of each line and skips the
    rest; a line with more than MATCHES_PER_LINE matches halts the scan, which resumes after that line."""

    def __init__(self, patterns: list[str]) -> None:
        assert _hyperscan is not None
        self._all = _database(patterns, _hyperscan.HS_FLAG_MULTILINE)  # ^ and $ at every line of a block
        self._once = _database(patterns, _hyperscan.HS_FLAG_MULTILINE | _hyperscan.HS_FLAG_SINGLEMATCH)

    def anchors(self, block: bytes | bytearray, length: int) -> list[int]:
        found: list[int] = []
        pos, line_end, skipped = 0, -1, 0

        def on_match(_id: int, _from: int, to: int, _flags: int, _ctx: object) -> bool:
            nonlocal line_end, skipped
            end = pos + to - 1
            if end <= line_end:
                skipped += 1
                return skipped > MATCHES_PER_LINE
            found.append(end)
            line_end, skipped = block.find(b"\n", end, length), 0
            line_end = length if line_end < 0 else line_end
            return False

        while pos < length:
            try:
                self._all.scan(memoryview(block)[pos:length], match_event_handler=on_match)
                break
            except _hyperscan.ScanTerminated:
                pos, skipped = line_end + 1, 0
        return found

    def ids_in(self, piece: bytes) -> set[int]:
        found: set[int] = set()
        self._once.scan(piece, match_event_handler=lambda i, _from, _to, _flags, _ctx: found.add(i))
        return found


def _database(patterns: list[str], flag: int) -> Any:
    assert _hyperscan is not None
    db = _hyperscan.Database()
    db.compile(expressions=[p.encode() for p in patterns], ids=list(range(len(patterns))),
               elements=len(patterns), flags=[flag] * len(patterns))
    return db


class RegexFinder:
    """One combined pattern (re2 or re) finds a line; the search goes on from the next line, so each line is
    searched at most once. Each signature then confirms a piece.

    re2 is linear on any text. The stdlib backtracks, so with it every search is held to a window of
    WINDOW_BYTES (windows overlap by OVERLAP_BYTES): the time stays linear in the input."""

    def __init__(self, patterns: list[str], module: Any) -> None:
        combined = "|".join(f"(?:{p})" for p in patterns)
        self._any = module.compile(f"(?m){combined}".encode())  # ^ and $ at every line of a block
        self._each = [module.compile(p.encode()) for p in patterns]
        self._window = WINDOW_BYTES if module is re else 0

    def _first(self, block: bytes | bytearray, pos: int, length: int) -> int:
        if not self._window:
            hit = self._any.search(block, pos, length)
            return hit.start() if hit is not None else -1
        while pos < length:
            hit = self._any.search(block, pos, min(length, pos + self._window))
            if hit is not None:
                return int(hit.start())
            if pos + self._window >= length:
                break
            pos += self._window - OVERLAP_BYTES
        return -1

    def anchors(self, block: bytes | bytearray, length: int) -> list[int]:
        found, pos = [], 0
        while pos < length and (at := self._first(block, pos, length)) >= 0:
            found.append(at)
            pos = block.find(b"\n", at, length)
            pos = length if pos < 0 else pos + 1
        return found

    def ids_in(self, piece: bytes) -> set[int]:
        return {i for i, p in enumerate(self._each) if p.search(piece)}


def make_finder(engine: str, patterns: list[str]) -> Finder:
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r}: one of the installed engines {', '.join(ENGINES)}")
    if engine == "hyperscan":
        return HyperscanFinder(patterns)
    return RegexFinder(patterns, _re2 if engine == "re2" else re)


def compile_error(signature: str, engine: str) -> str:
    """'' when the engine compiles the signature, else what it said."""
    try:
        make_finder(engine, [signature])
    except Exception as exc:  # each engine raises its own type (hyperscan.error, re2.error, re.error)
        return f"{type(exc).__name__}: {exc}"
    return ""

