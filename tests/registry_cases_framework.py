"""Registry rows for recipe_framework_args: the shipped recipes pass; recorded bad argvs FAIL against the committed
schemas (no SLIME or Miles importable, as in CI)."""

from __future__ import annotations

import dataclasses

from rlcheck import recipes
from rlcheck.framework.detect import Installed
from rlcheck.framework.live import LiveParse
from rlcheck.hardware import get_profile
from rlcheck.preflight.registry import Inputs
from rlcheck.verdict import Status

H200, GB300 = get_profile("h200"), get_profile("gb300")
NONE = Installed(framework=None)


def _qwen(*extra: str) -> Inputs:
    base = recipes.get("qwen3-4b-colocated", H200)
    return Inputs(recipe=base.replace(extra_args=(*base.extra_args, *extra)), profile=H200)


def glm_as_shipped_before_the_fix() -> Inputs:
    """The glm5.2-gb300 argv rlcheck shipped with a GO: --update-weight-buffer-size 2GiB (type=int in both)."""
    glm = recipes.get("glm5.2-gb300", GB300)
    i = glm.extra_args.index("--update-weight-buffer-size")
    return Inputs(recipe=glm.replace(extra_args=(*glm.extra_args[:i + 1], "2GiB", *glm.extra_args[i + 2:])),
                  profile=GB300)


def glm_under_slime() -> Inputs:
    glm = recipes.get("glm5.2-gb300", GB300)
    return Inputs(recipe=dataclasses.replace(glm, framework="slime"), profile=GB300)


CASES = {
    "recipe_framework_args": [
        ("qwen3-4b", Inputs(recipe=recipes.get("qwen3-4b-colocated", H200), profile=H200), NONE, Status.PASS),
        ("qwen3-30b", Inputs(recipe=recipes.get("qwen3-30b-a3b-disaggregated", H200), profile=H200), NONE,
         Status.PASS),
        ("qwen3-4b-remote-rm", Inputs(recipe=recipes.get("qwen3-4b-remote-rm", H200), profile=H200), NONE,
         Status.PASS),
        ("glm5.2-gb300", Inputs(recipe=recipes.get("glm5.2-gb300", GB300), profile=GB300), NONE, Status.PASS),
        ("glm-buffer-2GiB", glm_as_shipped_before_the_fix(), NONE, Status.FAIL),
        ("glm-sglang-router-policy-under-slime", glm_under_slime(), NONE, Status.FAIL),
        ("misspelt-megatron-flag", _qwen("--tensor-model-paralel-size", "2"), NONE, Status.FAIL),
        ("sglang-abbreviation", _qwen("--sglang-mem-fraction", "0.5"), NONE, Status.FAIL),
        # Given twice: argparse keeps the last; upstream overrides a model script's value so (issue 13: reported).
        ("flag-twice", _qwen("--lr", "2e-6"), NONE, Status.WARN),
        ("flag-twice-same-value", _qwen("--lr", "1e-06"), NONE, Status.PASS),
        ("flag-twice-and-misspelt", _qwen("--lr", "2e-6", "--tensor-model-paralel-size", "2"), NONE, Status.FAIL),
        ("installed-slime-0.3.1", _qwen(), Installed(framework="slime", version="0.3.1"), Status.PASS),
    ],
    # The framework's own parser, as its child process reported (argparse's words are its `error:` line).
    "recipe_framework_parse_live": [
        ("not-importable", _qwen(), LiveParse(framework=None), Status.SKIP),
        ("slime-accepts", _qwen(), LiveParse(framework="slime", exit_code=0), Status.PASS),
        ("glm-buffer-2GiB", glm_as_shipped_before_the_fix(), LiveParse(
            framework="miles", exit_code=2,
            message="train.py: error: argument --update-weight-buffer-size: invalid int value: '2GiB'"), Status.FAIL),
        ("validate-args-assert", _qwen(), LiveParse(
            framework="slime", exit_code=0, error="AssertionError: rollout_batch_size must be divisible"), Status.FAIL),
        ("checkpoint-not-here", _qwen(), LiveParse(
            framework="slime", exit_code=0, error="FileNotFoundError: /root/Qwen3-4B/config.json"), Status.UNKNOWN),
        ("no-profile", _qwen(), LiveParse(
            framework="slime", error="no hardware profile (--hardware): the GPU probes have no answer"),
         Status.UNKNOWN),
    ],
}
