"""The cluster shape a launch states against the hardware profile's nodes as a rule table
(rlcheck/probes/recipe/job_shape.py): GPUs per node on both sides of the profile's, an unknown node count, and what
is said when the shape or the profile is missing, with whole summaries."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe.job_shape import FAILURE_ID, evaluate_job_shape
from rlcheck.verdict import Status

H200 = get_profile("h200")
assert H200.gpus_per_node == 8


@pytest.mark.parametrize(("nodes", "gpus", "status", "summary"), [
    (2, 9, Status.FAIL, "job launch.sh expects 2 node(s) x 9 GPU(s) per node; h200 nodes have 8: 1 GPU(s) per node "
                        "that are not there"),
    (None, 16, Status.FAIL, "job launch.sh expects ? node(s) x 16 GPU(s) per node; h200 nodes have 8: 8 GPU(s) per "
                            "node that are not there"),
    (2, 8, Status.PASS, "job launch.sh expects 2 node(s) x 8 GPU(s) per node; h200 nodes have 8"),
    (0, 8, Status.PASS, "job launch.sh expects 0 node(s) x 8 GPU(s) per node; h200 nodes have 8"),
    (2, 7, Status.WARN, "job launch.sh expects 2 node(s) x 7 GPU(s) per node; h200 nodes have 8: 1 GPU(s) per node "
                        "left idle"),
    (1, 1, Status.WARN, "job launch.sh expects 1 node(s) x 1 GPU(s) per node; h200 nodes have 8: 7 GPU(s) per node "
                        "left idle"),
])
def test_rules_table_job_shape(nodes, gpus, status, summary):
    verdict = evaluate_job_shape(nodes, gpus, H200, "job launch.sh")
    assert (verdict.status, verdict.summary) == (status, summary)
    assert verdict.failure_id == (FAILURE_ID if status is Status.FAIL else None)
    assert verdict.remedy == (catalog.get(FAILURE_ID).remedy if status is Status.FAIL else "")


def test_rules_table_job_shape_missing_profile_or_shape():
    for gpus in (8, None):
        skip = evaluate_job_shape(2, gpus, None, "job launch.sh")
        assert (skip.status, skip.summary) == (Status.SKIP, "needs a hardware profile (--hardware) to compare the "
                                                            "shape with")
    skip = evaluate_job_shape(2, None, H200, "recipe qwen3-4b")
    assert (skip.status, skip.summary) == (Status.SKIP, "recipe qwen3-4b states no GPUs per node (no `ray start "
                                           "--num-gpus`, RayJob worker GPU limit or rendered resources): the shape is "
                                           "judged on the cluster only")
