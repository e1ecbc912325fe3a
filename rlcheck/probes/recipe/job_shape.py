"""The cluster shape a launch states (nodes x GPUs per node) against the hardware profile's nodes.

A launch states its GPUs per node in `ray start --head --num-gpus N` (a bash script or Miles launcher), in the
`nvidia.com/gpu` limit of a RayJob's worker groups, or in `rlcheck render`'s resources. More GPUs per node than the
profile's nodes have is a placement that cannot be satisfied (Ray is told of GPUs that are not there, or a worker
pod never schedules); fewer leaves GPUs of every node idle.
"""

from __future__ import annotations

from rlcheck import catalog
from rlcheck.hardware import HardwareProfile
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "placement-group-oversubscribed"


def evaluate_job_shape(nodes: int | None, gpus_per_node: int | None, profile: HardwareProfile | None,
                       source: str) -> Verdict:
    """source names where the shape was read (e.g. 'job launch.sh', 'recipe qwen3-4b')."""
    if profile is None:
        return Verdict(status=Status.SKIP, summary="needs a hardware profile (--hardware) to compare the shape with")
    if gpus_per_node is None:
        return Verdict(status=Status.SKIP,
                       summary=f"{source} states no GPUs per node (no `ray start --num-gpus`, RayJob worker GPU "
                               f"limit or rendered resources): the shape is judged on the cluster only")
    shape = f"{nodes if nodes is not None else '?'} node(s) x {gpus_per_node} GPU(s)"
    have = f"{profile.name} nodes have {profile.gpus_per_node}"
    if gpus_per_node > profile.gpus_per_node:
        return Verdict(status=Status.FAIL, failure_id=FAILURE_ID, remedy=catalog.get(FAILURE_ID).remedy,
                       summary=f"{source} expects {shape} per node; {have}: "
                               f"{gpus_per_node - profile.gpus_per_node} GPU(s) per node that are not there")
    if gpus_per_node < profile.gpus_per_node:
        return Verdict(status=Status.WARN,
                       summary=f"{source} expects {shape} per node; {have}: "
                               f"{profile.gpus_per_node - gpus_per_node} GPU(s) per node left idle")
    return Verdict(status=Status.PASS, summary=f"{source} expects {shape} per node; {have}")
