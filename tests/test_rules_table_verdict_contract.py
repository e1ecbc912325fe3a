"""The plugin's verdict contract as tables (issue 21): every status and mix of statuses a test records, every kind
of test report without a verdict, every node id shape, and what the collector writes and prints.

The contract: a test that records FAIL or UNKNOWN fails (so a reproducer whose side directory is missing, which
records UNKNOWN, can never pass), one that records only SKIP is skipped, anything else passes; a check or
reproducer that ends without a verdict is UNKNOWN, never a pass.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from _pytest._code import ExceptionInfo

from rlcheck.framework.detect import Installed
from rlcheck.plugin import items as plugin_items
from rlcheck.plugin import report as plugin_report
from rlcheck.plugin.report import VerdictCollector, enforce, kind_of, report_kind, synthesized, verdict_id
from rlcheck.verdict import Status, Verdict


def _v(status: Status, summary: str = "s", **extra: str) -> Verdict:
    return Verdict(check_id="c", status=status, summary=summary, **extra)


S = Status
CONTRACT = [
    # statuses recorded by one test, outcome (passed, failed, skipped)
    ([], "passed"),
    ([S.PASS], "passed"), ([S.WARN], "passed"), ([S.SKIP], "skipped"), ([S.FAIL], "failed"), ([S.UNKNOWN], "failed"),
    ([S.SKIP, S.SKIP], "skipped"), ([S.SKIP, S.PASS], "passed"), ([S.PASS, S.SKIP], "passed"),
    ([S.SKIP, S.WARN], "passed"), ([S.SKIP, S.UNKNOWN], "failed"), ([S.UNKNOWN, S.SKIP], "failed"),
    ([S.PASS, S.UNKNOWN], "failed"), ([S.UNKNOWN, S.PASS], "failed"), ([S.WARN, S.FAIL], "failed"),
    ([S.FAIL, S.UNKNOWN], "failed"),
]


def _outcome(verdicts: list[Verdict]) -> tuple[str, str]:
    try:
        enforce(verdicts)
    except pytest.fail.Exception as exc:
        assert exc.pytrace is False  # the verdicts are the message: no traceback of the plugin
        return "failed", exc.msg
    except pytest.skip.Exception as exc:
        return "skipped", exc.msg
    return "passed", ""


@pytest.mark.parametrize(("statuses", "outcome"), CONTRACT, ids=lambda x: "+".join(x) if isinstance(x, list) else x)
def test_verdict_contract_rule_status_decides_the_outcome(statuses: list[Status], outcome: str) -> None:
    verdicts = [_v(s, f"{s.value.lower()} {i}") for i, s in enumerate(statuses)]
    got, message = _outcome(verdicts)
    assert got == outcome
    if outcome == "failed":  # every blocking verdict rendered, in order, nothing else
        assert message == "\n".join(v.render() for v in verdicts if v.status in (S.FAIL, S.UNKNOWN))
    if outcome == "skipped":
        assert message == verdicts[0].summary


def test_verdict_contract_rule_blocking_statuses() -> None:
    assert {s for s in Status if s.blocks} == {Status.FAIL, Status.UNKNOWN}


def test_verdict_contract_rule_failure_message_is_the_rendered_verdicts() -> None:
    bad = _v(S.UNKNOWN, "side directory .sidecar/numpy-2 missing", remedy="run scripts/setup-sidecars.sh")
    got, message = _outcome([_v(S.PASS), bad])
    assert (got, message) == ("failed", "UNKNOWN c: side directory .sidecar/numpy-2 missing\n"
                                        "  fix: run scripts/setup-sidecars.sh")


KINDS = [
    # node id, kind
    ("checks/test_recipe.py::test_recipe[recipe_batch]", "check"),
    ("checks/sub/test_x.py::test_x", "check"),
    ("reproducers/test_repro_x.py::test_repro_x", "reproducer"),
    ("testcases/test_case.py::test_case", "case"),
    ("tests/test_a.py::test_a", "test"),
    ("test_a.py::test_a", "test"),
    ("other/checks/test_a.py::test_a", "test"),
    ("checks", "check"),
]


@pytest.mark.parametrize(("nodeid", "kind"), KINDS)
def test_verdict_contract_rule_kind_from_the_node_id(nodeid: str, kind: str) -> None:
    assert kind_of(nodeid) == kind


IDS = [
    # node id, kind given, verdict id
    ("checks/test_recipe.py::test_recipe[recipe_batch]", None, "recipe_batch"),
    ("checks/test_recipe.py::test_recipe[recipe_batch]", "check", "recipe_batch"),
    ("checks/test_recipe.py::test_recipe[recipe_batch]", "reproducer", "recipe[recipe_batch]"),
    ("site/rlcheck/checks/test_recipe.py::test_recipe[a[1]]", "check", "a[1]"),  # the first '[' opens the id
    ("checks/test_image.py::test_image_ok", None, "image_ok"),
    ("checks/test_image.py::TestX::test_image_ok[x]", None, "x"),
    ("reproducers/test_repro_x.py::test_repro_x", None, "repro_x"),
    ("reproducers/test_repro_x.py::Group::test_repro_x[v1]", None, "repro_x[v1]"),
    ("tests/t.py::check_test_x", None, "check_test_x"),  # only a leading test_ goes
    ("tests/t.py::test_test_x", None, "test_x"),
    ("checks/test_x.py", None, "checks/test_x.py"),  # a module's own report (a collection error): no '::'
]


@pytest.mark.parametrize(("nodeid", "kind", "expected"), IDS)
def test_verdict_contract_rule_verdict_id(nodeid: str, kind: str | None, expected: str) -> None:
    assert verdict_id(nodeid, kind) == expected


def _report(nodeid: str, outcome: str, when: str = "call", longrepr: object = None,
            kind: str | None = None, **extra: str) -> pytest.TestReport:
    rep = pytest.TestReport(nodeid, ("x.py", 0, "x"), {}, outcome, longrepr, when, **extra)  # type: ignore[arg-type]
    if kind is not None:
        rep.rlcheck_kind = kind  # type: ignore[attr-defined]
    return rep


def _crash() -> object:
    try:
        raise ConnectionError("ray did not answer within 30 s\nsecond line")
    except ConnectionError as exc:
        return ExceptionInfo.from_exception(exc).getrepr()


CHECK = "checks/test_cluster.py::test_cluster[cluster_gpus]"
SYNTHESIZED = [
    # report, (status, summary) of the verdict synthesized, or None
    (_report(CHECK, "skipped", longrepr=("x.py", 1, "Skipped: needs a GPU")), (S.SKIP, "needs a GPU")),
    (_report(CHECK, "skipped", longrepr=("x.py", 1, "needs a GPU")), (S.SKIP, "needs a GPU")),
    (_report(CHECK, "skipped", "setup", longrepr="Skipped: no ray"), (S.SKIP, "no ray")),
    (_report(CHECK, "skipped", "setup", longrepr="Skipped: no ray\nsecond line"), (S.SKIP, "no ray")),
    (_report(CHECK, "skipped", longrepr=("x.py", 1, "")), (S.SKIP, "")),  # a skip without a reason says none
    (_report(CHECK, "skipped", "setup", longrepr=""), (S.SKIP, "")),
    (_report(CHECK, "skipped", longrepr="AssertionError\nE  assert False", wasxfail="known: slime#1"),
     (S.SKIP, "expected failure (xfail): known: slime#1")),  # an xfail report: skipped, the failure its longrepr
    (_report(CHECK, "skipped", longrepr="AssertionError", wasxfail=""), (S.SKIP, "expected failure (xfail)")),
    (_report(CHECK, "failed", longrepr=_crash()),
     (S.UNKNOWN, "could not run (call): ConnectionError: ray did not answer within 30 s")),
    (_report(CHECK, "failed", "setup", longrepr="first\n  E   last line  \n\n"),
     (S.UNKNOWN, "could not run (setup):   E   last line")),  # the text stripped, not the line
    (_report(CHECK, "failed", "teardown", longrepr=""), (S.UNKNOWN, "could not run (teardown): ?")),
    (_report(CHECK, "passed"), (S.UNKNOWN, "the test recorded no verdict")),
    (_report("reproducers/test_repro_x.py::test_repro_x", "passed"), (S.UNKNOWN, "the test recorded no verdict")),
    (_report("testcases/test_c.py::test_c", "passed"), None),  # a helper test in testcases/: a plain test
    (_report("testcases/test_c.py::test_c", "passed", kind="check"), (S.UNKNOWN, "the test recorded no verdict")),
    (_report(CHECK, "passed", kind="case"), None),
    (_report("site/rlcheck/checks/test_recipe.py::test_recipe[recipe_batch]", "passed", kind="check"),
     (S.UNKNOWN, "the test recorded no verdict")),  # a packaged check: its id from the kind carried
    (_report(CHECK, "passed", "setup"), None),
    (_report(CHECK, "passed", "teardown"), None),
]


@pytest.mark.parametrize(("rep", "expected"), SYNTHESIZED)
def test_verdict_contract_rule_report_without_a_verdict(rep: pytest.TestReport, expected: object) -> None:
    verdict = synthesized(rep)
    assert (None if verdict is None else (verdict.status, verdict.summary)) == expected
    if verdict is not None:
        assert verdict.check_id == verdict_id(rep.nodeid, report_kind(rep))


def test_verdict_contract_rule_crash_details_keep_the_last_4000_characters() -> None:
    longrepr = "a" * 3000 + "b" * 4000
    verdict = synthesized(_report(CHECK, "failed", longrepr=longrepr))
    assert verdict is not None and verdict.details == "b" * 4000
    crash = _crash()
    verdict = synthesized(_report(CHECK, "failed", longrepr=crash))
    assert verdict is not None and verdict.details == str(crash)[-4000:]
    # an expected failure (xfail, reported skipped) keeps the failure's last 4000 characters the same way
    verdict = synthesized(_report(CHECK, "skipped", longrepr=longrepr, wasxfail="known: slime#1"))
    assert verdict is not None and (verdict.status, verdict.details) == (S.SKIP, "b" * 4000)
    verdict = synthesized(_report(CHECK, "skipped", longrepr=crash, wasxfail=""))
    assert verdict is not None and verdict.details == str(crash)[-4000:] and "ray did not answer" in verdict.details


@pytest.mark.parametrize(("kind", "expected"), [(None, "check"), ("", "check"), ("reproducer", "reproducer")])
def test_verdict_contract_rule_report_kind_carried_else_from_the_node_id(kind: str | None, expected: str) -> None:
    assert report_kind(_report(CHECK, "passed", kind=kind)) == expected


def _payload(status: Status, reproduction: dict[str, str] | None = None, cached: dict[str, str] | None = None) -> str:
    return json.dumps({"verdict": _v(status, "said").to_dict(), "reproduction": reproduction, "cached": cached})


COLLECTED = [
    # kind, verdicts the test carried, outcome, when: (statuses collected, judged)
    ("check", [S.SKIP], "skipped", "call", ([S.SKIP], True)),  # a check decides even when it only skipped
    ("reproducer", [S.SKIP], "skipped", "call", ([S.SKIP], True)),  # a recorded verdict always judges
    ("reproducer", [], "skipped", "setup", ([S.SKIP], False)),  # a reproducer that only skipped judges nothing
    ("reproducer", [], "failed", "setup", ([S.UNKNOWN], True)),
    ("reproducer", [], "passed", "call", ([S.UNKNOWN], True)),
    ("reproducer", [], "passed", "setup", ([], False)),
    ("check", [], "passed", "setup", ([], False)),
    ("check", [], "skipped", "setup", ([S.SKIP], True)),
    ("check", [S.PASS, S.WARN], "passed", "call", ([S.PASS, S.WARN], True)),
    ("case", [], "passed", "call", ([], False)),
    ("test", [S.FAIL], "failed", "call", ([], False)),  # plain self-tests are not verdicts
]


CACHED = {"made": "2026-12-01T09:00:00+00:00", "by": "rlcheck 0.4.0", "entry": "3f9a1c0d2e7b"}


@pytest.mark.parametrize(("kind", "carried", "outcome", "when", "expected"), COLLECTED)
def test_verdict_contract_rule_collector(pytester: pytest.Pytester, kind: str, carried: list[Status], outcome: str,
                                         when: str, expected: tuple[list[Status], bool]) -> None:
    collector = VerdictCollector(pytester.parseconfig())
    rep = _report("reproducers/test_r.py::test_repro_r", outcome, when, kind=kind,
                  longrepr=("x.py", 1, "Skipped: later") if outcome == "skipped" else "E boom")
    rep.rlcheck_verdicts = [_payload(s, {"reproduced": "yes"}, CACHED) for s in carried]  # type: ignore[attr-defined]
    collector.pytest_runtest_logreport(rep)
    assert ([r.verdict.status for r in collector.recorded], collector.judged) == expected
    for r in collector.recorded:
        assert (r.kind, r.test_id) == (kind, rep.nodeid)
        assert r.reproduction == ({"reproduced": "yes"} if carried else None)
        assert r.cached == (CACHED if carried else None)  # a verdict reused from the cache says when it was made
    if collector.recorded:
        assert collector.done == {rep.nodeid}
        collector.pytest_runtest_logreport(rep)  # a node id already collected (its teardown) adds nothing
        assert len(collector.recorded) == len(expected[0])


def test_verdict_contract_rule_collector_on_controller_only(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    config = pytester.parseconfigure()
    assert isinstance(config.pluginmanager.get_plugin("rlcheck-verdict-collector"), VerdictCollector)
    worker = pytester.parseconfig()
    worker.pluginmanager.unregister(name="rlcheck-verdict-collector")
    worker.workerinput = {}  # type: ignore[attr-defined]
    plugin_report.pytest_configure(worker)
    assert worker.pluginmanager.get_plugin("rlcheck-verdict-collector") is None
    del worker.workerinput  # type: ignore[attr-defined]
    plugin_report.pytest_configure(worker)
    assert isinstance(worker.pluginmanager.get_plugin("rlcheck-verdict-collector"), VerdictCollector)


CHECK_PASS = """
from rlcheck.verdict import Status, Verdict
def test_image_ok(record_verdict):
    record_verdict(Verdict(status=Status.PASS, summary="numpy 1.26.4 as needed"))
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("checks")
    pytester.makepyfile(**{"checks/test_image": CHECK_PASS})
    return pytester


def test_verdict_contract_rule_report_context_written_whole(project: pytest.Pytester) -> None:
    result = project.runpytest("--hardware=h200", "--recipe=qwen3-4b-colocated", "--framework=slime==0.3.1",
                               "--ray-address=ray://127.0.0.1:10001", "--color=yes")
    doc = json.loads((project.path / "rlcheck-report" / "report.json").read_text())
    assert doc["hardware"] == {"requested": "h200", "profile": "h200", "evidence": "h200: given with --hardware"}
    assert (doc["recipe"], doc["ray_address"], doc["job"]) == ("qwen3-4b-colocated", "ray://127.0.0.1:10001", None)
    assert doc["framework"] == {"name": "slime", "version": "0.3.1", "source": "--framework",
                                "judged": "slime 0.3.1 (--framework)"}
    out = result.stdout.str()
    assert result.ret == 0
    # the section's own title line, exactly: pytest draws it as '=== rlcheck verdicts ===' (with --color, bold)
    assert any(re.fullmatch(r"(\x1b\[\d+m)*=+ rlcheck verdicts =+(\x1b\[0m)?", line) for line in result.stdout.lines)
    assert "\x1b[1m\x1b[32mrlcheck GO: 1 blocking check(s) judged and passed" in out  # green and bold
    lines = [line for line in result.stdout.lines if not line.startswith("=")]
    section = lines[lines.index("hardware: h200: given with --hardware"):]
    assert section[:3] == ["hardware: h200: given with --hardware", "framework: slime 0.3.1 (--framework)",
                           "PASS    image_ok: numpy 1.26.4 as needed"]
    assert section[3] == "report: rlcheck-report/report.json, rlcheck-report/report.md"


def test_verdict_contract_rule_no_go_is_red_and_exits_1(project: pytest.Pytester) -> None:
    project.makepyfile(**{"checks/test_recipe": CHECK_PASS.replace("PASS", "FAIL").replace("test_image_ok",
                                                                                         "test_recipe_batch")})
    result = project.runpytest("--hardware=none", "--color=yes")
    assert result.ret == 1
    assert "\x1b[1m\x1b[31mrlcheck NO-GO: 1 of 2 judged blocking check(s)" in result.stdout.str()


def test_verdict_contract_rule_history_kept_beside_the_report(project: pytest.Pytester) -> None:
    result = project.runpytest("--hardware=none", "--history=hist")
    kept = list((project.path / "hist").glob("*.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text())["go"] is True
    result.stdout.fnmatch_lines(["report: rlcheck-report/report.json, rlcheck-report/report.md, "
                                 f"history {kept[0].relative_to(project.path)}"])


def test_verdict_contract_rule_history_not_kept_is_said(project: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(doc: object, history_dir: Path) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plugin_report.report, "keep", refuse)
    result = project.runpytest("--hardware=none", "--history=hist")
    assert result.ret == 0  # the report itself was written: the decision stands
    result.stdout.fnmatch_lines(["report: rlcheck-report/report.json, rlcheck-report/report.md, "
                                 "history NOT kept in hist: No space left on device"])


def test_verdict_contract_rule_unwritten_report_is_no_go(project: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(doc: object, report_dir: Path) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(plugin_report.report, "write", refuse)
    result = project.runpytest("--hardware=none", "--report-dir=out")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["report: could not write the report to out: Permission denied",
                                 "rlcheck NO-GO: could not write the report to out: Permission denied (the checks "
                                 "said: GO: 1 blocking check(s) judged and passed*)"])


REPRO_PASS = """
from rlcheck.verdict import Status, Verdict
def test_repro_numpy2(record_verdict):
    record_verdict(Verdict(status=Status.PASS, summary="numpy 2 ABI break not reproduced"))
"""


@pytest.mark.parametrize("reproducer", [True, False])
def test_verdict_contract_rule_cache_line_only_when_a_reproducer_ran(project: pytest.Pytester,
                                                                     reproducer: bool) -> None:
    """The reproducer cache's lines follow the verdicts when a reproducer recorded one; a run of checks alone has
    nothing to say of it."""
    if reproducer:
        project.mkdir("reproducers")
        project.makepyfile(**{"reproducers/test_repro_numpy2": REPRO_PASS})
    result = project.runpytest("--hardware=none", "--no-cache")
    assert result.ret == 0
    cache_lines = [line for line in result.stdout.lines if line.startswith("cache: ")]
    assert cache_lines == (["cache: off (--no-cache): every reproducer ran, none kept"] if reproducer else [])
    if reproducer:  # after the verdicts, before the report's paths
        lines = result.stdout.lines
        assert lines.index("PASS    repro_numpy2: numpy 2 ABI break not reproduced") < lines.index(cache_lines[0]) \
            < lines.index("report: rlcheck-report/report.json, rlcheck-report/report.md")


def test_verdict_contract_rule_nothing_recorded_no_decision(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.makepyfile(test_plain="def test_plain(): pass\n")
    result = pytester.runpytest("--hardware=none")
    assert result.ret == 0 and "rlcheck verdicts" not in result.stdout.str()
    assert not (pytester.path / "rlcheck-report").exists()


FRAMEWORKS = [
    # framework, judged, the report's framework block
    (None, "", {"name": None, "version": None, "source": "", "judged": "not detected"}),
    (None, "the job's own", {"name": None, "version": None, "source": "", "judged": "the job's own"}),
    (Installed(framework="slime", version="0.3.1", source="--framework"), "",
     {"name": "slime", "version": "0.3.1", "source": "--framework", "judged": "slime 0.3.1 (--framework)"}),
    (Installed(framework="miles", version="0.1.0", source="package metadata"), "judged so",
     {"name": "miles", "version": "0.1.0", "source": "package metadata", "judged": "judged so"}),
]


@pytest.mark.parametrize(("framework", "judged", "expected"), FRAMEWORKS)
def test_verdict_contract_rule_framework_context(framework: Installed | None, judged: str, expected: dict) -> None:
    assert plugin_report.framework_context(framework, judged) == expected


def test_verdict_contract_rule_framework_context_defaults_to_the_framework_line() -> None:
    assert plugin_report.framework_context(None)["judged"] == "not detected"
    slime = Installed(framework="slime", version="0.3.1", source="--framework")
    assert plugin_report.framework_context(slime)["judged"] == "slime 0.3.1 (--framework)"


ITEM_KINDS = [
    # where the test file lies, its node id (relative to pytest's rootdir), kind
    (plugin_items.PACKAGED_CHECKS / "test_recipe.py", "../site-packages/rlcheck/checks/test_recipe.py::test_recipe",
     "check"),  # a packaged check is a check whatever its node id says
    (plugin_items.PACKAGED_CHECKS / "test_recipe.py", "test_recipe.py::test_recipe", "check"),
    (Path("/elsewhere/checks/test_recipe.py"), "checks/test_recipe.py::test_recipe", "check"),
    (Path("/elsewhere/tests/test_recipe.py"), "tests/test_recipe.py::test_recipe", "test"),
    (plugin_items.PACKAGED_CHECKS / "sub" / "test_x.py", "reproducers/test_x.py::test_x", "reproducer"),
]


@pytest.mark.parametrize(("path", "nodeid", "kind"), ITEM_KINDS)
def test_verdict_contract_rule_kind_of_item(path: Path, nodeid: str, kind: str) -> None:
    item = SimpleNamespace(path=path, nodeid=nodeid)  # the two attributes kind_of_item reads
    assert plugin_report.kind_of_item(item) == kind  # type: ignore[arg-type]


XFAILING = """
import pytest
from rlcheck.verdict import Status, Verdict

@pytest.mark.xfail(reason="known")
def test_image_xfail(record_verdict):
    assert False

def test_image_skipped(record_verdict):
    record_verdict(Verdict(status=Status.SKIP, summary="needs SLIME installed"))
"""


def test_verdict_contract_rule_only_a_plugin_skip_is_moved_to_the_test(project: pytest.Pytester) -> None:
    # an xfail report is 'skipped' with no (file, line, reason) tuple: it is left as it is, never unpacked
    project.makepyfile(**{"checks/test_image": XFAILING})
    result = project.runpytest("--hardware=none", "-rsx")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(xfailed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [1] checks/test_image.py:8: needs SLIME installed",
                                 "XFAIL checks/test_image.py::test_image_xfail - known"])
    result.stdout.fnmatch_lines(["SKIP    image_xfail: expected failure (xfail): known"])  # a verdict, not a crash


PLUGIN_SKIP = (str(plugin_report.PLUGIN_DIR / "report.py"), 108, "Skipped: needs SLIME installed")
AT_THE_TEST = [
    # where the test reports itself (0-based line, or None for an item without one), what the skip says then
    ((Path("/srv/checks/test_image.py"), 7, "test_image_ok"), ("/srv/checks/test_image.py", 8)),
    ((Path("/srv/checks/test_image.py"), 0, "test_image_ok"), ("/srv/checks/test_image.py", 1)),  # the first line
    ((Path("/srv/checks/test_image.yaml"), None, "image_ok"), ("/srv/checks/test_image.yaml", 1)),
]


@pytest.mark.parametrize(("reportinfo", "expected"), AT_THE_TEST)
def test_verdict_contract_rule_a_plugin_skip_is_said_at_the_test_line(reportinfo, expected):
    item = SimpleNamespace(config=SimpleNamespace(invocation_params=SimpleNamespace(dir=Path("/srv"))),
                           reportinfo=lambda: reportinfo)
    rep = _report("checks/test_image.py::test_image_ok", "skipped", longrepr=PLUGIN_SKIP)
    plugin_report._skip_at_the_test(item, rep)  # type: ignore[arg-type]
    assert rep.longrepr == (*expected, "Skipped: needs SLIME installed")
