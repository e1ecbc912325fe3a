"""What a per-node fan-out brings back (rlcheck.cluster.fanout): which nodes Ray lists, and how each one answered."""

from __future__ import annotations

import dataclasses
import enum
from pathlib import Path
from typing import Any

RESULT = "RLCHECK_FANOUT "
"""The driver's one result line starts with this."""
JOB_SLACK_S = 60.0
"""A Ray job's own start-up (supervisor actor, runtime env, Python and Ray import) on top of its deadlines."""


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
