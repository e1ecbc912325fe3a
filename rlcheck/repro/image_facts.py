"""Facts read from the image's own packages, kept per image beside the reproducer verdicts (rlcheck.repro.cache): a
second preflight of the same image reads them instead of asking the package again. SGLang's option list is the one
today: asking ServerArgs imports SGLang and torch, most of a preflight's time once the reproducers' verdicts are kept.

An entry's key holds every installed distribution and version (side directories included), the Python, the
collector's own source and the content of the files the fact is read from (an editable install changes its code
under one version): any change is a miss. Only a complete fact is kept (a collector that could not ask the package
keeps nothing, and asks again next time). An entry that cannot be trusted is named and ignored. With --no-cache, or
without a cache folder of this user's alone, every fact is asked again and none is kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.machinery
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import rlcheck.repro.cache as cache
from rlcheck.process import subproc

FOLDER = "facts"
"""Under rlcheck's cache folder (beside reproducers/)."""
_off = ""
"""Why facts are neither read nor kept in this process ('' when they are): set by the plugin for --no-cache."""


def switch_off(why: str) -> None:
    """'--no-cache' (the plugin, for its run) or '' to switch back on."""
    global _off
    _off = why


def folder() -> tuple[Path | None, str]:
    """(the facts folder, '') or (None, why there is none)."""
    if _off:
        return None, _off
    root = cache.cache_dir()
    if root is None:
        return None, "no cache folder of this user's alone (RLCHECK_CACHE_DIR is empty, or the folder is shared)"
    return root.parent / FOLDER, ""


def complete(payloads: Sequence[Mapping[str, Any]]) -> bool:
    """An entry holds exactly one fact, a JSON object."""
    return len(payloads) == 1 and isinstance(payloads[0].get("fact"), dict)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Recalled:
    fact: dict[str, Any] | None
    """The fact (kept or just collected); None when the collector could not give one."""
    note: str
    """What a verdict says about where it came from: kept (when, by whom), not kept (why), or '' (asked and kept)."""


def files_term(files: Sequence[Path]) -> str:
    """The content of the files the fact is read from (a missing one is a term too)."""
    digest = hashlib.sha256()
    for path in files:
        try:
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError as exc:
            digest.update(f"{path}: {type(exc).__name__}\0".encode())
    return digest.hexdigest()


ASK_PATH = "import json, sys; print(json.dumps([p for p in sys.path if p]))"
"""What a fresh interpreter's import path is (the script folder, '' for -c, left out)."""
_paths: dict[tuple[str, str], list[str]] = {}


def child_path() -> list[str]:
    """Where a child process imports from: a fresh interpreter's path with $PYTHONPATH as it is now, asked once per
    $PYTHONPATH (this process's own sys.path is no guide: a package imported here adds to it at run time, as Ray adds
    its thirdparty_files, and a key made from it changed with what the run had imported). Where the child cannot be
    asked: $PYTHONPATH, then this interpreter's path (a miss at worst, never a wrong hit)."""
    pythonpath = os.environ.get("PYTHONPATH", "")
    key = (sys.executable, pythonpath)
    if key not in _paths:
        _paths[key] = _ask_path() or [p for p in pythonpath.split(os.pathsep) if p] + sys.path
    return list(_paths[key])


def _ask_path() -> list[str] | None:
    try:
        done = subproc.run([sys.executable, "-c", ASK_PATH], timeout_s=60)
        path = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, ValueError):
        return None
    return [str(p) for p in path] if isinstance(path, list) else None


def find_package(name: str) -> list[Path]:
    """The folders of top-level package `name` as a child would import it (nothing is imported)."""
    spec = importlib.machinery.PathFinder.find_spec(name, child_path())
    return [Path(p) for p in (spec.submodule_search_locations or ())] if spec is not None else []


def terms(source: str, files: Sequence[Path]) -> dict[str, str]:
    """The key's terms: the distributions a child can import, the Python, the collector's source, the files read."""
    return {"packages": cache.packages_term(child_path()), "python": cache.python_term(),
            "source": hashlib.sha256(source.encode()).hexdigest(), "files": files_term(files)}


def key_of(nodeid: str, key_terms: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps({"nodeid": nodeid, **key_terms}, sort_keys=True).encode()).hexdigest()


def recall(name: str, source: str, files: Sequence[Path], collect: Callable[[], dict[str, Any] | None]) -> Recalled:
    """The fact `name` kept for this image, else collect() (kept when it gives one). source: the collector's own
    code (its change is a miss); files: what the fact is read from."""
    where, off = folder()
    if where is None:
        return Recalled(fact=collect(), note=f"asked the package (facts cache off: {off})")
    store, nodeid = cache.Store(where, keep=complete), f"fact:{name}"
    key_terms = terms(source, files)
    key = key_of(nodeid, key_terms)
    note = ""
    try:
        entry = store.load(nodeid, key)
    except cache.CorruptEntry as exc:
        entry, note = None, f"ignored a corrupt entry ({exc}); "
    if entry is not None:
        return Recalled(fact=entry.payloads[0]["fact"], note=f"kept for this image, made {entry.made} by "
                                                             f"{entry.made_by} (--no-cache asks the package again)")
    fact = collect()
    if fact is None:
        return Recalled(fact=None, note=f"{note}asked the package; nothing kept")
    try:
        store.save(nodeid, key, key_terms, [{"fact": fact}])
    except OSError as exc:
        return Recalled(fact=fact, note=f"{note}asked the package; could not keep it in {where}: {exc}")
    return Recalled(fact=fact, note=f"{note}asked the package; kept for the next run on this image")
