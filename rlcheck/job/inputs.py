"""What the registry's checks judge for a user's job (--job): the Recipe read from its argv, the Job itself and
the facts it does not give. A job that could not be captured makes every recipe check UNKNOWN with the reason."""

from __future__ import annotations

import dataclasses

from rlcheck import recipes
from rlcheck.hardware import HardwareProfile
from rlcheck.job import to_recipe
from rlcheck.job.job import Job
from rlcheck.preflight import guarded_by
from rlcheck.preflight.registry import Inputs

# Checks outside the recipe area that read the recipe too: without a recipe from the job they cannot judge.
RECIPE_READERS = ("cluster_gpus", "image_mbridge", "image_driver_guard")


def _unreadable(why: str) -> dict[str, str]:
    return {"*": why, **{check_id: why for check_id in RECIPE_READERS}}


def inputs_for_job(job: Job | None, profile: HardwareProfile | None, capture_error: str = "") -> Inputs:
    """Inputs for a captured job; job=None with capture_error: every recipe check UNKNOWN naming it."""
    if job is None:
        # The recipe is a placeholder that no recipe check reads: '*' makes each of them UNKNOWN first.
        return Inputs(recipe=recipes.get(recipes.DEFAULT_RECIPE), profile=profile, guarded_by=guarded_by(),
                      missing=_unreadable(capture_error or "the job was not captured"))
    if job.shell_error or job.unseen or not any(token.endswith(".py") for token in job.argv[:3]):
        why = job.shell_error or job.unseen or f"the job's command {' '.join(job.argv[:2])!r} is not a python trainer"
        return Inputs(recipe=recipes.get(recipes.DEFAULT_RECIPE), profile=profile, guarded_by=guarded_by(),
                      job=job, missing=_unreadable(why))
    try:
        reading = to_recipe.read(job)
    except ValueError as exc:
        return Inputs(recipe=recipes.get(recipes.DEFAULT_RECIPE), profile=profile, guarded_by=guarded_by(),
                      job=job, missing=_unreadable(f"the argv does not read as a SLIME recipe: {exc}"))
    recipe = dataclasses.replace(reading.recipe, hardware=profile.name if profile else None)
    return Inputs(recipe=recipe, profile=profile, guarded_by=guarded_by(), job=job,
                  missing=reading.missing)
