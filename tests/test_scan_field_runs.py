"""`rlcheck scan` on short logs of failed SLIME runs (tests/data/logs/field_runs): each names its catalogue entry,
through the real CLI in a subprocess, and the healthy run names none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from rlcheck import catalog

ROOT = Path(__file__).resolve().parent.parent
RUNS = Path(__file__).parent / "data" / "logs" / "field_runs"
MANIFEST = tomllib.loads((RUNS / "manifest.toml").read_text(encoding="utf-8"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _scan(*paths: Path) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "scan", "--json", *map(str, paths)],
                          capture_output=True, text=True, timeout=300, env=ENV, cwd=ROOT, check=False)
    assert not done.stderr.strip() or done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture(scope="module")
def named() -> dict[str, set[str]]:
    """File name -> the ids `rlcheck scan` named in it (one scan of every failed run)."""
    code, report = _scan(*(RUNS / run["file"] for run in MANIFEST["run"]))
    assert code == 1 and not report["errors"], report["errors"]
    found: defaultdict[str, set[str]] = defaultdict(set)
    for finding in report["findings"]:
        found[Path(finding["path"]).name].add(finding["failure_id"])
    return found


def test_field_runs_cover_the_issue_classes_and_every_file_is_listed():
    ids = {run["id"] for run in MANIFEST["run"]}
    assert ids <= set(catalog.load_catalog()) and len(ids) == len(MANIFEST["run"]) >= 17
    listed = {run["file"] for run in MANIFEST["run"]} | {MANIFEST["healthy"]["file"]}
    assert listed == {p.name for p in RUNS.glob("*.log")}
    assert all(run["sources"] for run in MANIFEST["run"])


@pytest.mark.parametrize("run", MANIFEST["run"], ids=[r["id"] for r in MANIFEST["run"]])
def test_scan_names_the_entry_of_each_failed_run(run, named):
    found = named[run["file"]]
    assert run["id"] in found, f"{run['file']} ({run['what']}): scan named {sorted(found)}"
    assert found - {run["id"]} <= set(run.get("also", [])), f"{run['file']}: also named {sorted(found)}"


def test_scan_names_nothing_in_the_healthy_run():
    code, report = _scan(RUNS / MANIFEST["healthy"]["file"])
    assert (code, report["findings"], report["errors"]) == (0, [], [])
