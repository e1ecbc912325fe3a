"""The regex engines behind the log scanner: hyperscan, google-re2 or Python's re, in that order of choice.

Each engine answers two questions in time linear in the text: where in a block something may match
(candidate offsets), and which signatures one bounded piece of a line matches. The catalogue compiles
every signature with every installed engine when it is validated (in the tests, and whenever its text
changes), so a pattern one engine refuses is an error then, never a silent miss at scan time.

A Hyperscan database of the whole catalogue takes seconds to compile: it is kept compiled in the cache
directory (cache_dir), keyed by its patterns, flags, Hyperscan's version and this CPU. A cache file that
is not this user's alone, or whose checksum or key does not match, is never loaded: it is compiled anew
and rewritten.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import re
import stat
import sys
import time
from pathlib import Path
from typing import Any, Protocol


def _optional(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:  # depends on the image: the stdlib engine always works
        return None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


_hyperscan = _optional("hyperscan")  # SIMD multi-pattern automaton, several GB/s, linear
_RE2_INSTALLED = _installed("re2")  # a DFA engine, linear, ~10x the stdlib on many patterns: imported when used

ENGINES = tuple(name for name, there in (("hyperscan", _hyperscan is not None), ("re2", _RE2_INSTALLED), ("re", True))
                if there)


def _re2() -> Any:
    return importlib.import_module("re2")


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

    def __init__(self, patterns: list[str], cache: bool = False) -> None:
        assert _hyperscan is not None
        db = _cached_database if cache else _database
        self._all = db(patterns, _hyperscan.HS_FLAG_MULTILINE)  # ^ and $ at every line of a block
        self._once = db(patterns, _hyperscan.HS_FLAG_MULTILINE | _hyperscan.HS_FLAG_SINGLEMATCH)

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


CACHE_ENV = "RLCHECK_CACHE_DIR"
"""Where compiled forms are kept; set to '' to keep none (everything is compiled in memory)."""
_MAGIC = b"rlcheck-cache 1\n"


def cache_dir() -> Path | None:
    """$RLCHECK_CACHE_DIR, else $XDG_CACHE_HOME/rlcheck, else ~/.cache/rlcheck (made 0700 when missing).
    None (no cache: compile in memory) when RLCHECK_CACHE_DIR is '', the folder cannot be made, or it is not
    this user's alone (another owner, or writable by group or others)."""
    given = os.environ.get(CACHE_ENV)
    if given is not None:
        if not given:
            return None
        where = Path(given)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
        where = base / "rlcheck"
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(where)
    except (OSError, RuntimeError):  # RuntimeError: no home directory to expand
        return None
    return where if stat.S_ISDIR(st.st_mode) and _ours(st) else None


def _ours(st: os.stat_result) -> bool:
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _cache_path(where: Path, name: str, key: str) -> Path:
    return where / f"{name}-{key}.bin"


def read_cached(name: str, key: str) -> bytes | None:
    """The payload kept under (name, key); None when there is none, or the file is not a regular file of this
    user's alone, or its header names another key, or its checksum does not match (a torn or altered file)."""
    where = cache_dir()
    if where is None:
        return None
    try:
        fd = os.open(_cache_path(where, name, key), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _ours(st):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    head = _MAGIC + key.encode() + b"\n"
    if not data.startswith(head) or len(data) < len(head) + 65:
        return None
    digest, payload = data[len(head):len(head) + 64], data[len(head) + 65:]
    if data[len(head) + 64:len(head) + 65] != b"\n" or hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    return payload


def write_cached(name: str, key: str, payload: bytes) -> None:
    """Keep payload under (name, key), replacing what was there at once (another process never reads half a file).
    Best effort: a cache that cannot be written only means the next run compiles again."""
    where = cache_dir()
    if where is None:
        return
    body = _MAGIC + key.encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    tmp = where / f".{name}-{key}.{os.getpid()}-{time.monotonic_ns()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            os.replace(tmp, _cache_path(where, name, key))
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError:
        pass


def _cpu_features() -> str:
    """The CPU flags Hyperscan compiled for (a database built for AVX-512 is refused by a host without it)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[-1].strip()
    except OSError:
        pass
    return ""


def key_of(*parts: object) -> str:
    """A hex sha256 of parts (JSON): a cache key."""
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


def _cached_database(patterns: list[str], flag: int) -> Any:
    """The database of patterns, loaded from the cache when a trusted file for exactly these patterns, this flag,
    this Hyperscan and this CPU is there; else compiled (and kept for the next run)."""
    assert _hyperscan is not None
    key = key_of("hyperscan-db", _hyperscan.__version__, os.uname().machine, _cpu_features(), flag, patterns)
    payload = read_cached("hsdb", key)
    if payload is not None:
        try:
            db = _hyperscan.loadb(payload, _hyperscan.HS_MODE_BLOCK)
            db.scratch = _hyperscan.Scratch(db)
            return db
        except Exception:  # hyperscan.error and its kin: a file it cannot load is compiled anew, never trusted
            pass
    db = _database(patterns, flag)
    write_cached("hsdb", key, _hyperscan.dumpb(db))
    return db


def engines_fingerprint() -> list[str]:
    """What the validation of a signature depends on besides its text: each installed engine and its version."""
    found = [f"python {sys.version}"]
    if _hyperscan is not None:
        found.append(f"hyperscan {_hyperscan.__version__}")
    if _RE2_INSTALLED:
        spec = importlib.util.find_spec("re2")
        origin = spec.origin if spec is not None and spec.origin else ""
        try:
            st = os.stat(origin)
            found.append(f"re2 {origin} {st.st_size} {st.st_mtime_ns}")
        except OSError:
            found.append(f"re2 {origin}")
    return found


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


def make_finder(engine: str, patterns: list[str], cache: bool = False) -> Finder:
    """A finder of patterns with engine; cache: keep the compiled form in cache_dir() (Hyperscan's only: the
    others compile in milliseconds)."""
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r}: one of the installed engines {', '.join(ENGINES)}")
    if engine == "hyperscan":
        return HyperscanFinder(patterns, cache)
    return RegexFinder(patterns, _re2() if engine == "re2" else re)


def compile_error(signature: str, engine: str) -> str:
    """'' when the engine compiles the signature, else what it said."""
    try:
        make_finder(engine, [signature])
    except Exception as exc:  # each engine raises its own type (hyperscan.error, re2.error, re.error)
        return f"{type(exc).__name__}: {exc}"
    return ""

