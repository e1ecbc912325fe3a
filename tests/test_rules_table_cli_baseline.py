"""Rule table for `rlcheck baseline record` (rlcheck.cli_baseline): exit 0 with the file written and one line naming
it, its profile and every floor; exit 2 with one line saying why and nothing written, for each way it can end: a
report that names no profile, an unknown profile (the report's or --hardware's), a figure outside the profile's
bounds, a fraction out of range, a file that cannot be written; and --measure on this machine's GPUs. The report is
the recorded H200 run of tests/test_baseline.py (gpu_bf16_gemm 779.7 TFLOP/s); the measure is replaced by a
stand-in that records what it was asked."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import pytest

from rlcheck import cli_baseline, hardware, option_table
from rlcheck.preflight import baseline
from rlcheck.probes.node import gpus

REPORT = Path(__file__).parent / "data" / "baseline" / "h200_report_healthy.json"
GEMM, BUSBW = "bf16_gemm_min_tflops", "nccl_allreduce_min_busbw_gbps"
VALID = ", ".join(hardware.load_profiles())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlcheck")
    cli_baseline.add_baseline(parser.add_subparsers(dest="command"))
    return parser


def _run(argv: list[str], capsys) -> tuple[int, str]:
    args = _parser().parse_args(["baseline", "record", *argv])
    code = args.func(args)
    out = capsys.readouterr()
    assert out.out == ""
    return code, out.err


def _report(tmp_path: Path, edit=None) -> str:
    doc = json.loads(REPORT.read_text(encoding="utf-8"))
    if edit is not None:
        doc = copy.deepcopy(doc)
        edit(doc)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def _allreduce(gbps: str) -> dict:
    return {"status": "PASS", "check_id": "gpu_nccl_allreduce", "details": "256 MiB float32 over 8 rank(s)",
            "summary": f"all-reduce bus bandwidth {gbps} GB/s over 8 GPU(s) (>= 240, measured floor)", "node": None,
            "failure_id": None, "remedy": "", "kind": "check", "test_id": "x", "blocking": True, "reproduction": None}


def _gemm(doc: dict, figure: str) -> None:
    for v in doc["verdicts"]:
        if v["check_id"] == "gpu_bf16_gemm":
            v["details"] = f"cuda:0 NVIDIA H200: {figure} TFLOP/s"


def test_the_exit_codes():
    assert (cli_baseline.EXIT_OK, cli_baseline.EXIT_UNJUDGED) == (0, 2)


# --- recorded from a report ------------------------------------------------------------------------------------------


def test_a_healthy_report_writes_its_floor_and_names_it(tmp_path, capsys):
    out = tmp_path / "b.toml"
    code, err = _run(["--report", str(REPORT), "-o", str(out)], capsys)
    assert code == 0
    assert err == (f"rlcheck baseline record: wrote {out} (h200: {GEMM} = 623.8); judge later runs by it with "
                   f"--baseline={out}\n")
    recorded = baseline.load(out)
    assert (recorded.hardware, recorded.recorded_from, recorded.fraction) == ("h200", str(REPORT), 0.8)
    assert recorded.thresholds == {GEMM: 623.8}


def test_both_floors_are_named_in_the_line_and_the_fraction_is_used(tmp_path, capsys):
    report = _report(tmp_path, lambda d: d["verdicts"].append(_allreduce("400")))
    out = tmp_path / "b.toml"
    code, err = _run(["--report", report, "--fraction", "0.5", "-o", str(out)], capsys)
    assert code == 0
    assert err == (f"rlcheck baseline record: wrote {out} (h200: {GEMM} = 389.9, {BUSBW} = 200); judge later runs "
                   f"by it with --baseline={out}\n")
    assert baseline.load(out).thresholds == {GEMM: 389.9, BUSBW: 200.0}


def test_without_out_the_file_is_named_after_the_profile_here(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = _run(["--report", str(REPORT)], capsys)
    assert code == 0
    assert err == (f"rlcheck baseline record: wrote rlcheck-baseline-h200.toml (h200: {GEMM} = 623.8); judge later "
                   f"runs by it with --baseline=rlcheck-baseline-h200.toml\n")
    assert baseline.load(tmp_path / "rlcheck-baseline-h200.toml").thresholds == {GEMM: 623.8}


def test_hardware_names_the_profile_of_a_report_that_names_none(tmp_path, capsys):
    report = _report(tmp_path, lambda d: d.pop("hardware"))
    out = tmp_path / "b.toml"
    code, err = _run(["--report", report, "--hardware", "h200", "-o", str(out)], capsys)
    assert (code, baseline.load(out).hardware) == (0, "h200")
    assert err.startswith(f"rlcheck baseline record: wrote {out} (h200: {GEMM} = 623.8)")


def test_hardware_overrides_the_reports_profile(tmp_path, capsys):
    report = _report(tmp_path, lambda d: d["hardware"].update(profile="b200"))
    out = tmp_path / "b.toml"
    code, _ = _run(["--report", report, "--hardware", "h200", "-o", str(out)], capsys)
    assert (code, baseline.load(out).hardware) == (0, "h200")


@pytest.mark.parametrize("hardware_table", [None, {}, {"profile": ""}, {"profile": None}])
def test_a_report_naming_no_profile_without_hardware_is_refused(tmp_path, capsys, hardware_table):
    def edit(d):
        if hardware_table is None:
            d.pop("hardware")
        else:
            d["hardware"] = hardware_table
    out = tmp_path / "b.toml"
    code, err = _run(["--report", _report(tmp_path, edit), "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert err == ("rlcheck baseline record: which hardware profile is this? the report names none: pass "
                   "--hardware NAME\n")


@pytest.mark.parametrize("where", ["report", "flag"])
def test_an_unknown_profile_is_refused_with_the_valid_names(tmp_path, capsys, where):
    if where == "report":
        argv = ["--report", _report(tmp_path, lambda d: d["hardware"].update(profile="h300"))]
    else:
        argv = ["--report", str(REPORT), "--hardware", "h300"]
    out = tmp_path / "b.toml"
    code, err = _run([*argv, "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert err == f"rlcheck baseline record: unknown hardware 'h300': valid are {VALID}, auto, none\n"


def test_a_figure_out_of_the_profiles_bounds_is_refused_before_the_next_is_read(tmp_path, capsys):
    """The GEMM figure is bounded by the named profile as it is read: the all-reduce's bad figure after it is never
    reached, so the line names the GEMM."""
    def edit(d):
        _gemm(d, "7000")
        d["verdicts"].append(_allreduce("-5"))
    report = _report(tmp_path, edit)
    code, err = _run(["--report", report, "-o", str(tmp_path / "b.toml")], capsys)
    assert code == 2
    assert err == (f"rlcheck baseline record: {report}: {GEMM}: the figure 7000 is above 10 x the h200 floor 615 "
                   "(at most 6150): a misread figure, not a measure\n")


@pytest.mark.parametrize(("fraction", "message"), [
    ("0", "fraction=0.0: between 0 (exclusive) and 1"),
    ("1.5", "fraction=1.5: between 0 (exclusive) and 1"),
])
def test_a_fraction_out_of_range_is_refused(tmp_path, capsys, fraction, message):
    out = tmp_path / "b.toml"
    code, err = _run(["--report", str(REPORT), "--fraction", fraction, "-o", str(out)], capsys)
    assert (code, err) == (2, f"rlcheck baseline record: {message}\n") and not out.exists()


def test_an_unreadable_report_is_said_with_control_characters_escaped(tmp_path, capsys):
    missing = tmp_path / "a\x1b[2Jb.json"
    code, err = _run(["--report", str(missing), "-o", str(tmp_path / "b.toml")], capsys)
    shown = str(missing).replace("\x1b", "\\x1b")
    assert code == 2
    assert err == (f"rlcheck baseline record: {shown}: cannot read the report: [Errno 2] No such file or directory: "
                   f"{str(missing)!r}\n")


@pytest.mark.parametrize("kind", ["directory", "missing folder"])
def test_a_file_that_cannot_be_written_exits_2(tmp_path, capsys, kind):
    out = tmp_path if kind == "directory" else tmp_path / "no" / "b.toml"
    code, err = _run(["--report", str(REPORT), "-o", str(out)], capsys)
    why = "Is a directory" if kind == "directory" else "No such file or directory"
    assert (code, err) == (2, f"rlcheck baseline record: cannot write {out}: {why}\n")


def test_a_write_error_without_strerror_says_the_error(tmp_path, capsys, monkeypatch):
    def refuse(self, *args, **kwargs):
        raise OSError("disk quota")
    monkeypatch.setattr(Path, "write_text", refuse)
    code, err = _run(["--report", str(REPORT), "-o", str(tmp_path / "b.toml")], capsys)
    assert (code, err) == (2, f"rlcheck baseline record: cannot write {tmp_path / 'b.toml'}: disk quota\n")


def test_a_line_with_control_characters_is_escaped(tmp_path, capsys):
    folder = tmp_path / "x\x1by"
    folder.mkdir()
    out = folder / "b.toml"
    code, err = _run(["--report", str(REPORT), "-o", str(out)], capsys)
    shown = str(out).replace("\x1b", "\\x1b")
    assert code == 0
    assert err == (f"rlcheck baseline record: wrote {shown} (h200: {GEMM} = 623.8); judge later runs by it with "
                   f"--baseline={shown}\n")


# --- measured here ---------------------------------------------------------------------------------------------------

H200_GPU = gpus.GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=143771)


@pytest.fixture
def measured(monkeypatch):
    """The measure replaced: records the GPU count it was given, returns the figures set per test."""
    asked: list[int] = []
    state = {"figures": {GEMM: (780.0, "bf16 GEMM of the slowest of 2 GPU(s) (cuda:1)"),
                         BUSBW: (300.0, "NCCL all-reduce bus bandwidth over 2 GPU(s)")}}

    def measure(count):
        asked.append(count)
        if isinstance(state["figures"], Exception):
            raise state["figures"]
        return state["figures"]
    monkeypatch.setattr(baseline, "figures_measured_here", measure)
    return asked, state


def _detected(monkeypatch, n: int, profile: str | None) -> None:
    found = gpus.Detection(gpus=(H200_GPU,) * n, profile=hardware.get_profile(profile) if profile else None,
                           evidence="stand-in")
    monkeypatch.setattr(gpus, "detect", lambda: found)


def test_measure_uses_every_gpu_and_the_detected_profile(tmp_path, capsys, monkeypatch, measured):
    _detected(monkeypatch, 2, "h200")
    out = tmp_path / "b.toml"
    code, err = _run(["--measure", "-o", str(out)], capsys)
    assert (code, measured[0]) == (0, [2])
    assert err == (f"rlcheck baseline record: wrote {out} (h200: {GEMM} = 624, {BUSBW} = 240); judge later runs by "
                   f"it with --baseline={out}\n")
    recorded = baseline.load(out)
    assert (recorded.hardware, recorded.recorded_from) == ("h200", "measured here (rlcheck baseline record)")


def test_measure_with_hardware_overrides_the_detected_profile(tmp_path, capsys, monkeypatch, measured):
    _detected(monkeypatch, 1, None)
    out = tmp_path / "b.toml"
    code, err = _run(["--measure", "--hardware", "h200", "-o", str(out)], capsys)
    assert (code, measured[0], baseline.load(out).hardware) == (0, [1], "h200")


def test_measure_without_a_profile_asks_for_one(tmp_path, capsys, monkeypatch, measured):
    _detected(monkeypatch, 1, None)
    code, err = _run(["--measure", "-o", str(tmp_path / "b.toml")], capsys)
    assert (code, measured[0]) == (2, [1])
    assert err == ("rlcheck baseline record: which hardware profile is this? the report names none: pass "
                   "--hardware NAME\n")


def test_a_measure_that_fails_is_said(tmp_path, capsys, monkeypatch, measured):
    _detected(monkeypatch, 0, None)
    measured[1]["figures"] = baseline.BaselineError("no GPU here to measure (nvidia-smi found none)")
    code, err = _run(["--measure", "-o", str(tmp_path / "b.toml")], capsys)
    assert (code, err) == (2, "rlcheck baseline record: no GPU here to measure (nvidia-smi found none)\n")


# --- the command's options -------------------------------------------------------------------------------------------


def test_the_commands_options_and_help():
    parser = argparse.ArgumentParser(prog="rlcheck")
    sub = parser.add_subparsers(dest="command")
    cli_baseline.add_baseline(sub)
    assert {a.dest: a.help for a in sub._choices_actions} == {
        "baseline": "record this cluster's own GEMM and all-reduce floors from a healthy run"}
    p = sub.choices["baseline"]
    got = [(tuple(a.option_strings), a.dest, a.metavar, a.default, getattr(a.type, "__name__", a.type),
            tuple(a.choices) if a.choices else None, a.help, a.required, a.nargs)
           for a in p._actions if a.dest != "help"]
    assert got == [
        ((), "action", None, None, None, ("record",), None, True, None),
        (("--report",), "report", "REPORT_JSON", None, "Path", None,
         "a healthy run's report.json (rlcheck-report/report.json of pytest checks/ on a GPU node)", False, None),
        (("--measure",), "measure", None, False, None, None, "run the bf16 GEMM and all-reduce measure here instead",
         False, 0),
        (("--hardware",), "hardware", "NAME", None, None, None, option_table.HARDWARE_OF_BASELINE.help, False, None),
        (("--fraction",), "fraction", None, 0.8, "float", None, "floor = fraction x the figure (default: 0.8)", False,
         None),
        (("-o", "--out"), "out", "FILE", None, "Path", None,
         "where to write it (default: ./rlcheck-baseline-<hardware>.toml)", False, None),
    ]
    group = p._mutually_exclusive_groups
    assert len(group) == 1 and group[0].required
    assert [a.dest for a in group[0]._group_actions] == ["report", "measure"]
    assert p.get_default("func") is cli_baseline.cmd_baseline
    with pytest.raises(SystemExit):
        parser.parse_args(["baseline", "record"])
