"""Rule table for the reproducer cache's side of the plugin (rlcheck.plugin.cache): what a kept entry's stand-in
records and when it fails (the whole message a user reads), which terms a reproducer's key is made of, what the
report says of the cache (on, off and why, reused, kept, notes) and how the plugin is registered once. The pytester
runs in tests/test_repro_cache.py drive the same through pytest (seconds each); these call the pieces directly."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from rlcheck import hardware
from rlcheck.plugin import cache as plugin_cache
from rlcheck.plugin.cache import CachedVerdicts, ReproCache
from rlcheck.plugin.items import verdicts_key
from rlcheck.plugin.options import RunContext, context_key
from rlcheck.repro import cache, image_facts
from rlcheck.verdict import Status, Verdict

OFF = ("no cache folder of this user's alone: RLCHECK_CACHE_DIR is empty, or the folder is shared or cannot be "
       "made")


@pytest.fixture(autouse=True)
def _facts_switch_kept():
    """The image facts' switch as this test run had it (a run with --no-cache keeps it off)."""
    before = image_facts._off
    yield
    image_facts.switch_off(before)


def _payload(status: Status, summary: str = "s") -> dict:
    return {"verdict": Verdict(status=status, summary=summary, check_id="repro_x").to_dict(), "reproduction": None}


def _entry(*payloads: dict) -> cache.Entry:
    return cache.Entry(path=Path("/cache/reproducers/abc.json"), nodeid="reproducers/test_x.py::test_x",
                       made="2026-12-01T10:00:00+00:00", made_by="rlcheck 0.4.0 on node-1", payloads=payloads)


def _stand_in(entry: cache.Entry):
    return types.SimpleNamespace(entry=entry, stash=pytest.Stash(), path=Path("reproducers/test_x.py"),
                                 name="test_x")


STAMP = {"made": "2026-12-01T10:00:00+00:00", "by": "rlcheck 0.4.0 on node-1", "entry": "/cache/reproducers/abc.json"}


# --- the stand-in of a kept entry -----------------------------------------------------------------------------------
@pytest.mark.parametrize("statuses", [[Status.PASS], [Status.PASS, Status.WARN], [Status.SKIP]])
def test_a_kept_entry_without_a_blocking_verdict_records_its_verdicts_stamped_and_passes(statuses):
    payloads = [_payload(s) for s in statuses]
    item = _stand_in(_entry(*payloads))
    CachedVerdicts.runtest(item)  # type: ignore[arg-type]
    assert [json.loads(p) for p in item.stash[verdicts_key]] == [{**p, "cached": STAMP} for p in payloads]


@pytest.mark.parametrize(("statuses", "blocks"), [
    ([Status.FAIL], ["FAIL repro_x: s0"]),
    ([Status.PASS, Status.UNKNOWN], ["UNKNOWN repro_x: s1"]),
    ([Status.FAIL, Status.WARN, Status.UNKNOWN], ["FAIL repro_x: s0", "UNKNOWN repro_x: s2"]),
])
def test_a_kept_blocking_verdict_fails_again_saying_when_it_was_made(statuses, blocks):
    item = _stand_in(_entry(*(_payload(s, f"s{i}") for i, s in enumerate(statuses))))
    with pytest.raises(pytest.fail.Exception) as caught:
        CachedVerdicts.runtest(item)  # type: ignore[arg-type]
    assert caught.value.msg == "\n".join(["kept verdict, made 2026-12-01T10:00:00+00:00 (--no-cache runs it again):",
                                          *blocks])
    assert caught.value.pytrace is False
    assert len(item.stash[verdicts_key]) == len(statuses)  # recorded before it fails: the report lists them all


def test_a_stand_ins_report_line_names_when_its_verdict_was_kept():
    item = _stand_in(_entry(_payload(Status.PASS)))
    assert CachedVerdicts.reportinfo(item) == (  # type: ignore[arg-type]
        Path("reproducers/test_x.py"), None, "test_x (kept verdict of 2026-12-01T10:00:00+00:00)")


# --- the key's terms ------------------------------------------------------------------------------------------------
def _config(profile_name: str | None, root: Path = Path("/project")):
    stash = pytest.Stash()
    stash[context_key] = RunContext(
        hardware_requested=profile_name or "none", profile=hardware.get_profile(profile_name) if profile_name else None,
        hardware_evidence="e", recipe="qwen3-4b-colocated", ray_address=None, report_dir=Path("."), quick=False)
    return types.SimpleNamespace(stash=stash, rootpath=root, getoption=lambda name: {"no_cache": False}[name])


def _item(config, gpu: bool, path: str = "/project/reproducers/test_x.py"):
    return types.SimpleNamespace(config=config, path=Path(path),
                                 get_closest_marker=lambda name: object() if gpu and name == "gpu" else None)


@pytest.mark.parametrize(("gpu", "profile", "term"), [
    (False, "h200", "not used"),
    (False, None, "not used"),
    (True, "h200", "h200"),
    (True, "b200", "b200"),
    (True, None, "none"),
])
def test_the_hardware_term_is_the_profile_judged_only_for_a_reproducer_that_needs_a_gpu(gpu, profile, term):
    assert plugin_cache.hardware_term(_item(_config(profile), gpu)) == term  # type: ignore[arg-type]


def test_the_terms_are_the_image_once_the_source_once_per_module_and_the_hardware(monkeypatch, tmp_path):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    calls: list[object] = []
    monkeypatch.setattr(cache, "packages_term", lambda: calls.append("packages") or "P")
    monkeypatch.setattr(cache, "rlcheck_term", lambda: calls.append("rlcheck") or "R")
    monkeypatch.setattr(cache, "python_term", lambda: calls.append("python") or "3.12")
    monkeypatch.setattr(cache, "source_term", lambda module, root: calls.append((module, root)) or module.stem)
    config = _config("h200")
    repro = ReproCache(config, no_cache=False)  # type: ignore[arg-type]
    first = repro.terms(_item(config, gpu=True))  # type: ignore[arg-type]
    again = repro.terms(_item(config, gpu=False))  # type: ignore[arg-type]
    other = repro.terms(_item(config, gpu=False, path="/project/reproducers/test_y.py"))  # type: ignore[arg-type]
    image = {"packages": "P", "rlcheck": "R", "python": "3.12"}
    assert first == {**image, "source": "test_x", "hardware": "h200"}
    assert again == {**image, "source": "test_x", "hardware": "not used"}
    assert other == {**image, "source": "test_y", "hardware": "not used"}
    assert calls == ["packages", "rlcheck", "python", (Path("/project/reproducers/test_x.py"), Path("/project")),
                     (Path("/project/reproducers/test_y.py"), Path("/project"))]


# --- on, off, and what the report says ------------------------------------------------------------------------------
def test_the_cache_is_on_in_this_users_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    repro = ReproCache(_config(None), no_cache=False)  # type: ignore[arg-type]
    assert (repro.enabled, repro.off, repro.store.root) == (True, "", tmp_path / "reproducers")
    assert (repro.image, repro.sources, repro.reused, repro.kept, repro.notes) == ({}, {}, [], [], [])
    assert image_facts.folder() == (tmp_path / "facts", "")
    assert repro.summary() == {"dir": str(tmp_path / "reproducers"), "enabled": True, "off": "", "reused": 0,
                               "kept": 0, "notes": []}
    assert repro.lines() == [f"cache: 0 reproducer verdict(s) reused, 0 kept for the next run on this image "
                             f"({tmp_path / 'reproducers'}; --no-cache runs them all)"]


@pytest.mark.parametrize(("no_cache", "env", "off"), [(True, "folder", "--no-cache"), (True, "", "--no-cache"),
                                                      (False, "", OFF)])
def test_the_cache_is_off_with_no_cache_or_without_a_folder_and_says_why(monkeypatch, tmp_path, no_cache, env, off):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path) if env else "")
    repro = ReproCache(_config(None), no_cache=no_cache)  # type: ignore[arg-type]
    assert (repro.enabled, repro.off, repro.store.root) == (False, off, Path("."))
    assert repro.summary() == {"dir": None, "enabled": False, "off": off, "reused": 0, "kept": 0, "notes": []}
    assert repro.lines() == [f"cache: off ({off}): every reproducer ran, none kept"]


@pytest.mark.parametrize(("no_cache", "facts"), [(True, (None, "--no-cache")), (False, "folder")])
def test_the_facts_kept_per_image_obey_the_same_switch(monkeypatch, tmp_path, no_cache, facts):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    image_facts.switch_off("left over from an earlier run")
    repro = ReproCache(_config(None), no_cache=no_cache)  # type: ignore[arg-type]
    assert image_facts.folder() == ((tmp_path / "facts", "") if facts == "folder" else facts)
    repro.pytest_unconfigure()
    assert image_facts.folder() == (tmp_path / "facts", "")


def _report(nodeid: str, **attrs: str):
    return types.SimpleNamespace(nodeid=nodeid, **attrs)


def test_the_report_counts_what_was_reused_and_kept_and_lists_every_note(monkeypatch, tmp_path):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    repro = ReproCache(_config(None), no_cache=False)  # type: ignore[arg-type]
    for report in [_report("r/a", rlcheck_cache="reused"), _report("r/b", rlcheck_cache="kept"),
                   _report("r/c", rlcheck_cache="reused", rlcheck_cache_note="n1"), _report("r/d"),
                   _report("r/e", rlcheck_cache="something else"), _report("r/f", rlcheck_cache_note=""),
                   _report("r/g", rlcheck_cache_note="could not keep r/g")]:
        repro.pytest_runtest_logreport(report)  # type: ignore[arg-type]
    assert (repro.reused, repro.kept, repro.notes) == (["r/a", "r/c"], ["r/b"], ["n1", "could not keep r/g"])
    folder = tmp_path / "reproducers"
    assert repro.summary() == {"dir": str(folder), "enabled": True, "off": "", "reused": 2, "kept": 1,
                               "notes": ["n1", "could not keep r/g"]}
    assert repro.summary()["notes"] is not repro.notes
    assert repro.lines() == [
        f"cache: 2 reproducer verdict(s) reused, 1 kept for the next run on this image ({folder}; --no-cache runs "
        "them all)", "cache: n1", "cache: could not keep r/g"]


# --- registration ---------------------------------------------------------------------------------------------------
class _PluginManager:
    def __init__(self, plugins: dict[str, object]) -> None:
        self.plugins = plugins

    def has_plugin(self, name: str) -> bool:
        return name in self.plugins

    def register(self, plugin: object, name: str) -> None:
        self.plugins[name] = plugin

    def get_plugin(self, name: str) -> object:
        return self.plugins.get(name)


@pytest.mark.parametrize("no_cache", [True, False])
def test_register_adds_one_cache_plugin_under_its_name_with_the_no_cache_option(monkeypatch, tmp_path, no_cache):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    config = _config(None)
    config.getoption = lambda name: {"no_cache": no_cache}[name]
    config.pluginmanager = _PluginManager({})
    plugin_cache.register(config)  # type: ignore[arg-type]
    registered = config.pluginmanager.plugins["rlcheck-repro-cache"]
    assert isinstance(registered, ReproCache) and registered.config is config
    assert registered.enabled is not no_cache
    plugin_cache.register(config)  # type: ignore[arg-type]
    assert config.pluginmanager.plugins == {"rlcheck-repro-cache": registered}
    assert plugin_cache.summary_of(config) is registered  # type: ignore[arg-type]


@pytest.mark.parametrize("plugins", [{}, {"rlcheck-repro-cache": object()}, {"other": "x"}])
def test_summary_of_is_none_without_the_cache_plugin(plugins):
    config = types.SimpleNamespace(pluginmanager=_PluginManager(plugins))
    assert plugin_cache.summary_of(config) is None  # type: ignore[arg-type]


# --- the stand-in in place of the test, and which runs are kept ------------------------------------------------------
def test_a_kept_entrys_stand_in_has_the_tests_place_name_and_markers(request):
    marks = [pytest.mark.gpu(count=2).mark, pytest.mark.slow.mark]
    parent = request.node.parent
    test = types.SimpleNamespace(parent=parent, name="test_repro_x[h200]", own_markers=marks)
    entry = _entry(_payload(Status.PASS))
    stand_in = ReproCache._stand_in(test, entry)  # type: ignore[arg-type]
    assert isinstance(stand_in, CachedVerdicts)
    assert (stand_in.parent, stand_in.name, stand_in.nodeid, stand_in.entry) == (
        parent, "test_repro_x[h200]", f"{parent.nodeid}::test_repro_x[h200]", entry)
    assert stand_in.own_markers == marks
    assert stand_in.get_closest_marker("gpu") is marks[0]


def test_a_stand_in_without_a_parent_is_refused(request):
    with pytest.raises(AssertionError):
        ReproCache._stand_in(types.SimpleNamespace(parent=None, name="t", own_markers=[]),  # type: ignore[arg-type]
                             _entry())


@pytest.mark.parametrize(("raised", "enforced", "judged"), [
    (None, None, True),  # it returned: its verdicts passed
    ("the verdicts' own failure", "the verdicts' own failure", True),
    (RuntimeError("ray died"), None, False),  # it crashed: no verdict of its own to keep
    (RuntimeError("ray died"), RuntimeError("a verdict failed"), False),
])
def test_a_run_is_kept_only_when_it_ended_as_its_own_verdicts_say(raised, enforced, judged):
    failure = pytest.fail.Exception("FAIL repro_x: s") if raised == "the verdicts' own failure" else raised
    stash = pytest.Stash()
    if enforced is not None:
        stash[plugin_cache.enforced_key] = failure if isinstance(enforced, str) else enforced
    call = types.SimpleNamespace(excinfo=None if failure is None else types.SimpleNamespace(value=failure))
    assert ReproCache._judged(types.SimpleNamespace(stash=stash), call) is judged  # type: ignore[arg-type]


# --- collection: each reproducer's key, and a kept entry's stand-in in its place ------------------------------------
TERMS = {"packages": "P", "rlcheck": "R", "python": "3.12", "source": "S", "hardware": "not used"}


@pytest.fixture
def kept_cache(monkeypatch, tmp_path):
    """The cache on in tmp_path, every test collected here a reproducer, its terms fixed."""
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(plugin_cache, "kind_of_item", lambda item: "reproducer")
    repro = ReproCache(_config(None), no_cache=False)  # type: ignore[arg-type]
    repro.asked = []  # type: ignore[attr-defined]
    repro.terms = lambda item: repro.asked.append(item) or dict(TERMS)  # type: ignore[method-assign,attr-defined]
    return repro


def test_a_reproducer_without_a_kept_entry_stays_and_gets_its_key(request, kept_cache):
    other = types.SimpleNamespace(nodeid="reproducers/test_y.py::test_y")  # no pytest.Function: left alone
    items = [other, request.node]
    kept_cache.replace_kept(items)
    assert items == [other, request.node] and kept_cache.asked == [request.node]
    assert request.node.stash[plugin_cache.entry_key] == (cache.key_of(request.node.nodeid, TERMS), TERMS)
    assert plugin_cache.note_key not in request.node.stash


def test_a_reproducer_with_a_kept_entry_is_replaced_in_place_by_its_stand_in(request, kept_cache):
    key = cache.key_of(request.node.nodeid, TERMS)
    kept_cache.store.save(request.node.nodeid, key, TERMS, [_payload(Status.FAIL)])
    first = types.SimpleNamespace(nodeid="x")
    items = [first, request.node]
    kept_cache.replace_kept(items)
    assert items[0] is first and isinstance(items[1], CachedVerdicts)
    assert (items[1].nodeid, items[1].entry.payloads) == (request.node.nodeid, (_payload(Status.FAIL),))


def test_a_corrupt_entry_is_named_and_the_reproducer_runs(request, kept_cache):
    path = kept_cache.store.path(request.node.nodeid, cache.key_of(request.node.nodeid, TERMS))
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    after = pytest.Function.from_parent(request.node.parent, name="test_after_it", callobj=lambda: None)
    kept_cache.store.save(after.nodeid, cache.key_of(after.nodeid, TERMS), TERMS, [_payload(Status.PASS)])
    items = [request.node, after]
    kept_cache.replace_kept(items)
    assert items[0] is request.node
    assert isinstance(items[1], CachedVerdicts)  # the reproducers after a corrupt entry are still looked up
    assert request.node.stash[plugin_cache.note_key] == (
        f"ignored a corrupt entry for {request.node.nodeid} ({path}: not an rlcheck cache entry (KeyError: 'body')); "
        "it ran again")


def test_collection_leaves_every_item_alone_with_the_cache_off_or_for_other_kinds(request, monkeypatch, tmp_path):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    off = ReproCache(_config(None), no_cache=True)  # type: ignore[arg-type]
    items = [request.node]
    off.replace_kept(items)
    monkeypatch.setattr(plugin_cache, "kind_of_item", lambda item: "check")
    ReproCache(_config(None), no_cache=False).replace_kept(items)  # type: ignore[arg-type]
    assert items == [request.node] and plugin_cache.entry_key not in request.node.stash


# --- the report: reused, kept, or why not ---------------------------------------------------------------------------
NODEID = "reproducers/test_x.py::test_x"


def _ran(*payloads: dict, key: bool = True, note: str = ""):
    stash = pytest.Stash()
    if key:
        stash[plugin_cache.entry_key] = ("k" * 32, TERMS)
    if payloads:
        stash[verdicts_key] = [json.dumps(p) for p in payloads]
    if note:
        stash[plugin_cache.note_key] = note
    return types.SimpleNamespace(stash=stash, nodeid=NODEID)


def _call(when: str = "call", raised: BaseException | None = None):
    return types.SimpleNamespace(when=when, excinfo=None if raised is None else types.SimpleNamespace(value=raised))


@pytest.fixture
def on(monkeypatch, tmp_path):
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path))
    return ReproCache(_config(None), no_cache=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("status", [Status.PASS, Status.WARN, Status.FAIL])
def test_a_judged_run_is_kept_and_its_report_says_so(on, status):
    rep = types.SimpleNamespace()
    on.record_outcome(_ran(_payload(status)), _call(), rep)
    assert vars(rep) == {"rlcheck_cache": "kept"}
    assert on.store.load(NODEID, "k" * 32).payloads == (_payload(status),)  # type: ignore[union-attr]


@pytest.mark.parametrize(("item", "call"), [
    (_ran(_payload(Status.UNKNOWN)), _call()),  # could not run: never kept
    (_ran(_payload(Status.PASS), _payload(Status.SKIP)), _call()),
    (_ran(), _call()),  # recorded no verdict
    (_ran(_payload(Status.PASS)), _call(raised=RuntimeError("ray died"))),  # crashed after its verdict
    (_ran(_payload(Status.PASS), key=False), _call()),  # no key: not a reproducer, or the cache was off
    (_ran(_payload(Status.PASS)), _call("setup")),
    (_ran(_payload(Status.PASS)), _call("teardown")),
])
def test_a_run_that_is_no_judgement_of_its_own_is_not_kept(on, item, call):
    rep = types.SimpleNamespace()
    on.record_outcome(item, call, rep)
    assert vars(rep) == {}
    assert on.store.load(NODEID, "k" * 32) is None


def test_a_run_failed_by_its_own_verdict_is_kept(on):
    failure = pytest.fail.Exception("FAIL repro_x: s")
    item = _ran(_payload(Status.FAIL))
    item.stash[plugin_cache.enforced_key] = failure
    rep = types.SimpleNamespace()
    on.record_outcome(item, _call(raised=failure), rep)
    assert vars(rep) == {"rlcheck_cache": "kept"}


def test_the_corrupt_entrys_note_goes_on_the_calls_report_only(on):
    item = _ran(_payload(Status.UNKNOWN), note="ignored a corrupt entry")
    setup, call = types.SimpleNamespace(), types.SimpleNamespace()
    on.record_outcome(item, _call("setup"), setup)
    on.record_outcome(item, _call(), call)
    assert (vars(setup), vars(call)) == ({}, {"rlcheck_cache_note": "ignored a corrupt entry"})


def test_a_stand_ins_report_says_reused(on, request):
    stand_in = ReproCache._stand_in(request.node, _entry(_payload(Status.PASS)))
    rep = types.SimpleNamespace()
    on.record_outcome(stand_in, _call(), rep)
    assert vars(rep) == {"rlcheck_cache": "reused"}


def test_a_run_that_cannot_be_kept_says_why_on_its_report(on, tmp_path):
    on.store.root = tmp_path / "a file"
    on.store.root.write_text("")
    rep = types.SimpleNamespace()
    on.record_outcome(_ran(_payload(Status.PASS)), _call(), rep)
    assert list(vars(rep)) == ["rlcheck_cache_note"]
    assert rep.rlcheck_cache_note.startswith(f"could not keep {NODEID} in {tmp_path / 'a file'}: [Errno 17] ")
