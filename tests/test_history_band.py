"""The band of a cluster's own good runs (`--history DIR --band-runs N`): measured figures judged against the median
of the last N passing runs of the same check, node and hardware profile, on the recorded nightly runs
(tests/data/history/runs: node-b's GEMM 8% slower in the last run) and on rule tables around each bound."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rlcheck import history_band
from rlcheck.verdict import Status, Verdict

RUNS = Path(__file__).resolve().parent / "data" / "history" / "runs"
GARBLED = Path(__file__).resolve().parent / "data" / "history" / "garbled" / "report-2026-03-07T020000Z-h200.json"


def _gemm(tflops: float, status: Status = Status.PASS, node: str | None = "node-b") -> Verdict:
    return Verdict(check_id="gpu_bf16_gemm", status=status, node=node,
                   summary=f"slowest of 8 GPU(s): cuda:3 (NVIDIA H200) at {tflops} TFLOP/s bf16 (>= 630)")


def _report(created: str, *verdicts: Verdict, profile: str | None = "h200") -> dict:
    return {"rlcheck_report": 1, "created": created, "hardware": {"profile": profile},
            "verdicts": [v.to_dict() for v in verdicts]}


# median 100 of three good runs: the bounds are 95 (WARN below) and 90 (FAIL below), both sides of each
@pytest.mark.parametrize(("value", "expected"), [
    (120.0, Status.PASS), (100.0, Status.PASS), (95.0, Status.PASS), (94.9, Status.WARN),
    (90.0, Status.WARN), (89.9, Status.FAIL), (10.0, Status.FAIL),
])
def test_band_bounds_around_the_median(value, expected):
    judged = history_band.judge(_gemm(value), [100.0, 100.0, 100.0], last=5)
    assert judged.status is expected
    assert "against the median 100.0 TFLOP/s of the last 3 good run(s)" in judged.details
    if expected is Status.PASS:
        assert judged.summary == _gemm(value).summary and judged.remedy == ""
    else:
        assert judged.summary.startswith(f"{value:.1f} TFLOP/s is ")
        assert "the fixed floor passed it" in judged.summary and "--history folder" in judged.remedy


@pytest.mark.parametrize(("figures", "judged_by_band"), [
    ([], False), ([100.0], False), ([100.0, 100.0], False), ([100.0, 100.0, 100.0], True),
])
def test_band_needs_three_good_runs(figures, judged_by_band):
    judged = history_band.judge(_gemm(50.0), figures, last=5)
    assert (judged.status is Status.FAIL) is judged_by_band
    if not judged_by_band:
        assert f"band: {len(figures)} good run(s) of this check kept in --history (needs 3)" in judged.details


@pytest.mark.parametrize(("last", "expected"), [(2, Status.PASS), (3, Status.PASS), (4, Status.FAIL),
                                                 (9, Status.FAIL)])
def test_band_takes_only_the_last_n_good_runs(last, expected):
    # the last 3 good runs have median 100, the last 4 median 150; the last 2 are no band yet
    judged = history_band.judge(_gemm(100.0), [300.0, 200.0, 100.0, 100.0], last=last)
    assert judged.status is expected
    assert ("(needs 3)" in judged.details) is (last == 2)


def test_band_last_zero_is_no_band():
    judged = history_band.judge(_gemm(50.0), [100.0, 100.0, 100.0], last=0)
    assert judged.status is Status.PASS and "(needs 3)" in judged.details


@pytest.mark.parametrize("status", [Status.FAIL, Status.WARN])
def test_band_never_relaxes_a_verdict(status):
    judged = history_band.judge(_gemm(100.0, status), [100.0, 100.0, 100.0], last=5)
    assert judged.status is status and "+0.0% against the median 100.0" in judged.details


def test_band_worse_of_warn_and_fail():
    assert history_band.judge(_gemm(80.0, Status.WARN), [100.0] * 3, last=5).status is Status.FAIL


@pytest.mark.parametrize("status", [Status.UNKNOWN, Status.SKIP])
def test_band_leaves_unjudged_verdicts_alone(status):
    verdict = _gemm(10.0, status)
    assert history_band.judge(verdict, [100.0] * 3, last=5) == verdict


def test_band_leaves_verdicts_without_a_figure_alone():
    verdict = Verdict(check_id="cluster_node_xid", status=Status.PASS, summary="no Xid errors")
    assert history_band.judge(verdict, [100.0] * 3, last=5) == verdict


def test_good_figures_only_of_the_same_check_node_profile_unit_and_passing():
    allreduce = Verdict(check_id="gpu_bf16_gemm", status=Status.PASS, node="node-b", summary="x at 300.0 GB/s")
    reports = [
        _report("1", _gemm(101.0)),
        _report("2", _gemm(102.0, node="node-a")),  # other node
        _report("3", _gemm(103.0, Status.WARN)),  # not a good run
        _report("4", _gemm(104.0), profile="h100"),  # other hardware
        _report("5", _gemm(105.0).with_id("gpu_nccl_allreduce")),  # other check
        _report("6", allreduce),  # other unit
        _report("7", _gemm(107.0)),
    ]
    got = history_band.good_figures(reports, check_id="gpu_bf16_gemm", node="node-b", profile="h200", unit="TFLOP/s")
    assert got == [101.0, 107.0]
    assert history_band.good_figures(reports, check_id="gpu_bf16_gemm", node="node-b", profile="h200",
                                     unit="GB/s") == [300.0]


def _gemm_said(text: str, status: Status = Status.PASS) -> Verdict:
    return Verdict(check_id="gpu_bf16_gemm", status=status, node="node-b",
                   summary=f"slowest of 8 GPU(s): cuda:3 (NVIDIA H200) at {text} bf16 (>= 630)")


@pytest.mark.parametrize("text", ["1e+300 TFLOP/s", "9e5 TFLOP/s", "1.2.3 TFLOP/s", "inf TFLOP/s", "-700 TFLOP/s"])
def test_good_figures_leave_out_a_figure_they_cannot_read(text):
    reports = [_report(str(day), _gemm(100.0)) for day in range(3)] + [_report("3", _gemm_said(text))]
    expected = [100.0, 100.0, 100.0] + ([900000.0] if text == "9e5 TFLOP/s" else [])
    assert history_band.good_figures(reports, check_id="gpu_bf16_gemm", node="node-b", profile="h200",
                                     unit="TFLOP/s") == expected


@pytest.mark.parametrize(("text", "why"), [("1.2.3 TFLOP/s", "is not a number"), ("1e+300 TFLOP/s", "is above"),
                                           ("nan TFLOP/s", "is not finite")])
def test_band_names_a_figure_it_cannot_read_and_leaves_the_verdict(text, why):
    reports = [_report(str(day), _gemm(100.0)) for day in range(3)]
    (judged,) = history_band.judge_all([_gemm_said(text)], reports, [], profile="h200", last=5)
    assert judged.status is Status.PASS and judged.summary == _gemm_said(text).summary
    assert f"band: not judged: {text!r} {why}" in judged.details, judged.details


def test_band_on_the_recorded_nightly_runs_names_node_b_8_percent_slower(tmp_path):
    for path in sorted(RUNS.glob("*.json"))[:4]:
        shutil.copy(path, tmp_path / path.name)
    last = json.loads(sorted(RUNS.glob("*.json"))[4].read_text(encoding="utf-8"))
    reports, errors = history_band.read_reports(tmp_path)
    assert ([r["created"] for r in reports], errors) == ([f"2026-03-0{d}T02:00:00+00:00" for d in (2, 3, 4, 5)], [])
    verdicts = [Verdict.from_dict({k: v[k] for k in v if k in {"status", "summary", "details", "node", "check_id",
                                                                "failure_id", "remedy"}})
                for v in last["verdicts"] if v["check_id"] == "gpu_bf16_gemm"]
    judged = {v.node: v for v in history_band.judge_all(verdicts, reports, errors, profile="h200", last=5)}
    assert judged["node-b"].status is Status.WARN
    assert judged["node-b"].summary.startswith("644.0 TFLOP/s is -8.0% against the median 700.0 TFLOP/s of the last "
                                               "4 good run(s) of this cluster")
    assert judged["node-a"].status is Status.PASS
    # the same runs judged as an H100 cluster's have no band
    assert all(v.status is Status.PASS for v in history_band.judge_all(verdicts, reports, [], profile="h100", last=5))


def test_band_names_unreadable_kept_reports(tmp_path):
    for path in sorted(RUNS.glob("*.json"))[:3]:
        shutil.copy(path, tmp_path / path.name)
    shutil.copy(GARBLED, tmp_path / GARBLED.name)
    reports, errors = history_band.read_reports(tmp_path)
    assert len(reports) == 3 and len(errors) == 1 and errors[0].startswith(GARBLED.name)
    judged = history_band.judge_all([_gemm(600.0)], reports, errors, profile="h200", last=5)[0]
    assert judged.status is Status.FAIL
    assert f"band: 1 kept report(s) unreadable and left out: {GARBLED.name}" in judged.details


def test_read_reports_of_a_missing_folder_is_empty(tmp_path):
    assert history_band.read_reports(tmp_path / "none") == ([], [])


CHECK_GEMM = """
from rlcheck.verdict import Status, Verdict
def test_gpu_bf16_gemm(record_verdict):
    record_verdict(Verdict(status=Status.PASS, node="node-b",
                           summary="slowest of 8 GPU(s): cuda:3 (NVIDIA H200) at 644.0 TFLOP/s bf16 (>= 630)"))
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("checks")
    pytester.makepyfile(**{"checks/test_gpu": CHECK_GEMM})
    return pytester


def _kept(pytester: pytest.Pytester, tflops: list[float]) -> Path:
    hist = pytester.path / "hist"
    hist.mkdir()
    for day, tf in enumerate(tflops, start=1):
        doc = _report(f"2026-03-0{day}T02:00:00+00:00", _gemm(tf))
        (hist / f"report-{day}.json").write_text(json.dumps(doc), encoding="utf-8")
    return hist


def test_plugin_band_turns_a_slower_node_into_warn(project):
    hist = _kept(project, [700.0, 702.0, 698.0])
    result = project.runpytest("--hardware=h200", f"--history={hist}", "checks/")
    report = json.loads((project.path / "rlcheck-report" / "report.json").read_text(encoding="utf-8"))
    (gemm,) = [v for v in report["verdicts"] if "gemm" in v["check_id"]]
    assert gemm["status"] == "WARN", result.stdout.str()
    assert gemm["summary"].startswith("644.0 TFLOP/s is -8.0% against the median 700.0 TFLOP/s")


def test_plugin_band_runs_zero_is_off(project):
    hist = _kept(project, [700.0, 702.0, 698.0])
    project.runpytest("--hardware=h200", f"--history={hist}", "--band-runs=0", "checks/")
    report = json.loads((project.path / "rlcheck-report" / "report.json").read_text(encoding="utf-8"))
    assert [v["status"] for v in report["verdicts"] if "gemm" in v["check_id"]] == ["PASS"]


def test_plugin_band_runs_negative_is_a_usage_error(project):
    result = project.runpytest("--hardware=h200", "--band-runs=-1", "checks/")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--band-runs=-1: a whole number >= 0 (0 turns the band off)*"])


@pytest.mark.parametrize(("band_runs", "garbled", "status", "said"), [
    # fewer runs asked for than a band needs: the verdict stands, and says why the band did not judge it
    ("1", False, "PASS", "band: 1 good run(s) of this check kept in --history (needs 3); judged by the fixed floor "
                         "alone"),
    ("2", False, "PASS", "band: 2 good run(s) of this check kept in --history (needs 3); judged by the fixed floor "
                         "alone"),
    # an unreadable kept report: judged by the readable ones, and named
    ("5", True, "WARN", f"band: 1 kept report(s) unreadable and left out: {GARBLED.name}: "),
])
def test_plugin_band_says_what_it_could_not_judge_by(project, band_runs, garbled, status, said):
    hist = _kept(project, [700.0, 702.0, 698.0])
    if garbled:
        shutil.copy(GARBLED, hist / GARBLED.name)
    result = project.runpytest("--hardware=h200", f"--history={hist}", f"--band-runs={band_runs}", "checks/")
    report = json.loads((project.path / "rlcheck-report" / "report.json").read_text(encoding="utf-8"))
    (gemm,) = [v for v in report["verdicts"] if "gemm" in v["check_id"]]
    assert gemm["status"] == status, result.stdout.str()
    assert gemm["details"].splitlines()[-1].startswith(said), gemm["details"]
