"""Rule table for what the checks judge of a user's job (rlcheck.preflight.job_inputs): a job not captured lacks every
fact of a launch; one whose trainer never started, could not be seen or is no python trainer lacks the recipe, model
and batch (each naming why); one whose argv SLIME's parser would refuse names the flag; a readable one is its own
Recipe on the profile judged, with what its argv does not give."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.facts import Need
from rlcheck.hardware import get_profile
from rlcheck.job import to_recipe
from rlcheck.job.job import Job
from rlcheck.preflight import guarded_by
from rlcheck.preflight.job_inputs import READ_FROM_RECIPE, inputs_for_job
from rlcheck.preflight.registry import Inputs

H200 = get_profile("h200")
DEFAULT = recipes.get(recipes.DEFAULT_RECIPE)
TRAIN = ("python3", "train.py", "--tensor-model-parallel-size", "2", "--num-layers", "36", "--hidden-size", "2560",
         "--rollout-batch-size", "16", "--colocate")


def _job(argv=TRAIN, **kw) -> Job:
    return Job(argv=tuple(argv), intended_argv=tuple(argv), entrypoint=" ".join(argv), source="job.json",
               source_format="rayjob", **kw)


def test_the_facts_read_from_the_trainers_argv():
    assert READ_FROM_RECIPE == (Need.RECIPE, Need.MODEL, Need.BATCH, Need.TRAIN_MEMORY, Need.ROLLOUT_MEMORY)


@pytest.mark.parametrize(("error", "why"), [("ray job submit: no entrypoint", "ray job submit: no entrypoint"),
                                            ("", "the job was not captured")])
def test_a_job_not_captured_lacks_every_fact_of_a_launch(error, why):
    inputs = inputs_for_job(None, H200, error) if error else inputs_for_job(None, H200)
    assert inputs == Inputs(recipe=DEFAULT, profile=H200, guarded_by=guarded_by(), missing={
        Need.RECIPE: why, Need.MODEL: why, Need.BATCH: why, Need.TRAIN_MEMORY: why, Need.ROLLOUT_MEMORY: why,
        Need.LAUNCH: why})
    assert list(inputs.missing) == [Need.RECIPE, Need.MODEL, Need.BATCH, Need.TRAIN_MEMORY, Need.ROLLOUT_MEMORY,
                                    Need.LAUNCH]


@pytest.mark.parametrize(("job", "why"), [
    (_job(shell_error="sh: 1: Syntax error: Unterminated quoted string"),
     "sh: 1: Syntax error: Unterminated quoted string"),
    (_job(unseen="the entrypoint runs run.sh, not on this machine"), "the entrypoint runs run.sh, not on this machine"),
    (_job(shell_error="shell", unseen="unseen"), "shell"),
    (_job(argv=("bash", "run.sh", "--x")), "the job's command 'bash run.sh' is not a python trainer"),
    (_job(argv=("torchrun",)), "the job's command 'torchrun' is not a python trainer"),
    (_job(argv=("a", "b", "c", "train.py")), "the job's command 'a b' is not a python trainer"),
])
def test_a_trainer_that_cannot_be_read_lacks_the_recipe_model_and_batch_naming_why(job, why):
    inputs = inputs_for_job(job, H200)
    assert inputs == Inputs(recipe=DEFAULT, profile=H200, guarded_by=guarded_by(), job=job,
                            missing={Need.RECIPE: why, Need.MODEL: why, Need.BATCH: why,
                                                              Need.TRAIN_MEMORY: why, Need.ROLLOUT_MEMORY: why})


@pytest.mark.parametrize("argv", [("train.py", "--colocate"), ("python3", "train.py", "--colocate"),
                                  ("env", "python", "train.py", "--colocate")])
def test_a_python_trainer_within_the_first_three_tokens_is_read(argv):
    inputs = inputs_for_job(_job(argv=argv), H200)
    assert inputs.recipe.id == "job:job.json" and Need.RECIPE not in inputs.missing


def test_an_argv_slimes_parser_would_refuse_names_the_flag():
    job = _job(argv=(*TRAIN, "--tensor-model-parallel-size", "two"))
    inputs = inputs_for_job(job, H200)
    why = "the argv does not read as a SLIME recipe: --tensor-model-parallel-size 'two': expected an integer"
    assert inputs == Inputs(recipe=DEFAULT, profile=H200, guarded_by=guarded_by(), job=job,
                            missing={Need.RECIPE: why, Need.MODEL: why, Need.BATCH: why,
                                                              Need.TRAIN_MEMORY: why, Need.ROLLOUT_MEMORY: why})


@pytest.mark.parametrize(("profile", "hardware"), [(H200, "h200"), (get_profile("gb300"), "gb300"), (None, None)])
def test_a_readable_job_is_its_own_recipe_on_the_profile_judged(profile, hardware):
    job = _job()
    reading = to_recipe.read(job)
    inputs = inputs_for_job(job, profile)
    assert inputs == Inputs(recipe=reading.recipe.replace(hardware=hardware), profile=profile,
                            guarded_by=guarded_by(), job=job, missing=reading.missing)
    assert inputs.recipe.parallel.tp == 2 and inputs.recipe.hardware == hardware
    assert inputs.guarded_by["batch-size-mismatch"] == "recipe_batch"
