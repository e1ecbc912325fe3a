"""`rlcheck k8s apply-node-status --via api` against hostile API servers, all on 127.0.0.1: a TLS-verified server that
redirects to plain HTTP (the token must never follow), servers that trickle their headers or body (one deadline for
the whole call), and answers carrying terminal control sequences (printed escaped)."""

from __future__ import annotations

import http.server
import json
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rlcheck.cli import main
from rlcheck.deploy import k8s_api, k8s_node
from rlcheck.verdict import Status, Verdict

NODE = "ip-10-1-2-3.ec2.internal"
TOKEN = "sa-token-canary-5f1e"
FAIL = Verdict(check_id="gpu_node_health", status=Status.FAIL, summary="GPU 3: 2 uncorrectable ECC errors")
NODE_OBJECT = {"kind": "Node", "metadata": {"name": NODE, "resourceVersion": "1"}, "spec": {}}
DEADLINE_S = 2.0
SLACK_S = 6.0
"""The call must end within the deadline and this slack; the trickling servers would hold it for minutes."""
HOSTILE = "\x1b]0;owned\x07forbidden\r\nrlcheck k8s apply-node-status: applied\x1b[2J"


class Server(http.server.ThreadingHTTPServer):
    """A loopback server whose every request is recorded and answered by `answer(handler)`."""

    def __init__(self, answer: Callable[[http.server.BaseHTTPRequestHandler], None]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.calls: list[tuple[str, str, str | None]] = []
        self.stop = threading.Event()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args: Any) -> None:
        pass

    def _any(self) -> None:
        self.server.calls.append((self.command, self.path, self.headers.get("Authorization")))
        self.server.answer(self)

    do_GET = do_PATCH = _any  # noqa: N815


def _json(handler: http.server.BaseHTTPRequestHandler, code: int, body: Any) -> None:
    data = json.dumps(body).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _serve(server: Server) -> Iterator[Server]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def plain() -> Iterator[Server]:
    """Where a redirect points: answers as the API would, so a client that follows it goes on to PATCH."""
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        if h.command == "PATCH":
            h.rfile.read(int(h.headers.get("Content-Length") or 0))
        _json(h, 200, NODE_OBJECT)

    yield from _serve(Server(answer))


@pytest.fixture
def tls(tmp_path: Path) -> tuple[ssl.SSLContext, str]:
    """A server context and the CA file that verifies it: a self-signed certificate for IP 127.0.0.1."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a loopback test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context, str(cert)


def _start(answer: Callable[[http.server.BaseHTTPRequestHandler], None],
           context: ssl.SSLContext | None = None) -> tuple[Server, Iterator[Server]]:
    server = Server(answer)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    running = _serve(server)
    next(running)
    return server, running


def _cluster(server: Server, ca_file: str | None = None) -> k8s_api.Cluster:
    scheme = "https" if ca_file else "http"
    return k8s_api.Cluster(base_url=f"{scheme}://127.0.0.1:{server.port}", token=TOKEN, ca_file=ca_file)


def _redirect(code: int, location: str) -> Callable[[http.server.BaseHTTPRequestHandler], None]:
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(code)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()
    return answer


def test_api_refuses_a_tls_redirect_to_plain_http_and_never_sends_the_token(tls, plain):
    context, ca_file = tls
    target = f"http://127.0.0.1:{plain.port}/api/v1/nodes/{NODE}"
    server, running = _start(_redirect(302, target), context)
    try:
        with pytest.raises(k8s_api.ApiFailed) as exc:
            k8s_api.apply(k8s_node.node_patch([FAIL], NODE), _cluster(server, ca_file))
    finally:
        next(running, None)
    assert "HTTP 302" in str(exc.value) and target in str(exc.value), str(exc.value)
    assert TOKEN not in str(exc.value)
    assert plain.calls == []  # nothing followed the redirect: no request, no token in clear
    assert [c[0] for c in server.calls] == ["GET"]  # and nothing was repeated or patched


@pytest.mark.parametrize("code", [301, 303, 307, 308, 399])
def test_api_refuses_every_redirect_naming_status_and_location(plain, code):
    target = f"http://127.0.0.1:{plain.port}/elsewhere"
    server, running = _start(_redirect(code, target))
    try:
        with pytest.raises(k8s_api.ApiFailed, match=f"HTTP {code}.*{target}"):
            k8s_api.apply(k8s_node.node_patch([FAIL], NODE), _cluster(server))
    finally:
        next(running, None)
    assert plain.calls == [] and len(server.calls) == 1


def _trickle_body(h: http.server.BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "100")
    h.end_headers()
    h.wfile.flush()
    while not h.server.stop.is_set():  # type: ignore[attr-defined]
        h.wfile.write(b" ")
        h.wfile.flush()
        h.server.stop.wait(0.5)  # type: ignore[attr-defined]


def _trickle_headers(h: http.server.BaseHTTPRequestHandler) -> None:
    h.wfile.write(b"HTTP/1.1 200 OK\r\n")
    while not h.server.stop.is_set():  # type: ignore[attr-defined]
        h.wfile.write(b"X")
        h.wfile.flush()
        h.server.stop.wait(0.5)  # type: ignore[attr-defined]


@pytest.mark.parametrize("answer", [_trickle_body, _trickle_headers], ids=["body", "headers"])
def test_api_one_deadline_for_the_whole_call(answer):
    server, running = _start(answer)
    started = time.monotonic()
    try:
        with pytest.raises(k8s_api.ApiFailed, match=f"within the {DEADLINE_S:g} s deadline"):
            k8s_api.apply(k8s_node.node_patch([FAIL], NODE), _cluster(server), deadline_s=DEADLINE_S)
    finally:
        elapsed = time.monotonic() - started
        next(running, None)
    assert elapsed < DEADLINE_S + SLACK_S, elapsed


def test_api_deadline_covers_the_whole_apply_not_each_call(plain):
    """Every GET answers, every PATCH conflicts slowly: three rounds of 1.5 s would pass a per-call deadline."""
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        if h.command == "PATCH":
            h.rfile.read(int(h.headers.get("Content-Length") or 0))
            h.server.stop.wait(1.5)  # type: ignore[attr-defined]
            _json(h, 409, {"message": "the object has been modified"})
        else:
            _json(h, 200, NODE_OBJECT)

    server, running = _start(answer)
    try:
        with pytest.raises(k8s_api.ApiFailed, match="deadline"):
            k8s_api.apply(k8s_node.node_patch([FAIL], NODE), _cluster(server), deadline_s=DEADLINE_S)
    finally:
        next(running, None)
    assert [c[0] for c in server.calls].count("PATCH") < 3


def _report(tmp_path: Path) -> str:
    doc = {"rlcheck_report": 1, "created": "2026-12-01T00:00:00+00:00", "go": False, "decision": "NO-GO",
           "verdicts": [{**FAIL.to_dict(), "kind": "check", "blocking": True, "test_id": "x"}]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: k8s_api.Cluster, node: str = NODE) -> int:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(k8s_api, "in_cluster", lambda: cluster)
    return main(["k8s", "apply-node-status", "--report", _report(tmp_path), "--node", node, "--via", "api"])


@pytest.mark.parametrize("where", ["message", "location"])
def test_cli_prints_the_apis_text_escaped(tmp_path, monkeypatch, capsys, where):
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        if where == "location":
            _redirect(302, "http://127.0.0.1:9/\x1b]0;owned\x07")(h)
        else:
            _json(h, 403, {"message": HOSTILE})

    server, running = _start(answer)
    try:
        assert _cli(tmp_path, monkeypatch, _cluster(server)) == 2
    finally:
        next(running, None)
    err = capsys.readouterr().err
    assert "\\x1b]0;owned\\x07" in err, err
    assert not any(c in err for c in "\x1b\x07\r"), repr(err)
    assert err.count("\n") == 1, repr(err)  # one line: a newline from the API cannot forge a second one


def test_cli_escapes_a_hostile_node_name(tmp_path, monkeypatch, capsys):
    server, running = _start(lambda h: _json(h, 404, {"message": "not found"}))
    try:
        assert _cli(tmp_path, monkeypatch, _cluster(server), node="n\x1b[2J\x07") == 2
    finally:
        next(running, None)
    err = capsys.readouterr().err
    assert "n\\x1b[2J\\x07" in err and "\x1b" not in err and "\x07" not in err, repr(err)


@pytest.mark.parametrize("body", [[1, 2], {"spec": [1]}, {"spec": {"taints": [1, "x"]}}, {"metadata": "x"},
                                  "[" * 100_000])
def test_api_a_node_that_is_no_node_object_is_named(body):
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        if isinstance(body, str):
            data = body.encode()
            h.send_response(200)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        else:
            _json(h, 200, body)

    server, running = _start(answer)
    try:
        with pytest.raises(k8s_api.ApiFailed, match="GET /api/v1/nodes/"):
            k8s_api.apply(k8s_node.node_patch([FAIL], NODE), _cluster(server))
    finally:
        next(running, None)
    assert [c[0] for c in server.calls] == ["GET"]
