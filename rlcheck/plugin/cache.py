"""Reproducer verdicts reused per image (rlcheck.repro.cache): a kept entry stands in for the test, a judged run is
kept for the next run on the same image, and --no-cache does neither.

At collection each reproducer gets its key; on a hit the test is replaced by an item that records the kept verdicts
(marked with when they were made), so its fixtures (a Ray head, warm interpreters) never start. Under xdist every
worker does the same with the same folder; what the report says is gathered on the controller.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from rlcheck.plugin.items import enforced_key, kind_of_item, verdicts_key
from rlcheck.plugin.options import get_context
from rlcheck.repro import cache, image_facts
from rlcheck.verdict import Verdict

PLUGIN_NAME = "rlcheck-repro-cache"
entry_key = pytest.StashKey[tuple[str, dict[str, str]]]()
"""A reproducer's (key, terms), set at collection."""
note_key = pytest.StashKey[str]()
"""Why a reproducer's entry was not used (a corrupt entry, named), said on its report."""


class CachedVerdicts(pytest.Item):
    """A reproducer whose verdicts come from its kept entry: same node id and markers, no fixtures, no run."""

    def __init__(self, *, entry: cache.Entry, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entry = entry

    def runtest(self) -> None:
        stamp = {"made": self.entry.made, "by": self.entry.made_by, "entry": str(self.entry.path)}
        payloads = [{**p, "cached": stamp} for p in self.entry.payloads]
        self.stash[verdicts_key] = [json.dumps(p) for p in payloads]
        bad = [v for v in (Verdict.from_dict(p["verdict"]) for p in payloads) if v.status.blocks]
        if bad:
            pytest.fail(f"kept verdict, made {self.entry.made} (--no-cache runs it again):\n"
                        + "\n".join(v.render() for v in bad), pytrace=False)

    def reportinfo(self) -> tuple[Path, None, str]:
        return self.path, None, f"{self.name} (kept verdict of {self.entry.made})"


def hardware_term(item: pytest.Item) -> str:
    """The profile judged, for a reproducer that needs a GPU; the others do not depend on it."""
    if item.get_closest_marker("gpu") is None:
        return "not used"
    profile = get_context(item.config).profile
    return profile.name if profile else "none"


class ReproCache:
    """Looks entries up at collection, keeps judged runs, and gathers what happened for the report."""

    def __init__(self, config: pytest.Config, no_cache: bool) -> None:
        self.config = config
        folder = None if no_cache else cache.cache_dir()
        self.off = "--no-cache" if no_cache else "" if folder is not None else (
            "no cache folder of this user's alone: RLCHECK_CACHE_DIR is empty, or the folder is shared or cannot be "
            "made")
        self.enabled = folder is not None
        image_facts.switch_off("--no-cache" if no_cache else "")  # the facts kept per image obey the same switch
        self.store = cache.Store(folder or Path("."))
        self.image: dict[str, str] = {}
        self.sources: dict[Path, str] = {}
        self.reused: list[str] = []
        self.kept: list[str] = []
        self.notes: list[str] = []

    def terms(self, item: pytest.Item) -> dict[str, str]:
        if not self.image:
            self.image = {"packages": cache.packages_term(), "rlcheck": cache.rlcheck_term(),
                          "python": cache.python_term()}
        module = Path(item.path)
        if module not in self.sources:
            self.sources[module] = cache.source_term(module, Path(item.config.rootpath))
        return {**self.image, "source": self.sources[module], "hardware": hardware_term(item)}

    @pytest.hookimpl(trylast=True)  # after -k / -m deselection
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.replace_kept(items)

    def replace_kept(self, items: list[pytest.Item]) -> None:
        """Each reproducer gets its key; one whose entry was kept is replaced (in place) by its stand-in."""
        if not self.enabled:
            return
        for i, item in enumerate(items):
            if not isinstance(item, pytest.Function) or kind_of_item(item) != "reproducer":
                continue
            key_terms = (cache.key_of(item.nodeid, terms := self.terms(item)), terms)
            item.stash[entry_key] = key_terms
            try:
                entry = self.store.load(item.nodeid, key_terms[0])
            except cache.CorruptEntry as exc:
                item.stash[note_key] = f"ignored a corrupt entry for {item.nodeid} ({exc}); it ran again"
                continue
            if entry is not None:
                items[i] = self._stand_in(item, entry)

    @staticmethod
    def _stand_in(item: pytest.Function, entry: cache.Entry) -> CachedVerdicts:
        parent = item.parent
        assert parent is not None
        stand_in = CachedVerdicts.from_parent(parent, name=item.name, entry=entry)
        stand_in.own_markers.extend(item.own_markers)  # --quick, gpu gating: as the test would be
        return stand_in

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        rep = yield
        self.record_outcome(item, call, rep)
        return rep

    def record_outcome(self, item: pytest.Item, call: pytest.CallInfo[None], rep: Any) -> None:
        """On the test's report (carried from an xdist worker): its verdicts reused or kept, or why not."""
        if call.when != "call":
            return
        if note_key in item.stash:
            rep.rlcheck_cache_note = item.stash[note_key]
        if isinstance(item, CachedVerdicts):
            rep.rlcheck_cache = "reused"
        elif entry_key in item.stash and self._judged(item, call):
            payloads = [json.loads(p) for p in item.stash.get(verdicts_key, [])]
            if cache.cacheable(payloads):
                key, terms = item.stash[entry_key]
                try:
                    self.store.save(item.nodeid, key, terms, payloads)
                    rep.rlcheck_cache = "kept"
                except OSError as exc:
                    rep.rlcheck_cache_note = f"could not keep {item.nodeid} in {self.store.root}: {exc}"

    @staticmethod
    def _judged(item: pytest.Item, call: pytest.CallInfo[None]) -> bool:
        """The test ended as its own verdicts say: it returned, or it failed with the verdicts' own failure."""
        return call.excinfo is None or call.excinfo.value is item.stash.get(enforced_key, None)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """On the controller (reports from xdist workers too): what was reused, kept or refused."""
        state = getattr(report, "rlcheck_cache", None)
        if state == "reused":
            self.reused.append(report.nodeid)
        elif state == "kept":
            self.kept.append(report.nodeid)
        note = getattr(report, "rlcheck_cache_note", None)
        if note:
            self.notes.append(note)

    def pytest_unconfigure(self) -> None:
        image_facts.switch_off("")  # for whatever runs next in this process (an in-process pytester run ends)

    def summary(self) -> dict[str, Any]:
        """The report's statement of the cache."""
        return {"dir": str(self.store.root) if self.enabled else None, "enabled": self.enabled, "off": self.off,
                "reused": len(self.reused),
                "kept": len(self.kept), "notes": list(self.notes)}

    def lines(self) -> list[str]:
        if not self.enabled:
            return [f"cache: off ({self.off}): every reproducer ran, none kept"]
        out = [f"cache: {len(self.reused)} reproducer verdict(s) reused, {len(self.kept)} kept for the next run on "
               f"this image ({self.store.root}; --no-cache runs them all)"]
        return out + [f"cache: {note}" for note in self.notes]


def register(config: pytest.Config) -> None:
    if config.pluginmanager.has_plugin(PLUGIN_NAME):
        return
    config.pluginmanager.register(ReproCache(config, no_cache=config.getoption("no_cache")), PLUGIN_NAME)


def summary_of(config: pytest.Config) -> ReproCache | None:
    found = config.pluginmanager.get_plugin(PLUGIN_NAME)
    return found if isinstance(found, ReproCache) else None
