"""A check's needs are facts: the registry alone makes a check whose fact is missing UNKNOWN, naming the fact and
why, before its collector or judge runs; a job provides each fact or the reason it cannot."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import preflight, recipes
from rlcheck.facts import Need
from rlcheck.hardware import get_profile
from rlcheck.job.job import Job
from rlcheck.preflight import gate
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.verdict import Status

JOB_FACTS = (Need.LAUNCH, Need.RECIPE, Need.MODEL, Need.BATCH, Need.TRAIN_MEMORY, Need.ROLLOUT_MEMORY)
"""The facts a user's job can fail to give."""
BASE = gate.inputs_for("qwen3-4b-colocated", get_profile("h200"))
ROWS = [(c.id, need) for c in preflight.all_checks() for need in JOB_FACTS if need in c.needs]


class Untouchable:
    """An observation no judge can read: a check that judged it instead of stopping would crash."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"judged a missing fact (read .{name})")


@pytest.mark.parametrize(("check_id", "need"), ROWS, ids=[f"{c}-{n.value}" for c, n in ROWS])
def test_registry_check_whose_fact_is_missing_is_unknown_naming_it(check_id, need):
    inputs = dataclasses.replace(BASE, missing={need: "the argv does not say (recorded reason)"})
    (verdict,) = preflight.get(check_id).run(inputs, observation=Untouchable())
    assert verdict.status is Status.UNKNOWN and verdict.check_id == check_id
    assert f"the {need.value} is not known: the argv does not say (recorded reason)" in verdict.summary


def test_registry_missing_fact_spares_the_checks_that_do_not_need_it():
    """A job with no readable model still has its batch, launch and image judged."""
    inputs = dataclasses.replace(BASE, missing={Need.MODEL: "unknown architecture"})
    for check_id in ("recipe_batch", "recipe_argv_intact", "recipe_no_inline_secrets", "image_numpy_major"):
        assert Need.MODEL not in preflight.get(check_id).needs
    judged = preflight.get("recipe_batch").run(inputs)
    assert judged[0].status is not Status.UNKNOWN, judged[0].render()


def test_registry_every_recipe_check_needs_the_launch():
    """A recipe check judges what is launched: with no launch (a job that could not be captured) it is UNKNOWN."""
    for check in preflight.by_area("recipe"):
        assert Need.LAUNCH in check.needs, check.id


def _job(argv: tuple[str, ...], **changes: object) -> Job:
    argv = (*argv[:2], "--colocate", *argv[2:]) if argv[:2] == ("python3", "train.py") else argv
    return Job(argv=argv, intended_argv=argv, entrypoint=" ".join(argv), source="launch.sh", source_format="bash",
               **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(("job", "error", "missing"), [
    (None, "the script exited 3 before `ray job submit`", set(JOB_FACTS)),
    (_job(("bash", "run.sh")), "",  # not a python trainer
     {Need.RECIPE, Need.MODEL, Need.BATCH, Need.TRAIN_MEMORY, Need.ROLLOUT_MEMORY}),
    (_job(("python3", "train.py"), unseen="runs /opt/x.sh, not on this machine"), "",
     {Need.RECIPE, Need.MODEL, Need.BATCH, Need.TRAIN_MEMORY, Need.ROLLOUT_MEMORY}),
    (_job(("python3", "train.py", "--rollout-batch-size", "32", *recipes.get("qwen3-4b-colocated").model.argv())),
     "", set()),
    (_job(("python3", "train.py", *recipes.get("qwen3-4b-colocated").model.argv())), "", {Need.BATCH}),
    (_job(("python3", "train.py", "--rollout-batch-size", "32", "--num-layers", "7")), "", {Need.MODEL}),
    (_job(("python3", "train.py", "--rollout-batch-size", "32", *recipes.get("qwen3-4b-colocated").model.argv(),
           "--train-backend", "fsdp")), "", {Need.TRAIN_MEMORY}),
    (_job(("python3", "train.py", "--rollout-batch-size", "32", *recipes.get("qwen3-4b-colocated").model.argv(),
           "--sglang-speculative-draft-model-path", "/d")), "", {Need.ROLLOUT_MEMORY}),
    (_job(("python3", "train.py", "--rollout-batch-size", "32", *recipes.get("qwen3-4b-colocated").model.argv(),
           "--lora-rank", "8")), "", {Need.ROLLOUT_MEMORY}),  # the stage check bounds LoRA itself
    (_job(("python3", "train.py", "--rollout-batch-size", "32", *recipes.get("qwen3-4b-colocated").model.argv(),
           "--mtp-num-layers", "1")), "", set()),
])
def test_job_gives_each_fact_or_the_reason(job, error, missing):
    inputs = inputs_for_job(job, get_profile("h200"), error)
    assert set(inputs.missing) == missing
    assert all(why for why in inputs.missing.values())
    if error:
        assert all(error in why for why in inputs.missing.values())


@pytest.mark.parametrize(("missing", "summary"), [
    ({Need.MODEL: "a", Need.TRAIN_MEMORY: "a"}, "cannot judge the job: the model and training memory are not known: a"),
    ({Need.MODEL: "a", Need.TRAIN_MEMORY: "b"},
     "cannot judge the job: the model is not known: a; the training memory is not known: b"),
    ({Need.LAUNCH: "x", Need.RECIPE: "x", Need.MODEL: "x", Need.TRAIN_MEMORY: "y"},
     "cannot judge the job: the launch, recipe and model are not known: x; the training memory is not known: y"),
    ({Need.TRAIN_MEMORY: "y"}, "cannot judge the job: the training memory is not known: y"),
])
def test_registry_names_one_reason_once_with_every_fact_it_leaves_unknown(missing, summary):
    """A job that could not be read lacks several facts for one reason: said once, naming them all, in Need order."""
    (verdict,) = preflight.get("recipe_stage_memory").run(dataclasses.replace(BASE, missing=missing),
                                                            observation=Untouchable())
    assert (verdict.status, verdict.summary) == (Status.UNKNOWN, summary)
