"""`rlcheck history DIR`: trends over the reports kept with --history, on recorded reports (tests/data/history/runs:
five nightly runs of two nodes, node-b's GEMM 8% slower in the last; garbled/: a report cut off mid-write)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rlcheck import cli, history

DATA = Path(__file__).resolve().parent / "data" / "history"
RUNS = DATA / "runs"
GARBLED = DATA / "garbled" / "report-2026-03-07T020000Z-h200.json"


def _history(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["history", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(("summary", "details", "expected"), [
    ("slowest of 8 GPU(s): cuda:3 (NVIDIA H200) at 644.0 TFLOP/s bf16 (>= 600)", "", (644.0, "TFLOP/s")),
    ("all-reduce bus bandwidth 361.0 GB/s over 8 GPU(s) (>= 300)", "", (361.0, "GB/s")),
    ("node b: all-reduce with node a: 42.5 GB/s (nccl)", "", (42.5, "GB/s")),
    ("bf16 GEMM done", "cuda:0 NVIDIA H200: 700 TFLOP/s", (700.0, "TFLOP/s")),  # only in the details
    ("no Xid errors in the kernel log", "", None),
    ("all-reduce did not run: timeout", "256 MiB float32 over 8 rank(s)", None),  # MiB is a size, not a figure
    ("/dev/shm is 64 GiB (>= 16)", "", None),
    ("at 7.797e2 TFLOP/s bf16", "", (779.7, "TFLOP/s")),  # an exponent is read whole
    ("bus bandwidth 3.61E+02 GB/s", "", (361.0, "GB/s")),
    ("measured in bf16 TFLOP/s: none", "", None),  # a word before the unit is no figure
])
def test_history_figure_of_a_verdict(summary, details, expected):
    assert history.figure_of({"summary": summary, "details": details}) == expected


def test_history_names_the_node_that_got_8_percent_slower(capsys):
    code, out, err = _history(capsys, str(RUNS), "--check", "gpu_bf16_gemm")
    assert (code, err) == (0, "")
    b = out[out.index("gpu_bf16_gemm [node-b]"):]
    assert b.splitlines()[5].split() == ["2026-03-06T02:00:00+00:00", "PASS", "644.0", "TFLOP/s", "-8.0%", "vs",
                                         "median", "700.0", "of", "4", "good", "run(s)"]
    a = out[out.index("gpu_bf16_gemm [node-a]"):out.index("gpu_bf16_gemm [node-b]")]
    assert a.splitlines()[5].endswith("+0.0% vs median 700.9 of 4 good run(s)")
    assert "cluster_node_xid" not in out


def test_history_status_per_run_of_a_per_node_check_without_figures(capsys):
    code, out, _ = _history(capsys, str(RUNS), "--check", "cluster_node_xid", "--node", "node-a")
    assert code == 0
    assert out.splitlines()[2:] == ["cluster_node_xid [node-a]"] + [
        f"  2026-03-0{day}T02:00:00+00:00 {status}" for day, status in
        zip(range(2, 7), ["PASS", "PASS", "FAIL", "PASS", "PASS"], strict=True)]
    assert "node-b" not in out


def test_history_band_takes_only_good_runs_and_the_last_n(tmp_path, capsys):
    for path in RUNS.glob("*.json"):
        shutil.copy(path, tmp_path)
    fourth = tmp_path / "report-2026-03-05T020000Z-h200.json"
    doc = json.loads(fourth.read_text())
    gemm_b = next(v for v in doc["verdicts"] if v["check_id"] == "gpu_bf16_gemm" and v["node"] == "node-b")
    gemm_b.update(status="FAIL", summary="slowest of 8 GPU(s): cuda:3 (NVIDIA H200) at 500.0 TFLOP/s bf16; "
                                         "expected >= 600")
    fourth.write_text(json.dumps(doc))
    code, out, _ = _history(capsys, str(tmp_path), "--check", "gpu_bf16_gemm", "--node", "node-b", "--last", "2")
    assert code == 0
    rows = out.splitlines()[3:]
    assert rows[3].split()[1:3] == ["FAIL", "500.0"]
    assert rows[4].endswith("-8.0% vs median 700.0 of 2 good run(s)")  # 702 and 698: the FAIL run is no baseline


def test_history_json_carries_each_point(capsys):
    code, out, _ = _history(capsys, str(RUNS), "--node", "node-b", "--check", "gpu_bf16_gemm", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["runs"] == 5 and doc["errors"] == []
    last = doc["series"][0]["points"][-1]
    assert (last["status"], last["figure"], last["unit"], last["median"]) == ("PASS", 644.0, "TFLOP/s", 700.0)
    assert round(last["change"], 3) == -0.08


def test_history_png_of_the_figures(tmp_path, capsys):
    code, _, err = _history(capsys, str(RUNS), "--png", str(tmp_path / "trend.png"))
    assert code == 0
    assert (tmp_path / "trend.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {tmp_path / 'trend.png'}" in err


def test_history_png_without_any_figure_is_unjudged(tmp_path, capsys):
    code, _, err = _history(capsys, str(RUNS), "--check", "cluster_node_xid", "--png", str(tmp_path / "t.png"))
    assert code == 2 and "no PNG: no verdict has a measured figure" in err
    assert not (tmp_path / "t.png").exists()


@pytest.mark.parametrize(("content", "why"), [
    (GARBLED.read_text(), "Unterminated string"),
    ("[]", "not an rlcheck report.json"),
    ('{"rlcheck_report": 1, "created": "2026-03-07T02:00:00+00:00", "verdicts": [{"summary": "x"}]}',
     "a verdict without check_id and status"),
])
def test_history_names_an_unreadable_report_and_exits_2(tmp_path, capsys, content, why):
    for path in RUNS.glob("*.json"):
        shutil.copy(path, tmp_path)
    (tmp_path / GARBLED.name).write_text(content)
    code, out, err = _history(capsys, str(tmp_path))
    assert code == 2
    assert f"unreadable report {tmp_path / GARBLED.name}: {why}" in err
    assert out.startswith("rlcheck history: 5 run(s), 5 series")  # the readable runs are still shown


def test_history_readable_folder_exits_0(capsys):
    code, out, err = _history(capsys, str(RUNS))
    assert (code, err) == (0, "") and out.startswith("rlcheck history: 5 run(s), 5 series")


@pytest.mark.parametrize(("args", "said"), [
    (["EMPTY"], "no report (*.json) in it"),
    (["MISSING"], "no such folder"),
    (["RUNS", "--check", "gpu_bf16_gemm", "--node", "node-z"], "nothing matches --check gpu_bf16_gemm --node node-z"),
    (["RUNS", "--last", "0"], "--last 0: a whole number >= 1"),
])
def test_history_nothing_to_judge_exits_2(tmp_path, capsys, args, said):
    (tmp_path / "empty").mkdir()
    where = {"EMPTY": str(tmp_path / "empty"), "MISSING": str(tmp_path / "missing"), "RUNS": str(RUNS)}
    code, _, err = _history(capsys, *[where.get(a, a) for a in args])
    assert code == 2 and said in err


@pytest.mark.parametrize(("text", "refused"), [
    ("1e+300 TFLOP/s", "'1e+300 TFLOP/s' is above"),  # today: 300.0
    ("9" * 400 + " TFLOP/s", "is not finite"),
    ("inf TFLOP/s", "'inf TFLOP/s' is not finite"),
    ("NaN GB/s", "'NaN GB/s' is not finite"),
    ("1.2.3 TFLOP/s", "'1.2.3 TFLOP/s' is not a number"),  # today: 2.3
    ("1,234.5 TFLOP/s", "'1,234.5 TFLOP/s' is not a number"),  # today: 234.5
    ("-5 GB/s", "'-5 GB/s' is negative"),  # today: 5.0
    ("0x10 GB/s", "'0x10 GB/s' is not a number"),
    ("\u0667\u0667\u0669 TFLOP/s", "is not a number"),  # other scripts' digits
])
def test_history_refuses_a_figure_it_cannot_read_and_names_it(text, refused):
    verdict = {"summary": f"slowest of 8 GPU(s): cuda:3 (NVIDIA H200) at {text} bf16", "details": ""}
    figure, why = history.read_figure(verdict)
    assert figure is None and refused in why, why
    assert history.figure_of(verdict) is None


def _runs_with_last_gemm(tmp_path: Path, text: str) -> Path:
    for path in RUNS.glob("*.json"):
        shutil.copy(path, tmp_path)
    last = tmp_path / "report-2026-03-06T020000Z-h200.json"
    doc = json.loads(last.read_text())
    for v in doc["verdicts"]:
        if v["check_id"] == "gpu_bf16_gemm":
            v["summary"], v["details"] = f"slowest of 8 GPU(s): cuda:3 (NVIDIA H200) at {text} bf16", ""
    last.write_text(json.dumps(doc))
    return tmp_path


def test_history_shows_a_refused_figure_as_refused_never_as_a_number(tmp_path, capsys):
    folder = _runs_with_last_gemm(tmp_path, "1e+300 TFLOP/s")
    code, out, _ = _history(capsys, str(folder), "--check", "gpu_bf16_gemm", "--node", "node-b")
    row = out.splitlines()[-1]
    assert code == 0 and "300.0" not in row and "figure refused: '1e+300 TFLOP/s' is above" in row, row
    code, out, _ = _history(capsys, str(folder), "--check", "gpu_bf16_gemm", "--node", "node-b", "--json")
    last = json.loads(out)["series"][0]["points"][-1]
    assert last["figure"] is None and "1e+300" in last["refused"] and last["change"] is None


def test_history_png_never_draws_a_refused_figure(tmp_path, capsys):
    folder = _runs_with_last_gemm(tmp_path, "1e+300 TFLOP/s")
    found = history.load(folder, check="gpu_bf16_gemm")
    drawn = [p.figure for s in found.series for p in s.points if p.figure is not None]
    assert len(drawn) == 8 and max(drawn) < 1000  # 2 nodes x 4 readable runs; the refused run is not a point
    for run in folder.glob("*.json"):
        if run.name != "report-2026-03-06T020000Z-h200.json":
            run.unlink()
    assert history.plot(history.load(folder, check="gpu_bf16_gemm"), tmp_path / "t.png") is None


def test_history_prints_a_hostile_check_id_and_node_escaped(tmp_path, capsys):
    doc = {"rlcheck_report": 1, "created": "2026-03-07T02:00:00+00:00\x1b[2J",
           "verdicts": [{"check_id": "gpu\x1b]0;owned\x07", "status": "PASS", "node": "n\r\nforged",
                         "summary": "700 TFLOP/s"}]}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    code, out, _ = _history(capsys, str(tmp_path))
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\r" not in out, repr(out)
    assert "gpu\\x1b]0;owned\\x07 [n\\x0d\\x0aforged]" in out, out


def test_history_png_draws_labels_as_written(tmp_path):
    doc = {"rlcheck_report": 1, "created": "2026-03-07T02:00:00+00:00$\\frac{",
           "verdicts": [{"check_id": "gpu_$\\frac{", "status": "PASS", "node": "$x^", "summary": "700 TFLOP/s"}]}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert history.plot(history.load(tmp_path), tmp_path / "t.png") == tmp_path / "t.png"
