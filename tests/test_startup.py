"""Lazy start-up: `rlcheck scan` imports what scanning needs and nothing else (asserted on sys.modules, never on
time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCAN_AND_LIST = (
    "import json, sys\n"
    "from rlcheck.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
)
SCANNING = {"rlcheck", "rlcheck.cli", "rlcheck.catalog", "rlcheck.data_types", "rlcheck.scan", "rlcheck.scan_engines",
            "rlcheck.scan_input", "rlcheck.scan_output"}


def _scan(tmp_path: Path, *argv: str) -> tuple[int, set[str], str]:
    env = {**os.environ, "RLCHECK_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", SCAN_AND_LIST, "scan", *argv], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    doc = json.loads(done.stdout.splitlines()[-1])
    return doc["code"], set(doc["modules"]), done.stdout


def _warm(cache: Path) -> None:
    """The compiled catalogue of this run's cache in cache (the scan then starts warm, as every scan after the
    first does); a run with no cache directory leaves the scan below to compile it."""
    import shutil

    from rlcheck import scan, scan_engines

    scan.Matcher()  # validated, compiled and kept in this run's cache directory, if it has one
    cache.mkdir(mode=0o700)
    where = scan_engines.cache_dir()
    for kept in sorted(where.glob("*.bin")) if where is not None else ():
        shutil.copy2(kept, cache / kept.name)


def test_scan_imports_only_the_scanner(tmp_path):
    log = tmp_path / "one.log"
    log.write_text("ray.exceptions.RayTaskError: nothing known here\nall good\n")
    _warm(tmp_path / "cache")
    code, modules, out = _scan(tmp_path, str(log))
    assert code in (0, 1), out
    assert {m for m in modules if m.startswith("rlcheck")} == SCANNING
    # What a warm scan has no use for: the TOML parser (the catalogue is read from its compiled form), the
    # package metadata and version parsing, the second regex engine, and every other command's modules.
    for heavy in ("tomllib", "importlib.metadata", "packaging", "re2", "pytest", "rlcheck.hardware",
                  "rlcheck.preflight", "rlcheck.recipes"):
        assert heavy not in modules
