"""Reports that CI tools show well: readable JUnit properties per verdict and GO / NO-GO per testsuite, skips at
the test, no GO / NO-GO where nothing was judged, and `--dry-run` without --hardware on every fitting hardware."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rlcheck.probes import gpus

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
    return ET.parse(project.path / "junit.xml").getroot()


def _props(case: ET.Element) -> list[tuple[str | None, str | None]]:
    return [(p.get("name"), p.get("value")) for p in case.iter("property")]


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


def test_dry_run_without_hardware_renders_each_case_on_every_hardware_it_fits(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", "testcases/test_e2e.py", "--dry-run", "--hardware=none",
                           f"--report-dir={tmp_path}", "-p", "no:cacheprovider", "-q"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    out = done.stdout
    for hw in ("h100", "h200", "b200", "b300", "gb200", "gb300"):
        assert f"SKIP    e2e[qwen3-4b-colocated]: dry run, nothing ran: renders for {hw}:" in out, out[-3000:]
    assert "SKIP    e2e[glm5.2-gb300]: dry run, nothing ran: renders for gb300:" in out
    assert "e2e[glm5.2-gb300]: dry run, nothing ran: renders for h200" not in out
    assert "FAIL    e2e[" not in out, out[-3000:]
    assert "needs a hardware profile" not in out


@pytest.mark.parametrize(("declared", "table"), [("slime==0.3.1", "v0.3.1"), ("slime==main", "main"), (None, "v0.2.4")])
def test_dry_run_plans_the_milestones_of_the_declared_slime(tmp_path, declared, table):
    args = [f"--framework={declared}"] if declared else []
    done = subprocess.run([sys.executable, "-m", "pytest", "testcases/test_e2e.py", "--dry-run", "--hardware=h200",
                           "-k", "qwen3-4b-colocated", *args, f"--report-dir={tmp_path}", "-p", "no:cacheprovider",
                           "-q"], cwd=ROOT, capture_output=True, text=True, timeout=300)
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
