"""Reproducer verdicts reused per image: every term of the key, the entry's rules, and the plugin through pytester."""

from __future__ import annotations

import datetime
import json
import types

import pytest

from rlcheck.repro import cache

TERMS = {"packages": "p", "rlcheck": "0.1.0+abc", "source": "s", "python": "CPython 3.12", "hardware": "not used"}
PASSED = {"verdict": {"check_id": "repro_x", "status": "PASS", "summary": "fixed upstream"},
          "reproduction": {"state": "fixed upstream"}}
NODEID = "reproducers/test_repro_x.py::test_repro_x"


@pytest.mark.parametrize("term", cache.TERMS)
def test_cache_key_changes_with_every_term(term):
    assert cache.key_of(NODEID, {**TERMS, term: TERMS[term] + "-other"}) != cache.key_of(NODEID, TERMS)


def test_cache_key_is_per_test_and_refuses_missing_or_extra_terms():
    assert cache.key_of(NODEID, TERMS) == cache.key_of(NODEID, dict(TERMS))
    assert cache.key_of(NODEID + "[b]", TERMS) != cache.key_of(NODEID, TERMS)
    with pytest.raises(ValueError, match="exactly packages, rlcheck, source, python, hardware"):
        cache.key_of(NODEID, {k: v for k, v in TERMS.items() if k != "hardware"})
    with pytest.raises(ValueError, match="exactly"):
        cache.key_of(NODEID, {**TERMS, "weather": "fine"})


def test_cache_packages_term_follows_versions_in_site_and_side_directories(tmp_path):
    site, sides = tmp_path / "site", tmp_path / "sidecar"
    (site / "numpy-1.26.4.dist-info").mkdir(parents=True)
    (sides / "numpy-2" / "numpy-2.5.5.dist-info").mkdir(parents=True)
    before = cache.packages_term([str(site)], sides)
    assert cache.packages_term([str(site)], sides) == before
    (site / "numpy-1.26.4.dist-info").rename(site / "numpy-1.26.5.dist-info")
    assert cache.packages_term([str(site)], sides) != before
    after_site = cache.packages_term([str(site)], sides)
    (sides / "numpy-2" / "numpy-2.5.5.dist-info").rename(sides / "numpy-2" / "numpy-2.5.6.dist-info")
    assert cache.packages_term([str(site)], sides) != after_site
    (site / "README.txt").write_text("not a distribution")  # only metadata folders count
    assert cache.packages_term([str(site)], sides) == cache.packages_term([str(site)], sides)


def test_cache_rlcheck_term_follows_version_and_files(tmp_path):
    package = tmp_path / "rlcheck"
    (package / "__pycache__").mkdir(parents=True)
    (package / "catalog.py").write_text("A = 1\n")
    before = cache.rlcheck_term("0.1.0", package)
    assert cache.rlcheck_term("0.1.1", package) != before
    (package / "__pycache__" / "catalog.cpython-312.pyc").write_bytes(b"compiled")  # caches are not source
    assert cache.rlcheck_term("0.1.0", package) == before
    (package / "catalog.py").write_text("A = 2\n")
    assert cache.rlcheck_term("0.1.0", package) != before


def test_cache_source_term_covers_module_conftests_and_first_party_helpers(tmp_path, monkeypatch):
    repro, helpers = tmp_path / "reproducers", tmp_path / "helpers_pkg"
    repro.mkdir()
    helpers.mkdir()
    module = repro / "test_repro_x.py"
    module.write_text("from helpers_pkg import probe\n")
    (repro / "conftest.py").write_text("X = 1\n")
    (helpers / "probe.py").write_text("Y = 1\n")
    (tmp_path / "unrelated.py").write_text("Z = 1\n")
    fake = types.ModuleType("helpers_pkg.probe")
    fake.__file__ = str(helpers / "probe.py")
    monkeypatch.setitem(__import__("sys").modules, "helpers_pkg.probe", fake)
    seen = [cache.source_term(module, tmp_path)]
    (tmp_path / "unrelated.py").write_text("Z = 2\n")  # not imported: not the reproducer's source
    assert cache.source_term(module, tmp_path) == seen[0]
    for path, text in ((helpers / "probe.py", "Y = 2\n"), (repro / "conftest.py", "X = 2\n"),
                       (module, "from helpers_pkg import probe  # changed\n")):
        path.write_text(text)
        seen.append(cache.source_term(module, tmp_path))
        assert seen[-1] != seen[-2], f"a change of {path.name} must change the source term"


def test_cache_dir_in_rlchecks_cache_folder_or_none(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path / "given"))
    assert cache.cache_dir() == tmp_path / "given" / "reproducers"
    monkeypatch.delenv("RLCHECK_CACHE_DIR")
    assert cache.cache_dir() == tmp_path / "xdg" / "rlcheck" / "reproducers"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "rlcheck" / "reproducers"
    monkeypatch.setenv("RLCHECK_CACHE_DIR", "")  # off
    assert cache.cache_dir() is None
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # writable by others: an entry there could be planted, so there is no cache
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(shared))
    assert cache.cache_dir() is None


def test_cache_store_keeps_judged_verdicts_and_never_unknown_skip_or_none(tmp_path):
    store, key = cache.Store(tmp_path), cache.key_of(NODEID, TERMS)
    assert store.load(NODEID, key) is None
    made = datetime.datetime(2026, 12, 2, 15, 0, tzinfo=datetime.UTC)
    store.save(NODEID, key, TERMS, [PASSED], now=made)
    entry = store.load(NODEID, key)
    assert entry is not None and entry.payloads == (PASSED,) and entry.made == "2026-12-02T15:00:00+00:00"
    assert store.load(NODEID, cache.key_of(NODEID, {**TERMS, "packages": "q"})) is None  # another image: a miss
    for status in ("UNKNOWN", "SKIP"):
        payload = {"verdict": {**PASSED["verdict"], "status": status}}
        with pytest.raises(ValueError, match="never UNKNOWN, SKIP"):
            store.save(NODEID, key, TERMS, [PASSED, payload])
    with pytest.raises(ValueError, match="never UNKNOWN, SKIP or none"):
        store.save(NODEID, key, TERMS, [])
    failed = {"verdict": {**PASSED["verdict"], "status": "FAIL"}}
    store.save(NODEID, key, TERMS, [failed])  # a judged FAIL is a verdict on the image: kept
    assert store.load(NODEID, key).payloads == (failed,)


@pytest.mark.parametrize("spoil, why", [
    (lambda text: text[: len(text) // 2], "not an rlcheck cache entry"),
    (lambda text: text.replace("fixed upstream", "present; fix verified", 1), "checksum does not match"),
    (lambda text: "[1, 2]", "not an rlcheck cache entry"),
    (lambda text: "\udcff", "unreadable"),
])
def test_cache_corrupt_entry_is_named_never_trusted(tmp_path, spoil, why):
    store, key = cache.Store(tmp_path), cache.key_of(NODEID, TERMS)
    path = store.save(NODEID, key, TERMS, [PASSED])
    path.write_text(spoil(path.read_text()), errors="surrogateescape")
    with pytest.raises(cache.CorruptEntry, match=why) as raised:
        store.load(NODEID, key)
    assert raised.value.path == path


def test_cache_entry_of_another_test_or_holding_unknown_is_not_trusted(tmp_path):
    store, key = cache.Store(tmp_path), cache.key_of(NODEID, TERMS)
    other = "reproducers/test_repro_y.py::test_repro_y"
    store.path(other, key).parent.mkdir(exist_ok=True)
    store.path(other, key).write_text(store.save(NODEID, key, TERMS, [PASSED]).read_text())  # copied under its name
    with pytest.raises(cache.CorruptEntry, match="not this test's entry"):
        store.load(other, key)
    doc = json.loads(store.path(NODEID, key).read_text())
    doc["body"]["payloads"] = [{"verdict": {**PASSED["verdict"], "status": "UNKNOWN"}}]
    doc["sha256"] = cache._checksum(doc["body"])  # a well-formed entry that should never have been written
    store.path(NODEID, key).write_text(json.dumps(doc))
    with pytest.raises(cache.CorruptEntry, match="never kept"):
        store.load(NODEID, key)


# Through pytest: a reproducer that counts its runs in a file beside it.
REPRO = """
from pathlib import Path
from rlcheck.repro.reproduce import Reproduction
from rlcheck.verdict import Status, Verdict
RUNS = Path(__file__).with_name("runs.txt")
def test_repro_x(record_verdict, record_reproduction):
    RUNS.write_text(RUNS.read_text() + "x" if RUNS.exists() else "x")
    STATUS = "{status}"
    if STATUS == "FAIL":  # inside the affected range, yet it did not reproduce: a judged FAIL
        record_reproduction(Reproduction(failure_id="numpy2-megatron", versions={{"numpy": "2.1.0",
                                         "megatron-core": "0.15.3"}}, reproduced=False, fix_verified=False,
                                         evidence="save_preprocess completed"))
    if STATUS == "UNKNOWN":
        record_verdict(Verdict(check_id="x", status=Status.UNKNOWN, summary="side directory missing"))
    record_reproduction(Reproduction(failure_id="numpy2-megatron", versions={{"numpy": "1.26.4",
                                     "megatron-core": "0.19.2"}}, reproduced=False, fix_verified=False,
                                     evidence="save_preprocess completed"))
    if STATUS == "ERROR":
        raise RuntimeError("the reproducer broke after its verdict")
"""


@pytest.fixture
def repro_project(pytester: pytest.Pytester, tmp_path, monkeypatch) -> pytest.Pytester:
    monkeypatch.setenv("RLCHECK_CACHE_DIR", str(tmp_path / "kept"))
    # rlcheck's own files are a term (tested above); in a working tree others edit, hold it still between runs
    monkeypatch.setattr(cache, "rlcheck_term", lambda: "0.1.0+held")
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("reproducers")
    return pytester


def runs(project: pytest.Pytester) -> int:
    path = project.path / "reproducers" / "runs.txt"
    return len(path.read_text()) if path.exists() else 0


def test_cache_second_run_on_the_same_image_reuses_and_the_report_says_so(repro_project):
    repro_project.makepyfile(**{"reproducers/test_repro_x": REPRO.format(status="PASS")})
    first = repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["cache: 0 reproducer verdict(s) reused, 1 kept for the next run on this image*"])
    second = repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider")
    second.assert_outcomes(passed=1)
    assert runs(repro_project) == 1, "the kept verdict stands in for the run"
    second.stdout.fnmatch_lines(["PASS    repro_x: fixed upstream*[[]cached: made 20*]",
                                 "cache: 1 reproducer verdict(s) reused, 0 kept*--no-cache runs them all)"])
    doc = json.loads((repro_project.path / "rlcheck-report" / "report.json").read_text())
    (verdict,) = doc["verdicts"]
    assert verdict["cached"]["made"].startswith("20") and verdict["reproduction"] == {"state": "fixed upstream"}
    assert doc["cache"]["reused"] == 1 and doc["cache"]["enabled"] is True
    md = (repro_project.path / "rlcheck-report" / "report.md").read_text()
    assert f"| cached, made {verdict['cached']['made']} |" in md and "1 verdict(s) reused" in md
    third = repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider", "--no-cache")
    third.stdout.fnmatch_lines(["cache: off (--no-cache): every reproducer ran, none kept"])
    assert runs(repro_project) == 2
    doc = json.loads((repro_project.path / "rlcheck-report" / "report.json").read_text())
    assert doc["verdicts"][0]["cached"] is None
    assert "| this run |" in (repro_project.path / "rlcheck-report" / "report.md").read_text()


def test_cache_kept_fail_fails_again_saying_when_it_was_made(repro_project):
    repro_project.makepyfile(**{"reproducers/test_repro_x": REPRO.format(status="FAIL")})
    repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider").assert_outcomes(failed=1)
    second = repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider")
    second.assert_outcomes(failed=1)
    assert runs(repro_project) == 1
    second.stdout.fnmatch_lines(["*kept verdict, made 20* (--no-cache runs it again):",
                                 "FAIL repro_x: catalogue says affected but it did not reproduce*"])


def test_cache_changed_reproducer_source_misses(repro_project):
    repro_project.makepyfile(**{"reproducers/test_repro_x": REPRO.format(status="PASS")})
    repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider")
    repro_project.makepyfile(**{"reproducers/test_repro_x": REPRO.format(status="PASS") + "# edited\n"})
    repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert runs(repro_project) == 2


@pytest.mark.parametrize("status, outcome", [("UNKNOWN", {"failed": 1}), ("ERROR", {"failed": 1})])
def test_cache_never_keeps_unknown_or_an_errored_run(repro_project, tmp_path, status, outcome):
    repro_project.makepyfile(**{"reproducers/test_repro_x": REPRO.format(status=status)})
    for _ in range(2):
        repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider").assert_outcomes(**outcome)
    assert runs(repro_project) == 2 and not list((tmp_path / "kept").glob("**/*.json"))


def test_cache_corrupt_entry_is_named_and_the_reproducer_runs(repro_project, tmp_path):
    repro_project.makepyfile(**{"reproducers/test_repro_x": REPRO.format(status="PASS")})
    repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider")
    (entry,) = (tmp_path / "kept" / "reproducers").glob("*.json")
    entry.write_text("{ half an entry")
    result = repro_project.runpytest("--hardware=none", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert runs(repro_project) == 2
    result.stdout.fnmatch_lines([f"cache: ignored a corrupt entry for *test_repro_x* ({entry}: not an rlcheck cache "
                                 "entry*; it ran again"])
    assert "cached" not in result.stdout.str().split("rlcheck verdicts")[1].split("cache:")[0]
    assert json.loads(entry.read_text())["body"]["payloads"], "the run that replaced it is kept"


def test_cache_reused_under_xdist_workers(repro_project):
    """Each worker looks its reproducers up in the same folder; the controller's report says what was reused."""
    repro_project.makeconftest('pytest_plugins = ["rlcheck.plugin"]\nfrom rlcheck.repro import cache\n'
                               'cache.rlcheck_term = lambda: "0.1.0+held"  # in every worker: others edit this tree\n')
    repro_project.makepyfile(**{"reproducers/test_repro_x": REPRO.format(status="PASS")})
    args = ("-n", "2", "--hardware=none", "-p", "no:cacheprovider")
    repro_project.runpytest_subprocess(*args).stdout.fnmatch_lines(["cache: 0 reproducer verdict(s) reused, 1 kept*"])
    second = repro_project.runpytest_subprocess(*args)
    second.stdout.fnmatch_lines(["PASS    repro_x: fixed upstream*[[]cached: made 20*]",
                                 "cache: 1 reproducer verdict(s) reused, 0 kept*"])
    assert runs(repro_project) == 1
