"""A node's rlcheck verdicts as what Kubernetes schedulers act on: a status label, a NoSchedule taint on FAIL and an
annotation with the reasons; and the kubectl calls that apply it.

`node_patch` is pure: a recorded report.json (its blocking verdicts about this machine or naming the node) and the
node's name in, the labels, annotations and taints to set and to remove out. A node that recovers loses its taint.
`apply` runs kubectl (get, then patch / taint: only `get` and `patch` on nodes, which the ClusterRole grants).
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rlcheck.preflight import slurm
from rlcheck.process import subproc
from rlcheck.verdict import Status, Verdict

STATUS_LABEL = "rlcheck.io/status"
SUMMARY_ANNOTATION = "rlcheck.io/summary"
CHECKED_ANNOTATION = "rlcheck.io/checked-at"
TAINT_KEY = "rlcheck.io/unhealthy"
TAINT_EFFECT = "NoSchedule"
STATUSES = ("pass", "warn", "fail", "unknown")
SUMMARY_MAX = 1024
"""Characters of the summary annotation: a few reasons, never the whole report (the API caps all annotations
of an object at 256 KiB together)."""
LABEL_VALUE_MAX = 63
LINE_MAX = 240
"""Characters of one check's line in the summary."""
KUBECTL_TIMEOUT_S = 30.0


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodePatch:
    node: str
    """The Kubernetes node name the patch is for."""
    status: str
    """pass, warn, fail or unknown: the worst of the node's blocking verdicts (FAIL > UNKNOWN > WARN > PASS)."""
    labels: dict[str, str]
    annotations: dict[str, str]
    add_taints: tuple[dict[str, str], ...]
    """Taints to put on (key, value, effect): the rlcheck taint on FAIL, none otherwise."""
    remove_taints: tuple[str, ...]
    """Taint keys to take off when present: the rlcheck taint on anything but FAIL (a node that recovered)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def worst(verdicts: Sequence[Verdict]) -> str:
    """The node status: nothing judged (no verdict, only SKIP) is unknown, never a pass."""
    for status in (Status.FAIL, Status.UNKNOWN, Status.WARN, Status.PASS):
        if any(v.status is status for v in verdicts):
            return status.value.lower()
    return "unknown"


def _redact(text: str, secrets: Mapping[str, str]) -> str:
    for name, value in secrets.items():
        text = text.replace(value, f"<{name} redacted>")
    return text


def summary_text(verdicts: Sequence[Verdict], status: str, secrets: Mapping[str, str] | None = None) -> str:
    """A count line, then one line per check that is FAIL, UNKNOWN or WARN, worst first: `FAIL check: first reason
    (+N more)`; at most SUMMARY_MAX characters, whole lines only, saying how many checks were left out."""
    order = (Status.FAIL, Status.UNKNOWN, Status.WARN)
    bad = sorted((v for v in verdicts if v.status in order), key=lambda v: order.index(v.status))
    groups: dict[tuple[Status, str], list[Verdict]] = {}
    for v in bad:
        groups.setdefault((v.status, v.check_id), []).append(v)
    head = f"rlcheck {status}: {len(bad)} of {len(verdicts)} blocking verdict(s) not PASS/SKIP"
    lines = []
    for (state, check_id), rows in groups.items():
        more = f" (+{len(rows) - 1} more)" if len(rows) > 1 else ""
        reason = " ".join(_redact(rows[0].summary, secrets or {}).split())
        line = f"{state.value} {check_id}: {reason}"
        lines.append((line if len(line) <= LINE_MAX - len(more) else line[:LINE_MAX - len(more) - 3] + "...") + more)
    kept = len(lines)
    while True:
        tail = [f"... and {len(lines) - kept} more check(s) (see the report)"] if kept < len(lines) else []
        text = "\n".join([head, *lines[:kept], *tail])
        if len(text) <= SUMMARY_MAX or kept == 0:
            return text[:SUMMARY_MAX]
        kept -= 1


def node_patch(verdicts: Sequence[Verdict], node: str, checked_at: str = "",
               secrets: Mapping[str, str] | None = None) -> NodePatch:
    """What to set on and take off the node for its verdicts (already chosen with about_node)."""
    if not node:
        raise ValueError("node='': the Kubernetes node name (spec.nodeName) is required")
    status = worst(verdicts)
    failed = [v.check_id for v in verdicts if v.status is Status.FAIL]
    annotations = {SUMMARY_ANNOTATION: summary_text(verdicts, status, secrets)}
    if checked_at:
        annotations[CHECKED_ANNOTATION] = checked_at
    # the taint's value names the first failing check: a check id is a valid label value ([a-z0-9_], <= 63)
    taint = {"key": TAINT_KEY, "value": failed[0][:LABEL_VALUE_MAX], "effect": TAINT_EFFECT} if failed else None
    return NodePatch(node=node, status=status, labels={STATUS_LABEL: status}, annotations=annotations,
                     add_taints=(taint,) if taint else (), remove_taints=() if taint else (TAINT_KEY,))


def patch_from_report(text: str, source: str, node: str, secrets: Mapping[str, str] | None = None,
                      host: str | None = None) -> NodePatch:
    """The patch of a recorded report.json from its verdicts about this node (named by its Kubernetes node name or
    this machine's host name; rlcheck.preflight.slurm.own_verdicts): another node's verdicts, the job's and the
    cluster's as a whole never taint it. ValueError naming the file when it is not a report."""
    verdicts = report_verdicts(text, source, node, host)
    created = json.loads(text).get("created")
    return node_patch(verdicts, node, str(created or ""), secrets)


def report_verdicts(text: str, source: str, node: str, host: str | None = None) -> list[Verdict]:
    """A recorded report's verdicts about this node (see patch_from_report); ValueError when it is not a report."""
    return list(slurm.own_verdicts(text, source, (node, socket.gethostname() if host is None else host)))


def kubectl_steps(patch: NodePatch, current_taints: Sequence[Mapping[str, Any]], kubectl: str = "kubectl"
                  ) -> list[tuple[str, ...]]:
    """The kubectl calls after `get`: one merge patch for labels and annotations, then a taint call only where the
    node's taints differ from the patch (an absent taint is not removed: kubectl would fail on it)."""
    meta = {"metadata": {"labels": patch.labels, "annotations": patch.annotations}}
    payload = json.dumps(meta, sort_keys=True)
    steps: list[tuple[str, ...]] = [(kubectl, "patch", "node", patch.node, "--type=merge", "-p", payload)]
    have = {(t.get("key"), t.get("value"), t.get("effect")) for t in current_taints}
    for taint in patch.add_taints:
        if (taint["key"], taint["value"], taint["effect"]) not in have:
            steps.append((kubectl, "taint", "node", patch.node, f"{taint['key']}={taint['value']}:{taint['effect']}",
                          "--overwrite"))
    for key in patch.remove_taints:
        if any(k == key for k, _, _ in have):
            steps.append((kubectl, "taint", "node", patch.node, f"{key}-"))
    return steps


class KubectlFailed(RuntimeError):
    """A kubectl call did not succeed; the message has the command (no annotation text), how it ended and its tail."""


Runner = Callable[..., subproc.Completed]


def run_kubectl(argv: Sequence[str], runner: Runner, stdin: str | None = None) -> subproc.Completed:
    """One kubectl call within KUBECTL_TIMEOUT_S; KubectlFailed naming it (never its payload) when it fails."""
    done = runner(tuple(argv), timeout_s=KUBECTL_TIMEOUT_S, **({"stdin": stdin} if stdin is not None else {}))
    if done.timed_out or done.returncode != 0:
        shown = " ".join(argv[:5])  # never the -p payload: it carries the report text
        raise KubectlFailed(f"`{shown} ...` {done.why()}: {done.tail(3) or 'no output'}")
    return done


def read_node(name: str, kubectl: str = "kubectl", runner: Runner = subproc.run) -> dict[str, Any]:
    """The node object (`kubectl get node NAME -o json`); KubectlFailed when there is none."""
    got = run_kubectl((kubectl, "get", "node", name, "-o", "json"), runner)
    try:
        node = json.loads(got.stdout)
        if not isinstance(node, dict) or not isinstance(node.get("spec", {}), dict):
            raise ValueError("not a JSON object with a spec object")
    except ValueError as exc:
        raise KubectlFailed(f"`{kubectl} get node {name} -o json` printed no node object: {exc}") from exc
    return node


def apply(patch: NodePatch, kubectl: str = "kubectl", runner: Runner = subproc.run,
          node: Mapping[str, Any] | None = None) -> list[tuple[str, ...]]:
    """Read the node's taints (unless its object is given, as read_node returned it), then patch it; the calls made.
    KubectlFailed on the first that fails."""
    node = read_node(patch.node, kubectl, runner) if node is None else node
    steps = kubectl_steps(patch, node.get("spec", {}).get("taints") or [], kubectl)
    for argv in steps:
        run_kubectl(argv, runner)
    return steps
