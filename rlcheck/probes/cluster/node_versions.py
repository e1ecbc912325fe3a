"""Do all nodes run the same software? Driver, CUDA runtime, torch, NCCL, SGLang, Megatron and SLIME / Miles per
node against the cluster's majority.

A node pulled from another image tag, or with another driver, is a classic first-day failure: it joins Ray fine and
fails (or silently differs) only inside the job. A value a node could not read ('') is left out of the comparison
and said in the details, never counted as a difference.
"""

from __future__ import annotations

from collections import Counter

from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, Outcome
from rlcheck.probes.cluster.cluster_reach import unanswered
from rlcheck.probes.node.collect import NodeObservation
from rlcheck.verdict import Status, Verdict

FIELDS = (("driver", "driver_version"), ("CUDA runtime", "torch_cuda"), ("torch", "torch_version"),
          ("NCCL", "nccl_version"), ("SGLang", "sglang_version"), ("megatron-core", "megatron_version"),
          ("framework", "framework"))
"""(what the report calls it, NodeObservation field)."""
REMEDY = ("Run every node from the same image tag and driver branch (one node pool / AMI): rebuild or replace the "
          "odd node; a node that differs fails or diverges only inside the job")


def _observation(answer: NodeAnswer) -> NodeObservation | None:
    if answer.outcome is not Outcome.ANSWERED or answer.observation is None:
        return None
    try:
        return NodeObservation.from_dict(answer.observation)
    except (KeyError, TypeError, ValueError):
        return None


def reference(values: list[tuple[str, bool]]) -> str:
    """The value most nodes run; a tie goes to the head (where SLIME's driver runs), then to the lowest value."""
    counts = Counter(v for v, _ in values)
    top = max(counts.values())
    tied = sorted(v for v, n in counts.items() if n == top)
    head = [v for v, is_head in values if is_head and v in tied]
    return head[0] if head else tied[0]


def evaluate_versions_uniform(result: FanoutResult) -> list[Verdict]:
    read = [(a, obs) for a in result.nodes if (obs := _observation(a)) is not None]
    if len(read) < 2:
        return [Verdict(status=Status.SKIP, summary=f"{len(read)} node(s) reported versions: nothing to compare")]
    expected = {}
    for label, field in FIELDS:
        values = [(getattr(obs, field), a.node.is_head) for a, obs in read if getattr(obs, field)]
        if values:
            expected[label] = (field, reference(values), len(values))
    by_answer = {id(a): obs for a, obs in read}
    verdicts = []
    for answer in result.nodes:
        obs = by_answer.get(id(answer))
        if obs is None:
            verdicts.append(unanswered(answer) if answer.outcome is not Outcome.ANSWERED else
                            Verdict(status=Status.UNKNOWN, node=answer.node.label,
                                    summary=f"{answer.node.where}: observation not understood"))
            continue
        odd = [f"{label} {getattr(obs, field)} (most nodes run {value})"
               for label, (field, value, _) in expected.items() if getattr(obs, field) not in ("", value)]
        unread = [label for label, (field, _, _) in expected.items() if not getattr(obs, field)]
        details = f"not read here: {', '.join(unread)}" if unread else ""
        if odd:
            verdicts.append(Verdict(status=Status.FAIL, node=answer.node.label, remedy=REMEDY, details=details,
                                    summary=f"{answer.node.where}: {'; '.join(odd)}"))
        else:
            same = ", ".join(f"{label} {value}" for label, (field, value, _) in expected.items() if getattr(obs, field))
            verdicts.append(Verdict(status=Status.PASS, node=answer.node.label, details=details,
                                    summary=f"{answer.node.where}: same as the cluster: {same or 'nothing read'}"))
    return verdicts
