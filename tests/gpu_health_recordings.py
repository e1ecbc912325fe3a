"""Recorded GPU health (tests/data/gpu_health, see SOURCES.md there) attached to recorded node observations."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.probes.node import gpu_nvml
from rlcheck.probes.node.collect import NodeObservation
from rlcheck.probes.node.gpu_health import HealthReading, health_from_nvml, health_from_texts
from tests.nvml_replay import ReplayNvml, dump

DATA = Path(__file__).parent / "data" / "gpu_health"
NODES = Path(__file__).parent / "data" / "observations" / "node"


def text(name: str) -> str:
    return (DATA / name).read_text() if name else ""


def reading(smi: str = "h200_nvidia_smi_q.txt", *, nvlink: str = "", log: str = "h200_dmesg_tail_clean.txt",
            pci: int | None = 1, log_error: str = "") -> HealthReading:
    """A health reading parsed from recorded tool output (the captured H200 by default)."""
    return health_from_texts(source="nvidia-smi -q (recorded)", smi_q=text(smi), nvlink_e=text(nvlink),
                             kernel_log=text(log), kernel_tool="dmesg" if log else "", kernel_log_error=log_error,
                             pci_gpus=pci)


def nvml_reading(recording: str = "nvml_h200_idle.json", *, log: str = "h200_dmesg_tail_clean.txt",
                 pci: int | None = 1) -> HealthReading:
    """A health reading from a recorded NVML dump, replayed through the reader's own calls (gpu_nvml.record)."""
    return health_from_nvml(gpu_nvml.record(ReplayNvml(dump(recording))), kernel_log=text(log),
                            kernel_tool="dmesg" if log else "", pci_gpus=pci)


def node(health: HealthReading | None, recording: str = "h200_node_healthy.json",
         **changes: object) -> tuple[NodeFacts, NodeObservation]:
    data = json.loads((NODES / recording).read_text())
    obs = NodeObservation.from_dict(data["observation"])
    return NodeFacts(**data["node"]), dataclasses.replace(obs, health=health, **changes)  # type: ignore[arg-type]


def answer(facts: NodeFacts, obs: NodeObservation, outcome: Outcome = Outcome.ANSWERED) -> NodeAnswer:
    return NodeAnswer(node=facts, outcome=outcome, elapsed_s=1.0, detail="recorded",
                      observation=obs.to_dict() if outcome is Outcome.ANSWERED else None)


def fanout(*nodes: tuple[NodeFacts, NodeObservation]) -> FanoutResult:
    return FanoutResult(address="127.0.0.1:6379", connected=True, tried="ray.init",
                        nodes=tuple(answer(f, o) for f, o in nodes))


def renamed(pair: tuple[NodeFacts, NodeObservation], hostname: str, *,
            is_head: bool = False) -> tuple[NodeFacts, NodeObservation]:
    facts, obs = pair
    return dataclasses.replace(facts, hostname=hostname, node_id=hostname, is_head=is_head), obs
