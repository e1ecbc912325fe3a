"""Fixtures several test modules share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rlcheck.plugin import gating
from rlcheck.repro import image_facts


@pytest.fixture
def facts_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of the test's own (the facts kept per image go to facts/ in it), facts switched on whatever
    ran before (--no-cache), and off again after."""
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(image_facts, "_paths", {})  # each test asks a child's path again
    image_facts.switch_off("")
    yield tmp_path / "cache" / "facts"
    image_facts.switch_off("")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A self-test the cluster gate skipped without its marker is a gate that skips what it must run: failed, not
    skipped (a gate that skipped every test would otherwise end the self-tests green, with nothing run)."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if (report.skipped and call.when == "setup" and item.get_closest_marker("cluster") is None
            and gating.CLUSTER_NEEDED in str(report.longrepr)):
        report.outcome = "failed"
        report.longrepr = f"rlcheck's cluster gate skipped {item.nodeid}, not marked cluster: {report.longrepr}"
