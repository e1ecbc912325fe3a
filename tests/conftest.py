"""Fixtures several test modules share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rlcheck.repro import image_facts


@pytest.fixture
def facts_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of the test's own (the facts kept per image go to facts/ in it), facts switched on whatever
    ran before (--no-cache), and off again after."""
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path / "cache"))
    image_facts.switch_off("")
    yield tmp_path / "cache" / "facts"
    image_facts.switch_off("")
