"""Cluster checks: the Ray under check (--ray-address, or the embedded loopback Ray), one probe pinned to every node.

One fan-out per run feeds every check here; a node that does not answer by the deadline is UNKNOWN for that
node in each per-node check, never a hang.
"""

from __future__ import annotations

import pytest

from rlcheck.fanout import fan_out
from rlcheck.fanout_result import FanoutResult
from rlcheck.probes import node_evaluate as judge
from rlcheck.probes.cluster_gpus import collect_cluster_gpus, evaluate_cluster_gpus, gpus_needed
from rlcheck.probes.cluster_reach import evaluate_node_answer, evaluate_reachable, judge_nodes
from rlcheck.verdict import Status

CONNECT_TIMEOUT_S = 30.0
NODE_TIMEOUT_S = 60.0
ONLY_HEAD = "the cluster has no worker node, only its head: no GPU node to judge"


@pytest.fixture(scope="module")
def fanout(ray_cluster) -> FanoutResult:
    return fan_out(ray_cluster.gcs_address, connect_timeout_s=CONNECT_TIMEOUT_S, node_timeout_s=NODE_TIMEOUT_S)


def _workers(node) -> bool:
    return not node.is_head


def test_cluster_reachable(record_verdict, fanout):
    """Ray answers within the connect timeout and lists its alive nodes."""
    record_verdict(evaluate_reachable(fanout))


def test_cluster_nodes_answer(record_verdict, fanout):
    """Every alive node runs a pinned task within the node timeout."""
    record_verdict(*([evaluate_node_answer(a) for a in fanout.nodes] or [evaluate_reachable(fanout)]))


def test_cluster_gpus(record_verdict, fanout, recipe_under_check):
    """GPUs Ray advertises against what the recipe's placement group asks for (placement-group-oversubscribed)."""
    recipe = recipe_under_check.recipe
    record_verdict(evaluate_cluster_gpus(collect_cluster_gpus(fanout), gpus_needed(recipe), recipe.id))


def test_cluster_head_gpuless(record_verdict, fanout, rlcheck_context):
    """The head advertises no GPU: SLIME's job driver runs there, the placement group on the workers."""
    record_verdict(*judge_nodes(fanout, judge.evaluate_head_gpuless, rlcheck_context.profile,
                                check_id="cluster_head_gpuless", select=lambda node: node.is_head,
                                none_selected="no alive node carries Ray's head resource (node:__internal_head__)",
                                none_status=Status.UNKNOWN))


def test_cluster_node_gpus(record_verdict, fanout, rlcheck_context):
    """GPU count, model and compute capability of every worker against the hardware profile."""
    record_verdict(*judge_nodes(fanout, judge.evaluate_node_gpus, rlcheck_context.profile,
                                check_id="cluster_node_gpus", select=_workers, none_selected=ONLY_HEAD))


def test_cluster_node_driver(record_verdict, fanout, rlcheck_context):
    """The NVIDIA driver of every GPU node runs the CUDA major torch was built for."""
    record_verdict(*judge_nodes(fanout, judge.evaluate_node_driver, rlcheck_context.profile,
                                check_id="cluster_node_driver"))


def test_cluster_node_tms(record_verdict, fanout, rlcheck_context):
    """torch_memory_saver's preload library, as SLIME picks it, loads on every GPU node (tms-*)."""
    record_verdict(*judge_nodes(fanout, judge.evaluate_node_tms, rlcheck_context.profile,
                                check_id="cluster_node_tms"))


def test_cluster_node_shm(record_verdict, fanout, rlcheck_context):
    """/dev/shm of every node against the profile's floor."""
    record_verdict(*judge_nodes(fanout, judge.evaluate_node_shm, rlcheck_context.profile,
                                check_id="cluster_node_shm"))


def test_cluster_node_efa(record_verdict, fanout, rlcheck_context):
    """EFA devices of every GPU worker against the profile."""
    record_verdict(*judge_nodes(fanout, judge.evaluate_node_efa, rlcheck_context.profile,
                                check_id="cluster_node_efa", select=_workers, none_selected=ONLY_HEAD))
