"""The per-version table of SLIME's log statements, checked against SLIME's own source where it is at hand.

CI has no network: there the committed table and the recorded logs (tests/test_replay.py) carry the
tests. With a SLIME git checkout (RLCHECK_SLIME_GIT=/path/to/slime/.git, any clone with the tags), every
statement's f-string must be at its recorded line at the recorded commit.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from rlcheck.e2e import slime_log

FIELD = re.compile(r"\{[^{}]*\}")


def literal(text: str) -> str:
    return FIELD.sub("{}", text)


@pytest.mark.parametrize("version", slime_log.VERSIONS)
def test_slime_log_table_is_whole(version):
    table = slime_log.tables()[version]
    assert table.version == version and re.fullmatch(r"[0-9a-f]{40}", table.commit)
    for s in table.statements.values():
        body = s.source.removeprefix('f"').removesuffix('"')
        assert literal(s.format).startswith(literal(body)), f"{version} {s.name}: format {s.format!r} vs {s.source!r}"
    names = [m.name for m in table.milestones]
    assert names[:3] == ["placement-group", "train-actor-ready", "weights-synced"] and names[-1] == "update_weights"
    assert ("rollout_collected" in table.statements) is (version == "v0.2.4")  # removed in SLIME v0.3.0


def source_file(git_dir: Path, commit: str, path: str) -> list[str]:
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True,
                          text=True, timeout=60, check=False)
    if done.returncode != 0:
        pytest.skip(f"needs {path} at {commit[:12]} in $RLCHECK_SLIME_GIT: {done.stderr.strip()[:200]}")
    return done.stdout.splitlines()


@pytest.mark.parametrize("version", slime_log.VERSIONS)
def test_slime_log_statements_are_where_slime_has_them(version):
    git_dir = os.environ.get("RLCHECK_SLIME_GIT")
    if not git_dir or not Path(git_dir).exists():
        pytest.skip(f"needs a SLIME git checkout with {version} ($RLCHECK_SLIME_GIT): found {git_dir or 'none'}")
    table = slime_log.tables()[version]
    logging = source_file(Path(git_dir), table.commit, table.logger_file)
    assert table.logger_source in logging[table.logger_line - 1], f"{version} logger format moved"
    for s in table.statements.values():
        lines = source_file(Path(git_dir), table.commit, s.file)
        where = f"{version} {s.name} at {s.file}:{s.line}"
        assert "logger." in lines[s.line - 1], f"{where} is not a logger call: {lines[s.line - 1]!r}"
        assert s.source in "\n".join(lines[s.line - 1:s.line + 2]), f"{where}: {s.source} not found"


@pytest.mark.parametrize(("framework", "release", "table"), [
    (None, None, "v0.2.4"),
    ("slime", "0.2.4", "v0.2.4"),
    ("slime", "0.2.99", "v0.2.4"),
    ("slime", "0.3.0", "v0.3.1"),
    ("slime", "0.3.1", "v0.3.1"),
    ("slime", "0.3.2", "main"),
    ("slime", None, "main"),
    ("slime", "not-a-version", "main"),
    ("miles", "0.1.0", "main"),
    ("miles", None, "main"),
])
def test_slime_log_table_for_each_framework_release(framework, release, table):
    version, why = slime_log.version_for(framework, release)
    assert version == table and version in slime_log.tables(), why
    assert why
