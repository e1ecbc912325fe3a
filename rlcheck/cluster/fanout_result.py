"""What a per-node fan-out brings back (rlcheck.cluster.fanout): which nodes Ray lists, and how each one answered."""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path
from typing import Any

RESULT = "RLCHECK_FANOUT "
"""The driver's last line starts with this: the result, each node's answer without its observation."""
NODE = "RLCHECK_FANOUT_NODE "
"""One line per node as its answer arrives: {"index": i in Ray's order, **NodeAnswer.to_dict()}."""
PLAN = "RLCHECK_FANOUT_PLAN "
"""Printed once the driver has listed the nodes: {"nodes": N}; the caller's deadline grows with N."""
JOB_SLACK_S = 60.0
"""A Ray job's own start-up (supervisor actor, runtime env, Python and Ray import) on top of its deadlines."""
PER_NODE_S = 0.1
"""Deadline per node on top of the fixed ones: the driver submits one pinned task per node and fetches one answer
per node. benchmarks/results/fanout_scale.json measures about 25 ms per node for that work on a 2-core machine
shared with a load of 20 to 30 (every node's raylet on the same two cores: an upper bound); this allows four times
that, so 1,000 nodes add 100 s to the node wait (docs/scale.md)."""
PLAN_NODES_UNKNOWN = 0
"""Before the driver's PLAN line the caller's deadline counts no node: connect, node timeout and margin alone."""


def node_deadline_s(node_timeout_s: float, nodes: int) -> float:
    """How long the driver waits on the nodes' answers: the node timeout, plus PER_NODE_S for each node."""
    if nodes < 0:
        raise ValueError(f"nodes={nodes}: a node count is 0 or more")
    return node_timeout_s + PER_NODE_S * nodes


def plan_deadline_s(connect_timeout_s: float, node_timeout_s: float, nodes: int | None, *, margin_s: float) -> float:
    """The caller's hard deadline on the driver: connect, then the node deadline for nodes (None: not known yet),
    then margin_s for the driver's start, its result lines and its exit, plus PER_NODE_S per node for those lines."""
    count = PLAN_NODES_UNKNOWN if nodes is None else nodes
    return connect_timeout_s + node_deadline_s(node_timeout_s, count) + margin_s + PER_NODE_S * count


def parse_output(text: str) -> FanoutResult | None:
    """The driver's result from its output: the RESULT line, with each node's observation from its NODE line;
    None without a RESULT line. A RESULT line that still carries the observations (an older driver) is taken as
    it is."""
    line = next((x for x in reversed(text.splitlines()) if x.startswith(RESULT)), None)
    if line is None:
        return None
    result = FanoutResult.from_dict(json.loads(line.removeprefix(RESULT)))
    seen: dict[int, dict[str, Any]] = {}
    for x in text.splitlines():
        if x.startswith(NODE):
            data = json.loads(x.removeprefix(NODE))
            seen[int(data["index"])] = data.get("observation")
    nodes = tuple(dataclasses.replace(a, observation=seen[i]) if a.observation is None and seen.get(i) is not None
                  else a for i, a in enumerate(result.nodes))
    return dataclasses.replace(result, nodes=nodes)


def package_runtime_env() -> dict[str, Any]:
    """runtime_env that ships this rlcheck package to every worker of the cluster."""
    return {"py_modules": [str(Path(__file__).parents[1])], "excludes": ["__pycache__"]}


class Outcome(enum.StrEnum):
    ANSWERED = "answered"
    TIMEOUT = "timeout"  # no answer by the node deadline: a stopped, wedged or overloaded node
    DIED = "died"  # the node's raylet or the task's worker died, or Ray could no longer place the task there
    ERROR = "error"  # the collector raised, or the task ran somewhere it was not pinned to


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeFacts:
    """What Ray's GCS says about a node (read by the driver, not on the node)."""

    node_id: str
    """Ray node id, hex."""
    address: str
    hostname: str
    is_head: bool
    """The node carries Ray's head resource (node:__internal_head__)."""
    ray_gpus: float
    """GPUs the node advertises to Ray: what placement groups can take."""
    name: str = ""
    """How reports name the node: its host name, with the start of its node id where two nodes share a host name
    (set by the fan-out, which sees them all); '' reads as the host name."""

    @property
    def label(self) -> str:
        """Verdict.node: the host name a user knows the node by (the Ray node id goes into the details)."""
        return self.name or self.hostname or self.node_id

    @property
    def where(self) -> str:
        role = "head" if self.is_head else "worker"
        return f"{role} {self.hostname} {self.address} ({self.node_id[:8]})"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeAnswer:
    node: NodeFacts
    outcome: Outcome
    elapsed_s: float
    """From the fan-out's start to the answer (the node deadline for a timeout)."""
    detail: str = ""
    """The error, or how long the collector took."""
    observation: dict[str, Any] | None = None
    """The collector's result as plain data (ANSWERED only)."""

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["outcome"] = self.outcome.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NodeAnswer:
        return cls(**{**data, "node": NodeFacts(**data["node"]), "outcome": Outcome(data["outcome"])})


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class FanoutResult:
    address: str
    connected: bool
    tried: str
    """What was tried to reach Ray, with its deadline: the evidence when it was not reached."""
    error: str = ""
    nodes: tuple[NodeAnswer, ...] = ()
    """One per node Ray listed alive, in Ray's order."""
    dead_nodes: int = 0
    """Nodes Ray lists as dead (left out of the fan-out)."""
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["nodes"] = [n.to_dict() for n in self.nodes]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FanoutResult:
        return cls(**{**data, "nodes": tuple(NodeAnswer.from_dict(n) for n in data.get("nodes", ()))})
