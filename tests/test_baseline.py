"""`rlcheck baseline record` and --baseline: a healthy run's report becomes this cluster's floors; bad input is said.

The recorded report is the H200 device run of 2026-12-01 (`pytest checks/test_gpu.py --hardware=h200 -k
"node_health or bf16_gemm"`, tests/data/baseline/h200_report_healthy.json): gpu_bf16_gemm 779.7 TFLOP/s.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from rlcheck import hardware
from rlcheck.cli import main
from rlcheck.preflight import baseline
from rlcheck.probes.gpu import gpu_smoke
from rlcheck.verdict import Status

REPORT = Path(__file__).parent / "data" / "baseline" / "h200_report_healthy.json"
H200 = hardware.get_profile("h200")


def _report() -> dict:
    return json.loads(REPORT.read_text())


def _allreduce_verdict(gbps: float) -> dict:
    return {"status": "PASS", "check_id": "gpu_nccl_allreduce", "details": "256 MiB float32 over 8 rank(s)",
            "summary": f"all-reduce bus bandwidth {gbps} GB/s over 8 GPU(s) (>= 240, measured floor)", "node": None,
            "failure_id": None, "remedy": "", "kind": "check", "test_id": "x", "blocking": True, "reproduction": None}


def test_baseline_from_the_recorded_h200_report():
    doc, profile = baseline.read_report(REPORT)
    assert profile == "h200"
    recorded = baseline.make(profile, baseline.figures_from_report(doc), str(REPORT))
    assert recorded.thresholds == {gpu_smoke.GEMM_FLOOR: 623.8}  # 0.8 x 779.7; one GPU: no all-reduce
    assert "0.8 x 779.7 (bf16 GEMM of the slowest of 1 GPU(s) (cuda:0))" in recorded.source[gpu_smoke.GEMM_FLOOR]


def test_baseline_takes_the_all_reduce_and_the_slowest_gpu():
    doc = _report()
    doc["verdicts"][0]["details"] = "cuda:0 NVIDIA H200: 790.1 TFLOP/s\ncuda:1 NVIDIA H200: 701.5 TFLOP/s"
    doc["verdicts"].append(_allreduce_verdict(355.2))
    figures = baseline.figures_from_report(doc)
    assert figures[gpu_smoke.GEMM_FLOOR][0] == 701.5 and figures[gpu_smoke.BUSBW_FLOOR][0] == 355.2


def test_baseline_round_trips_and_becomes_the_floors(tmp_path):
    recorded = baseline.make("h200", {gpu_smoke.GEMM_FLOOR: (700.0, "test"), gpu_smoke.BUSBW_FLOOR: (300.0, "test")},
                             "report.json")
    path = tmp_path / "b.toml"
    path.write_text(baseline.render(recorded))
    assert baseline.load(path) == recorded
    profile = baseline.apply(H200, baseline.load(path), path)
    assert profile.thresholds[gpu_smoke.GEMM_FLOOR] == 560.0 and profile.provenance[gpu_smoke.GEMM_FLOOR] == "baseline"
    assert profile.floor_measured(gpu_smoke.GEMM_FLOOR) and profile.source[gpu_smoke.GEMM_FLOOR].startswith("baseline")
    public = baseline.apply(hardware.get_profile("b300"), dataclasses.replace(recorded, hardware="b300"), path)
    slow = gpu_smoke.GemmObservation(tflops_by_device=(("cuda:0", "NVIDIA B300", 559.0),))
    assert gpu_smoke.evaluate_bf16_gemm(slow, public).status is Status.FAIL  # below a baseline: FAIL, not WARN
    ok = gpu_smoke.GemmObservation(tflops_by_device=(("cuda:0", "NVIDIA B300", 560.0),))
    assert gpu_smoke.evaluate_bf16_gemm(ok, public).status is Status.PASS


def _unhealthy() -> dict:
    doc = _report()
    doc["verdicts"][2]["status"] = "FAIL"
    return doc


def _no_gemm() -> dict:
    doc = _report()
    doc["verdicts"] = doc["verdicts"][1:]
    return doc


@pytest.mark.parametrize(("doc", "message"), [
    ({"go": True}, "not an rlcheck report.json"),
    (_unhealthy(), "not a healthy run: gpu_node_health FAIL"),
    (_no_gemm(), "no measured gpu_bf16_gemm or gpu_nccl_allreduce verdict"),
])
def test_baseline_refuses_a_report_that_is_no_healthy_gpu_run(doc, message):
    with pytest.raises(baseline.BaselineError, match=message):
        baseline.figures_from_report(copy.deepcopy(doc))


@pytest.mark.parametrize(("text", "message"), [
    ("not = [toml", "not a usable baseline"),
    ('hardware = "h200"\n', "missing"),
    (None, "fraction=1.5: between 0"),
    ("extra", "unknown field"),
    ("shm", "a baseline holds"),
])
def test_baseline_file_validated_when_loaded(tmp_path, text, message):
    good = baseline.render(baseline.make("h200", {gpu_smoke.GEMM_FLOOR: (700.0, "test")}, "r.json"))
    body = {None: good.replace("fraction = 0.8", "fraction = 1.5"), "extra": "colour = 1\n" + good,
            "shm": good.replace("bf16_gemm_min_tflops = 560.0", "shm_min_gib = 1.0")}.get(text, text)
    path = tmp_path / "b.toml"
    path.write_text(body)
    with pytest.raises(baseline.BaselineError, match=message):
        baseline.load(path)


def test_baseline_for_other_hardware_is_refused(tmp_path):
    recorded = baseline.make("b200", {gpu_smoke.GEMM_FLOOR: (1500.0, "test")}, "r.json")
    with pytest.raises(baseline.BaselineError, match="recorded on hardware 'b200', this run judges 'h200'"):
        baseline.apply(H200, recorded, tmp_path / "b.toml")


def test_baseline_record_command_writes_the_file(tmp_path, capsys):
    out = tmp_path / "baseline.toml"
    assert main(["baseline", "record", "--report", str(REPORT), "-o", str(out)]) == 0
    assert baseline.load(out).thresholds == {gpu_smoke.GEMM_FLOOR: 623.8}
    assert f"--baseline={out}" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--report", "{tmp}/absent.json"], "cannot read the report"),
    (["--report", "{tmp}/bad.json"], "not an rlcheck report.json"),
    (["--report", str(REPORT), "--hardware", "h300"], "unknown hardware 'h300'"),
    (["--report", str(REPORT), "--fraction", "0"], "fraction=0.0"),
])
def test_baseline_record_command_says_why_and_exits_2(tmp_path, capsys, args, message):
    (tmp_path / "bad.json").write_text("[1, 2]")
    argv = ["baseline", "record", *[a.replace("{tmp}", str(tmp_path)) for a in args], "-o", str(tmp_path / "b.toml")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlcheck baseline record: ") and message in err, err
    assert not (tmp_path / "b.toml").exists()


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU machine would measure")
def test_baseline_record_measure_without_a_gpu_says_so(tmp_path, capsys):
    assert main(["baseline", "record", "--measure", "-o", str(tmp_path / "b.toml")]) == 2
    assert "no GPU here to measure" in capsys.readouterr().err


FLOOR_SEEN = """
def test_floor(rlcheck_context):
    p = rlcheck_context.profile
    print("FLOOR", p.thresholds["bf16_gemm_min_tflops"], p.provenance["bf16_gemm_min_tflops"])
"""


def test_baseline_option_sets_the_floors_and_refuses_a_bad_file(pytester: pytest.Pytester):
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.makepyfile(test_floor=FLOOR_SEEN)
    good = baseline.make("h200", {gpu_smoke.GEMM_FLOOR: (700.0, "test")}, "r.json")
    (pytester.path / "b.toml").write_text(baseline.render(good))
    result = pytester.runpytest("--hardware=h200", "--baseline=b.toml", "-s")
    result.stdout.fnmatch_lines(["*FLOOR 560.0 baseline*"])
    (pytester.path / "other.toml").write_text(baseline.render(dataclasses.replace(good, hardware="b200")))
    refused = pytester.runpytest("--hardware=h200", "--baseline=other.toml")
    refused.stderr.fnmatch_lines(["*--baseline: *other.toml: recorded on hardware 'b200', this run judges 'h200'*"])
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
