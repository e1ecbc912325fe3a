"""Apply a node patch through the Kubernetes API itself, with the pod's service account: the node-status DaemonSet
then needs no `kubectl` in the training image (the standard library's HTTPS client, the pod's token and CA).

One GET of the node, then one JSON merge patch of labels, annotations and, when they change, the whole taint list
(a merge patch replaces a list: the other taints are kept as read). The patch carries the node's resourceVersion, so
a node changed in between answers 409 and is read again (twice at most), never overwritten blindly. The token is
sent only in the Authorization header, only to the API server: a redirect (any 3xx) is an error naming the status
and the Location, never followed, so no request is repeated elsewhere. One deadline bounds the whole apply, and
every text of the API's that an error message carries is escaped (no raw control characters reach a terminal); no
error message carries the token or the annotation text."""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import json
import os
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlcheck.deploy import k8s_condition
from rlcheck.deploy.k8s_node import NodePatch
from rlcheck.scan_output import safe

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEADLINE_S = 30.0
"""Seconds for a whole apply (every GET and PATCH, each with its connect, headers and body): a server that trickles
its answer cannot keep the node-status pass waiting past it."""
BODY_MAX = 16 * 2**20
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


class _Deadline:
    """One deadline for a whole apply: every call gets what is left of it, and a watchdog shuts the socket down when
    it passes, so a server trickling its headers or body a byte at a time cannot hold a read open past it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.passed = threading.Event()
        self.sock: socket.socket | None = None
        """The call's socket once connected: a response kept open after the connection object let go of it."""

    def left(self) -> float:
        return self.at - time.monotonic()

    def watch(self, conn: http.client.HTTPConnection) -> threading.Timer:
        self.sock = None

        def cut() -> None:
            self.passed.set()
            if (sock := conn.sock or self.sock) is not None:
                with contextlib.suppress(OSError):  # the base socket's shutdown: wakes a blocked read, TLS or not
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)

        timer = threading.Timer(max(self.left(), 0.0), cut)
        timer.daemon = True
        timer.start()
        return timer


def _connection(cluster: Cluster, timeout_s: float) -> http.client.HTTPConnection:
    try:  # an unmatched [ of an IPv6 address, a port out of range or not a number
        url = urllib.parse.urlsplit(cluster.base_url)
        host, port = url.hostname or "", url.port
    except ValueError as exc:
        raise ApiFailed(f"{safe(cluster.base_url)}: no API server address ({exc})") from exc
    if url.scheme == "https":
        context = ssl.create_default_context(cafile=cluster.ca_file)
        return http.client.HTTPSConnection(host, port, timeout=timeout_s, context=context)
    if url.scheme == "http":
        return http.client.HTTPConnection(host, port, timeout=timeout_s)
    raise ApiFailed(f"{safe(cluster.base_url)}: not an https:// (or http://) URL of an API server")


def _read(resp: http.client.HTTPResponse) -> bytes:
    chunks, size = [], 0
    while chunk := resp.read1(64 * 1024):  # one socket read at a time: the watchdog can end the call between any two
        size += len(chunk)
        if size > BODY_MAX:
            raise ValueError(f"an answer over {BODY_MAX // 2**20} MiB (a Node object is a few KiB)")
        chunks.append(chunk)
    if resp.length:  # the connection closed before the Content-Length was read: a part of an answer is none
        raise http.client.IncompleteRead(b"".join(chunks), resp.length)
    return b"".join(chunks)


def _exchange(cluster: Cluster, method: str, path: str, data: bytes | None, deadline: _Deadline,
              content_type: str = "application/merge-patch+json") -> tuple[int, str, bytes]:
    """(HTTP status, Location header, body) of one request; ApiFailed when there is no full answer in time."""
    if (left := deadline.left()) <= 0:
        raise ApiFailed(f"{method} {path}: not sent: the {deadline.seconds:g} s deadline passed")
    headers = {"Authorization": f"Bearer {cluster.token}", "Accept": "application/json",
               **({"Content-Type": content_type} if data is not None else {})}
    conn = _connection(cluster, left)
    timer = deadline.watch(conn)
    try:
        conn.connect()
        deadline.sock = conn.sock
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        answer = resp.status, resp.getheader("Location") or "", _read(resp)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if deadline.passed.is_set():
            raise ApiFailed(f"{method} {path}: no full answer from {safe(cluster.base_url)} within the "
                            f"{deadline.seconds:g} s deadline (connect, headers and body together)") from exc
        raise ApiFailed(f"{method} {path}: no answer from {safe(cluster.base_url)}: {safe(str(exc))}") from exc
    finally:
        timer.cancel()
        conn.close()
    if deadline.passed.is_set():  # the watchdog ended a body without a length: what was read may be cut short
        raise ApiFailed(f"{method} {path}: no full answer from {safe(cluster.base_url)} within the "
                        f"{deadline.seconds:g} s deadline (connect, headers and body together)")
    return answer


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except (ValueError, RecursionError):
        return None


def _call(cluster: Cluster, method: str, path: str, deadline: _Deadline,
          body: dict[str, Any] | None = None, content_type: str = "application/merge-patch+json") -> tuple[int, Any]:
    """(status, decoded answer); a redirect is refused, never followed: it would carry the token elsewhere."""
    data = json.dumps(body).encode() if body is not None else None
    status, location, raw = _exchange(cluster, method, path, data, deadline, content_type)
    if 300 <= status < 400:
        raise ApiFailed(f"{method} {path}: HTTP {status} redirect to {safe(location)[:300] or '(no Location)'}: "
                        "refused; rlcheck never follows a redirect of the API server (the request and its token "
                        "go to the API server only); point KUBERNETES_SERVICE_HOST at the API server itself")
    answer = _json(raw)
    if 200 <= status < 300:
        return status, answer
    return status, {"message": safe(_message(answer))[:300]}

def taints_after(patch: NodePatch, current: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The node's taint list with rlcheck's own set as the patch says and every other taint kept as it was."""
    ours = {t["key"] for t in patch.add_taints} | set(patch.remove_taints)
    return [t for t in current if t.get("key") not in ours] + [dict(t) for t in patch.add_taints]


def _message(answer: Any) -> str:
    return str(answer.get("message", "")) if isinstance(answer, dict) else ""


def _node_taints(node: Any, path: str) -> tuple[list[dict[str, Any]], Any]:
    """(the node's taints, its resourceVersion); ApiFailed when the answer is no Node object."""
    meta, spec = (node.get("metadata"), node.get("spec")) if isinstance(node, dict) else (None, None)
    taints = (spec or {}).get("taints") if isinstance(spec, dict | None) else None
    if not isinstance(meta, dict) or not isinstance(spec, dict | None) or not isinstance(taints, list | None) \
            or not all(isinstance(t, dict) for t in taints or ()):
        raise ApiFailed(f"GET {path}: HTTP 200 but no Node object (a JSON object with metadata, and spec.taints "
                        f"a list of objects): {safe(json.dumps(node)[:120] if node is not None else 'not JSON')}")
    return list(taints or []), meta.get("resourceVersion")


def _condition_and_event(cluster: Cluster, patch: NodePatch, node: dict[str, Any], status: k8s_condition.NodeStatus,
                         deadline: _Deadline) -> list[str]:
    """The RlcheckHealthy condition (`patch` on nodes/status) and, when the status changed, an Event (`create` on
    events in status.namespace); the calls made. ApiFailed naming the call, after the label and taint were set."""
    path = f"/api/v1/nodes/{urllib.parse.quote(patch.node, safe='')}/status"
    code, answer = _call(cluster, "PATCH", path, deadline, k8s_condition.status_patch(patch, node, status),
                         k8s_condition.STATUS_PATCH_TYPE)
    if code != 200:
        raise ApiFailed(f"PATCH {path}: HTTP {code}: {_message(answer)} (label and taint were applied; the "
                        "condition needs `patch` on nodes/status)")
    calls = [f"PATCH {path}"]
    if (created := k8s_condition.event(patch, node, status)) is not None:
        events = f"/api/v1/namespaces/{urllib.parse.quote(status.namespace, safe='')}/events"
        code, answer = _call(cluster, "POST", events, deadline, created, "application/json")
        if code not in (200, 201):
            raise ApiFailed(f"POST {events}: HTTP {code}: {_message(answer)} (label, taint and condition were "
                            f"applied; the Event needs `create` on events in {safe(status.namespace)})")
        calls.append(f"POST {events}")
    return calls


def apply(patch: NodePatch, cluster: Cluster, *, deadline_s: float | None = None,
          status: k8s_condition.NodeStatus | None = None) -> list[str]:
    """Read the node, then patch it (and, with status, set its condition and, on a change, an Event); the calls
    made. ApiFailed when the API refuses, redirects or does not answer in full within deadline_s (DEADLINE_S by
    default) for the whole apply."""
    deadline = _Deadline(DEADLINE_S if deadline_s is None else deadline_s)
    path = f"/api/v1/nodes/{urllib.parse.quote(patch.node, safe='')}"
    calls: list[str] = []
    for _ in range(CONFLICT_TRIES):
        calls.append(f"GET {path}")
        code, node = _call(cluster, "GET", path, deadline)
        if code != 200:
            raise ApiFailed(f"GET {path}: HTTP {code}: {_message(node) or 'no node object'}")
        current, version = _node_taints(node, path)
        meta = {"labels": patch.labels, "annotations": patch.annotations, "resourceVersion": version}
        body: dict[str, Any] = {"metadata": meta}
        if (wanted := taints_after(patch, current)) != current:
            body["spec"] = {"taints": wanted}
        calls.append(f"PATCH {path}" + (" (taints)" if "spec" in body else ""))
        code, answer = _call(cluster, "PATCH", path, deadline, body)
        if code == 200:
            return calls + (_condition_and_event(cluster, patch, node, status, deadline) if status else [])
        if code != 409:
            raise ApiFailed(f"PATCH {path}: HTTP {code}: {_message(answer)}")
    raise ApiFailed(f"PATCH {path}: the node changed under every one of {CONFLICT_TRIES} tries (HTTP 409)")
