"""Reports that CI tools show well: JUnit valid against junit-10.xsd (tests/junit_xsd.py), each verdict readable in
its testcase's system-out and as a testsuite property, GO / NO-GO per testsuite, skips at the test, no GO / NO-GO
where nothing was judged, and `--dry-run` without --hardware on every fitting hardware."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rlcheck.probes.node import gpus
from tests.junit_xsd import schema_errors

ROOT = Path(__file__).resolve().parents[1]
PER_NODE = """
from rlcheck.verdict import Status, Verdict
def test_cluster_xid(record_verdict):
    record_verdict(Verdict(status=Status.PASS, summary="no Xid", node="gpu-a"),
                   Verdict(status=Status.FAIL, summary="Xid 79: fell off the bus", node="gpu-b"),
                   Verdict(status=Status.WARN, summary="Xid 63: row remapped", node="gpu-c"))
"""
WHOLE = """
from rlcheck.verdict import Status, Verdict
def test_gpu_gemm(record_verdict):
    record_verdict(Verdict(status=Status.FAIL, summary="612 TFLOP/s; expected >= 650"))
"""
SKIPPING = """
from rlcheck.verdict import Status, Verdict
def test_image_kernel(record_verdict):
    record_verdict(Verdict(status=Status.SKIP, summary="needs SLIME installed: found none"))
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    for folder in ("checks", "reproducers", "testcases", "tests"):
        pytester.mkdir(folder)
    return pytester


def _junit(project: pytest.Pytester, *args: str) -> ET.Element:
    project.runpytest("--junitxml=junit.xml", *args)
    root = ET.parse(project.path / "junit.xml").getroot()
    assert schema_errors(root) == []  # every JUnit file these tests write validates against junit-10.xsd
    return root


def _props(case: ET.Element) -> list[tuple[str | None, str | None]]:
    """The verdict as the testcase shows it: `name: value` lines leading its system-out (no properties there)."""
    assert case.find("properties") is None
    out = case.find("system-out")
    text = (out.text or "") if out is not None else ""
    lines = text.split("\n\n", 1)[0].splitlines()
    return [(name, value) for name, _, value in (line.partition(": ") for line in lines)]


def _suite_props(root: ET.Element) -> list[tuple[str | None, str | None]]:
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    return [(p.get("name"), p.get("value")) for p in suite.findall("properties/property")]


def test_junit_one_testcase_per_node_for_a_per_node_check(project):
    project.makepyfile(**{"checks/test_cluster": PER_NODE})
    root = _junit(project, "--hardware=none")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases) == ["test_cluster_xid@gpu-a", "test_cluster_xid@gpu-b", "test_cluster_xid@gpu-c"]
    assert _props(cases["test_cluster_xid@gpu-b"]) == [
        ("rlcheck_status", "FAIL"), ("rlcheck_summary", "Xid 79: fell off the bus"), ("rlcheck_node", "gpu-b")]
    failure = cases["test_cluster_xid@gpu-b"].find("failure")
    assert failure is not None and failure.get("message") == "FAIL [gpu-b]: Xid 79: fell off the bus"
    assert cases["test_cluster_xid@gpu-a"].find("failure") is None  # PASS
    assert cases["test_cluster_xid@gpu-c"].find("failure") is None  # WARN does not block
    assert _props(cases["test_cluster_xid@gpu-c"])[0] == ("rlcheck_status", "WARN")
    assert ("test_cluster_xid@gpu-b::rlcheck_status", "FAIL") in _suite_props(root)
    assert ("test_cluster_xid@gpu-b::rlcheck_node", "gpu-b") in _suite_props(root)
    assert {cases[n].get("classname") for n in cases} == {"checks.test_cluster"}
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "0")
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["rlcheck_decision"] == "NO-GO"
    assert props["rlcheck_decision_line"].endswith(": cluster_xid [gpu-b] FAIL")


def test_junit_check_of_the_whole_run_stays_one_testcase(project):
    project.makepyfile(**{"checks/test_gpu": WHOLE, "checks/test_cluster": PER_NODE})
    root = _junit(project, "--hardware=none")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert "test_gpu_gemm" in cases and not any(n.startswith("test_gpu_gemm@") for n in cases)
    assert _props(cases["test_gpu_gemm"]) == [("rlcheck_status", "FAIL"),
                                              ("rlcheck_summary", "612 TFLOP/s; expected >= 650")]
    assert cases["test_gpu_gemm"].find("failure") is not None
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("4", "2")


@pytest.mark.parametrize(("body", "decision"), [(PER_NODE, "NO-GO"), (SKIPPING.replace("SKIP,", "PASS,"), "GO")])
def test_junit_go_no_go_is_a_testsuite_property(project, body, decision):
    project.makepyfile(**{"checks/test_cluster": body})
    root = _junit(project, "--hardware=none")
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["rlcheck_decision"] == decision
    assert props["rlcheck_decision_line"].startswith(f"{decision}: ")


def test_junit_decision_of_a_run_without_blocking_checks_is_none(project):
    project.makepyfile(**{"reproducers/test_repro_x": (
        "from rlcheck.verdict import Status, Verdict\n"
        "def test_repro_x(record_verdict):\n"
        "    record_verdict(Verdict(status=Status.PASS, summary='reproduced'))\n")})
    root = _junit(project, "--hardware=none", "reproducers/")
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["rlcheck_decision"] == "none"
    assert props["rlcheck_decision_line"].startswith("no GO / NO-GO: no blocking check ran")


def test_skip_recorded_by_a_check_is_reported_at_the_test(project):
    project.makepyfile(**{"checks/test_image": SKIPPING})
    result = project.runpytest("--hardware=none", "-rs")
    result.stdout.fnmatch_lines(["SKIPPED [1] checks/test_image.py:2: needs SLIME installed: found none"])
    assert "rlcheck/plugin" not in result.stdout.str()


def test_skip_by_a_gate_is_reported_at_the_test(project, monkeypatch):
    # as on a machine without a GPU, also where this suite runs on one (the device, a GPU CI runner)
    monkeypatch.setattr(gpus, "detect", lambda timeout_s=None: gpus.Detection(gpus=(), profile=None, evidence="none"))
    project.makepyfile(**{"tests/test_kernel": "import pytest\n\n@pytest.mark.gpu\ndef test_k():\n    pass\n"})
    result = project.runpytest("--hardware=none", "-rs")
    result.stdout.fnmatch_lines(["SKIPPED [1] tests/test_kernel.py:3: needs a CUDA GPU (sm_90+): found none"])


def test_self_test_run_that_judged_nothing_prints_no_go_line_and_writes_no_report(project):
    project.makepyfile(**{"tests/test_unit": "def test_unit():\n    pass\n",
                          "reproducers/test_repro_y": "import pytest\n\ndef test_repro_y():\n"
                                                      "    pytest.skip('needs the reference stack')\n",
                          "testcases/test_helper": "def test_helper():\n    pass\n"})
    result = project.runpytest("--hardware=none")
    result.assert_outcomes(passed=2, skipped=1)
    assert result.ret == 0
    out = result.stdout.str()
    assert "GO" not in out and "recorded no verdict" not in out
    assert not (project.path / "rlcheck-report").exists()


def test_a_reproducer_that_could_not_run_still_ends_with_a_decision(project):
    # The other side: something that could not run is never silent.
    project.makepyfile(**{"reproducers/test_repro_z": "def test_repro_z():\n    raise ImportError('no megatron')\n"})
    result = project.runpytest("--hardware=none")
    result.stdout.fnmatch_lines(["UNKNOWN repro_z: could not run (call): ImportError: no megatron",
                                 "rlcheck no GO / NO-GO: no blocking check ran*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the reproducer's own failure, not a decision


def test_passing_check_without_verdict_is_still_unknown(project):
    project.makepyfile(**{"checks/test_image": "def test_image_silent():\n    pass\n"})
    result = project.runpytest("--hardware=none")
    result.stdout.fnmatch_lines(["UNKNOWN image_silent: the test recorded no verdict"])


DECLARED = [("slime==0.3.1", "v0.3.1"), ("slime==main", "main"), (None, "v0.2.4")]


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str | None, subprocess.CompletedProcess[str]]:
    """`pytest testcases/test_e2e.py --dry-run`: without hardware (key "none"), and on h200 for each declared SLIME of
    DECLARED; independent children, run side by side (each in its own report folder)."""
    argvs: dict[str | None, list[str]] = {"none": ["--hardware=none"]}
    for declared, _ in DECLARED:
        argvs[declared] = ["--hardware=h200", "-k", "qwen3-4b-colocated",
                           *([f"--framework={declared}"] if declared else [])]
    children = {}
    for key, args in argvs.items():
        folder = tmp_path_factory.mktemp("dry-run")
        with (folder / "out").open("w") as out, (folder / "err").open("w") as err:  # files: no pipe fills and waits
            children[key] = (folder, subprocess.Popen(
                [sys.executable, "-m", "pytest", "testcases/test_e2e.py", "--dry-run", *args, f"--report-dir={folder}",
                 "-p", "no:cacheprovider", "-q"], cwd=ROOT, stdout=out, stderr=err, text=True))
    done = {}
    for key, (folder, child) in children.items():
        child.wait(timeout=300)
        done[key] = subprocess.CompletedProcess(child.args, child.returncode, (folder / "out").read_text(),
                                                (folder / "err").read_text())
    return done


def test_dry_run_without_hardware_renders_each_case_on_every_hardware_it_fits(dry_runs):
    out = dry_runs["none"].stdout
    for hw in ("h100", "h200", "b200", "b300", "gb200", "gb300"):
        assert f"SKIP    e2e[qwen3-4b-colocated]: dry run, nothing ran: renders for {hw}:" in out, out[-3000:]
    assert "SKIP    e2e[glm5.2-gb300]: dry run, nothing ran: renders for gb300:" in out
    assert "e2e[glm5.2-gb300]: dry run, nothing ran: renders for h200" not in out
    assert "FAIL    e2e[" not in out, out[-3000:]
    assert "needs a hardware profile" not in out


@pytest.mark.parametrize(("declared", "table"), DECLARED)
def test_dry_run_plans_the_milestones_of_the_declared_slime(dry_runs, declared, table):
    done = dry_runs[declared]
    assert f"milestones x 3 loops (SLIME {table} log lines)" in done.stdout, done.stdout[-3000:]


def test_history_keeps_every_report_json(project):
    project.makepyfile(**{"checks/test_cluster": PER_NODE})
    for _ in range(2):
        project.runpytest("--hardware=h200", "--history=hist")
    kept = sorted((project.path / "hist").glob("report-*-h200*.json"))
    assert len(kept) == 2, kept
    docs = [json.loads(p.read_text()) for p in kept]
    assert all(d["go"] is False and d["verdicts"][1]["summary"] == "Xid 79: fell off the bus" for d in docs)


def test_history_names_where_it_kept_the_report(project):
    project.makepyfile(**{"checks/test_cluster": PER_NODE})
    result = project.runpytest("--hardware=none", "--history=hist")
    result.stdout.fnmatch_lines(["report: rlcheck-report/report.json, rlcheck-report/report.md, "
                                 "history hist/report-*-none.json"])


def test_history_unwritable_is_a_usage_error(project):
    (project.path / "afile").write_text("")
    result = project.runpytest("--hardware=none", "--history=afile/hist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--history='afile/hist' cannot be written: afile is not a folder" in result.stderr.str()


ERRORING = """
import pytest
@pytest.fixture
def broken():
    raise RuntimeError("no Ray here")
def test_cluster_reach(broken, record_verdict):
    pass
def test_plain(record_property):
    record_property("owner", "team-a")
"""


def test_junit_of_every_outcome_validates_against_junit_10_xsd_with_no_testcase_properties(project):
    """Per-node, whole-run, skipped, erroring and record_property tests in one run: the file validates, the testcases
    carry no properties, and everything they had is in the suite's properties and their system-out."""
    project.makepyfile(**{"checks/test_cluster": PER_NODE, "checks/test_gpu": WHOLE, "checks/test_image": SKIPPING,
                          "tests/test_other": ERRORING})
    root = _junit(project, "--hardware=none", "-o", "junit_logging=all")
    assert not list(root.iter("testcase")) or all(c.find("properties") is None for c in root.iter("testcase"))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["test_cluster_reach"].find("error") is not None
    assert ("test_plain::owner", "team-a") in _suite_props(root)
    assert _props(cases["test_plain"]) == [("owner", "team-a")]
    assert ("test_gpu_gemm::rlcheck_summary", "612 TFLOP/s; expected >= 650") in _suite_props(root)


def test_junit_schema_validator_names_the_errors_of_issue_32():
    """The validator bites: a per-test properties element (what pytest writes and issue 32 counted) is an error."""
    bad = ET.fromstring('<testsuites><testsuite name="pytest" tests="1" failures="0" errors="0" time="1.5">'
                        '<testcase name="t" classname="c"><properties><property name="a" value="b"/></properties>'
                        '</testcase></testsuite></testsuites>')
    assert schema_errors(bad) == ["testsuites/testsuite[0]/testcase[0](t): element 'properties' not allowed in a "
                                  "testcase"]
    good = ET.fromstring('<testsuite name="pytest" tests="1" failures="0" errors="0"><properties>'
                         '<property name="a" value="b"/></properties><testcase name="t"/></testsuite>')
    assert schema_errors(good) == []


@pytest.mark.slow
def test_junit_of_the_shipped_preflight_validates(tmp_path):
    """`rlcheck preflight --junitxml` as a user runs it (the recipe checks; a cluster check in an
    interpreter without Ray, which makes it an error): the file validates against junit-10.xsd."""
    code = ("import sys; sys.modules['ray'] = None; from rlcheck.cli import main; sys.exit(main(['preflight', '-k', "
            "'recipe or cluster_reachable', '--hardware=h200', '--junitxml=junit.xml']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=400)
    assert "rlcheck NO-GO" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert schema_errors(root) == []
    cases = list(root.iter("testcase"))
    assert len(cases) > 10 and all(c.find("properties") is None for c in cases)
    assert any(name and name.endswith("::rlcheck_status") for name, _ in _suite_props(root))
