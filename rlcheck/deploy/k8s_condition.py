"""A node's rlcheck status as node-problem-detector users watch it: a node condition (`RlcheckHealthy`, True /
False / Unknown, with a reason and the summary as its message) and an Event on the node when its status changes.

Pure: the node object as read (its conditions, its rlcheck.io/status label, its uid) and the patch in; the body of
the status-subresource patch and of the Event out. The condition goes through a strategic merge patch of
`nodes/status`, which merges conditions by type: the kubelet's own conditions are never touched. Events are created in
the DaemonSet's namespace (`create` on events there; `kubectl describe node` lists them with the node's own).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from rlcheck.deploy import k8s_node
from rlcheck.deploy.k8s_node import STATUS_LABEL, SUMMARY_ANNOTATION, NodePatch
from rlcheck.process import subproc

CONDITION_TYPE = "RlcheckHealthy"
CONDITION_STATUS = {"pass": "True", "warn": "True", "fail": "False", "unknown": "Unknown"}
"""WARN keeps the node healthy (it is not tainted either); UNKNOWN is Unknown, never True."""
REASONS = {"pass": "RlcheckPassed", "warn": "RlcheckWarned", "fail": "RlcheckFailed", "unknown": "RlcheckUnknown"}
EVENT_TYPES = {"pass": "Normal", "warn": "Normal", "fail": "Warning", "unknown": "Warning"}
COMPONENT = "rlcheck-node-status"
STATUS_PATCH_TYPE = "application/strategic-merge-patch+json"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeStatus:
    """What the condition and the Event need beyond the patch: when, and where Events go."""

    now: str
    """RFC 3339 UTC time of this pass (2026-12-02T12:00:00Z): the heartbeat, and the transition when it changed."""
    namespace: str
    """The namespace Events are created in (the DaemonSet's, from POD_NAMESPACE)."""

    def __post_init__(self) -> None:
        if not self.now.endswith("Z"):
            raise ValueError(f"now={self.now!r}: an RFC 3339 UTC time ending in Z")
        if not self.namespace:
            raise ValueError("namespace='': the namespace to create Events in")


def previous_condition(node: Mapping[str, Any]) -> dict[str, Any] | None:
    conditions = (node.get("status") or {}).get("conditions") or []
    found = [c for c in conditions if isinstance(c, dict) and c.get("type") == CONDITION_TYPE]
    return found[0] if found else None


def previous_status(node: Mapping[str, Any]) -> str | None:
    """The rlcheck.io/status label the node carried before this pass (None on the first pass)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return labels.get(STATUS_LABEL) if isinstance(labels, dict) else None


def condition(patch: NodePatch, node: Mapping[str, Any], status: NodeStatus) -> dict[str, str]:
    """The RlcheckHealthy condition: lastTransitionTime moves only when its status changes."""
    state = CONDITION_STATUS[patch.status]
    before = previous_condition(node)
    transition = before.get("lastTransitionTime") if before and before.get("status") == state else None
    return {"type": CONDITION_TYPE, "status": state, "reason": REASONS[patch.status],
            "message": patch.annotations[SUMMARY_ANNOTATION], "lastHeartbeatTime": status.now,
            "lastTransitionTime": str(transition or status.now)}


def status_patch(patch: NodePatch, node: Mapping[str, Any], status: NodeStatus) -> dict[str, Any]:
    """The strategic merge patch of nodes/status (conditions merge by type)."""
    return {"status": {"conditions": [condition(patch, node, status)]}}


def event(patch: NodePatch, node: Mapping[str, Any], status: NodeStatus) -> dict[str, Any] | None:
    """A core/v1 Event on the node when its rlcheck status changed (the first pass included); None otherwise."""
    if previous_status(node) == patch.status:
        return None
    lines = patch.annotations[SUMMARY_ANNOTATION].splitlines()
    involved = {"apiVersion": "v1", "kind": "Node", "name": patch.node}
    uid = (node.get("metadata") or {}).get("uid")
    if isinstance(uid, str) and uid:
        involved["uid"] = uid
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{patch.node[:200]}.rlcheck-", "namespace": status.namespace},
            "involvedObject": involved, "reason": REASONS[patch.status], "type": EVENT_TYPES[patch.status],
            "message": "\n".join(lines[:3]), "source": {"component": COMPONENT, "host": patch.node},
            "reportingComponent": COMPONENT, "reportingInstance": patch.node[:128],
            "firstTimestamp": status.now, "lastTimestamp": status.now, "count": 1}


def kubectl_apply(patch: NodePatch, node: Mapping[str, Any], status: NodeStatus, kubectl: str = "kubectl",
                  runner: k8s_node.Runner = subproc.run) -> list[tuple[str, ...]]:
    """The condition (`kubectl patch node --subresource=status`, kubectl 1.24+) and, on a change, the Event
    (`kubectl create -f -`); the calls made. KubectlFailed on the first that fails."""
    body = json.dumps(status_patch(patch, node, status), sort_keys=True)
    steps: list[tuple[str, ...]] = [(kubectl, "patch", "node", patch.node, "--subresource=status",
                                     "--type=strategic", "-p", body)]
    k8s_node.run_kubectl(steps[0], runner)
    if (created := event(patch, node, status)) is not None:
        create = (kubectl, "create", "--namespace", status.namespace, "-f", "-", "-o", "name")
        steps.append(create)
        k8s_node.run_kubectl(create, runner, stdin=json.dumps(created))
    return steps
