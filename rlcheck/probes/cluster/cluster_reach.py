"""Is the Ray cluster reachable, did every node answer, and the per-node judging loop over a fan-out result."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.node.collect import NodeObservation
from rlcheck.verdict import Status, Verdict

NodeEvaluate = Callable[[NodeFacts, NodeObservation, HardwareProfile | None], Verdict]
REACH_REMEDY = ("Check --ray-address (ray://HEAD:10001 or http://HEAD:8265), that the Ray head is running, and the "
                "port-forward or network path to it")
NODE_REMEDY = ("Look at the node: `ray status`, the raylet log (/tmp/ray/session_latest/logs/raylet.out), load and "
               "memory; a node that cannot run a small task will not run a training actor")


def evaluate_reachable(result: FanoutResult) -> Verdict:
    base = {"details": f"tried: {result.tried}"}
    if not result.connected:
        return Verdict(**base, status=Status.UNKNOWN, remedy=REACH_REMEDY,
                       summary=f"Ray at {result.address} not reached: {result.error}")
    dead = f" ({result.dead_nodes} dead node(s) listed)" if result.dead_nodes else ""
    return Verdict(**base, status=Status.PASS,
                   summary=f"Ray at {result.address} reached; {len(result.nodes)} alive node(s){dead}; fan-out done "
                           f"in {result.elapsed_s:.1f} s")


def unanswered(answer: NodeAnswer) -> Verdict:
    """UNKNOWN for a node whose probe did not come back: timed out, died, or failed."""
    what = {Outcome.TIMEOUT: "did not answer", Outcome.DIED: "died during the check",
            Outcome.ERROR: "probe failed"}.get(answer.outcome, answer.outcome.value)
    return Verdict(status=Status.UNKNOWN, node=answer.node.label, remedy=NODE_REMEDY,
                   summary=f"{answer.node.where}: {what} ({answer.detail})")


def evaluate_node_answer(answer: NodeAnswer) -> Verdict:
    if answer.outcome is not Outcome.ANSWERED:
        return with_node_id(unanswered(answer), answer.node)
    said = f"{answer.node.where}: answered in {answer.elapsed_s:.1f} s ({answer.detail})"
    return with_node_id(Verdict(status=Status.PASS, summary=said), answer.node)  # with_node_id names the node


def _judge(answer: NodeAnswer, evaluate: NodeEvaluate, profile: HardwareProfile | None) -> Verdict:
    """The node's verdict; judge_nodes names it (with_node_id), so one made here carries no node."""
    if answer.outcome is not Outcome.ANSWERED or answer.observation is None:
        return unanswered(answer)
    try:
        obs = NodeObservation.from_dict(answer.observation)
    except (KeyError, TypeError, ValueError) as exc:  # another rlcheck version on the node
        return Verdict(status=Status.UNKNOWN, summary=f"{answer.node.where}: observation not understood: {exc}")
    return evaluate(answer.node, obs, profile)


def judge_nodes(result: FanoutResult, evaluate: NodeEvaluate, profile: HardwareProfile | None, *,
                select: Callable[[NodeFacts], bool] = lambda node: True, none_selected: str = "",
                none_status: Status = Status.SKIP) -> list[Verdict]:
    """One verdict per selected node: evaluate() for those that answered, UNKNOWN for the others.

    When no node is selected: one verdict of none_status saying none_selected.
    """
    if not result.connected:
        return [Verdict(status=Status.UNKNOWN, remedy=REACH_REMEDY, details=f"tried: {result.tried}",
                        summary=f"Ray at {result.address} not reached: {result.error}")]
    chosen = [a for a in result.nodes if select(a.node)]
    if not chosen:
        return [Verdict(status=none_status, summary=none_selected or "no node to judge")]
    return [with_node_id(_judge(a, evaluate, profile), a.node) for a in chosen]


def with_node_id(verdict: Verdict, node: NodeFacts) -> Verdict:
    """The verdict named by the node's host name, its Ray node id in the details (where `ray` commands need it)."""
    line = f"ray node id: {node.node_id}"
    details = f"{verdict.details}\n{line}" if verdict.details else line
    return dataclasses.replace(verdict, node=node.label, details=details)
