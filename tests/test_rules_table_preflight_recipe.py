"""Rule table for the recipe checks' own judges (rlcheck.preflight.recipe): the recipe has a shape for the hardware
(refused: FAIL with why; no profile: SKIP), the stated GPUs per node of a built-in recipe (its placement group over
its nodes, rounded up) and of a job, the framework whose parse judges the argv and the reason it gives, what the
live parse is handed (the launch's options, the profile's capability), and the argv meant against the argv got."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.framework import argv as framework_argv
from rlcheck.framework import live
from rlcheck.framework.detect import Installed
from rlcheck.hardware import get_profile
from rlcheck.job.job import Job
from rlcheck.preflight import recipe as checks
from rlcheck.preflight.registry import Inputs
from rlcheck.recipes.recipe import Placement
from rlcheck.verdict import Status, Verdict

H200, GB300 = get_profile("h200"), get_profile("gb300")
QWEN4B = recipes.get("qwen3-4b-colocated", "h200")
ARGV = ("python3", "train.py", "--bogus-flag", "1")


def _job(**kw) -> Job:
    fields = {"argv": ARGV, "intended_argv": ARGV, "entrypoint": "", "source": "j.json", "source_format": "rayjob",
              **kw}
    return Job(**fields)


@pytest.mark.parametrize(("inputs", "verdict"), [
    (Inputs(recipe=QWEN4B, profile=H200, refusal="glm5.2-gb300: shaped for GB300 nodes"),
     Verdict(status=Status.FAIL, summary="glm5.2-gb300: shaped for GB300 nodes")),
    (Inputs(recipe=QWEN4B, profile=None, refusal="refused"), Verdict(status=Status.FAIL, summary="refused")),
    (Inputs(recipe=QWEN4B, profile=None),
     Verdict(status=Status.SKIP, summary="needs a hardware profile (--hardware): found none; judging the base recipe")),
    (Inputs(recipe=QWEN4B, profile=GB300),
     Verdict(status=Status.PASS, summary="qwen3-4b-colocated is shaped for gb300")),
])
def test_the_recipe_fits_the_hardware_or_says_why_not(inputs, verdict):
    assert checks.evaluate_fits(None, inputs) == verdict


def _placed(nodes: int, per_node: int, width: int, rollout: int | None = None) -> Inputs:
    placement = Placement(actor_num_nodes=nodes, actor_gpus_per_node=per_node, colocate=rollout is None,
                          rollout_num_gpus=rollout, num_gpus_per_node=width)
    return Inputs(recipe=QWEN4B.replace(placement=placement), profile=H200)


@pytest.mark.parametrize(("inputs", "status", "summary"), [
    (_placed(2, 8, 8), Status.PASS, "recipe qwen3-4b-colocated expects 2 node(s) x 8 GPU(s) per node; h200 nodes "
                                    "have 8"),
    # 12 training + 2 rollout GPUs on 8-GPU nodes: 14 GPUs take 2 nodes (rounded up)
    (_placed(2, 6, 8, rollout=2), Status.PASS, "recipe qwen3-4b-colocated expects 2 node(s) x 8 GPU(s) per node; "
                                               "h200 nodes have 8"),
    (_placed(1, 4, 4), Status.WARN, "recipe qwen3-4b-colocated expects 1 node(s) x 4 GPU(s) per node; h200 nodes "
                                    "have 8: 4 GPU(s) per node left idle"),
    (_placed(3, 4, 4, rollout=4), Status.WARN, "recipe qwen3-4b-colocated expects 4 node(s) x 4 GPU(s) per node; "
                                               "h200 nodes have 8: 4 GPU(s) per node left idle"),
    (_placed(1, 16, 16), Status.FAIL, "recipe qwen3-4b-colocated expects 1 node(s) x 16 GPU(s) per node; h200 nodes "
                                      "have 8: 8 GPU(s) per node that are not there"),
])
def test_a_built_in_recipes_shape_is_its_placement_group_over_its_nodes(inputs, status, summary):
    verdict = checks.evaluate_shape(None, inputs)
    assert (verdict.status, verdict.summary) == (status, summary)


@pytest.mark.parametrize(("job", "status", "summary"), [
    (_job(nodes=2, gpus_per_node=8), Status.PASS, "job j.json expects 2 node(s) x 8 GPU(s) per node; h200 nodes "
                                                  "have 8"),
    (_job(gpus_per_node=4), Status.WARN, "job j.json expects ? node(s) x 4 GPU(s) per node; h200 nodes have 8: 4 "
                                         "GPU(s) per node left idle"),
    (_job(nodes=1), Status.SKIP, "job j.json states no GPUs per node (no `ray start --num-gpus`, RayJob worker GPU "
                                 "limit or rendered resources): the shape is judged on the cluster only"),
])
def test_a_jobs_shape_is_what_it_states(job, status, summary):
    verdict = checks.evaluate_shape(None, Inputs(recipe=QWEN4B, profile=H200, job=job))
    assert (verdict.status, verdict.summary) == (status, summary)


def test_a_shape_without_a_profile_is_skipped():
    verdict = checks.evaluate_shape(None, Inputs(recipe=QWEN4B, profile=None))
    assert (verdict.status, verdict.summary) == (
        Status.SKIP, "needs a hardware profile (--hardware) to compare the shape with")


def test_the_argv_is_judged_by_the_declared_framework_naming_it():
    verdict = checks.evaluate_framework_args(Installed(framework="slime", version="0.3.1", source="--framework"),
                                             Inputs(recipe=QWEN4B, profile=H200))
    assert (verdict.status, verdict.summary) == (
        Status.PASS, "62 option(s) all accepted by slime 0.3.1 (schema slime-v0.3.1, declared slime 0.3.1)")


def test_without_a_framework_the_recipes_committed_schema_judges_naming_why():
    verdict = checks.evaluate_framework_args(Installed(framework=None), Inputs(recipe=QWEN4B, profile=H200))
    assert (verdict.status, verdict.summary) == (
        Status.PASS, "62 option(s) all accepted by slime 0.2.4 (schema slime-v0.2.4, neither SLIME nor Miles "
                     "importable here: the committed schema for the recipe's framework (slime))")


def test_a_jobs_argv_is_judged_by_its_own_frameworks_schema():
    inputs = Inputs(recipe=QWEN4B.replace(framework="miles"), profile=None, job=_job(framework="miles"))
    verdict = checks.evaluate_framework_args(Installed(framework=None), inputs)
    assert verdict.status is Status.FAIL
    assert verdict.summary.startswith(
        "2 problem(s) in the argv as miles main (schema miles-main, neither SLIME nor Miles importable here: the "
        "committed schema for the job's framework, miles (rayjob, no version stated)) parses it: --bogus-flag: no "
        "miles main parser has it: rejected: unrecognized arguments; --rollout-batch-size is required")


@pytest.mark.parametrize(("profile", "capability"), [(H200, (9, 0)), (GB300, (10, 3)), (None, None)])
def test_the_live_parse_gets_the_launch_options_and_the_profiles_capability(monkeypatch, profile, capability):
    seen = []
    monkeypatch.setattr(live, "collect_live", lambda *a: seen.append(a) or live.LiveParse(framework=None))
    inputs = Inputs(recipe=QWEN4B, profile=profile, job=_job(framework="slime"),
                    framework=Installed(framework="miles", version="0.1.0", source="--framework"))
    assert checks._collect_live(inputs) == live.LiveParse(framework=None)
    assert seen == [("miles", framework_argv.options_of(list(ARGV)), capability)]


def test_a_built_in_recipes_argv_is_meant_and_got_intact():
    argv = QWEN4B.argv()
    assert checks._meant_and_got(Inputs(recipe=QWEN4B, profile=None)) == (argv, argv, "", "", "")


def test_a_jobs_argv_meant_and_got_through_rays_shell():
    job = _job(argv=("python3", "train.py", "a"), intended_argv=("python3", "train.py", "a b"),
               entrypoint="python3 train.py a b", shell_error="sh: syntax error", unseen="not here")
    assert checks._meant_and_got(Inputs(recipe=QWEN4B, profile=None, job=job)) == (
        ["python3", "train.py", "a b"], ["python3", "train.py", "a"], "python3 train.py a b", "sh: syntax error",
        "not here")


def test_the_recipe_checks_read_what_their_facts_say():
    by_id = {c.id: c for c in checks.CHECKS}
    assert by_id["recipe_fits_hardware"].needs == checks.RECIPE_AND_PROFILE
    assert checks.MODEL_AND_PROFILE == checks.RECIPE_AND_PROFILE | {checks.Need.MODEL}
    assert by_id["recipe_argv_intact"].needs == checks.LAUNCH == frozenset({checks.Need.LAUNCH})
