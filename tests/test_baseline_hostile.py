"""`rlcheck baseline record` and --baseline on hostile input: every figure parsed strictly (finite, positive, within
baseline.BOUND of the profile's own floor), the field and the file named on refusal, and the TOML written escaped
so that a file recorded from any path (emoji, CJK, quotes, backslashes, newlines, bytes that are no UTF-8) loads."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from rlcheck import hardware
from rlcheck.cli import main
from rlcheck.preflight import baseline
from rlcheck.probes.gpu import gpu_smoke

REPORT = Path(__file__).parent / "data" / "baseline" / "h200_report_healthy.json"
H200 = hardware.get_profile("h200")
GEMM = gpu_smoke.GEMM_FLOOR
BUSBW = gpu_smoke.BUSBW_FLOOR


def _report_with(tmp_path: Path, tflops: str, gbps: str | None = None, name: str = "report.json") -> Path:
    doc = json.loads(REPORT.read_text())
    doc["verdicts"][0]["details"] = f"cuda:0 NVIDIA H200: 779.7 TFLOP/s\ncuda:1 NVIDIA H200: {tflops} TFLOP/s"
    if gbps is not None:
        doc["verdicts"].append({"status": "PASS", "check_id": "gpu_nccl_allreduce", "details": "", "node": None,
                                "summary": f"all-reduce bus bandwidth {gbps} GB/s over 8 GPU(s) (>= 240)"})
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _record(tmp_path: Path, report: Path, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / "b.toml"
    code = main(["baseline", "record", "--report", str(report), "-o", str(out), *extra])
    return code, "", out


@pytest.mark.parametrize(("tflops", "why"), [
    ("9" * 400, "not finite"),
    ("1.2.3", "not a number"),
    ("1e+300", "above"),
    ("inf", "not a number"),
    ("nan", "not a number"),
    ("0", "not positive"),
    ("-5", "not positive"),
    ("0x10", "not a number"),
    ("1_000", "not a number"),
    ("٧٧٩", "not a number"),  # Arabic-Indic digits: float() takes them, a TFLOP/s figure does not
    ("7000", "above"),  # more than BOUND x the h200 floor (615)
    ("0.5", "below"),
])
def test_baseline_record_refuses_a_bad_gemm_figure_naming_field_and_file(tmp_path, capsys, tflops, why):
    report = _report_with(tmp_path, tflops)
    code, _, out = _record(tmp_path, report)
    err = capsys.readouterr().err
    assert code == 2, err
    assert GEMM in err and str(report) in err and why in err, err
    assert "could not convert" not in err and not out.exists()


@pytest.mark.parametrize(("gbps", "why"), [("1e999", "not finite"), ("2.4.0", "not a number"), ("9e9", "above")])
def test_baseline_record_refuses_a_bad_allreduce_figure(tmp_path, capsys, gbps, why):
    report = _report_with(tmp_path, "790.0", gbps)
    assert _record(tmp_path, report)[0] == 2
    err = capsys.readouterr().err
    assert BUSBW in err and str(report) in err and why in err, err


@pytest.mark.parametrize("tflops", ["701.5", "7.015e2", "7.015E+02"])
def test_baseline_record_takes_exponent_notation(tmp_path, capsys, tflops):
    code, _, out = _record(tmp_path, _report_with(tmp_path, tflops))
    assert code == 0, capsys.readouterr().err
    assert baseline.load(out).thresholds == {GEMM: 561.2}


@pytest.mark.parametrize("fraction", ["nan", "inf", "-0.5", "1e-300"])
def test_baseline_record_refuses_a_bad_fraction(tmp_path, capsys, fraction):
    code, _, out = _record(tmp_path, _report_with(tmp_path, "790.0"), "--fraction", fraction)
    err = capsys.readouterr().err
    assert code == 2 and "fraction" in err and not out.exists(), err


def _file_with(tmp_path: Path, floor: str) -> Path:
    good = baseline.render(baseline.make("h200", {GEMM: (700.0, "test")}, "r.json"))
    path = tmp_path / "b.toml"
    path.write_text(good.replace("bf16_gemm_min_tflops = 560.0", f"bf16_gemm_min_tflops = {floor}"))
    return path


@pytest.mark.parametrize(("floor", "why"), [("inf", "finite"), ("nan", "finite"), ("-inf", "finite"),
                                            ("0.0", "> 0"), ("true", "number")])
def test_baseline_file_with_a_non_finite_floor_is_refused_naming_field_and_file(tmp_path, floor, why):
    path = _file_with(tmp_path, floor)
    with pytest.raises(baseline.BaselineError) as exc:
        baseline.load(path)
    assert str(path) in str(exc.value) and GEMM in str(exc.value) and why in str(exc.value), str(exc.value)


@pytest.mark.parametrize("floor", ["1e9", "6151.0", "1e-3"])
def test_baseline_file_with_an_absurd_floor_is_refused_when_applied(tmp_path, floor):
    path = _file_with(tmp_path, floor)
    with pytest.raises(baseline.BaselineError) as exc:
        baseline.apply(H200, baseline.load(path), path)
    assert str(path) in str(exc.value) and GEMM in str(exc.value) and "h200" in str(exc.value), str(exc.value)


HOSTILE_PATHS = ["runs/😀/report.json", "跑步/报告.json", 'say "hi"/r.json', "back\\slash\\r.json",
                 "new\nline/r.json", "tab\tand\x1b[2J\x7f\x00/r.json", "\\u0041 not an escape/r.json"]


@pytest.mark.parametrize("recorded_from", HOSTILE_PATHS)
def test_baseline_written_escaped_reads_back_with_tomllib(tmp_path, recorded_from):
    recorded = baseline.make("h200", {GEMM: (700.0, "bf16 GEMM"), BUSBW: (300.0, "all-reduce")}, recorded_from)
    text = baseline.render(recorded)
    raw = tomllib.loads(text)
    assert raw["recorded_from"] == recorded_from and recorded_from in raw["source"][GEMM]
    path = tmp_path / "b.toml"
    path.write_text(text, encoding="utf-8")
    assert baseline.load(path) == recorded


def test_baseline_from_a_path_that_is_no_utf8_still_writes_a_loadable_file(tmp_path):
    recorded = baseline.make("h200", {GEMM: (700.0, "test")}, os.fsdecode(b"runs/\xff\xfe/report.json"))
    path = tmp_path / "b.toml"
    path.write_bytes(baseline.render(recorded).encode("utf-8"))
    assert baseline.load(path).recorded_from == "runs/\ufffd\ufffd/report.json"


@pytest.mark.parametrize("folder", ["😀 runs", "跑步", 'say "hi"', "back\\slash"])
def test_baseline_record_command_from_a_non_ascii_path_loads(tmp_path, capsys, folder):
    report = _report_with(tmp_path, "701.5", name=f"{folder}/report.json")
    code, _, out = _record(tmp_path, report)
    assert code == 0, capsys.readouterr().err
    loaded = baseline.load(out)
    assert loaded.recorded_from == str(report) and loaded.thresholds == {GEMM: 561.2}


def test_baseline_record_prints_a_hostile_path_escaped(tmp_path, capsys):
    report = tmp_path / "r\x1b]0;owned\x07.json"
    report.write_text("[1]")
    assert _record(tmp_path, report)[0] == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]0;owned\\x07" in err, repr(err)
