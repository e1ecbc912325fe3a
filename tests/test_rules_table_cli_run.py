"""Rule table for the commands rlcheck runs outside a checkout (rlcheck.cli_run): what `rlcheck preflight` hands
pytest, the Slurm prolog's exit code and words (a broken rlcheck never drains a node), and `rlcheck history`'s exit
code for each way a trend cannot be judged (exit 2, every unreadable report named)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rlcheck.checks
from rlcheck import cli, cli_run, history
from rlcheck.preflight import slurm
from rlcheck.verdict import Status, Verdict

CHECKS = str(Path(rlcheck.checks.__file__).parent)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlcheck")
    sub = parser.add_subparsers(dest="command")
    for add in (cli_run.add_preflight, cli_run.add_slurm, cli_run.add_history):
        add(sub)
    return parser


# --- preflight -------------------------------------------------------------------------------------------------------


def test_isolation_args_keep_the_run_to_the_packages_checks():
    assert cli_run.isolation_args("/pkg/checks") == [
        "-c", os.devnull, "--rootdir=/pkg/checks", "--confcutdir=/pkg/checks", "-p", "rlcheck.plugin",
        "-p", "no:cacheprovider", "-ra"]


@pytest.mark.parametrize(("argv", "code"), [
    (["preflight"], 0),
    (["preflight", "--hardware", "h200", "-k", "image", "--job", "x.sh"], 1),
    (["preflight", "-x"], 5),
    (["preflight", "--", "checks"], 2),
])
def test_preflight_runs_the_packaged_checks_with_the_users_arguments_last(monkeypatch, argv, code):
    asked = []

    def main(args):
        asked.append(args)
        return code

    monkeypatch.setattr("pytest.main", main)
    assert cli.main(argv) == code  # every argument after `preflight` is pytest's, options included
    assert asked == [[CHECKS, *cli_run.isolation_args(CHECKS), *argv[1:]]]


# --- slurm -----------------------------------------------------------------------------------------------------------


def _verdict(status: Status) -> Verdict:
    return Verdict(status=status, summary=f"s {status.value}", check_id="node_gpus")


@pytest.fixture
def acted(monkeypatch):
    """slurm.act recorded; it answers exit code 3 and two lines."""
    calls = []

    def act(verdicts, phase, nodename, scontrol="scontrol"):
        calls.append((verdicts, phase, nodename, scontrol))
        return slurm.Outcome(exit_code=3, lines=("line one", "line two"))

    monkeypatch.setattr(slurm, "act", act)
    monkeypatch.setenv("SLURMD_NODENAME", "gpu-07")
    return calls


def test_slurm_acts_on_the_tier_run_here(monkeypatch, acted, capsys):
    from rlcheck.deploy import levels

    judged = [_verdict(Status.FAIL)]
    asked = []
    monkeypatch.setattr(levels, "judge_here", lambda *a: asked.append(a) or judged)
    args = _parser().parse_args(["slurm", "prolog", "--level", "standard", "--hardware", "h200", "--budget-s", "50",
                                 "--scontrol", "/usr/bin/scontrol"])
    assert args.func(args) == 3
    assert asked == [("standard", "h200", args.recipe, 50.0)]
    assert acted == [(judged, "prolog", "gpu-07", "/usr/bin/scontrol")]
    assert capsys.readouterr().err == "line one\nline two\n"


@pytest.mark.parametrize(("nodename", "names"), [("gpu-07", ("gpu-07", "host-7")), (None, ("", "host-7"))])
def test_slurm_acts_on_a_recorded_report_about_this_node(monkeypatch, acted, tmp_path, nodename, names):
    """This node's names: slurmd's SLURMD_NODENAME ('' outside a Slurm job step) and the host name."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"created": "x"}), encoding="utf-8")
    seen = []
    monkeypatch.setattr(slurm, "own_verdicts", lambda text, source, names: seen.append((text, source, names)) or [])
    monkeypatch.setattr(cli_run.socket, "gethostname", lambda: "host-7")
    if nodename is None:
        monkeypatch.delenv("SLURMD_NODENAME")
    args = _parser().parse_args(["slurm", "epilog", "--report", str(report)])
    assert args.func(args) == 3
    assert seen == [(report.read_text(), str(report), names)]
    assert acted == [([], "epilog", nodename, "scontrol")]


def _jq_report(folder: Path) -> Path:
    """A report of gpu-07 as `jq .` prints it: its text raw UTF-8, not escaped."""
    report = folder / "report.json"
    report.write_text(json.dumps({"machine": {"hostname": "gpu-07.cluster.local"}, "verdicts": [
        {"check_id": "gpu_node_inventory", "status": "FAIL", "node": "gpu-07", "blocking": True,
         "summary": "8 NVIDIA GPUs on the PCI bus, the driver lists 7 (7 x NVIDIA H200)"},
        {"check_id": "recipe_inline_secrets", "status": "PASS", "blocking": True,
         "summary": "no secret in the recipe's env vars (…_TOKEN…, …_API_KEY…)"}]}, indent=2, ensure_ascii=False),
        encoding="utf-8")
    scontrol = folder / "scontrol"
    scontrol.write_text(f"#!/bin/sh\necho \"$@\" >> '{folder}/scontrol.args'\n")
    scontrol.chmod(0o755)
    return report


DRAINED = ("rlcheck slurm prolog: drained gpu-07: rlcheck: gpu_node_inventory FAIL: 8 NVIDIA GPUs on the PCI bus, "
           "the driver lists 7 (7 x NVIDIA H200) [gpu-07]")


def test_slurm_reads_the_report_as_utf_8_whatever_the_locales_codec(monkeypatch, tmp_path, capsys):
    """A report.json is UTF-8: in an ASCII locale (LC_ALL=C without Python's UTF-8 mode) the locale's codec could not
    decode one that holds its text raw, and the prolog would leave the failed node up, unjudged."""
    report = _jq_report(tmp_path)
    argv = ["slurm", "prolog", "--report", str(report), "--scontrol", str(tmp_path / "scontrol")]
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "SLURMD_NODENAME": "gpu-07"}
    code = ("import locale, sys; from rlcheck import cli; print(locale.getpreferredencoding(False)); "
            "sys.exit(cli.main(sys.argv[1:]))")
    # run from the test's own folder: `python -c` puts its working folder first on the path
    done = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=60,
                          check=False, cwd=tmp_path)
    assert done.stdout == "ANSI_X3.4-1968\n"  # the child's locale codec is ASCII: the rule is judged where it matters
    assert (done.returncode, done.stderr.splitlines()[-1]) == (1, DRAINED)
    # and here, in-process (where the mutation run sees which tests reach cmd_slurm): the same
    monkeypatch.setenv("SLURMD_NODENAME", "gpu-07")
    args = _parser().parse_args(argv)
    assert args.func(args) == 1
    assert capsys.readouterr().err.splitlines()[-1] == DRAINED
    assert (tmp_path / "scontrol.args").read_text().splitlines() == [
        f"update nodename=gpu-07 state=drain reason={DRAINED.split(': ', 2)[2]}"] * 2


@pytest.mark.parametrize("phase", ["prolog", "epilog"])
def test_slurm_with_rlcheck_itself_broken_keeps_the_node_up(monkeypatch, acted, capsys, phase):
    from rlcheck.deploy import levels

    def broken(*a):
        raise RuntimeError("no NVML here")

    monkeypatch.setattr(levels, "judge_here", broken)
    args = _parser().parse_args(["slurm", phase])
    assert args.func(args) == 0 and acted == []
    assert capsys.readouterr().err == f"rlcheck slurm {phase}: could not judge this node, node stays up: no NVML here\n"


def test_slurm_unreadable_report_keeps_the_node_up(acted, capsys, tmp_path):
    args = _parser().parse_args(["slurm", "prolog", "--report", str(tmp_path / "missing.json")])
    assert args.func(args) == 0 and acted == []
    assert capsys.readouterr().err.startswith("rlcheck slurm prolog: could not judge this node, node stays up: ")


def test_slurm_defaults():
    args = _parser().parse_args(["slurm", "prolog"])
    assert (args.level, args.budget_s, args.report, args.scontrol) == ("quick", None, None, "scontrol")


# --- history ---------------------------------------------------------------------------------------------------------


def _history(series: int = 1, errors: tuple[str, ...] = ()) -> history.History:
    point = history.Point(created="2026-12-01T00:00:00", path="a.json", status="PASS", figure=700.0, unit="TFLOP/s")
    return history.History(series=tuple(history.Series(check_id=f"c{i}", node="n", points=(point,))
                                        for i in range(series)), runs=3, errors=errors)


@pytest.fixture
def loaded(monkeypatch):
    state = {"history": _history(), "asked": [], "drawn": None}

    def load(path, *, check, node, last):
        state["asked"].append((path, check, node, last))
        if isinstance(state["history"], Exception):
            raise state["history"]
        return state["history"]

    monkeypatch.setattr(history, "load", load)
    state["plotted"] = []
    monkeypatch.setattr(history, "plot", lambda found, path: state["plotted"].append((found, path)) or state["drawn"])
    return state


def _run(*argv: str) -> int:
    args = _parser().parse_args(["history", *argv])
    return int(args.func(args))


@pytest.mark.parametrize("last", ["0", "-1"])
def test_history_last_below_one_is_refused(loaded, capsys, last):
    assert _run("d", "--last", last) == 2 and loaded["asked"] == []
    assert capsys.readouterr().err == f"rlcheck history: --last {last}: a whole number >= 1\n"


def test_history_asks_for_what_the_options_say(loaded, capsys):
    assert _run("d", "--check", "gpu_bf16_gemm", "--node", "n1", "--last", "1") == 0
    assert loaded["asked"] == [(Path("d"), "gpu_bf16_gemm", "n1", 1)]
    assert capsys.readouterr().out == history.render_text(loaded["history"])
    _run("d")
    assert loaded["asked"][-1] == (Path("d"), None, None, 5)


def test_history_json(loaded, capsys):
    assert _run("d", "--json") == 0
    assert capsys.readouterr().out == json.dumps(history.to_json(loaded["history"]), indent=2) + "\n"
    assert loaded["plotted"] == []  # no --png: nothing drawn


def test_history_folder_that_cannot_be_judged(loaded, capsys):
    loaded["history"] = history.HistoryError("d: no such folder")
    assert _run("d") == 2
    assert capsys.readouterr().err == "rlcheck history: d: no such folder\n"


@pytest.mark.parametrize(("argv", "wanted"), [
    ((), "any verdict"),
    (("--check", "c9"), "--check c9"),
    (("--node", "n9"), "--node n9"),
    (("--check", "c9", "--node", "n9"), "--check c9 --node n9"),
])
def test_history_nothing_matching_is_exit_2_naming_what_was_asked(loaded, capsys, argv, wanted):
    loaded["history"] = _history(series=0)
    assert _run("d", *argv) == 2
    assert capsys.readouterr().err == f"rlcheck history: nothing matches {wanted} in 3 readable run(s) of d\n"


@pytest.mark.parametrize(("drawn", "code", "said"), [
    (Path("t.png"), 0, "rlcheck history: wrote t.png\n"),
    (None, 2, "rlcheck history: no PNG: no verdict has a measured figure (TFLOP/s, GB/s), or matplotlib is not "
              "installed\n"),
])
def test_history_png(loaded, capsys, drawn, code, said):
    loaded["drawn"] = drawn
    assert _run("d", "--png", "t.png") == code
    assert capsys.readouterr().err == said
    assert loaded["plotted"] == [(loaded["history"], Path("t.png"))]  # what was loaded, to the file named


def test_history_png_of_nothing_matching_stays_exit_2(loaded, capsys):
    loaded["history"], loaded["drawn"] = _history(series=0), Path("t.png")
    assert _run("d", "--png", "t.png") == 2


@pytest.mark.parametrize("series", [0, 1])
def test_history_unreadable_reports_are_named_and_exit_2(loaded, capsys, series):
    loaded["history"] = _history(series=series, errors=("d/a.json: bad", "d/b.json: worse"))
    assert _run("d") == 2
    err = capsys.readouterr().err
    assert err.endswith("rlcheck history: unreadable report d/a.json: bad\n"
                        "rlcheck history: unreadable report d/b.json: worse\n")


# --- what each command's --help says ---------------------------------------------------------------------------------

HELP = {
    "preflight": "run the preflight checks shipped in the package (pytest + GO / NO-GO)",
    "slurm": "Slurm prolog / epilog: the quick per-node tier; drains this node on FAIL",
    "history": "per-check and per-node trends over the reports kept with --history DIR",
}
PREFLIGHT_DESCRIPTION = ("Every argument after `preflight` goes to pytest: --hardware, --recipe, --job, --ray-address, "
                         "--report-dir, -k, --junitxml, ... (`rlcheck preflight --help`: pytest's help with rlcheck's "
                         "options)")
# (option strings, dest, metavar, default, type, choices, help, required, nargs); the shared options' help is the
# options table's (tests/test_rules_table_option_table.py): here only that they are these
OPTIONS = {
    "preflight": [((), "pytest_args", "PYTEST_ARGS", None, None, None, None, True, "...")],
    "slurm": [
        ((), "phase", None, None, None, ("prolog", "epilog"), None, True, None),
        (("--level",), "level", None, "quick", None, ("quick", "standard", "long"), "table", False, None),
        (("--budget-s",), "budget_s", "S", None, "float", None, "table", False, None),
        (("--hardware",), "hardware", "NAME", "auto", None, None, "table", False, None),
        (("--recipe",), "recipe", "ID", "qwen3-4b-colocated", None, None, "table", False, None),
        (("--report",), "report", "REPORT_JSON", None, "Path", None,
         "act on a recorded report.json (e.g. this node's last preflight) instead of running checks", False, None),
        (("--scontrol",), "scontrol", "PATH", "scontrol", None, None, "the scontrol to drain with", False, None),
    ],
    "history": [
        ((), "dir", "DIR", None, "Path", None, "the --history folder", True, None),
        (("--check",), "check", "ID", None, None, None, "only this check id (e.g. gpu_bf16_gemm)", False, None),
        (("--node",), "node", "NODE", None, None, None, "only this node's verdicts", False, None),
        (("--last",), "last", "N", 5, "int", None,
         "compare each figure with the median of the last N good (PASS) runs before it (default: 5)", False, None),
        (("--png",), "png", "FILE", None, "Path", None, "also draw the measured figures over the runs", False, None),
        (("--json",), "json", None, False, None, None, "machine-readable output", False, 0),
    ],
}


def test_each_commands_options_and_help():
    from rlcheck import option_table

    parser = argparse.ArgumentParser(prog="rlcheck")
    sub = parser.add_subparsers(dest="command")
    for add in (cli_run.add_preflight, cli_run.add_slurm, cli_run.add_history):
        add(sub)
    assert {a.dest: a.help for a in sub._choices_actions} == HELP
    shared = {o.flag: o.help for o in (option_table.LEVEL, option_table.BUDGET_S, option_table.HARDWARE,
                                       option_table.RECIPE)}
    for name, expected in OPTIONS.items():
        got = [(tuple(a.option_strings), a.dest, a.metavar, a.default, getattr(a.type, "__name__", a.type),
                tuple(a.choices) if a.choices else None,
                "table" if a.option_strings and shared.get(a.option_strings[0]) == a.help else a.help,
                a.required, a.nargs)
               for a in sub.choices[name]._actions if a.dest != "help"]
        assert got == expected, name
    assert sub.choices["preflight"].description == PREFLIGHT_DESCRIPTION
    assert sub.choices["slurm"].description is None and sub.choices["history"].description is None
    defaults = {name: sub.choices[name].get_default("func") for name in OPTIONS}
    assert defaults == {"preflight": cli_run.cmd_preflight, "slurm": cli_run.cmd_slurm,
                        "history": cli_run.cmd_history}
