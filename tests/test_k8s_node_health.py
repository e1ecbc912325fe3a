"""What node-problem-detector and Prometheus users watch, from `rlcheck k8s apply-node-status`: the RlcheckHealthy
node condition (True / False / Unknown, its transition time kept while the status holds), an Event on the node when
its status changes, node-health metrics as a node-exporter textfile; and the DaemonSet's node selection on any cloud
(GPU feature discovery by default, --node-selector, --instance-types only when asked, --metrics-dir)."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
import yaml

from rlcheck.cli import main
from rlcheck.deploy import k8s_api, k8s_condition, k8s_manifests, k8s_node, node_metrics
from rlcheck.hardware import get_profile
from rlcheck.verdict import Status, Verdict
from tests.kuberay_schema import check_kubernetes
from tests.test_k8s_api import NODE, TOKEN, FakeApiServer

NOW = k8s_condition.NodeStatus(now="2026-12-02T12:00:00Z", namespace="rlcheck")
LATER = k8s_condition.NodeStatus(now="2026-12-02T12:15:00Z", namespace="rlcheck")
FAIL = Verdict(check_id="gpu_node_health", status=Status.FAIL, summary="GPU 3: Xid 79: fell off the bus")
WARN = Verdict(check_id="gpu_node_clocks", status=Status.WARN, summary="SM clock 1500 MHz")
UNKNOWN = Verdict(check_id="gpu_node_inventory", status=Status.UNKNOWN, summary="nvidia-smi did not answer")
PASS = Verdict(check_id="image_numpy_abi", status=Status.PASS, summary="numpy 1.26.4")


@pytest.mark.parametrize(("verdicts", "state", "reason", "event_type"), [
    ([PASS], "True", "RlcheckPassed", "Normal"),
    ([PASS, WARN], "True", "RlcheckWarned", "Normal"),
    ([PASS, FAIL, UNKNOWN], "False", "RlcheckFailed", "Warning"),
    ([PASS, UNKNOWN], "Unknown", "RlcheckUnknown", "Warning"),
    ([], "Unknown", "RlcheckUnknown", "Warning"),  # nothing judged is never healthy
], ids=["pass", "warn", "fail", "unknown", "nothing"])
def test_condition_and_event_say_the_nodes_status(verdicts, state, reason, event_type):
    patch = k8s_node.node_patch(verdicts, NODE, "t")
    node = {"metadata": {"name": NODE, "uid": "u-1"}}
    cond = k8s_condition.condition(patch, node, NOW)
    assert (cond["type"], cond["status"], cond["reason"]) == ("RlcheckHealthy", state, reason)
    assert cond["message"] == patch.annotations["rlcheck.io/summary"]
    event = k8s_condition.event(patch, node, NOW)
    assert event is not None and (event["type"], event["reason"]) == (event_type, reason)
    assert event["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": "u-1"}
    assert event["metadata"] == {"generateName": f"{NODE}.rlcheck-", "namespace": "rlcheck"}
    assert (event["firstTimestamp"], event["count"], event["source"]["host"]) == (NOW.now, 1, NODE)


def test_transition_time_moves_only_when_the_status_changes_and_events_only_on_a_change():
    fail = k8s_node.node_patch([FAIL], NODE, "t")
    before = {"metadata": {"labels": {"rlcheck.io/status": "fail"}},
              "status": {"conditions": [{"type": "Ready", "status": "True"},
                                        {"type": "RlcheckHealthy", "status": "False",
                                         "lastTransitionTime": "2026-12-01T00:00:00Z"}]}}
    cond = k8s_condition.condition(fail, before, LATER)
    assert (cond["lastTransitionTime"], cond["lastHeartbeatTime"]) == ("2026-12-01T00:00:00Z", LATER.now)
    assert k8s_condition.event(fail, before, LATER) is None  # still fail: no event every pass
    healed = k8s_node.node_patch([PASS], NODE, "t")
    assert k8s_condition.condition(healed, before, LATER)["lastTransitionTime"] == LATER.now
    assert k8s_condition.event(healed, before, LATER) is not None


@pytest.fixture
def api():
    server = FakeApiServer()
    server.node["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, k8s_api.Cluster(base_url=f"http://127.0.0.1:{server.server_address[1]}", token=TOKEN,
                                      ca_file=None)
    finally:
        server.shutdown()
        server.server_close()


def test_api_sets_the_condition_beside_the_kubelets_and_an_event_on_a_change(api):
    server, cluster = api
    calls = k8s_api.apply(k8s_node.node_patch([FAIL], NODE, "t"), cluster, status=NOW)
    assert calls[-2:] == [f"PATCH /api/v1/nodes/{NODE}/status", "POST /api/v1/namespaces/rlcheck/events"]
    types = {c["type"]: c["status"] for c in server.node["status"]["conditions"]}
    assert types == {"Ready": "True", "RlcheckHealthy": "False"}
    (event,) = server.events
    assert event["reason"] == "RlcheckFailed" and "gpu_node_health" in event["message"]
    calls = k8s_api.apply(k8s_node.node_patch([FAIL], NODE, "t"), cluster, status=LATER)  # the next pass
    assert calls[-1] == f"PATCH /api/v1/nodes/{NODE}/status" and len(server.events) == 1
    (ours,) = [c for c in server.node["status"]["conditions"] if c["type"] == "RlcheckHealthy"]
    assert (ours["lastTransitionTime"], ours["lastHeartbeatTime"]) == (NOW.now, LATER.now)


def test_api_condition_refused_names_the_permission_it_needs(api, monkeypatch):
    server, cluster = api

    def forbidden(self, body):
        self._answer(403, {"message": 'nodes "x" is forbidden: cannot patch resource "nodes/status"'})

    monkeypatch.setattr("tests.test_k8s_api._Handler._patch_status", forbidden)
    with pytest.raises(k8s_api.ApiFailed, match=r"HTTP 403: .*label and taint were applied; the condition needs "
                                                 r"`patch` on nodes/status"):
        k8s_api.apply(k8s_node.node_patch([FAIL], NODE, "t"), cluster, status=NOW)
    assert server.node["metadata"]["labels"]["rlcheck.io/status"] == "fail"


def _report(tmp_path: Path, verdicts: list[Verdict]) -> str:
    import socket

    doc = {"rlcheck_report": 1, "created": "2026-12-01T00:00:00+00:00", "go": False, "decision": "NO-GO",
           "machine": {"hostname": socket.gethostname()},
           "verdicts": [{**v.to_dict(), "kind": "check", "blocking": True,
                         "test_id": f"checks/test_gpu.py::test_gpu[{v.check_id}]"} for v in verdicts]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_cli_writes_node_exporter_metrics_and_applies_through_the_api(api, tmp_path, monkeypatch, capsys):
    server, cluster = api
    monkeypatch.setenv("PATH", str(tmp_path))  # no kubectl: the API
    monkeypatch.setenv("POD_NAMESPACE", "gpu-ops")
    monkeypatch.setattr(k8s_api, "in_cluster", lambda: cluster)
    prom = tmp_path / "textfile" / "rlcheck.prom"
    argv = ["k8s", "apply-node-status", "--report", _report(tmp_path, [PASS, WARN, FAIL]), "--node", NODE,
            "--metrics-file", str(prom)]
    assert main(argv) == 1
    text = prom.read_text(encoding="utf-8")
    assert 'rlcheck_node_status{status="fail"} 1\n' in text and 'rlcheck_node_status{status="pass"} 0\n' in text
    assert 'rlcheck_node_check_status{check="gpu_node_health",status="FAIL"} 1\n' in text
    assert 'rlcheck_node_check_status{check="gpu_node_clocks",status="WARN"} 1\n' in text
    assert 'rlcheck_node_check_status{check="gpu_node_clocks",status="FAIL"} 0\n' in text
    assert "# TYPE rlcheck_node_last_run_timestamp_seconds gauge\nrlcheck_node_last_run_timestamp_seconds 1" in text
    assert [p.name for p in prom.parent.iterdir()] == ["rlcheck.prom"]  # written whole, no temporary left
    assert server.events[0]["metadata"]["namespace"] == "gpu-ops"
    assert f"{NODE}: rlcheck.io/status=fail, tainted" in capsys.readouterr().err


def test_cli_metrics_that_cannot_be_written_are_said_and_the_node_is_still_patched(api, tmp_path, monkeypatch,
                                                                                    capsys):
    server, cluster = api
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(k8s_api, "in_cluster", lambda: cluster)
    argv = ["k8s", "apply-node-status", "--report", _report(tmp_path, [PASS]), "--node", NODE,
            "--metrics-file", str(tmp_path / "rlcheck.txt"), "--no-condition"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "metrics not written to" in err and "reads only *.prom files" in err
    assert [c[0] for c in server.calls] == ["GET", "PATCH"]  # --no-condition: label and annotations only


def test_metrics_label_values_are_escaped():
    odd = Verdict(check_id='we"ird\\check', status=Status.PASS, summary="")
    text = node_metrics.prometheus_text([odd], "pass", 1.5)
    assert 'check="we\\"ird\\\\check"' in text
    with pytest.raises(ValueError, match="node_status='ok'"):
        node_metrics.prometheus_text([], "ok", 1.5)


def _pod(argv: list[str], capsys) -> dict:
    assert main(["k8s", "render", "--kind", "preflight-daemonset", "--hardware", "h200", *argv]) == 0
    (ds,) = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d["kind"] == "DaemonSet"]
    assert check_kubernetes(ds) == []
    return ds["spec"]["template"]["spec"]


def test_render_node_selector_instance_types_and_metrics_dir(capsys):
    pod = _pod(["--node-selector", "accelerator=nvidia", "--node-selector", "pool=train"], capsys)
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"][:2] == [{"key": "accelerator", "operator": "In", "values": ["nvidia"]},
                                            {"key": "pool", "operator": "In", "values": ["train"]}]
    pod = _pod(["--instance-types"], capsys)
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    types = {"key": "node.kubernetes.io/instance-type", "operator": "In",
             "values": list(get_profile("h200").instance_types)}
    assert len(terms) == 2 and all(types in t["matchExpressions"] for t in terms)
    pod = _pod(["--metrics-dir", "/var/lib/node_exporter/textfile"], capsys)
    (container,) = pod["containers"]
    assert "--metrics-file=/var/lib/node_exporter/textfile/rlcheck.prom" in container["command"][2]
    assert container["volumeMounts"] == [{"name": "metrics", "mountPath": "/var/lib/node_exporter/textfile"}]
    assert pod["volumes"][0]["hostPath"] == {"path": "/var/lib/node_exporter/textfile", "type": "DirectoryOrCreate"}
    assert {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} in \
        container["env"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--node-selector", "nolabel"], "--node-selector 'nolabel': key=value"),
    (["--metrics-dir", "relative/dir"], "metrics_dir='relative/dir': an absolute path"),
])
def test_render_refuses_a_malformed_selection(argv, message, capsys):
    assert main(["k8s", "render", "--kind", "preflight-daemonset", "--hardware", "h200", *argv]) == 2
    assert message in capsys.readouterr().err


def test_rendered_daemonset_script_is_valid_shell_with_metrics():
    ds = k8s_manifests.node_status_daemonset(get_profile("b300"), "qwen3-4b-colocated",
                                             selection=k8s_manifests.NodeSelection(metrics_dir="/m"))
    import subprocess

    sh = shutil.which("sh") or "/bin/sh"
    script = ds["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert subprocess.run([sh, "-n", "-c", script], capture_output=True, timeout=30).returncode == 0
