"""GPU smoke on this machine: bf16 GEMM rate of every GPU and NCCL all-reduce bus bandwidth, against the profile.

Floors are profile thresholds (bf16_gemm_min_tflops, nccl_allreduce_min_busbw_gbps). The h200 profile sets them
from measurements on H200s (benchmarks/results/gpu_smoke_h200_1gpu.json, and the hand-assembled 2-GPU figures in
benchmarks/unreproduced/: below them is FAIL); the other profiles from public figures (below them is WARN);
`--baseline` replaces them with a cluster's own (rlcheck.baseline).
"""

from __future__ import annotations

import dataclasses
import socket

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import HardwareProfile
from rlcheck.preflight.registry import Check, Inputs, Need
from rlcheck.probes.cluster import node_health as health
from rlcheck.probes.cluster import node_health_links as links
from rlcheck.probes.gpu import gpu_inventory
from rlcheck.probes.gpu.gpu_smoke import collect_allreduce, collect_bf16_gemm, evaluate_allreduce, evaluate_bf16_gemm
from rlcheck.probes.node import gpus, tms
from rlcheck.probes.node.collect import NodeObservation, collect_node
from rlcheck.verdict import Status, Verdict

GPU = frozenset({Need.GPU, Need.PROFILE})
HEALTH_JUDGES = (health.evaluate_node_xid, health.evaluate_node_ecc, health.evaluate_node_throttle,
                 links.evaluate_node_clocks, links.evaluate_node_pcie, health.evaluate_node_nvlink,
                 health.evaluate_node_bus)


def tms_rule(inputs: Inputs) -> str:
    """The preload rule of the framework judged; none known here: the recipe's framework as the reference image
    ships it (SLIME v0.2.4; Miles asks the package)."""
    judged = inputs.judged_framework()
    if judged.framework is not None:
        return tms.rule_for(judged.framework, judged.version)
    return tms.rule_for("miles", None) if inputs.recipe.framework == "miles" else tms.rule_for(None, None)


def collect_this_node(rule: str) -> tuple[NodeFacts, NodeObservation]:
    """This machine read as the fan-out reads a node (no Ray here: it stands for itself)."""
    obs = collect_node(tms_rule=rule)
    return NodeFacts(node_id="this-machine", address="127.0.0.1", hostname=socket.gethostname(), is_head=False,
                     ray_gpus=float(len(obs.gpus))), obs


def judge_this_node(read: tuple[NodeFacts, NodeObservation], profile: HardwareProfile | None) -> list[Verdict]:
    facts, obs = read
    return [judge(facts, obs, profile) for judge in HEALTH_JUDGES]


def judge_inventory(inv: gpu_inventory.Inventory | None, inputs: Inputs) -> Verdict:
    if inv is None:
        return Verdict(status=Status.SKIP, summary="--no-local-gpus: this machine is a Ray client or login node; "
                                                   "the GPU nodes are judged through the cluster checks")
    # named by this machine's host name, as gpu_node_health names it (reports and --report act on it by that name)
    return dataclasses.replace(gpu_inventory.evaluate_inventory(inv, inputs.profile, declared=inputs.declared),
                               node=socket.gethostname())


CHECKS = (
    Check(id="gpu_node_inventory", guards=(), needs=frozenset({Need.NODE, Need.PROFILE}),
          judges="this machine shows the GPUs it is judged as: a declared --hardware with no GPU, fewer GPUs, another "
                 "model or a driver that does not answer FAILs (auto: UNKNOWN); only a machine with no NVIDIA device "
                 "and no declared profile is SKIP",
          collect=lambda i: gpu_inventory.collect_inventory() if i.local_gpus else None, judge=judge_inventory),
    Check(id="gpu_bf16_gemm", guards=(), needs=GPU, gpu_count=1,
          judges="(GPU machines) bf16 GEMM rate of the slowest GPU against the profile's floor",
          collect=lambda i: collect_bf16_gemm(), judge=lambda obs, i: evaluate_bf16_gemm(obs, i.profile)),
    Check(id="gpu_nccl_allreduce", guards=(), needs=GPU, gpu_count=2,
          judges="(GPU machines) NCCL all-reduce bus bandwidth across this machine's GPUs against the profile's floor",
          collect=lambda i: collect_allreduce(world_size=len(gpus.detect().gpus)),
          judge=lambda obs, i: evaluate_allreduce(obs, i.profile)),
    Check(id="gpu_node_health", guards=(), needs=frozenset({Need.GPU}), gpu_count=1,
          judges="(GPU machines) this machine's Xid errors, ECC / row remapping, throttling, clocks, PCIe links, "
                 "NVLink errors and PCI bus (NVML, else nvidia-smi), judged as `cluster_node_*` judges every node",
          collect=lambda i: collect_this_node(tms_rule(i)),
          judge=lambda obs, i: judge_this_node(obs, i.profile)),
)
