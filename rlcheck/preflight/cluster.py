"""Cluster checks: the Ray under check (--ray-address, or the embedded loopback Ray), one probe pinned to every node.

One fan-out per run feeds every check here; a node that does not answer by the deadline is UNKNOWN for that
node in each per-node check, never a hang.
"""

from __future__ import annotations

from collections.abc import Callable

from rlcheck.cluster.fanout_result import FanoutResult, NodeFacts, Outcome
from rlcheck.preflight.registry import Check, Inputs, Need
from rlcheck.probes.cluster import node_evaluate as judge
from rlcheck.probes.cluster import node_health as health
from rlcheck.probes.cluster import node_health_links as links
from rlcheck.probes.cluster.cluster_gpus import collect_cluster_gpus, evaluate_cluster_gpus, gpus_needed
from rlcheck.probes.cluster.cluster_reach import NodeEvaluate, evaluate_node_answer, evaluate_reachable, judge_nodes
from rlcheck.probes.cluster.nccl_pairs import PairsObservation, evaluate_nccl_pairs, pair_floor
from rlcheck.probes.cluster.node_addresses import evaluate_node_addresses
from rlcheck.probes.cluster.node_versions import evaluate_versions_uniform
from rlcheck.probes.cluster.pairs_driver import run_pairs
from rlcheck.verdict import Status, Verdict

ONLY_HEAD = "the cluster has no worker node, only its head: no GPU node to judge"
CLUSTER = frozenset({Need.CLUSTER})
CLUSTER_AND_PROFILE = frozenset({Need.CLUSTER, Need.PROFILE})


def fanout_of(inputs: Inputs) -> FanoutResult:
    if inputs.fanout is None:
        raise ValueError("a cluster check ran without the cluster fan-out (Inputs.fanout is None)")
    return inputs.fanout


def _workers(node: NodeFacts) -> bool:
    return not node.is_head


def per_node(evaluate: NodeEvaluate, *, select: Callable[[NodeFacts], bool] = lambda node: True,
             none_selected: str = "", none_status: Status = Status.SKIP) -> Callable[[FanoutResult, Inputs],
                                                                                      list[Verdict]]:
    """A judge that runs evaluate on every selected node of the fan-out (UNKNOWN for nodes that did not answer)."""
    return lambda result, i: judge_nodes(result, evaluate, i.profile, select=select, none_selected=none_selected,
                                         none_status=none_status)


def _nodes_answer(result: FanoutResult, inputs: Inputs) -> list[Verdict]:
    return [evaluate_node_answer(a) for a in result.nodes] or [evaluate_reachable(result)]


def _cluster_gpus(result: FanoutResult, inputs: Inputs) -> Verdict:
    return evaluate_cluster_gpus(collect_cluster_gpus(result), gpus_needed(inputs.recipe), inputs.recipe.id)


def _pairs(inputs: Inputs) -> PairsObservation:
    """The pairwise all-reduce on the fan-out's Ray; not run when Ray was not reached or fewer than two nodes
    answered."""
    result = fanout_of(inputs)
    answered = tuple(a.node for a in result.nodes if a.outcome is Outcome.ANSWERED)
    if not result.connected or len(answered) < 2:
        return PairsObservation(address=result.address, connected=result.connected, tried=result.tried,
                                error=result.error, nodes=answered)
    return run_pairs(result.address, nodes=len(result.nodes), floor_gbps=pair_floor(inputs.profile))


CHECKS = (
    Check(id="cluster_reachable", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="Ray answers within the connect timeout (an unreachable address is UNKNOWN, naming what was tried)",
          judge=lambda result, i: evaluate_reachable(result), advisory=True,
          advisory_reason="an unreached cluster says nothing about the cluster: UNKNOWN, which already blocks GO"),
    Check(id="cluster_nodes_answer", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="every alive node runs its pinned task in time (a silent node is UNKNOWN for that node, never a hang)",
          judge=_nodes_answer, advisory=True,
          advisory_reason="a silent node is not known to be bad: UNKNOWN for that node, which already blocks GO"),
    Check(id="cluster_node_addresses", guards=("rollout-engines-unreachable",), needs=CLUSTER, collect=fanout_of,
          judges="the address Ray reports for each node (what SLIME hands the router and the update group): no "
                 "loopback or 0.0.0.0 beside other hosts, none claimed twice, one IP family; link-local or Docker "
                 "bridge WARN",
          judge=lambda result, i: evaluate_node_addresses(result)),
    Check(id="cluster_gpus", guards=("placement-group-oversubscribed",), needs=CLUSTER | {Need.RECIPE},
          collect=fanout_of, judges="GPUs Ray advertises against the recipe's placement group", judge=_cluster_gpus),
    Check(id="cluster_head_gpuless", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="the head (where SLIME's driver runs) advertises no GPU",
          judge=per_node(judge.evaluate_head_gpuless, select=lambda node: node.is_head,
                         none_selected="no alive node carries Ray's head resource (node:__internal_head__)",
                         none_status=Status.UNKNOWN)),
    Check(id="cluster_node_gpus", guards=(), needs=CLUSTER_AND_PROFILE, collect=fanout_of,
          judges="per node: GPU count, model and compute capability against the profile",
          judge=per_node(judge.evaluate_node_gpus, select=_workers, none_selected=ONLY_HEAD)),
    Check(id="cluster_node_driver", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: the driver runs torch's CUDA major", judge=per_node(judge.evaluate_node_driver)),
    Check(id="cluster_node_tms", guards=("tms-cu12-preload", "tms-loader-unresolved"), needs=CLUSTER,
          collect=fanout_of,
          judges="per node: the preload library SLIME would pick needs the runtime's libcudart, and the loader "
                 "finds it",
          judge=per_node(judge.evaluate_node_tms)),
    Check(id="cluster_node_shm", guards=(), needs=CLUSTER_AND_PROFILE, collect=fanout_of,
          judges="per node: `/dev/shm` size against the profile's floor", judge=per_node(judge.evaluate_node_shm)),
    Check(id="cluster_node_efa", guards=(), needs=CLUSTER_AND_PROFILE, collect=fanout_of,
          judges="per node: EFA devices against the profile",
          judge=per_node(judge.evaluate_node_efa, select=_workers, none_selected=ONLY_HEAD)),
    Check(id="cluster_node_xid", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: Xid errors in the kernel log, with NVIDIA's action for each code (an unreadable kernel "
                 "log is UNKNOWN)",
          judge=per_node(health.evaluate_node_xid)),
    Check(id="cluster_node_ecc", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: uncorrectable ECC errors, pending or failed row remapping, pending page retirement",
          judge=per_node(health.evaluate_node_ecc)),
    Check(id="cluster_node_throttle", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: HW thermal / power-brake slowdown (FAIL), SW thermal slowdown and persistence mode off "
                 "(WARN)",
          judge=per_node(health.evaluate_node_throttle)),
    Check(id="cluster_node_clocks", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: memory clock below its maximum, or SM clock held low while not idle (FAIL); clocks held "
                 "by an application-clocks setting (WARN)",
          judge=per_node(links.evaluate_node_clocks)),
    Check(id="cluster_node_pcie", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: PCIe link width below its maximum, or generation below it while not idle (FAIL); a slot "
                 "slower than the GPU (WARN)",
          judge=per_node(links.evaluate_node_pcie)),
    Check(id="cluster_node_nvlink", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: NVLink error counters (link recovery FAIL, CRC / replay WARN)",
          judge=per_node(health.evaluate_node_nvlink)),
    Check(id="cluster_node_bus", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="per node: every NVIDIA GPU on the PCI bus answers the driver; no GPU fell off the bus",
          judge=per_node(health.evaluate_node_bus)),
    Check(id="cluster_versions_uniform", guards=(), needs=CLUSTER, collect=fanout_of,
          judges="every node runs the cluster's driver, CUDA runtime, torch, NCCL, SGLang, megatron-core and SLIME / "
                 "Miles (FAIL names the odd node and both values)",
          judge=lambda result, i: evaluate_versions_uniform(result)),
    Check(id="cluster_pairs_allreduce", guards=(), needs=CLUSTER, collect=_pairs,
          judges="all-reduce between pairs of nodes (NCCL on GPU nodes, gloo otherwise), each bounded: a node whose "
                 "every pair is slow is FAIL, one whose pairs hung UNKNOWN; then all nodes together (hung: UNKNOWN, "
                 "slow against the pairs: FAIL)",
          judge=lambda obs, i: evaluate_nccl_pairs(obs, i.profile)),
)
