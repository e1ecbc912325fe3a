"""Apply a node patch through the Kubernetes API itself, with the pod's service account: the node-status DaemonSet
then needs no `kubectl` in the training image (the standard library's HTTPS client, the pod's token and CA).

One GET of the node, then one JSON merge patch of labels, annotations and, when they change, the whole taint list
(a merge patch replaces a list: the other taints are kept as read). The patch carries the node's resourceVersion, so
a node changed in between answers 409 and is read again (twice at most), never overwritten blindly. The token is
sent only in the Authorization header; no error message carries it or the annotation text."""

from __future__ import annotations

import dataclasses
import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlcheck.deploy.k8s_node import NodePatch

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
TIMEOUT_S = 30.0
CONFLICT_TRIES = 3
"""Reads of the node when the patch meets a newer resourceVersion (another controller wrote the node meanwhile)."""


class ApiFailed(RuntimeError):
    """The API did not take the patch; the message has the call, the HTTP status and the API's own reason."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Cluster:
    base_url: str
    """https://HOST:PORT of the API server (in a pod: KUBERNETES_SERVICE_HOST / _PORT)."""
    token: str = dataclasses.field(repr=False)
    ca_file: str | None
    """The CA bundle that signs the API server's certificate; None only for a plain-http test server."""


def in_cluster(env: Mapping[str, str] = os.environ, account: Path = SERVICE_ACCOUNT) -> Cluster:
    """The pod's own API access; ValueError naming what is missing (not in a pod, token not mounted)."""
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ValueError("not inside a Kubernetes pod: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT are unset")
    try:
        token = (account / "token").read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ValueError(f"no service-account token at {account / 'token'} ({exc.strerror or exc}): the pod needs "
                         "automountServiceAccountToken and the rlcheck-node-status ServiceAccount") from exc
    if not token:
        raise ValueError(f"{account / 'token'} is empty")
    ca = account / "ca.crt"
    if not ca.is_file():
        raise ValueError(f"no cluster CA at {ca}: cannot verify the API server")
    return Cluster(base_url=f"https://{'[' + host + ']' if ':' in host else host}:{port}", token=token,
                   ca_file=str(ca))


def _call(cluster: Cluster, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(cluster.base_url + path, data=data, method=method, headers={
        "Authorization": f"Bearer {cluster.token}", "Accept": "application/json",
        **({"Content-Type": "application/merge-patch+json"} if data is not None else {})})
    context = ssl.create_default_context(cafile=cluster.ca_file) if cluster.base_url.startswith("https") else None
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S, context=context) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read() or b"{}").get("message", "")
        except ValueError:
            reason = ""
        return exc.code, {"message": str(reason)[:300]}
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ApiFailed(f"{method} {path}: no answer from {cluster.base_url}: {exc}") from exc


def taints_after(patch: NodePatch, current: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The node's taint list with rlcheck's own set as the patch says and every other taint kept as it was."""
    ours = {t["key"] for t in patch.add_taints} | set(patch.remove_taints)
    return [t for t in current if t.get("key") not in ours] + [dict(t) for t in patch.add_taints]


def apply(patch: NodePatch, cluster: Cluster) -> list[str]:
    """Read the node, then patch it; the calls made. ApiFailed when the API refuses or does not answer."""
    path = f"/api/v1/nodes/{urllib.parse.quote(patch.node, safe='')}"
    calls: list[str] = []
    for _ in range(CONFLICT_TRIES):
        calls.append(f"GET {path}")
        status, node = _call(cluster, "GET", path)
        if status != 200 or not isinstance(node, dict):
            raise ApiFailed(f"GET {path}: HTTP {status}: {(node or {}).get('message', '') or 'no node object'}")
        current = list((node.get("spec") or {}).get("taints") or [])
        meta = {"labels": patch.labels, "annotations": patch.annotations,
                "resourceVersion": (node.get("metadata") or {}).get("resourceVersion")}
        body: dict[str, Any] = {"metadata": meta}
        if (wanted := taints_after(patch, current)) != current:
            body["spec"] = {"taints": wanted}
        calls.append(f"PATCH {path}" + (" (taints)" if "spec" in body else ""))
        status, answer = _call(cluster, "PATCH", path, body)
        if status == 200:
            return calls
        if status != 409:
            raise ApiFailed(f"PATCH {path}: HTTP {status}: {(answer or {}).get('message', '')}")
    raise ApiFailed(f"PATCH {path}: the node changed under every one of {CONFLICT_TRIES} tries (HTTP 409)")
