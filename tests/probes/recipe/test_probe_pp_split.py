"""recipe_pp_split: Megatron's stage sizes (megatron-core 0.19.2 uneven PP) and GLM-5.2's DSA start rule."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.job.job import Job
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.probes.recipe import recipe_rules
from rlcheck.recipes import glm
from rlcheck.verdict import Status

GB300 = get_profile("gb300")

SIZES = [  # (layers, pp, first, last) -> Megatron's sizes
    ((78, 4, None, 18), [20, 20, 20, 18]),  # upstream's GLM-5 script: only the last stage given
    ((78, 4, 18, None), [18, 20, 20, 20]),  # only the first given
    ((78, 4, 18, 20), [18, 20, 20, 20]),  # rlcheck's GB300 recipe
    ((78, 8, 14, 16), [14, 8, 8, 8, 8, 8, 8, 16]),
    ((78, 2, 40, None), [40, 38]),
    ((78, 2, 40, 38), [40, 38]),
    ((80, 4, None, None), [20, 20, 20, 20]),
    ((78, 1, None, None), [78]),
]
REFUSED = [  # Megatron raises for these
    ((78, 4, None, None), "do not divide evenly over PP 4"),
    ((78, 4, 20, None), "58 layers left do not divide evenly over the 3"),
    ((78, 4, None, 17), "61 layers left"),
    ((78, 2, 40, 40), "-2 layer"),
    ((78, 2, 40, 37), "1 layer"),  # layers left but no stage for them
    ((78, 3, 39, 39), "0 layer"),  # a middle stage left with no layers
]


@pytest.mark.parametrize(("args", "sizes"), SIZES, ids=[str(a) for a, _ in SIZES])
def test_probe_pp_split_stage_sizes_as_megatron(args, sizes):
    assert glm.stage_sizes(*args) == sizes
    assert glm.stage_starts(*args) == [1 + sum(sizes[:i]) for i in range(len(sizes))]


@pytest.mark.parametrize(("args", "message"), REFUSED, ids=[str(a) for a, _ in REFUSED])
def test_probe_pp_split_refused_like_megatron(args, message):
    with pytest.raises(ValueError, match=message):
        glm.stage_sizes(*args)


def _glm(first: int | None, last: int | None) -> recipes.Recipe:
    r = recipes.get("glm5.2-gb300", GB300)
    return r.replace(parallel=dataclasses.replace(r.parallel, pp_first_layers=first, pp_last_layers=last))


def _as_job(first: int | None, last: int | None) -> recipes.Recipe:
    """The GLM recipe's argv as a user's job, with upstream GLM-5's split (only the last stage given)."""
    argv = _glm(first, last).argv()
    job = Job(argv=tuple(argv), intended_argv=tuple(argv), entrypoint=" ".join(argv), source="glm5-shape",
              source_format="argv-json")
    return inputs_for_job(job, GB300).recipe


def test_probe_pp_split_verdicts_both_sides():
    shipped = recipe_rules.evaluate_pp_split(_glm(18, 20))
    assert shipped.status is Status.PASS and "18/20/20/20" in shipped.summary
    # GLM-5.2 (index sharing known): 20/20/20/18 starts stage 2 on skip layer 21.
    on_skip = recipe_rules.evaluate_pp_split(_glm(None, 18))
    assert on_skip.status is Status.FAIL and "[21, 41, 61]" in on_skip.summary and "20/20/20/18" in on_skip.summary
    # Megatron's own refusal is a FAIL that says so, not a DSA reason.
    refused = recipe_rules.evaluate_pp_split(_glm(20, None))
    assert refused.status is Status.FAIL and refused.summary.startswith("Megatron refuses")


def test_probe_pp_split_job_with_upstream_glm5_split_is_not_a_fail():
    """Upstream's GLM-5 script (PP 4, --decoder-last-pipeline-num-layers 18): Megatron gives 20/20/20/18; whether
    21 is a skip layer is the checkpoint's config, which the argv does not give."""
    verdict = recipe_rules.evaluate_pp_split(_as_job(None, 18))
    assert verdict.status is Status.WARN and "20/20/20/18" in verdict.summary and "index_topk_freq" in verdict.summary
    assert recipe_rules.evaluate_pp_split(_as_job(18, 20)).status is Status.PASS
    assert recipe_rules.evaluate_pp_split(_as_job(20, None)).status is Status.FAIL
