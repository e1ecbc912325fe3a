"""GPUs in the cluster against what the recipe's placement group asks for (placement-group-oversubscribed).

SLIME creates one placement group of {"GPU": 1, "CPU": 1} bundles and waits on it with no deadline: a recipe
that asks for more GPUs than the cluster advertises hangs forever instead of failing.
"""

from __future__ import annotations

import dataclasses

from rlcheck import catalog
from rlcheck.cluster.fanout_result import FanoutResult
from rlcheck.recipes.recipe import Recipe
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "placement-group-oversubscribed"
def gpus_needed(recipe: Recipe) -> int:
    """GPUs the recipe's placement group asks for (colocated: the larger of actor and rollout; else the sum)."""
    return recipe.placement.placement_group_gpus


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ClusterGpusObservation:
    reached: bool
    """Ray answered; when False, error says why and nothing else is known."""
    error: str = ""
    gpus_by_node: tuple[tuple[str, float], ...] = ()
    """(node, GPUs advertised to Ray) for every alive node, as Ray's GCS lists them."""

    @property
    def total_gpus(self) -> int:
        return int(sum(gpus for _, gpus in self.gpus_by_node))


def collect_cluster_gpus(result: FanoutResult) -> ClusterGpusObservation:
    """From the node list the fan-out driver read from Ray (no node needs to answer for this)."""
    if not result.connected:
        return ClusterGpusObservation(reached=False, error=f"Ray at {result.address} not reached: {result.error}")
    return ClusterGpusObservation(reached=True, gpus_by_node=tuple((a.node.where, a.node.ray_gpus)
                                                                   for a in result.nodes))


def evaluate_cluster_gpus(obs: ClusterGpusObservation, gpus_needed: int, recipe_id: str) -> Verdict:
    if gpus_needed <= 0:
        raise ValueError(f"gpus_needed={gpus_needed}: must be > 0")
    base = {"failure_id": FAILURE_ID,
            "details": "\n".join(f"{where}: {gpus:g} GPU(s)" for where, gpus in obs.gpus_by_node)}
    if not obs.reached:
        return Verdict(**base, status=Status.UNKNOWN, summary=obs.error)
    have = f"{obs.total_gpus} GPU(s) on {len(obs.gpus_by_node)} alive node(s)"
    if obs.total_gpus < gpus_needed:
        return Verdict(**base, status=Status.FAIL, remedy=catalog.get(FAILURE_ID).remedy,
                       summary=f"{have}; recipe {recipe_id} asks for {gpus_needed}: its placement group would wait "
                               "forever")
    return Verdict(**base, status=Status.PASS, summary=f"{have}; recipe {recipe_id} asks for {gpus_needed}")
