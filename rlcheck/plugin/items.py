"""What the report and the reproducer cache both read from a test item: its kind and the verdicts it recorded.

Its own module so that rlcheck.plugin.report and rlcheck.plugin.cache each import it, never each other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

verdicts_key = pytest.StashKey[list[str]]()
"""The verdicts a test recorded, as JSON: carried on its report (also from xdist workers), not in JUnit."""
enforced_key = pytest.StashKey[BaseException]()
"""The failure or skip record_verdict raised for the verdicts themselves (a kept reproducer run ends with it)."""
KINDS = {"checks": "check", "reproducers": "reproducer", "testcases": "case"}
PACKAGED_CHECKS = Path(__file__).resolve().parents[1] / "checks"
"""rlcheck/checks/ of this installed copy: its tests are checks wherever pytest's rootdir puts their node ids."""


def kind_of(nodeid: str) -> str:
    return KINDS.get(nodeid.partition("/")[0], "test")


def kind_of_item(item: pytest.Item) -> str:
    """Checks shipped in the package are checks even when run from site-packages (`rlcheck preflight`,
    `pytest --pyargs rlcheck.checks`), where the node id does not start with checks/."""
    if Path(item.path).resolve().parent == PACKAGED_CHECKS:
        return "check"
    return kind_of(item.nodeid)
