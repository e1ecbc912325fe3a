"""The framework's own parse as a rule table (rlcheck/framework/live.py): when it runs, what the child is given
(through a recording runner, no child started), how its answer is read, and the verdict of every answer: a parse that
returns, exits, is refused by validate_args, stops on something else, or never finishes."""

from __future__ import annotations

import json
import sys

import pytest

from rlcheck import catalog
from rlcheck.framework import live
from rlcheck.process.subproc import Completed
from rlcheck.verdict import Status

IMPORTABLE = "json"  # any importable package stands for the framework: the runner answers for the child
REMEDY = catalog.get("framework-arg-rejected").remedy


class Recording:
    """Answers the child's run with a recorded Completed and keeps what it was asked."""

    def __init__(self, stdout: str = "", stderr: str = "", returncode: int | None = 0, timed_out: bool = False):
        self.answer = dict(stdout=stdout, stderr=stderr, returncode=returncode, timed_out=timed_out)
        self.calls: list[tuple[list[str], float]] = []

    def __call__(self, argv, *, timeout_s):
        self.calls.append((list(argv), timeout_s))
        return Completed(argv=tuple(argv), **self.answer)


def mark(exit_code: int = 0, error: str = "") -> str:
    return live.MARK + json.dumps({"exit_code": exit_code, "error": error})


@pytest.mark.parametrize(("framework", "importable"), [
    (None, False), (IMPORTABLE, True), ("rlcheck_no_such_framework", False),
])
def test_importable(framework, importable):
    assert live.importable(framework) is importable


@pytest.mark.parametrize(("sm", "capability"), [(90, (9, 0)), (100, (10, 0)), (103, (10, 3)), (121, (12, 1)),
                                                (80, (8, 0))])
def test_capability_of_a_profiles_sm(sm, capability):
    assert live.capability_of(sm) == capability


def test_collect_without_the_framework_runs_nothing():
    runner = Recording()
    assert live.collect_live(None, ["--lr", "1"], (9, 0), run=runner) == live.LiveParse(framework=None)
    assert live.collect_live("rlcheck_no_such_framework", [], (9, 0), run=runner) == live.LiveParse(framework=None)
    assert runner.calls == []


def test_collect_without_a_profile_says_the_gpu_probes_have_no_answer():
    runner = Recording()
    assert live.collect_live(IMPORTABLE, [], None, run=runner) == live.LiveParse(
        framework=IMPORTABLE, error="no hardware profile (--hardware): the GPU probes have no answer")
    assert runner.calls == []


def test_collect_gives_the_child_the_argv_capability_and_module():
    runner = Recording(stdout=mark())
    live.collect_live(IMPORTABLE, ["--lr", "1e-6"], (10, 3), timeout_s=12.5, run=runner)
    [(argv, timeout_s)] = runner.calls
    assert argv[:3] == [sys.executable, "-c", live.CHILD] and timeout_s == 12.5
    assert json.loads(argv[3]) == {"capability": [10, 3], "argv": ["--lr", "1e-6"],
                                   "module": f"{IMPORTABLE}.utils.arguments"}
    assert len(argv) == 4


def test_collect_waits_five_minutes_by_default():
    runner = Recording(stdout=mark())
    live.collect_live(IMPORTABLE, [], (9, 0), run=runner)
    assert runner.calls[0][1] == 300.0


@pytest.mark.parametrize(("stdout", "stderr", "parsed"), [
    (mark(), "", live.LiveParse(framework=IMPORTABLE, exit_code=0)),
    # the parser's last stderr line is its message; the mark may follow other output
    ("loading\n" + mark(2) + "\n", "usage: train.py\ntrain.py: error: argument --lr: invalid float value: 'x'\n\n",
     live.LiveParse(framework=IMPORTABLE, exit_code=2, message="train.py: error: argument --lr: invalid float value: "
                                                                "'x'")),
    (mark(0, "AssertionError: refused"), "warn\n",
     live.LiveParse(framework=IMPORTABLE, exit_code=0, message="warn", error="AssertionError: refused")),
    (" " + mark(), "", None),  # not at the start of a line: no answer
])
def test_collect_reads_the_childs_answer(stdout, stderr, parsed):
    got = live.collect_live(IMPORTABLE, [], (9, 0), run=Recording(stdout=stdout, stderr=stderr))
    if parsed is None:
        assert got.error.startswith("the parse did not finish (exit code 0): ")
    else:
        assert got == parsed


@pytest.mark.parametrize(("answer", "error"), [
    (dict(stdout="", stderr="Traceback\nImportError: no torch\n", returncode=1),
     "the parse did not finish (exit code 1): ImportError: no torch"),
    (dict(stdout="half", stderr="", returncode=None, timed_out=True),
     "the parse did not finish (killed at its deadline): half"),
    (dict(stdout="", stderr="", returncode=-9), "the parse did not finish (killed by signal SIGKILL): "),
])
def test_collect_without_an_answer_says_how_the_child_ended(answer, error):
    assert live.collect_live(IMPORTABLE, [], (9, 0), run=Recording(**answer)) == live.LiveParse(
        framework=IMPORTABLE, error=error)


@pytest.mark.parametrize(("parsed", "status", "summary", "remedy"), [
    (live.LiveParse(framework=None), Status.SKIP,
     "neither SLIME nor Miles is importable here: recipe_framework_args judged the committed schema", ""),
    (live.LiveParse(framework="slime", exit_code=0, error="AssertionError: global batch size"), Status.FAIL,
     "slime's own argument validation rejects the argv: AssertionError: global batch size", REMEDY),
    (live.LiveParse(framework="miles", exit_code=0, error="ValueError: bad"), Status.FAIL,
     "miles's own argument validation rejects the argv: ValueError: bad", REMEDY),
    # anything else says nothing about the argv: a checkpoint not on this machine
    (live.LiveParse(framework="slime", exit_code=0, error="FileNotFoundError: /ckpt"), Status.UNKNOWN,
     "slime's parse_args could not judge the argv here: FileNotFoundError: /ckpt", ""),
    (live.LiveParse(framework="slime", error="the parse did not finish (killed at its deadline): x"), Status.UNKNOWN,
     "slime's parse_args could not judge the argv here: the parse did not finish (killed at its deadline): x", ""),
    (live.LiveParse(framework="slime", exit_code=0, error="SomeAssertionError: x"), Status.UNKNOWN,
     "slime's parse_args could not judge the argv here: SomeAssertionError: x", ""),
    (live.LiveParse(framework="slime", exit_code=2, message="train.py: error: unrecognized arguments: --x"),
     Status.FAIL, "slime's own parse_args exits 2: train.py: error: unrecognized arguments: --x", REMEDY),
    (live.LiveParse(framework="slime", exit_code=1, message=""), Status.FAIL, "slime's own parse_args exits 1: ",
     REMEDY),
    (live.LiveParse(framework="slime", exit_code=0), Status.PASS,
     "slime's own parse_args and validate_args accept the argv (silent drops: recipe_framework_args)", ""),
    (live.LiveParse(framework="slime"), Status.PASS,
     "slime's own parse_args and validate_args accept the argv (silent drops: recipe_framework_args)", ""),
])
def test_evaluate_live_every_answer(parsed, status, summary, remedy):
    verdict = live.evaluate_live(parsed)
    assert (verdict.status, verdict.failure_id, verdict.summary, verdict.remedy) == (
        status, "framework-arg-rejected", summary, remedy)
