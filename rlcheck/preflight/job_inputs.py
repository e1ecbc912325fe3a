"""What the registry's checks judge for a user's job (--job): the Recipe read from its argv, the Job itself and
the facts it does not give (Inputs.missing, by Need). The registry makes every check that needs a missing fact
UNKNOWN with the reason: a job that could not be captured lacks every fact of a launch, one whose trainer could
not be read lacks the recipe and what is read from it."""

from __future__ import annotations

import dataclasses

from rlcheck import recipes
from rlcheck.hardware import HardwareProfile
from rlcheck.job import to_recipe
from rlcheck.job.job import Job
from rlcheck.preflight import guarded_by
from rlcheck.preflight.registry import Inputs, Need

READ_FROM_RECIPE = (Need.RECIPE, Need.MODEL, Need.BATCH, Need.TRAIN_MEMORY, Need.ROLLOUT_MEMORY)
"""The facts read from the trainer's argv: all missing when it could not be read."""


def _unreadable(why: str, *, launch: bool) -> dict[Need, str]:
    return {need: why for need in (*READ_FROM_RECIPE, *(() if launch else (Need.LAUNCH,)))}


def inputs_for_job(job: Job | None, profile: HardwareProfile | None, capture_error: str = "") -> Inputs:
    """Inputs for a captured job; job=None with capture_error: every recipe check UNKNOWN naming it."""
    if job is None:
        # The default recipe stands in the field only: every fact a check could read from it is missing.
        return Inputs(recipe=recipes.get(recipes.DEFAULT_RECIPE), profile=profile, guarded_by=guarded_by(),
                      missing=_unreadable(capture_error or "the job was not captured", launch=False))
    if job.shell_error or job.unseen or not any(token.endswith(".py") for token in job.argv[:3]):
        why = job.shell_error or job.unseen or f"the job's command {' '.join(job.argv[:2])!r} is not a python trainer"
        return Inputs(recipe=recipes.get(recipes.DEFAULT_RECIPE), profile=profile, guarded_by=guarded_by(),
                      job=job, missing=_unreadable(why, launch=True))
    try:
        reading = to_recipe.read(job)
    except ValueError as exc:
        return Inputs(recipe=recipes.get(recipes.DEFAULT_RECIPE), profile=profile, guarded_by=guarded_by(),
                      job=job, missing=_unreadable(f"the argv does not read as a SLIME recipe: {exc}", launch=True))
    recipe = dataclasses.replace(reading.recipe, hardware=profile.name if profile else None)
    return Inputs(recipe=recipe, profile=profile, guarded_by=guarded_by(), job=job,
                  missing=reading.missing)
