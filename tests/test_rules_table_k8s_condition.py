"""A node's RlcheckHealthy condition and its Event as a rule table (rlcheck/deploy/k8s_condition.py): every status,
the transition time kept only while the condition's status stays, the Event only on a change of the label (the
first pass included), the odd shapes of a node read from the API (no status, conditions that are not objects, a
label map that is not one, no uid), names at the length caps, and the kubectl calls in order with their bodies."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

from rlcheck.deploy import k8s_condition as kc
from rlcheck.deploy.k8s_node import KUBECTL_TIMEOUT_S, STATUS_LABEL, SUMMARY_ANNOTATION, KubectlFailed, NodePatch
from rlcheck.process import subproc

NOW = kc.NodeStatus(now="2026-12-02T12:15:00Z", namespace="gpu-ops")
BEFORE = "2026-12-01T08:00:00Z"


def _patch(status: str, summary: str = "FAIL cluster_node_xid: Xid 79", node: str = "gpu-7") -> NodePatch:
    return NodePatch(node=node, status=status, labels={STATUS_LABEL: status}, annotations={SUMMARY_ANNOTATION: summary},
                     add_taints=(), remove_taints=())


def _node(label: str | None = None, condition: str | None = None, uid: object = "uid-7") -> dict[str, Any]:
    conditions: list[object] = [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    if condition is not None:
        conditions.append({"type": "RlcheckHealthy", "status": condition, "lastTransitionTime": BEFORE})
    return {"metadata": {"name": "gpu-7", "uid": uid, "labels": {STATUS_LABEL: label} if label else {}},
            "status": {"conditions": conditions}}


def _condition(state: str, reason: str, transition: str = NOW.now, message: str = "FAIL cluster_node_xid: Xid 79"):
    return {"type": "RlcheckHealthy", "status": state, "reason": reason, "message": message,
            "lastHeartbeatTime": NOW.now, "lastTransitionTime": transition}


@pytest.mark.parametrize(("status", "node", "expected"), [
    ("pass", _node(), _condition("True", "RlcheckPassed")),
    ("warn", _node(), _condition("True", "RlcheckWarned")),
    ("fail", _node(), _condition("False", "RlcheckFailed")),
    ("unknown", _node(), _condition("Unknown", "RlcheckUnknown")),
    ("fail", _node("fail", "False"), _condition("False", "RlcheckFailed", BEFORE)),  # unchanged: the time stays
    ("warn", _node("pass", "True"), _condition("True", "RlcheckWarned", BEFORE)),  # pass -> warn: still True
    ("pass", _node("fail", "False"), _condition("True", "RlcheckPassed")),
    ("unknown", _node("fail", "False"), _condition("Unknown", "RlcheckUnknown")),
    ("fail", {}, _condition("False", "RlcheckFailed")),
    ("fail", {"status": None}, _condition("False", "RlcheckFailed")),
    ("fail", {"status": {"conditions": None}}, _condition("False", "RlcheckFailed")),
    ("fail", {"status": {"conditions": ["RlcheckHealthy", None, {"type": "RlcheckHealthy", "status": "False"}]}},
     _condition("False", "RlcheckFailed")),  # the same status but no time recorded: now
    ("fail", {"status": {"conditions": [{"type": "RlcheckHealthy", "status": "False", "lastTransitionTime": BEFORE},
                                        {"type": "RlcheckHealthy", "status": "True", "lastTransitionTime": "x"}]}},
     _condition("False", "RlcheckFailed", BEFORE)),  # the first of its type
])
def test_rules_table_k8s_condition_condition(status, node, expected):
    assert kc.condition(_patch(status), node, NOW) == expected
    assert kc.status_patch(_patch(status), node, NOW) == {"status": {"conditions": [expected]}}


@pytest.mark.parametrize(("node", "condition", "label"), [
    ({}, None, None), ({"metadata": None, "status": None}, None, None),
    ({"metadata": {"labels": None}}, None, None), ({"metadata": {"labels": ["rlcheck.io/status"]}}, None, None),
    (_node("warn", "True"), {"type": "RlcheckHealthy", "status": "True", "lastTransitionTime": BEFORE}, "warn"),
    (_node(), None, None),
])
def test_rules_table_k8s_condition_previous(node, condition, label):
    assert kc.previous_condition(node) == condition
    assert kc.previous_status(node) == label


def _event(status: str, reason: str, kind: str, message: str = "FAIL cluster_node_xid: Xid 79", node: str = "gpu-7",
           uid: str | None = "uid-7") -> dict[str, Any]:
    involved = {"apiVersion": "v1", "kind": "Node", "name": node, **({"uid": uid} if uid else {})}
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{node[:200]}.rlcheck-", "namespace": "gpu-ops"},
            "involvedObject": involved, "reason": reason, "type": kind, "message": message,
            "source": {"component": "rlcheck-node-status", "host": node}, "reportingComponent": "rlcheck-node-status",
            "reportingInstance": node[:128], "firstTimestamp": NOW.now, "lastTimestamp": NOW.now, "count": 1}


LONG = "n" * 250


@pytest.mark.parametrize(("patch", "node", "expected"), [
    (_patch("fail"), _node("fail"), None),  # no change: no Event every pass
    (_patch("pass"), _node("pass"), None),
    (_patch("fail"), _node(), _event("fail", "RlcheckFailed", "Warning")),  # the first pass
    (_patch("pass"), _node("fail"), _event("pass", "RlcheckPassed", "Normal")),
    (_patch("warn"), _node("pass"), _event("warn", "RlcheckWarned", "Normal")),
    (_patch("unknown"), _node("pass"), _event("unknown", "RlcheckUnknown", "Warning")),
    (_patch("fail", "line 1\nline 2\nline 3\nline 4"), _node("pass"),
     _event("fail", "RlcheckFailed", "Warning", "line 1\nline 2\nline 3")),
    (_patch("fail", "line 1\nline 2\nline 3"), _node("pass"),
     _event("fail", "RlcheckFailed", "Warning", "line 1\nline 2\nline 3")),
    (_patch("fail"), _node("pass", uid=""), _event("fail", "RlcheckFailed", "Warning", uid=None)),
    (_patch("fail"), _node("pass", uid=7), _event("fail", "RlcheckFailed", "Warning", uid=None)),
    (_patch("fail"), {"metadata": None}, _event("fail", "RlcheckFailed", "Warning", uid=None)),
    (_patch("fail", node=LONG), _node("pass"), _event("fail", "RlcheckFailed", "Warning", node=LONG)),
])
def test_rules_table_k8s_condition_event(patch, node, expected):
    assert kc.event(patch, node, NOW) == expected


def test_rules_table_k8s_condition_event_caps_the_names():
    made = kc.event(_patch("fail", node=LONG), _node("pass"), NOW)
    assert made is not None
    assert made["metadata"]["generateName"] == "n" * 200 + ".rlcheck-" and made["reportingInstance"] == "n" * 128
    assert made["involvedObject"]["name"] == LONG and made["source"]["host"] == LONG


@pytest.mark.parametrize(("now", "namespace", "message"), [
    ("2026-12-02T12:15:00+00:00", "gpu-ops", "now='2026-12-02T12:15:00+00:00': an RFC 3339 UTC time ending in Z"),
    ("2026-12-02T12:15:00Z", "", "namespace='': the namespace to create Events in"),
])
def test_rules_table_k8s_condition_node_status_refused(now, namespace, message):
    with pytest.raises(ValueError) as raised:
        kc.NodeStatus(now=now, namespace=namespace)
    assert str(raised.value) == message


@dataclasses.dataclass
class Kubectl:
    """A recording runner: each call (argv, keywords); the call numbered fail_at fails."""

    fail_at: int = -1
    calls: list[tuple[tuple[str, ...], dict[str, Any]]] = dataclasses.field(default_factory=list)

    def __call__(self, argv: tuple[str, ...], **kwargs: Any) -> subproc.Completed:
        self.calls.append((tuple(argv), kwargs))
        failed = len(self.calls) - 1 == self.fail_at
        return subproc.Completed(argv=tuple(argv), returncode=1 if failed else 0, stdout="" if failed else "ok",
                                 stderr="Forbidden" if failed else "", timed_out=False)


def _body(status: str, node: dict[str, Any]) -> str:
    return json.dumps({"status": {"conditions": [kc.condition(_patch(status), node, NOW)]}}, sort_keys=True)


PATCH_ARGV = ("patch", "node", "gpu-7", "--subresource=status", "--type=strategic", "-p")
CREATE_ARGV = ("create", "--namespace", "gpu-ops", "-f", "-", "-o", "name")


@pytest.mark.parametrize(("status", "node", "event"), [
    ("fail", _node("pass", "True"), True), ("fail", _node("fail", "False"), False), ("pass", _node(), True)])
def test_rules_table_k8s_condition_kubectl_apply(status, node, event):
    runner = Kubectl()
    steps = kc.kubectl_apply(_patch(status), node, NOW, kubectl="/opt/kubectl", runner=runner)
    patch = ("/opt/kubectl", *PATCH_ARGV, _body(status, node))
    expected = [(patch, {"timeout_s": KUBECTL_TIMEOUT_S})]
    if event:
        created = json.dumps(kc.event(_patch(status), node, NOW))
        expected.append((("/opt/kubectl", *CREATE_ARGV), {"timeout_s": KUBECTL_TIMEOUT_S, "stdin": created}))
    assert runner.calls == expected
    assert steps == [argv for argv, _ in expected]


def test_rules_table_k8s_condition_kubectl_apply_stops_at_the_failed_call():
    runner = Kubectl(fail_at=0)
    said = "`kubectl patch node gpu-7 --subresource=status ...` exit code 1: Forbidden"
    with pytest.raises(KubectlFailed, match=f"^{re.escape(said)}$"):
        kc.kubectl_apply(_patch("fail"), _node("pass"), NOW, runner=runner)
    assert len(runner.calls) == 1
    second = Kubectl(fail_at=1)
    said = "`kubectl create --namespace gpu-ops -f ...` exit code 1: Forbidden"
    with pytest.raises(KubectlFailed, match=f"^{re.escape(said)}$"):
        kc.kubectl_apply(_patch("fail"), _node("pass"), NOW, runner=second)
    assert [argv[1] for argv, _ in second.calls] == ["patch", "create"]
