"""Reproducer verdicts kept per image: a second preflight of the same image reuses them instead of re-running.

A reproducer's verdict depends on the image it ran in, so its entry is keyed on that image's fingerprint, term by
term: every installed distribution and version (side directories included), rlcheck's version and the hash of its
own files, the reproducer's own source (its module, the conftest.py files above it and the first-party helpers it
imports), the Python, and the hardware profile where the reproducer needs a GPU. Any term that changes is a miss.
Only a judged run is kept (PASS, WARN or FAIL, recorded by the test itself): an UNKNOWN, a SKIP or a test that
errored is never written. An entry that cannot be read, is not this test's, or fails its own checksum is named and
ignored, never trusted.

The folder: reproducers/ in rlcheck's cache folder (rlcheck.scan_engines.cache_dir: $RLCHECK_CACHE_DIR, else
$XDG_CACHE_HOME/rlcheck, else ~/.cache/rlcheck; none when RLCHECK_CACHE_DIR is '' or the folder is not this user's
alone, and then nothing is reused or kept).
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import hashlib
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import rlcheck
import rlcheck.repro.sidecar as sidecar
from rlcheck import scan_engines

FORMAT = 1
"""The entry layout; an entry of another layout is a miss, never read as this one."""
CACHEABLE = frozenset({"PASS", "WARN", "FAIL"})
"""Judged verdicts. UNKNOWN (could not run) and SKIP (not applicable, maybe only here and now) always run again."""
TERMS = ("packages", "rlcheck", "source", "python", "hardware")
RLCHECK_DIR = Path(rlcheck.__file__).resolve().parent


class CorruptEntry(Exception):
    """An entry that is there but cannot be trusted: its path and why."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


def cache_dir() -> Path | None:
    """reproducers/ in rlcheck's cache folder; None when there is none to trust (see the module's docstring)."""
    root = scan_engines.cache_dir()
    return None if root is None else root / "reproducers"


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def distributions(dirs: Iterable[Path]) -> list[str]:
    """'name-version' of every distribution installed in these folders, read from the metadata folders' names
    (name-version.dist-info / .egg-info: no METADATA parsed), in folder order."""
    out: list[str] = []
    for directory in dirs:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        out += [f"{directory}:{n.rsplit('.', 1)[0]}" for n in names if n.endswith((".dist-info", ".egg-info"))]
    return out


def packages_term(path: Sequence[str] | None = None, sidecar_root: Path | None = None) -> str:
    """Every distribution this interpreter can import from (sys.path), and every side directory's."""
    dirs = [Path(p) for p in (sys.path if path is None else path) if p and Path(p).is_dir()]
    root = sidecar_root or Path(os.environ.get("RLCHECK_SIDECAR_DIR", sidecar.DEFAULT_DIR))
    try:
        sides = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        sides = []
    return _sha("\n".join(distributions([*dirs, *sides])))


def tree_hash(root: Path) -> str:
    """Every file under root (compiled caches aside), by relative path and content."""
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def rlcheck_term(version: str | None = None, package_dir: Path = RLCHECK_DIR) -> str:
    """rlcheck's version and its files (a source checkout keeps one version while its code changes)."""
    return f"{version or rlcheck.__version__}+{tree_hash(package_dir)[:16]}"


def python_term() -> str:
    return f"{platform.python_implementation()} {sys.version} {platform.machine()}"


def _imported(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


def _first_party(name: str, root: Path) -> Path | None:
    """The file of an already imported module that lives under root but outside rlcheck (which rlcheck_term covers)."""
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    if not path.is_relative_to(root) or path.is_relative_to(RLCHECK_DIR) or "site-packages" in path.parts:
        return None
    return path


def source_term(module: Path, root: Path) -> str:
    """The reproducer's module, every conftest.py from its folder up to root, and the first-party modules they import
    (transitively; rlcheck itself is its own term)."""
    module, root = module.resolve(), root.resolve()
    todo = [module, *(d / "conftest.py" for d in module.parents if d.is_relative_to(root))]
    seen: dict[Path, bytes] = {}
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen[path] = path.read_bytes()
        for name in _imported(seen[path].decode("utf-8", "replace")):
            found = _first_party(name, root)
            if found is not None:
                todo.append(found)
    return _sha(b"".join(str(p.relative_to(root)).encode() + b"\0" + seen[p] + b"\0" for p in sorted(seen)))


def key_of(nodeid: str, terms: Mapping[str, str]) -> str:
    """One test's key: its node id and every term."""
    if set(terms) != set(TERMS):
        raise ValueError(f"terms={sorted(terms)}: exactly {', '.join(TERMS)}")
    return _sha(json.dumps({"nodeid": nodeid, **terms}, sort_keys=True))


def cacheable(payloads: Sequence[Mapping[str, Any]]) -> bool:
    """A judged run: at least one verdict, each PASS, WARN or FAIL."""
    return bool(payloads) and all(p.get("verdict", {}).get("status") in CACHEABLE for p in payloads)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    path: Path
    nodeid: str
    made: str
    """When the verdicts were made (UTC, ISO 8601)."""
    made_by: str
    """rlcheck's version and the host that made them."""
    payloads: tuple[dict[str, Any], ...]
    """The verdicts as the test recorded them ({"verdict": ..., "reproduction": ...})."""


def _checksum(body: Mapping[str, Any]) -> str:
    return _sha(json.dumps(body, sort_keys=True))


class Store:
    """One folder of entries, one file per (test, key); keep: which payloads an entry may hold (reproducers: judged
    verdicts; rlcheck.repro.image_facts: a complete fact)."""

    def __init__(self, root: Path, keep: Callable[[Sequence[Mapping[str, Any]]], bool] | None = None) -> None:
        self.root = root
        self.keep = keep or cacheable

    def path(self, nodeid: str, key: str) -> Path:
        return self.root / f"{_sha(nodeid)[:16]}-{key[:32]}.json"

    def load(self, nodeid: str, key: str) -> Entry | None:
        """The entry, None when there is none; CorruptEntry when one is there but cannot be trusted."""
        path = self.path(nodeid, key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise CorruptEntry(path, f"unreadable ({exc})") from exc
        try:
            doc = json.loads(text)
            body, checksum = doc["body"], doc["sha256"]
            if checksum != _checksum(body):
                raise CorruptEntry(path, "its checksum does not match its content")
            if body["format"] != FORMAT or body["nodeid"] != nodeid or body["key"] != key:
                raise CorruptEntry(path, f"not this test's entry (format {body['format']}, test {body['nodeid']})")
            payloads = tuple(body["payloads"])
            if not self.keep(payloads):
                raise CorruptEntry(path, "holds what is never kept (a verdict UNKNOWN, SKIP or none; no fact)")
            return Entry(path=path, nodeid=nodeid, made=str(body["made"]), made_by=str(body["made_by"]),
                         payloads=payloads)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptEntry(path, f"not an rlcheck cache entry ({type(exc).__name__}: {exc})") from exc

    def save(self, nodeid: str, key: str, terms: Mapping[str, str], payloads: Sequence[Mapping[str, Any]],
             now: datetime.datetime | None = None) -> Path:
        """Write the entry atomically (a reader never sees half of it); ValueError for verdicts never kept."""
        if not self.keep(payloads):
            raise ValueError("only PASS, WARN or FAIL verdicts (or a complete fact) are kept: never UNKNOWN, SKIP or "
                             "none")
        made = (now or datetime.datetime.now(datetime.UTC)).isoformat(timespec="seconds")
        body = {"format": FORMAT, "nodeid": nodeid, "key": key, "terms": dict(terms), "made": made,
                "made_by": f"rlcheck {rlcheck.__version__} on {platform.node()}", "payloads": list(payloads)}
        path = self.path(nodeid, key)
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".entry-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"body": body, "sha256": _checksum(body)}, out, indent=1)
        os.replace(tmp, path)
        return path
