"""Rule table for the cluster's GPUs against the recipe's placement group (rlcheck.probes.cluster.cluster_gpus): the
whole verdict on both sides of 'enough' (the total exactly the need, one short), fractional GPUs advertised to Ray,
nodes without GPUs, Ray not reached, a need that is no need, and what the placement group asks for (colocated: the
actor's GPUs; disaggregated: the sum)."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import catalog, recipes
from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.probes.cluster import cluster_gpus as cg
from rlcheck.verdict import Status

REMEDY = catalog.get("placement-group-oversubscribed").remedy


def _facts(i: int, gpus: float) -> NodeFacts:
    return NodeFacts(node_id=f"{i:056x}", address=f"10.0.0.{i}", hostname=f"n{i}", is_head=i == 0, ray_gpus=gpus)


def _result(*gpus: float) -> FanoutResult:
    return FanoutResult(address="10.0.0.0:6379", connected=True, tried="ray.init",
                        nodes=tuple(NodeAnswer(node=_facts(i, g), outcome=Outcome.TIMEOUT, elapsed_s=1)
                                    for i, g in enumerate(gpus)))


def test_collect_lists_every_node_as_ray_advertises_it():
    assert cg.collect_cluster_gpus(_result(8.0, 0.5)) == cg.ClusterGpusObservation(
        reached=True, gpus_by_node=(("head n0 10.0.0.0 (00000000)", 8.0), ("worker n1 10.0.0.1 (00000000)", 0.5)))
    unreached = FanoutResult(address="ray://h:10001", connected=False, tried="ray.init", error="timed out")
    assert cg.collect_cluster_gpus(unreached) == cg.ClusterGpusObservation(
        reached=False, error="Ray at ray://h:10001 not reached: timed out")


DETAILS_8_8 = "head n0 10.0.0.0 (00000000): 8 GPU(s)\nworker n1 10.0.0.1 (00000000): 8 GPU(s)"


@pytest.mark.parametrize(("gpus", "needed", "status", "summary", "details"), [
    ((8.0, 8.0), 16, Status.PASS, "16 GPU(s) on 2 alive node(s); recipe r asks for 16", DETAILS_8_8),
    ((8.0, 8.0), 17, Status.FAIL,
     "16 GPU(s) on 2 alive node(s); recipe r asks for 17: its placement group would wait forever", DETAILS_8_8),
    # fractional GPUs add up before the whole GPUs are counted; a CPU node counts as a node
    ((0.5, 0.5, 0.0), 1, Status.PASS, "1 GPU(s) on 3 alive node(s); recipe r asks for 1",
     "head n0 10.0.0.0 (00000000): 0.5 GPU(s)\nworker n1 10.0.0.1 (00000000): 0.5 GPU(s)\n"
     "worker n2 10.0.0.2 (00000000): 0 GPU(s)"),
    ((1.5,), 2, Status.FAIL, "1 GPU(s) on 1 alive node(s); recipe r asks for 2: its placement group would wait "
                             "forever", "head n0 10.0.0.0 (00000000): 1.5 GPU(s)"),
    ((), 1, Status.FAIL, "0 GPU(s) on 0 alive node(s); recipe r asks for 1: its placement group would wait forever",
     ""),
])
def test_evaluate(gpus, needed, status, summary, details):
    verdict = cg.evaluate_cluster_gpus(cg.collect_cluster_gpus(_result(*gpus)), needed, "r")
    assert (verdict.status, verdict.summary, verdict.details) == (status, summary, details)
    assert verdict.failure_id == "placement-group-oversubscribed"
    assert verdict.remedy == (REMEDY if status is Status.FAIL else "")


def test_ray_not_reached_is_unknown_with_the_reason():
    obs = cg.ClusterGpusObservation(reached=False, error="Ray at x not reached: refused")
    verdict = cg.evaluate_cluster_gpus(obs, 1, "r")
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (
        Status.UNKNOWN, "Ray at x not reached: refused", "", "")
    # whatever nodes an observation lists are in the details, reached or not
    listed = dataclasses.replace(obs, gpus_by_node=(("head n0", 8.0),))
    assert cg.evaluate_cluster_gpus(listed, 1, "r").details == "head n0: 8 GPU(s)"


@pytest.mark.parametrize("needed", [0, -1])
def test_a_need_of_no_gpu_is_a_programming_error(needed):
    with pytest.raises(ValueError) as exc:
        cg.evaluate_cluster_gpus(cg.ClusterGpusObservation(reached=True), needed, "r")
    assert str(exc.value) == f"gpus_needed={needed}: must be > 0"


# colocated, the rollout runs on the actor's GPUs (a rollout_num_gpus is not added); disaggregated, beside them
@pytest.mark.parametrize(("colocate", "rollout", "needed"), [(True, None, 16), (True, 24, 16), (False, 4, 20)])
def test_gpus_needed_is_the_placement_groups(colocate, rollout, needed):
    recipe = recipes.get("qwen3-4b-colocated", "h100")  # 2 nodes x 8 actor GPUs
    recipe = recipe.replace(placement=dataclasses.replace(recipe.placement, colocate=colocate,
                                                          rollout_num_gpus=rollout))
    assert cg.gpus_needed(recipe) == needed
