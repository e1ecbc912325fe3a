"""The pytest plugin, driven through pytester: options, usage errors, markers, verdicts and the report."""

from __future__ import annotations

import json

import pytest

CHECK_PASS = """
from rlcheck.verdict import Status, Verdict
def test_image_ok(record_verdict):
    record_verdict(Verdict(check_id="x", status=Status.PASS, summary="numpy 1.26.4 as needed"))
"""
CHECK_FAIL = """
from rlcheck.verdict import Status, Verdict
def test_recipe_batch(record_verdict):
    record_verdict(Verdict(check_id="x", status=Status.FAIL, summary="128 != 96", failure_id="batch-size-mismatch",
                           remedy="fix the batch sizes"))
"""
CHECK_CRASH = """
def test_cluster_gpus(record_verdict):
    raise ConnectionError("ray did not answer within 30 s")
"""
MARKED = """
import pytest
@pytest.mark.gpu
def test_kernel_gpu(): pass
@pytest.mark.gpu(min_sm=100, count=2)
def test_kernel_two_blackwell(): pass
@pytest.mark.cluster
def test_cluster_real(): pass
@pytest.mark.e2e
def test_e2e_case(): pass
@pytest.mark.slow
def test_slow_thing(): pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("checks")
    return pytester


def test_plugin_go_line_and_report_files(project):
    project.makepyfile(**{"checks/test_image": CHECK_PASS})
    result = project.runpytest("--hardware=h200")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*rlcheck verdicts*", "hardware: h200: given with --hardware",
        "PASS    image_ok: numpy 1.26.4 as needed", "report: rlcheck-report/report.json, rlcheck-report/report.md",
        "rlcheck GO: 1 blocking check(s) judged and passed for recipe qwen3-4b-colocated on hardware h200"])
    doc = json.loads((project.path / "rlcheck-report" / "report.json").read_text())
    assert doc["go"] is True and doc["hardware"]["profile"] == "h200" and doc["verdicts"][0]["blocking"]
    assert doc["versions"]["ray"] == "2.55.1"
    assert "# rlcheck report: GO" in (project.path / "rlcheck-report" / "report.md").read_text()


def test_plugin_no_go_lists_fail_and_unknown(project):
    project.makepyfile(**{"checks/test_recipe": CHECK_FAIL, "checks/test_cluster": CHECK_CRASH})
    result = project.runpytest("--hardware=none", "--recipe=glm5.2-gb300", "--report-dir=out")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "FAIL recipe_batch: 128 != 96", "  known failure: batch-size-mismatch", "  fix: fix the batch sizes",
        "UNKNOWN cluster_gpus: could not run (call): ConnectionError: ray did not answer within 30 s",
        "rlcheck NO-GO: 2 of 2 judged blocking check(s) for recipe glm5.2-gb300 on hardware none: "
        "cluster_gpus UNKNOWN; recipe_batch FAIL"])
    md = (project.path / "out" / "report.md").read_text()
    assert "## What to fix" in md and "Fix: fix the batch sizes" in md


def test_plugin_reproducers_alone_decide_nothing_and_keep_the_exit_status(project):
    # ./run test (self-tests, reproducers, test cases, no checks/): a green run exits 0 and says why no GO / NO-GO
    project.mkdir("reproducers")
    project.makepyfile(**{"reproducers/test_repro_x": CHECK_PASS.replace("test_image_ok", "test_repro_x")})
    result = project.runpytest("--hardware=none")
    result.stdout.fnmatch_lines(["rlcheck no GO / NO-GO: no blocking check ran for recipe qwen3-4b-colocated on "
                                 "hardware none (only checks/ decide)"])
    assert result.ret == 0 and "rlcheck NO-GO" not in result.stdout.str()


def test_plugin_one_blocking_check_beside_reproducers_decides(project):
    project.mkdir("reproducers")
    project.makepyfile(**{"reproducers/test_repro_x": CHECK_PASS.replace("test_image_ok", "test_repro_x"),
                          "checks/test_image": CHECK_PASS})
    result = project.runpytest("--hardware=none")
    result.stdout.fnmatch_lines(["rlcheck GO: 1 blocking check(s) judged and passed*"])
    assert result.ret == 0


@pytest.fixture
def gpu_less_host(project, monkeypatch):
    """This machine as one with an NVIDIA driver that lists no GPU, whatever the host has (an H200 on the device
    machine): an nvidia-smi on PATH that answers with no row, and the process's detection read afresh."""
    from rlcheck.probes.node import gpus

    folder = project.path / "bin"
    folder.mkdir()
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\nexit 0\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.setattr(gpus, "_detected", [])
    return project


def test_plugin_skipped_check_recorded_with_reason(project, gpu_less_host):
    project.makepyfile(**{"checks/test_gpu": "import pytest\n@pytest.mark.gpu\ndef test_gpu_smoke(): pass\n"})
    result = project.runpytest("--hardware=none", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["SKIP    gpu_smoke: needs a CUDA GPU (sm_90+): found none"])


def test_plugin_markers_skip_naming_what_is_missing(project, gpu_less_host):
    project.makepyfile(test_marked=MARKED)
    result = project.runpytest("--hardware=none", "--quick", "-rs")
    result.assert_outcomes(skipped=5)
    result.stdout.fnmatch_lines_random([
        "*needs a CUDA GPU (sm_90+): found none*", "*needs 2 CUDA GPUs (sm_100+): found none*",
        "*needs a Ray cluster (--ray-address): found none, only the embedded loopback Ray*",
        "*needs a GPU Ray cluster (--ray-address): found none*; and a hardware profile (--hardware): found none*",
        "*slow (more than about 30 s): skipped by --quick*"])


def test_plugin_ray_address_lifts_cluster_skip(project, gpu_less_host):
    project.makepyfile(test_marked=MARKED)
    result = project.runpytest("--hardware=b300", "--ray-address=ray://127.0.0.1:10001", "-rs")
    result.assert_outcomes(passed=3, skipped=2)


@pytest.mark.parametrize(("args", "message"), [
    (["--hardware=h300"], "--hardware='h300' is not a known hardware profile; valid: b200, b300, gb200, gb300, "
                          "h100, h200, auto, none"),
    (["--recipe=qwen3-8b"], "--recipe='qwen3-8b' is not a known recipe; valid: qwen3-4b-colocated, "
                            "qwen3-30b-a3b-disaggregated, qwen3-4b-remote-rm, glm5.2-gb300"),
    (["--ray-address=10.0.0.1:6379"], "--ray-address='10.0.0.1:6379' is malformed: use ray://HOST:10001 or "
                                      "http://HOST:8265"),
    (["--framework=slime-0.2.4"], "--framework='slime-0.2.4': expected slime==VERSION or miles==VERSION"),
    (["--framework=verl==0.5"], "--framework='verl==0.5': expected slime==VERSION or miles==VERSION"),
])
def test_plugin_usage_errors_list_valid_values(project, args, message):
    result = project.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_plugin_report_states_the_framework_judged(project):
    project.makepyfile(**{"checks/test_image": CHECK_PASS})
    result = project.runpytest("--hardware=h200", "--framework=slime==0.3.1")
    result.stdout.fnmatch_lines(["framework: slime 0.3.1 (--framework)"])
    doc = json.loads((project.path / "rlcheck-report" / "report.json").read_text())
    assert doc["framework"] == {"name": "slime", "version": "0.3.1", "source": "--framework",
                                "judged": "slime 0.3.1 (--framework)"}
    assert "- framework: slime 0.3.1 (--framework)" in (project.path / "rlcheck-report" / "report.md").read_text()
    # Not declared, none installed here: said so, never a silent default.
    project.runpytest("--hardware=h200").stdout.fnmatch_lines(["framework: neither SLIME nor Miles importable here*"])


def test_plugin_verdicts_gathered_across_xdist_workers(project):
    project.makepyfile(**{"checks/test_image": CHECK_PASS, "checks/test_recipe": CHECK_FAIL})
    result = project.runpytest_subprocess("-n", "2", "--hardware=none", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines_random(["PASS    image_ok: numpy 1.26.4 as needed", "FAIL    recipe_batch: 128 != 96",
                                        "rlcheck NO-GO: 1 of 2 judged blocking check(s)*recipe_batch FAIL"])


def test_plugin_hardware_auto_says_what_it_found(project):
    project.makepyfile(**{"checks/test_image": CHECK_PASS})
    result = project.runpytest("--hardware=auto")
    result.stdout.fnmatch_lines(["hardware: auto: *"])
