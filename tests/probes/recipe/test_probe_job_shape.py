"""recipe_job_shape: the GPUs per node a launch states against the hardware profile, on both sides of equal."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe.job_shape import FAILURE_ID, evaluate_job_shape
from rlcheck.verdict import Status


@pytest.mark.parametrize(("nodes", "gpus", "profile", "status", "fragment"), [
    (2, 8, "h200", Status.PASS, "job x expects 2 node(s) x 8 GPU(s) per node; h200 nodes have 8"),
    (1, 4, "gb200", Status.PASS, "1 node(s) x 4 GPU(s) per node; gb200 nodes have 4"),
    (1, 9, "h200", Status.FAIL, "h200 nodes have 8: 1 GPU(s) per node that are not there"),
    (1, 8, "gb200", Status.FAIL, "gb200 nodes have 4: 4 GPU(s) per node that are not there"),
    (2, 7, "h200", Status.WARN, "h200 nodes have 8: 1 GPU(s) per node left idle"),
    (None, 4, "h100", Status.WARN, "? node(s) x 4 GPU(s)"),
    (1, None, "h200", Status.SKIP, "job x states no GPUs per node"),
])
def test_probe_job_shape_each_side_of_the_profile(nodes, gpus, profile, status, fragment):
    verdict = evaluate_job_shape(nodes, gpus, get_profile(profile), "job x")
    assert verdict.status is status and fragment in verdict.summary
    if status is Status.FAIL:
        assert verdict.failure_id == FAILURE_ID and verdict.remedy == catalog.get(FAILURE_ID).remedy


def test_probe_job_shape_without_profile_names_it():
    verdict = evaluate_job_shape(1, 8, None, "job x")
    assert verdict.status is Status.SKIP and "--hardware" in verdict.summary
