"""`rlcheck k8s apply-node-status --via api`: the node patch through the Kubernetes API with the pod's service
account, against a loopback stand-in of the API server (tests only) that keeps one Node object, checks the bearer
token and the merge-patch content type, and answers 409 on a stale resourceVersion as the real one does."""

from __future__ import annotations

import dataclasses
import http.server
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlcheck.cli import main
from rlcheck.deploy import k8s_api, k8s_node
from rlcheck.verdict import Status, Verdict

NODE = "ip-10-1-2-3.ec2.internal"
TOKEN = "sa-token-canary-5f1e"
FAIL = Verdict(check_id="gpu_node_health", status=Status.FAIL, summary="GPU 3: 2 uncorrectable ECC errors")
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
OURS = {"key": "rlcheck.io/unhealthy", "value": "gpu_node_health", "effect": "NoSchedule"}


class FakeApiServer(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.node: dict[str, Any] = {"kind": "Node", "metadata": {"name": NODE, "resourceVersion": "1",
                                                                  "labels": {"kubernetes.io/os": "linux"}},
                                     "spec": {"taints": [GPU_TAINT]}}
        self.calls: list[tuple[str, str, Any]] = []
        self.conflicts = 0
        """PATCH answers 409 this many times first (another controller writing the node meanwhile)."""
        self.refuse: int | None = None
        self.events: list[dict[str, Any]] = []


class _Handler(http.server.BaseHTTPRequestHandler):
    server: FakeApiServer

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _answer(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._answer(401, {"message": "Unauthorized"})
            return False
        return True

    def do_GET(self) -> None:  # noqa: N802
        self.server.calls.append(("GET", self.path, None))
        if not self._authorized():
            return
        if self.path != f"/api/v1/nodes/{NODE}":
            self._answer(404, {"message": f'nodes "{self.path.rsplit("/", 1)[-1]}" not found'})
            return
        self._answer(200, self.server.node)

    def do_POST(self) -> None:  # noqa: N802
        """Events: created in a namespace, answered 201 as the API does."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.calls.append(("POST", self.path, body))
        if not self._authorized():
            return
        if not self.path.startswith("/api/v1/namespaces/") or not self.path.endswith("/events"):
            self._answer(404, {"message": "not found"})
            return
        self.server.events.append(body)
        self._answer(201, body)

    def _patch_status(self, body: dict[str, Any]) -> None:
        """nodes/status by strategic merge: conditions merge by type (the kubelet's are kept)."""
        if self.headers.get("Content-Type") != "application/strategic-merge-patch+json":
            self._answer(415, {"message": "unsupported media type"})
            return
        status = self.server.node.setdefault("status", {})
        new = {c["type"]: c for c in body["status"]["conditions"]}
        status["conditions"] = [new.pop(c["type"], c) for c in status.get("conditions", [])] + list(new.values())
        self._answer(200, self.server.node)

    def do_PATCH(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.calls.append(("PATCH", self.path, body))
        if not self._authorized():
            return
        if self.path == f"/api/v1/nodes/{NODE}/status":
            self._patch_status(body)
            return
        if self.headers.get("Content-Type") != "application/merge-patch+json":
            self._answer(415, {"message": "unsupported media type"})
            return
        if self.server.refuse:
            self._answer(self.server.refuse, {"message": 'nodes "x" is forbidden: cannot patch resource'})
            return
        meta = self.server.node["metadata"]
        if self.server.conflicts or body["metadata"].get("resourceVersion") != meta["resourceVersion"]:
            self.server.conflicts = max(0, self.server.conflicts - 1)
            meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
            self._answer(409, {"message": "the object has been modified; please apply your changes"})
            return
        meta["labels"] = {**meta.get("labels", {}), **body["metadata"]["labels"]}
        meta["annotations"] = {**meta.get("annotations", {}), **body["metadata"]["annotations"]}
        if "spec" in body:
            self.server.node["spec"]["taints"] = body["spec"]["taints"]  # a merge patch replaces a list
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
        self._answer(200, self.server.node)


@pytest.fixture
def api() -> Iterator[tuple[FakeApiServer, k8s_api.Cluster]]:
    server = FakeApiServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, k8s_api.Cluster(base_url=f"http://127.0.0.1:{server.server_address[1]}", token=TOKEN,
                                      ca_file=None)
    finally:
        server.shutdown()
        server.server_close()


def test_api_fail_sets_label_annotation_and_adds_the_taint_keeping_others(api):
    server, cluster = api
    calls = k8s_api.apply(k8s_node.node_patch([FAIL], NODE, "2026-12-01T00:00:00+00:00"), cluster)
    assert calls == [f"GET /api/v1/nodes/{NODE}", f"PATCH /api/v1/nodes/{NODE} (taints)"]
    assert server.node["metadata"]["labels"] == {"kubernetes.io/os": "linux", "rlcheck.io/status": "fail"}
    assert "FAIL gpu_node_health" in server.node["metadata"]["annotations"]["rlcheck.io/summary"]
    assert server.node["spec"]["taints"] == [GPU_TAINT, OURS]
    assert server.calls[1][2]["metadata"]["resourceVersion"] == "1"


def test_api_recovered_node_loses_only_the_rlcheck_taint(api):
    server, cluster = api
    server.node["spec"]["taints"] = [OURS, GPU_TAINT]
    calls = k8s_api.apply(k8s_node.node_patch([dataclasses.replace(FAIL, status=Status.PASS)], NODE), cluster)
    assert calls[-1].endswith("(taints)") and server.node["spec"]["taints"] == [GPU_TAINT]
    assert server.node["metadata"]["labels"]["rlcheck.io/status"] == "pass"


def test_api_unchanged_taints_are_not_sent(api):
    server, cluster = api
    server.node["spec"]["taints"] = [GPU_TAINT, OURS]
    calls = k8s_api.apply(k8s_node.node_patch([FAIL], NODE), cluster)
    assert calls[-1] == f"PATCH /api/v1/nodes/{NODE}" and "spec" not in server.calls[-1][2]


def test_api_conflict_reads_the_node_again(api):
    server, cluster = api
    server.conflicts = 2
    calls = k8s_api.apply(k8s_node.node_patch([FAIL], NODE), cluster)
    assert [c.split()[0] for c in calls] == ["GET", "PATCH"] * 3
    assert server.node["spec"]["taints"] == [GPU_TAINT, OURS]


def test_api_gives_up_after_three_conflicts(api):
    server, cluster = api
    server.conflicts = 3
    with pytest.raises(k8s_api.ApiFailed, match=r"changed under every one of 3 tries \(HTTP 409\)"):
        k8s_api.apply(k8s_node.node_patch([FAIL], NODE), cluster)


def test_api_refused_patch_names_status_and_reason_never_the_token(api):
    server, cluster = api
    server.refuse = 403
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api.apply(k8s_node.node_patch([FAIL], NODE), cluster)
    assert "HTTP 403: nodes \"x\" is forbidden" in str(exc.value) and TOKEN not in str(exc.value)


def test_api_wrong_token_and_unknown_node(api):
    server, cluster = api
    with pytest.raises(k8s_api.ApiFailed, match="HTTP 401: Unauthorized"):
        k8s_api.apply(k8s_node.node_patch([FAIL], NODE), dataclasses.replace(cluster, token="wrong"))
    with pytest.raises(k8s_api.ApiFailed, match='HTTP 404: nodes "other" not found'):
        k8s_api.apply(k8s_node.node_patch([FAIL], "other"), cluster)
    assert TOKEN not in repr(cluster)


def test_api_no_answer_is_named():
    cluster = k8s_api.Cluster(base_url="http://127.0.0.1:9", token=TOKEN, ca_file=None)  # discard port: refused
    with pytest.raises(k8s_api.ApiFailed, match="no answer from http://127.0.0.1:9"):
        k8s_api.apply(k8s_node.node_patch([FAIL], NODE), cluster)


def _account(tmp_path: Path, token: str | None = TOKEN, ca: bool = True) -> Path:
    if token is not None:
        (tmp_path / "token").write_text(token + "\n", encoding="utf-8")
    if ca:
        (tmp_path / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    return tmp_path


POD_ENV = {"KUBERNETES_SERVICE_HOST": "10.100.0.1", "KUBERNETES_SERVICE_PORT": "443"}


def test_in_cluster_reads_the_pods_service_account(tmp_path):
    cluster = k8s_api.in_cluster(POD_ENV, _account(tmp_path))
    assert (cluster.base_url, cluster.token, cluster.ca_file) == ("https://10.100.0.1:443", TOKEN,
                                                                  str(tmp_path / "ca.crt"))
    v6 = k8s_api.in_cluster({**POD_ENV, "KUBERNETES_SERVICE_HOST": "fd00::1"}, _account(tmp_path))
    assert v6.base_url == "https://[fd00::1]:443"


@pytest.mark.parametrize(("env", "token", "ca", "message"), [
    ({}, TOKEN, True, "not inside a Kubernetes pod"),
    ({"KUBERNETES_SERVICE_HOST": "10.100.0.1"}, TOKEN, True, "not inside a Kubernetes pod"),
    (POD_ENV, None, True, "no service-account token at"),
    (POD_ENV, "", True, "is empty"),
    (POD_ENV, TOKEN, False, "no cluster CA at"),
])
def test_in_cluster_says_what_is_missing(tmp_path, env, token, ca, message):
    with pytest.raises(ValueError, match=message):
        k8s_api.in_cluster(env, _account(tmp_path, token, ca))


def _report(tmp_path: Path) -> str:
    doc = {"rlcheck_report": 1, "created": "2026-12-01T00:00:00+00:00", "go": False, "decision": "NO-GO",
           "machine": {"hostname": socket.gethostname()},  # this node's own report: its GPU check acts here
           "verdicts": [{**FAIL.to_dict(), "check_id": "gpu_node_health", "kind": "check", "blocking": True,
                         "test_id": "checks/test_gpu.py::test_gpu[gpu_node_health]"}]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_cli_via_api_applies_without_kubectl(api, tmp_path, monkeypatch, capsys):
    server, cluster = api
    monkeypatch.setenv("PATH", str(tmp_path))  # no kubectl anywhere
    monkeypatch.setattr(k8s_api, "in_cluster", lambda: cluster)
    assert main(["k8s", "apply-node-status", "--report", _report(tmp_path), "--node", NODE]) == 1
    assert server.node["spec"]["taints"] == [GPU_TAINT, OURS]
    assert f"{NODE}: rlcheck.io/status=fail, tainted" in capsys.readouterr().err


def test_cli_without_kubectl_outside_a_pod_names_both(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert main(["k8s", "apply-node-status", "--report", _report(tmp_path), "--node", NODE]) == 2
    err = capsys.readouterr().err
    assert "'kubectl' not found on PATH, and the API cannot be used: not inside a Kubernetes pod" in err


def test_cli_via_kubectl_never_falls_back_to_the_api(api, tmp_path, monkeypatch, capsys):
    server, cluster = api
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(k8s_api, "in_cluster", lambda: cluster)
    assert main(["k8s", "apply-node-status", "--report", _report(tmp_path), "--node", NODE, "--via", "kubectl"]) == 2
    assert server.calls == [] and "--via api patches through" in capsys.readouterr().err
