"""All-reduce between pairs of nodes: which pairs to run, which are slow, and which node to blame (pure).

The nodes are paired in a ring (every node with its two neighbours), so a slow node makes both its pairs slow
while each neighbour keeps one healthy pair. A node whose every pair is slow is a suspect; each suspect is then
re-paired with a node that has a healthy pair, and a suspect whose re-pair is slow too is named. A pair is slow
below the profile's inter-node floor (NCCL pairs only, where the profile gives one) or below SLOW_FRACTION of
the reference: the median of the faster half of the pairs (a slow node taints two pairs of a ring, half of a
ring of four, so the plain median would follow it; the reference holds while more than a quarter of the pairs
are healthy). A pair that hung or failed is UNKNOWN, never slow.

Then every node that finished a pair all-reduces together, once (the job's own first collective spans all its
nodes: a fabric that carries every pair can still fail the whole set, a switch uplink or a NCCL ring over all of
them). It is bounded like a pair; it hanging is UNKNOWN for the cluster, it being slow against the pairs FAIL.
"""

from __future__ import annotations

import dataclasses
import enum
import statistics
from typing import Any

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import HardwareProfile
from rlcheck.verdict import Status, Verdict

SLOW_FRACTION = 0.25
"""Healthy pairs differ by up to 2x on a shared fabric (and on loopback); a node that lost its RDMA path (NCCL falling
back to TCP sockets) is 10x or more below them. Smaller losses are the profile floor's to catch."""
FLOOR_KEY = "nccl_pair_min_busbw_gbps"
"""Profile threshold: bus bandwidth of a one-GPU-per-node all-reduce across two nodes (none is sourced yet)."""
REMEDY = ("Take the named node out of the job and look at its fabric: NCCL_DEBUG=INFO shows the transport each pair "
          "used (EFA: `fi_info -p efa`; InfiniBand: `ibstat`), then run nccl-tests' all_reduce_perf between it and a "
          "node with healthy pairs")


class PairOutcome(enum.StrEnum):
    MEASURED = "measured"
    TIMEOUT = "timeout"  # the collective (or its rendezvous) did not finish by the pair deadline
    ERROR = "error"  # a rank raised, or Ray could not run it


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PairResult:
    first: str
    """Node id of rank 0 (the rendezvous)."""
    second: str
    backend: str
    """'nccl' (both nodes advertise GPUs) or 'gloo'."""
    outcome: PairOutcome
    busbw_gbps: float | None = None
    """Bus bandwidth (nccl-tests' definition), GB/s; None unless measured."""
    detail: str = ""
    repair: bool = False
    """Run to re-pair a suspect with a node that had a healthy pair."""

    @property
    def nodes(self) -> tuple[str, str]:
        return self.first, self.second


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GroupResult:
    """The all-reduce of every node that finished a pair, together (one rank per node)."""

    nodes: tuple[str, ...]
    """Node ids; the first holds the rendezvous."""
    backend: str
    outcome: PairOutcome
    busbw_gbps: float | None = None
    detail: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PairsObservation:
    address: str
    connected: bool
    tried: str
    error: str = ""
    nodes: tuple[NodeFacts, ...] = ()
    """The nodes that were paired (GPU nodes when two or more advertise GPUs, else every alive node)."""
    pairs: tuple[PairResult, ...] = ()
    size_bytes: int = 0
    iterations: int = 0
    all_nodes: GroupResult | None = None
    """The all-nodes round; None when fewer than MIN_GROUP nodes finished a pair (or an older observation)."""
    all_nodes_skipped: str = ""
    """Why the all-nodes round did not run ('' when it ran)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PairsObservation:
        pairs = tuple(PairResult(**{**p, "outcome": PairOutcome(p["outcome"])}) for p in data.get("pairs", ()))
        group = data.get("all_nodes")
        all_nodes = GroupResult(**{**group, "nodes": tuple(group["nodes"]), "outcome": PairOutcome(group["outcome"])}) \
            if group else None
        return cls(**{**data, "nodes": tuple(NodeFacts(**n) for n in data.get("nodes", ())), "pairs": pairs,
                      "all_nodes": all_nodes})


MIN_GROUP = 3
"""Two nodes together are their pair: the all-nodes round needs three or more."""


def group_nodes(pairs: list[PairResult], order: list[str]) -> list[str]:
    """The nodes for the all-nodes round: those that finished at least one pair, in the pairing's order."""
    finished = {n for p in pairs if p.outcome is PairOutcome.MEASURED for n in p.nodes}
    return [n for n in order if n in finished]


def paired_nodes(nodes: list[NodeFacts]) -> list[NodeFacts]:
    """GPU nodes when at least two advertise a GPU (NCCL's traffic is among them), else every node (gloo)."""
    gpu = [n for n in nodes if n.ray_gpus >= 1]
    return gpu if len(gpu) >= 2 else list(nodes)


def backend_for(a: NodeFacts, b: NodeFacts) -> str:
    return "nccl" if a.ray_gpus >= 1 and b.ray_gpus >= 1 else "gloo"


def ring_rounds(ids: list[str]) -> list[list[tuple[str, str]]]:
    """Every node with its ring neighbours, as rounds of pairs that share no node (each round runs at once)."""
    if len(ids) < 2:
        return []
    edges = [(ids[0], ids[1])] if len(ids) == 2 else [(ids[i], ids[(i + 1) % len(ids)]) for i in range(len(ids))]
    rounds: list[list[tuple[str, str]]] = []
    busy: list[set[str]] = []  # the nodes of each round, kept as it grows: linear in the node count
    for edge in edges:
        i = next((i for i, nodes in enumerate(busy) if not nodes & set(edge)), len(rounds))
        if i == len(rounds):
            rounds.append([])
            busy.append(set())
        rounds[i].append(edge)
        busy[i] |= set(edge)
    return rounds


def reference_gbps(pairs: list[PairResult]) -> float | None:
    measured = sorted(p.busbw_gbps for p in pairs if p.busbw_gbps is not None)
    return statistics.median(measured[len(measured) // 2:]) if measured else None


def is_slow(pair: PairResult, reference: float | None, floor: float | None) -> bool:
    return pair.busbw_gbps is not None and _slow(pair.busbw_gbps, pair.backend, reference, floor)


def _slow(gbps: float, backend: str, reference: float | None, floor: float | None) -> bool:
    """Below the floor (an NCCL figure only), or below SLOW_FRACTION of the reference."""
    below_floor = floor is not None and backend == "nccl" and gbps < floor
    return below_floor or (reference is not None and gbps < SLOW_FRACTION * reference)


def suspects(pairs: list[PairResult], floor: float | None) -> tuple[list[str], list[str]]:
    """(nodes whose every measured pair is slow, nodes with at least one healthy pair)."""
    reference = reference_gbps(pairs)
    slow: dict[str, list[bool]] = {}
    for pair in pairs:
        if pair.outcome is PairOutcome.MEASURED:
            for node in pair.nodes:
                slow.setdefault(node, []).append(is_slow(pair, reference, floor))
    return ([n for n, s in slow.items() if all(s)], [n for n, s in slow.items() if not any(s)])


def repair_rounds(pairs: list[PairResult], floor: float | None) -> list[list[tuple[str, str]]]:
    """Each suspect with a partner it has not met yet: a node whose every pair is healthy first, else one with at
    least one healthy pair; [] when there is no suspect or no such partner. A partner takes one suspect per round,
    so the re-pairing is one round while there are as many healthy nodes as suspects (not one round per suspect)."""
    suspect, cleared = suspects(pairs, floor)
    measured = [n for p in pairs if p.outcome is PairOutcome.MEASURED for n in p.nodes]
    healthy = cleared + [n for n in dict.fromkeys(measured) if n not in suspect and n not in cleared]
    met = {frozenset(p.nodes) for p in pairs}
    rounds: list[list[tuple[str, str]]] = []
    busy: list[set[str]] = []
    for node in suspect:
        choice = next(((i, h) for i in range(len(rounds) + 1) for h in healthy
                       if frozenset((h, node)) not in met and (i == len(rounds) or not {h, node} & busy[i])), None)
        if choice is None:
            continue
        # met needs no update: a later suspect's pair (a healthy node, that suspect) is never this one
        i, partner = choice
        if i == len(rounds):
            rounds.append([])
            busy.append(set())
        rounds[i].append((partner, node))
        busy[i] |= {partner, node}
    return rounds


def _pair_text(pair: PairResult, node: str, where: dict[str, str]) -> str:
    other = where.get(pair.second if pair.first == node else pair.first, "?")
    if pair.busbw_gbps is None:
        return f"with {other}: {pair.outcome.value} ({pair.detail})"
    return f"with {other}: {pair.busbw_gbps:.3g} GB/s ({pair.backend})"


def _node_verdict(node: NodeFacts, obs: PairsObservation, named: list[str], basis: str) -> Verdict:
    where = {n.node_id: n.where for n in obs.nodes}
    mine = [p for p in obs.pairs if node.node_id in p.nodes]
    said = "; ".join(_pair_text(p, node.node_id, where) for p in mine)
    base = {"node": node.label, "details": f"{basis}\nray node id: {node.node_id}"}
    if not any(p.outcome is PairOutcome.MEASURED for p in mine):
        return Verdict(**base, status=Status.UNKNOWN, remedy=REMEDY,
                       summary=f"{node.where}: no all-reduce with this node finished: {said or 'none ran'}")
    if node.node_id in named:
        which = " (two nodes: either one)" if len(obs.nodes) == 2 else ""
        return Verdict(**base, status=Status.FAIL, remedy=REMEDY,
                       summary=f"{node.where}: every all-reduce with this node is slow{which}: {said}")
    if any(p.outcome is not PairOutcome.MEASURED for p in mine):
        return Verdict(**base, status=Status.WARN, remedy=REMEDY,
                       summary=f"{node.where}: an all-reduce with this node did not finish: {said}")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: all-reduce {said}")


def pair_floor(profile: HardwareProfile | None) -> float | None:
    """The profile's inter-node floor where it was measured (or is this cluster's baseline); a public figure is not
    one two nodes of a given fabric can be held to, so it names no node."""
    if profile is None or not profile.floor_measured(FLOOR_KEY):
        return None
    return profile.thresholds.get(FLOOR_KEY)


def evaluate_nccl_pairs(obs: PairsObservation, profile: HardwareProfile | None) -> list[Verdict]:
    """One verdict per paired node: FAIL for a node whose every pair is slow, UNKNOWN for one whose pairs all hung."""
    if not obs.connected:
        return [Verdict(status=Status.UNKNOWN, details=f"tried: {obs.tried}",
                        summary=f"pairwise all-reduce on Ray at {obs.address} not run: {obs.error}")]
    if len(obs.nodes) < 2:
        return [Verdict(status=Status.SKIP, summary=f"{len(obs.nodes)} node(s): no pair of nodes to all-reduce "
                                                    "between")]
    floor = pair_floor(profile)
    reference = reference_gbps(list(obs.pairs))
    named, _ = suspects(list(obs.pairs), floor)
    ref = f"{reference:.3g} GB/s" if reference is not None else "none (no pair measured)"
    basis = (f"{obs.size_bytes} bytes x {obs.iterations} all-reduces per pair; slow: below {SLOW_FRACTION:g} x the "
             f"median of the faster half of the pairs ({ref})" +
             (f" or below the {profile.name} floor {floor:g} GB/s (NCCL pairs)" if floor and profile else
              f"; no inter-node floor ({FLOOR_KEY}) in the profile"))
    group = _group_verdict(obs, reference, floor, named)
    return [_node_verdict(n, obs, named, basis) for n in obs.nodes] + ([group] if group else [])


def _group_verdict(obs: PairsObservation, reference: float | None, floor: float | None,
                   named: list[str]) -> Verdict | None:
    """The cluster-level verdict of the all-nodes round (node None: it is about all of them); None for two nodes
    (their pair is all of them) and for observations from before the round existed."""
    group = obs.all_nodes
    if group is None:
        if obs.all_nodes_skipped and len(obs.nodes) >= MIN_GROUP:
            return Verdict(status=Status.SKIP, summary=f"all nodes together: not run ({obs.all_nodes_skipped})")
        return None
    said = f"all {len(group.nodes)} nodes together"
    if group.busbw_gbps is None:
        return Verdict(status=Status.UNKNOWN, remedy=REMEDY, details=f"nodes: {', '.join(group.nodes)}",
                       summary=f"{said}: {group.outcome.value} ({group.detail}): the job's first all-reduce would "
                               "hang or fail the same way")
    seen = f"{said}: {group.busbw_gbps:.3g} GB/s ({group.backend}; pairs' reference {reference or 0:.3g} GB/s)"
    if _slow(group.busbw_gbps, group.backend, reference, floor):
        label = {n.node_id: n.label for n in obs.nodes}
        blame = (f"; the pairs name {', '.join(label.get(n, n) for n in named)}" if named
                 else "; every pair is healthy: look at the fabric")
        return Verdict(status=Status.FAIL, remedy=REMEDY, summary=f"{seen}: slow{blame}")
    return Verdict(status=Status.PASS, summary=seen)
