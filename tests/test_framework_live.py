"""The framework's own parse: the child process plumbing (with a stand-in package, as SLIME is not installed here)
and, where the real SLIME or Miles is importable, its verdicts against the committed schema's on the same argvs."""

from __future__ import annotations

import pytest

from rlcheck.framework import argv as framework_argv
from rlcheck.framework import live
from rlcheck.framework.detect import choose, collect_installed
from rlcheck.verdict import Status
from tests.registry_cases_framework import _qwen, glm_as_shipped_before_the_fix

# A stand-in parse_args (not SLIME's): one int option, and the capability the child's GPU probe answers with.
STAND_IN = """
import argparse, sys, torch
def parse_args():
    print("capability", torch.cuda.get_device_capability(), file=sys.stderr)
    p = argparse.ArgumentParser(prog="train.py")
    p.add_argument("--update-weight-buffer-size", type=int)
    p.add_argument("--global-batch-size", type=int)
    args = p.parse_args()
    assert args.global_batch_size != 7, "global batch size 7 is refused"
    return args
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    package = tmp_path / "slime" / "utils"
    package.mkdir(parents=True)
    (tmp_path / "slime" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "arguments.py").write_text(STAND_IN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}")
    return tmp_path


@pytest.mark.parametrize(("argv", "status", "fragment"), [
    (["--update-weight-buffer-size", "2147483648"], Status.PASS, "accept the argv"),
    (["--update-weight-buffer-size", "2GiB"], Status.FAIL,
     "exits 2: train.py: error: argument --update-weight-buffer-size: invalid int value: '2GiB'"),
    (["--global-batch-size", "7"], Status.FAIL, "rejects the argv: AssertionError: global batch size 7 is refused"),
])
def test_framework_live_parse_in_a_child(stand_in, argv, status, fragment):
    parsed = live.collect_live("slime", argv, live.capability_of(103), timeout_s=120)
    verdict = live.evaluate_live(parsed)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()


def test_framework_live_gpu_probe_answers_from_the_profile(stand_in):
    """The child reports the capability it was told (GB300: sm_103), not this machine's."""
    parsed = live.collect_live("slime", ["--update-weight-buffer-size", "1"], (10, 3), timeout_s=120)
    assert parsed.exit_code == 0 and not parsed.error and parsed.message == "capability (10, 3)"


def test_framework_live_without_framework_or_profile():
    assert live.collect_live(None, [], (9, 0)) == live.LiveParse(framework=None)
    assert live.collect_live("slime", [], (9, 0)) == live.LiveParse(framework=None)  # not importable here
    assert live.capability_of(90) == (9, 0) and live.capability_of(100) == (10, 0)


def test_framework_live_and_schema_agree_on_the_same_argvs():
    """Where SLIME or Miles is importable (the training image): its own parser and the schema say the same."""
    installed = collect_installed()
    if installed.framework is None:
        pytest.skip("neither SLIME nor Miles is importable here (not installed on this machine): the live parse "
                    "and the schema cannot be compared")
    schema, how = choose(installed, installed.framework)
    for inputs in (_qwen(), glm_as_shipped_before_the_fix()):
        argv = inputs.recipe.argv()
        own = live.evaluate_live(live.collect_live(installed.framework, framework_argv.options_of(argv),
                                                   live.capability_of(inputs.profile.sm)))
        if own.status is Status.UNKNOWN:
            pytest.skip(f"the live parse could not judge here: {own.summary}")
        by_schema = framework_argv.evaluate(argv, schema, how)
        assert (own.status is Status.FAIL) == (by_schema.status is Status.FAIL), (own.render(), by_schema.render())
