"""Rule table of `rlcheck k8s apply-node-status --via api` (rlcheck/deploy/k8s_api.py): the pod's service account as
read from its files and environment, the API server's URL, the request on the wire (headers, body, content type of
each call), how each HTTP status class is taken (2xx kept, 3xx refused, the rest an error with the API's reason cut
to 300 characters), the answer's read bound and its odd shapes (not JSON, chunked, cut short, over the bound), the
Node object's shape, and the whole text of every error a user gets. Every server is a scripted one on 127.0.0.1;
deadlines are the module's own objects, made tiny or already passed (no timing is asserted)."""

from __future__ import annotations

import http.client
import http.server
import json
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rlcheck.deploy import k8s_api, k8s_condition, k8s_node
from rlcheck.verdict import Status, Verdict
from tests.test_k8s_api import FAIL, GPU_TAINT, NODE, OURS, POD_ENV, TOKEN, _account

PATH = f"/api/v1/nodes/{NODE}"
NOW = k8s_condition.NodeStatus(now="2026-12-02T12:00:00Z", namespace="rlcheck")
NODE_OBJECT = {"kind": "Node", "metadata": {"name": NODE, "resourceVersion": "1"}, "spec": {"taints": [GPU_TAINT]}}
SHAPE = "HTTP 200 but no Node object (a JSON object with metadata, and spec.taints a list of objects)"
REFUSED = ("refused; rlcheck never follows a redirect of the API server (the request and its token go to the API "
           "server only); point KUBERNETES_SERVICE_HOST at the API server itself")
OVER = "an answer over 16 MiB (a Node object is a few KiB)"
Answer = Callable[[http.server.BaseHTTPRequestHandler], None]


def reply(code: int, body: bytes | Any = b"", headers: tuple[tuple[str, str], ...] = (), length: bool = True) -> Answer:
    """An answer: the status, the headers, the body (JSON-encoded unless bytes), Content-Length unless length=False
    (then the body ends where the connection closes)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()

    def send(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(code)
        for name, value in headers:
            handler.send_header(name, value)
        if length:
            handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    return send


class Scripted(http.server.ThreadingHTTPServer):
    """Answers each request with the next scripted answer; records each request as it came on the wire: method,
    path, header names as sent (case kept) with their values, body."""

    def __init__(self, answers: tuple[Answer, ...]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers = list(answers)
        self.requests: list[tuple[str, str, list[tuple[str, str]], bytes]] = []
        self.stop = threading.Event()


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Scripted

    def log_message(self, *args: Any) -> None:
        pass

    def _any(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        self.server.requests.append((self.command, self.path, list(self.headers.items()), self.rfile.read(size)))
        self.server.answers.pop(0)(self)

    do_GET = do_PATCH = do_POST = _any  # noqa: N815


@pytest.fixture
def serve() -> Iterator[Callable[..., tuple[Scripted, k8s_api.Cluster]]]:
    servers: list[Scripted] = []

    def start(*answers: Answer) -> tuple[Scripted, k8s_api.Cluster]:
        server = Scripted(answers)
        threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
        servers.append(server)
        return server, k8s_api.Cluster(base_url=f"http://127.0.0.1:{server.server_address[1]}", token=TOKEN,
                                       ca_file=None)
    yield start
    for server in servers:
        server.stop.set()
        server.shutdown()
        server.server_close()


def sent(server: Scripted) -> list[tuple[str, str, list[tuple[str, str]], bytes]]:
    """The requests without the two headers http.client itself adds (Host, Accept-Encoding)."""
    return [(m, p, [h for h in hs if h[0] not in ("Host", "Accept-Encoding")], b) for m, p, hs, b in server.requests]


def deadline(seconds: float = 10.0) -> k8s_api._Deadline:
    return k8s_api._Deadline(seconds)


# --- in_cluster: the pod's service account ---------------------------------------------------------------------------

@pytest.mark.parametrize(("host", "url"), [
    ("10.100.0.1", "https://10.100.0.1:443"),
    ("kubernetes.default.svc", "https://kubernetes.default.svc:443"),
    ("fd00::1", "https://[fd00::1]:443"),  # an IPv6 service address is bracketed in the URL
], ids=["ipv4", "name", "ipv6"])
def test_in_cluster_url_token_without_its_newline_and_ca(tmp_path, host, url):
    cluster = k8s_api.in_cluster({**POD_ENV, "KUBERNETES_SERVICE_HOST": host}, _account(tmp_path))
    assert (cluster.base_url, cluster.token, cluster.ca_file) == (url, TOKEN, str(tmp_path / "ca.crt"))


UNSET = "not inside a Kubernetes pod: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT are unset"


@pytest.mark.parametrize("env", [
    {}, {"KUBERNETES_SERVICE_HOST": "10.100.0.1"}, {"KUBERNETES_SERVICE_PORT": "443"},
    {"KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": "443"},
    {"KUBERNETES_SERVICE_HOST": "10.100.0.1", "KUBERNETES_SERVICE_PORT": ""},
    {"kubernetes_service_host": "10.100.0.1", "kubernetes_service_port": "443"},  # the variables are upper case
], ids=["none", "host-only", "port-only", "host-empty", "port-empty", "lower-case"])
def test_in_cluster_outside_a_pod(tmp_path, env):
    with pytest.raises(ValueError) as exc:
        k8s_api.in_cluster(env, _account(tmp_path))
    assert str(exc.value) == UNSET


def test_in_cluster_token_missing_or_unreadable_names_the_file_and_the_reason(tmp_path):
    need = ": the pod needs automountServiceAccountToken and the rlcheck-node-status ServiceAccount"
    with pytest.raises(ValueError) as exc:
        k8s_api.in_cluster(POD_ENV, _account(tmp_path, token=None))
    assert str(exc.value) == f"no service-account token at {tmp_path / 'token'} (No such file or directory){need}"
    (tmp_path / "token").mkdir()
    with pytest.raises(ValueError) as exc:
        k8s_api.in_cluster(POD_ENV, tmp_path)
    assert str(exc.value) == f"no service-account token at {tmp_path / 'token'} (Is a directory){need}"


@pytest.mark.parametrize("token", ["", "\n", " \t\n"], ids=["empty", "newline", "blank"])
def test_in_cluster_empty_token(tmp_path, token):
    (tmp_path / "token").write_text(token, encoding="utf-8")
    with pytest.raises(ValueError) as exc:
        k8s_api.in_cluster(POD_ENV, _account(tmp_path, token=None))
    assert str(exc.value) == f"{tmp_path / 'token'} is empty"


@pytest.mark.parametrize("ca", ["missing", "directory"])
def test_in_cluster_without_a_ca_file(tmp_path, ca):
    if ca == "directory":
        (tmp_path / "ca.crt").mkdir()
    with pytest.raises(ValueError) as exc:
        k8s_api.in_cluster(POD_ENV, _account(tmp_path, ca=False))
    assert str(exc.value) == f"no cluster CA at {tmp_path / 'ca.crt'}: cannot verify the API server"


# --- _connection: the API server's URL -------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "kind", "host", "port"), [
    ("https://10.0.0.1:6443", http.client.HTTPSConnection, "10.0.0.1", 6443),
    ("https://[fd00::1]:443", http.client.HTTPSConnection, "fd00::1", 443),
    ("http://127.0.0.1:8080", http.client.HTTPConnection, "127.0.0.1", 8080),
    ("http://:8080", http.client.HTTPConnection, "", 8080),  # no host: the empty one, never a made-up name
], ids=["https", "https-ipv6", "http", "no-host"])
def test_connection_kind_address_and_timeout(url, kind, host, port):
    conn = k8s_api._connection(k8s_api.Cluster(base_url=url, token=TOKEN, ca_file=None), 2.5)
    assert (type(conn), conn.host, conn.port, conn.timeout) == (kind, host, port, 2.5)


def _urllib_says(url: str) -> str:
    """What this Python's urllib says of a URL it refuses (its wording differs between patch releases: 3.12.3 words an
    address bracketed twice otherwise than 3.12.1); the rule is that the refusal carries it, after the URL."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.hostname, parts.port  # noqa: B018 - reading them is what refuses
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"{url}: urllib accepts it on this Python")


REFUSED_BY_URLLIB = "{url}: no API server address ({reason})"


@pytest.mark.parametrize(("url", "message"), [
    ("http://127.0.0.1:99999", REFUSED_BY_URLLIB),
    ("https://h:x", REFUSED_BY_URLLIB),
    ("ftp://10.0.0.1:21", "ftp://10.0.0.1:21: not an https:// (or http://) URL of an API server"),
    ("10.0.0.1:443", "10.0.0.1:443: not an https:// (or http://) URL of an API server"),
    ("ftp://h/\x1bc\x07", "ftp://h/\\x1bc\\x07: not an https:// (or http://) URL of an API server"),
    ("https://[fd00::1:443", REFUSED_BY_URLLIB),
    ("https://[[fd00::1]]:443", REFUSED_BY_URLLIB),
], ids=["port-range", "port-text", "ftp", "no-scheme", "control-chars", "ipv6-unclosed", "ipv6-bracketed-twice"])
def test_connection_refuses_what_is_no_api_server_url(url, message):
    if message == REFUSED_BY_URLLIB:
        message = message.format(url=url, reason=_urllib_says(url))
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api._connection(k8s_api.Cluster(base_url=url, token=TOKEN, ca_file=None), 1.0)
    assert str(exc.value) == message


def test_urllib_refuses_each_url_the_table_takes_its_reason_from():
    """Each reason the rows above take from urllib is a refusal with words in it (a URL urllib accepts fails here)."""
    urls = ["http://127.0.0.1:99999", "https://h:x", "https://[fd00::1:443", "https://[[fd00::1]]:443"]
    assert all(_urllib_says(url).strip() for url in urls)
    with pytest.raises(AssertionError, match="urllib accepts it"):
        _urllib_says("https://10.0.0.1:6443")


# --- _read, _json, _message, _node_taints: the answer ----------------------------------------------------------------

class Body:
    """A response whose read1 hands out the given chunks, recording the sizes asked for; length: what a
    Content-Length still promised when the chunks ran out (None: no Content-Length)."""

    def __init__(self, *chunks: bytes, length: int | None = None) -> None:
        self.chunks, self.asked, self.length = list(chunks), [], length

    def read1(self, n: int) -> bytes:
        self.asked.append(n)
        return self.chunks.pop(0) if self.chunks else b""


MIB = 2**20


@pytest.mark.parametrize(("chunks", "whole"), [
    ((), b""),
    ((b'{"a"', b": 1", b"}"), b'{"a": 1}'),
    ((b"x" * (64 * 1024),) * 256, 16 * MIB),  # exactly the bound: kept
    ((b"x" * (16 * MIB - 1), b"y"), 16 * MIB),
], ids=["empty", "chunks-joined", "at-bound-in-64k-reads", "at-bound-two-reads"])
def test_read_joins_every_chunk_up_to_the_bound(chunks, whole):
    resp = Body(*chunks)
    got = k8s_api._read(resp)  # type: ignore[arg-type]
    assert (got if isinstance(whole, bytes) else len(got)) == whole
    assert resp.asked == [64 * 1024] * (len(chunks) + 1)  # one read of at most 64 KiB at a time, to the end


@pytest.mark.parametrize("chunks", [
    (b"x" * (16 * MIB + 1),),
    (b"x" * (16 * MIB), b"y"),
    (b"x" * (8 * MIB), b"x" * (8 * MIB), b"x"),
], ids=["one-read", "bound-then-one", "halves-then-one"])
def test_read_over_the_bound(chunks):
    with pytest.raises(ValueError) as exc:
        k8s_api._read(Body(*chunks))  # type: ignore[arg-type]
    assert str(exc.value) == OVER


@pytest.mark.parametrize(("chunks", "left", "shown"), [
    ((), 5, "IncompleteRead(0 bytes read, 5 more expected)"),
    ((b"ab", b"cd"), 3, "IncompleteRead(4 bytes read, 3 more expected)"),
], ids=["nothing", "two-reads"])
def test_read_short_of_its_content_length(chunks, left, shown):
    with pytest.raises(http.client.IncompleteRead) as exc:
        k8s_api._read(Body(*chunks, length=left))  # type: ignore[arg-type]
    assert (str(exc.value), exc.value.partial, exc.value.expected) == (shown, b"".join(chunks), left)


@pytest.mark.parametrize(("raw", "value"), [
    (b"", None), (b"null", None), (b'{"a": [1]}', {"a": [1]}), (b"[]", []),
    (b"<html>502 Bad Gateway</html>", None), (b"\xff\xfe", None), (b"[" * 100_000, None),
], ids=["empty", "null", "object", "list", "html", "not-utf8", "too-deep"])
def test_json_or_none(raw, value):
    assert k8s_api._json(raw) == value


@pytest.mark.parametrize(("answer", "message"), [
    ({"message": "nodes \"x\" is forbidden"}, "nodes \"x\" is forbidden"), ({"message": 7}, "7"),
    ({}, ""), ({"reason": "NotFound"}, ""), ([], ""), (["message"], ""), (None, ""), ("message", ""),
], ids=["text", "number", "empty", "no-message", "list", "list-with-word", "none", "string"])
def test_message_is_the_apis_own_or_empty(answer, message):
    assert k8s_api._message(answer) == message


@pytest.mark.parametrize(("node", "taints", "version"), [
    ({"metadata": {"resourceVersion": "7"}, "spec": {"taints": [GPU_TAINT]}}, [GPU_TAINT], "7"),
    ({"metadata": {}}, [], None),
    ({"metadata": {"resourceVersion": "2"}, "spec": None}, [], "2"),
    ({"metadata": {}, "spec": {"taints": None}}, [], None),
    ({"metadata": {}, "spec": {"taints": []}}, [], None),
], ids=["taints", "no-spec", "spec-null", "taints-null", "taints-empty"])
def test_node_taints_of_a_node_object(node, taints, version):
    assert k8s_api._node_taints(node, PATH) == (taints, version)


@pytest.mark.parametrize(("node", "shown"), [
    (None, "not JSON"),
    ([1], "[1]"),
    ("node", '"node"'),
    ({"spec": {}}, '{"spec": {}}'),
    ({"metadata": []}, '{"metadata": []}'),
    ({"metadata": {}, "spec": "x"}, '{"metadata": {}, "spec": "x"}'),
    ({"metadata": {}, "spec": []}, '{"metadata": {}, "spec": []}'),
    ({"metadata": {}, "spec": {"taints": "x"}}, '{"metadata": {}, "spec": {"taints": "x"}}'),
    ({"metadata": {}, "spec": {"taints": {}}}, '{"metadata": {}, "spec": {"taints": {}}}'),
    ({"metadata": {}, "spec": {"taints": [1]}}, '{"metadata": {}, "spec": {"taints": [1]}}'),
    ({"metadata": {}, "spec": {"taints": [GPU_TAINT, "x"]}},
     '{"metadata": {}, "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}, "x"]}}'),
    ({"metadata": {}, "spec": {"taints": ["x" * 200]}}, '{"metadata": {}, "spec": {"taints": ["' + "x" * 82),
    ({"metadata": "\x1b[2J"}, '{"metadata": "\\u001b[2J"}'),  # JSON's own escape: no raw ESC
], ids=["not-json", "list", "string", "no-metadata", "metadata-list", "spec-string", "spec-list", "taints-string",
        "taints-object", "taint-number", "one-taint-not-object", "cut-at-120", "escaped"])
def test_node_taints_no_node_object(node, shown):
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api._node_taints(node, PATH)
    assert str(exc.value) == f"GET {PATH}: {SHAPE}: {shown}"


# --- _Deadline ------------------------------------------------------------------------------------------------------

def test_deadline_starts_without_a_socket_and_its_watchdog_never_keeps_the_process():
    watch = deadline(60.0)
    assert watch.sock is None and not watch.passed.is_set()
    timer = watch.watch(http.client.HTTPConnection("127.0.0.1", 9))
    try:
        assert timer.daemon is True
    finally:
        timer.cancel()


@pytest.mark.parametrize("sock", ["none", "unconnected", "connected"])
def test_deadline_watchdog_shuts_what_is_open_and_never_fails_itself(monkeypatch, sock):
    """At the deadline the watchdog marks it passed and shuts the connection's socket down: with none yet (still
    connecting), one the OS refuses to shut (not connected) and a connected one (its peer reads the end)."""
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    conn = http.client.HTTPConnection("127.0.0.1", 9)
    pair = socket.socketpair() if sock == "connected" else None
    conn.sock = pair[0] if pair else socket.socket() if sock == "unconnected" else None
    try:
        watch = deadline(0.0)
        watch.watch(conn).join(30)
        assert watch.passed.is_set() and errors == []
        if pair:
            pair[1].settimeout(30)
            assert pair[1].recv(1) == b""
    finally:
        for s in (*(pair or ()), conn.sock):
            if s is not None:
                s.close()


# --- _exchange and _call: one request -------------------------------------------------------------------------------

def test_request_on_the_wire(serve):
    """GET: the bearer token and Accept only, no body; PATCH: the JSON body with its content type (a merge patch
    unless the call says otherwise)."""
    server, cluster = serve(reply(200, {}), reply(200, {}), reply(200, {}))
    assert k8s_api._call(cluster, "GET", PATH, deadline()) == (200, {})
    assert k8s_api._call(cluster, "PATCH", PATH, deadline(), {"a": 1}) == (200, {})
    assert k8s_api._exchange(cluster, "PATCH", PATH, b"{}", deadline()) == (200, "", b"{}")
    auth = [("Authorization", f"Bearer {TOKEN}"), ("Accept", "application/json")]
    assert sent(server) == [
        ("GET", PATH, auth, b""),
        ("PATCH", PATH, [("Content-Length", "8"), *auth, ("Content-Type", "application/merge-patch+json")],
         b'{"a": 1}'),
        ("PATCH", PATH, [("Content-Length", "2"), *auth, ("Content-Type", "application/merge-patch+json")], b"{}"),
    ]


@pytest.mark.parametrize(("answer", "result"), [
    (reply(200, {"kind": "Node"}), (200, {"kind": "Node"})),
    (reply(201, b""), (201, None)),
    (reply(299, {"message": "kept as it came"}), (299, {"message": "kept as it came"})),
    (reply(400, {"message": "bad patch", "code": 400}), (400, {"message": "bad patch"})),
    (reply(401, b"Unauthorized"), (401, {"message": ""})),
    (reply(404, []), (404, {"message": ""})),
    (reply(409, {"message": "the object has been modified"}), (409, {"message": "the object has been modified"})),
    (reply(500, {"message": "\x1b]0;owned\x07" + "é" * 400}), (500, {"message": "\\x1b]0;owned\\x07" + "é" * 284})),
    (reply(503, {"message": "m" * 301}), (503, {"message": "m" * 300})),
    (reply(503, {"message": "m" * 300}), (503, {"message": "m" * 300})),
], ids=["200", "201-empty", "299-raw", "400", "401-not-json", "404-list", "409", "500-escaped-cut",
        "503-over-300", "503-at-300"])
def test_call_status_classes(serve, answer, result):
    """2xx: the decoded answer as it came; 4xx/5xx: only the API's message, escaped and cut to 300 characters."""
    _, cluster = serve(answer)
    assert k8s_api._call(cluster, "GET", PATH, deadline()) == result


@pytest.mark.parametrize(("code", "location", "shown"), [
    (300, None, "(no Location)"),
    (301, "https://elsewhere.example/api", "https://elsewhere.example/api"),
    (302, "", "(no Location)"),
    (307, "http://10.0.0.9/\x1b[2J" + "a" * 400, "http://10.0.0.9/\\x1b[2J" + "a" * 277),
    (399, "/other", "/other"),
], ids=["300-no-location", "301", "302-empty", "307-escaped-cut", "399"])
def test_call_refuses_every_redirect(serve, code, location, shown):
    server, cluster = serve(reply(code, {}, (("Location", location),) if location is not None else ()))
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api._call(cluster, "PATCH", PATH, deadline(), {"metadata": {}})
    assert str(exc.value) == f"PATCH {PATH}: HTTP {code} redirect to {shown}: {REFUSED}"
    assert len(server.requests) == 1  # never followed


def test_answer_chunked_or_without_a_length_is_read_whole(serve):
    def chunked(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for part in (b'{"kind"', b': "No', b'de"}'):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
    _, cluster = serve(chunked, reply(200, {"kind": "Node"}, length=False))
    assert k8s_api._call(cluster, "GET", PATH, deadline()) == (200, {"kind": "Node"})
    assert k8s_api._call(cluster, "GET", PATH, deadline()) == (200, {"kind": "Node"})


def _cut_short(handler: http.server.BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    handler.wfile.write(b'{"kind": "Node"}')


def _hang_up(handler: http.server.BaseHTTPRequestHandler) -> None:
    handler.close_connection = True


@pytest.mark.parametrize(("answer", "reason"), [
    (reply(200, b" " * (16 * MIB + 1)), OVER),
    # a body shorter than its Content-Length (the server closed mid-answer) is no answer, never a shorter one
    (_cut_short, "IncompleteRead(16 bytes read, 84 more expected)"),
    (_hang_up, "Remote end closed connection without response"),
], ids=["over-the-bound", "cut-short", "hung-up"])
def test_no_answer_names_the_server_and_the_reason(serve, answer, reason):
    _, cluster = serve(answer)
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api._call(cluster, "GET", PATH, deadline())
    assert str(exc.value) == f"GET {PATH}: no answer from {cluster.base_url}: {reason}"


def test_deadline_reached_while_the_body_trickles(serve):
    def trickle(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        handler.wfile.write(b'{"kind"')
        handler.wfile.flush()
        handler.server.stop.wait(60)  # type: ignore[attr-defined]
    _, cluster = serve(trickle)
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api._call(cluster, "GET", PATH, deadline(0.25))
    assert str(exc.value) == (f"GET {PATH}: no full answer from {cluster.base_url} within the 0.25 s deadline "
                              "(connect, headers and body together)")


def test_deadline_reached_while_connecting(serve, monkeypatch):
    """A connect nobody answers (a SYN dropped on the way) is bounded by what is left of the deadline: the
    connection's own timeout, since no socket exists yet for the watchdog to shut."""
    server, cluster = serve()
    watch = deadline(0.2)
    timeouts: list[float | None] = []

    def unanswered(address: Any, timeout: float | None = None, *args: Any, **kwargs: Any) -> socket.socket:
        timeouts.append(timeout)
        watch.passed.wait(60)
        raise TimeoutError("timed out")
    monkeypatch.setattr(socket, "create_connection", unanswered)
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api._call(cluster, "GET", PATH, watch)
    assert str(exc.value) == (f"GET {PATH}: no full answer from {cluster.base_url} within the 0.2 s deadline "
                              "(connect, headers and body together)")
    assert server.requests == [] and len(timeouts) == 1 and timeouts[0] is not None and 0 < timeouts[0] <= 0.2


@pytest.mark.parametrize("left", [0.0, -1.0], ids=["at-deadline", "past"])
def test_deadline_passed_before_sending_sends_nothing(serve, left):
    server, cluster = serve()
    watch = deadline(0.25)
    watch.left = lambda: left  # type: ignore[method-assign]
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api._call(cluster, "GET", PATH, watch)
    assert str(exc.value) == f"GET {PATH}: not sent: the 0.25 s deadline passed"
    assert server.requests == []


def test_under_a_second_left_is_still_sent_with_what_is_left(serve, monkeypatch):
    server, cluster = serve(reply(200, {}))
    timeouts: list[float | None] = []
    real = k8s_api._connection
    monkeypatch.setattr(k8s_api, "_connection", lambda c, t: timeouts.append(t) or real(c, t))
    assert k8s_api._call(cluster, "GET", PATH, deadline(0.9)) == (200, {})
    assert len(server.requests) == 1 and len(timeouts) == 1 and timeouts[0] is not None and 0 < timeouts[0] <= 0.9


# --- apply: the whole node-status pass --------------------------------------------------------------------------------

def node_patch(node: str = NODE) -> k8s_node.NodePatch:
    return k8s_node.node_patch([FAIL], node, "2026-12-01T00:00:00+00:00")


def test_apply_with_condition_and_event_calls_and_content_types(serve):
    server, cluster = serve(reply(200, NODE_OBJECT), reply(200, {}), reply(200, {}), reply(201, {}))
    assert k8s_api.apply(node_patch(), cluster, status=NOW) == [
        f"GET {PATH}", f"PATCH {PATH} (taints)", f"PATCH {PATH}/status", "POST /api/v1/namespaces/rlcheck/events"]
    types = [dict(headers).get("Content-Type") for _, _, headers, _ in server.requests]
    assert types == [None, "application/merge-patch+json", "application/strategic-merge-patch+json",
                     "application/json"]
    assert json.loads(server.requests[1][3])["spec"] == {"taints": [GPU_TAINT, OURS]}


@pytest.mark.parametrize("code", [200, 201])
def test_apply_event_created_is_200_or_201(serve, code):
    _, cluster = serve(reply(200, NODE_OBJECT), reply(200, {}), reply(200, {}), reply(code, {}))
    assert k8s_api.apply(node_patch(), cluster, status=NOW)[-1] == "POST /api/v1/namespaces/rlcheck/events"


def test_apply_quotes_every_name_into_one_path_segment(serve):
    """A node or namespace name with a slash stays one segment (%2F): never another object's path."""
    server, cluster = serve(reply(200, NODE_OBJECT), reply(200, {}), reply(200, {}), reply(201, {}))
    status = k8s_condition.NodeStatus(now=NOW.now, namespace="ns/x")
    calls = k8s_api.apply(node_patch("a/b"), cluster, status=status)
    paths = ["/api/v1/nodes/a%2Fb", "/api/v1/nodes/a%2Fb", "/api/v1/nodes/a%2Fb/status",
             "/api/v1/namespaces/ns%2Fx/events"]
    assert [p for _, p, _, _ in server.requests] == paths
    assert calls == [f"GET {paths[0]}", f"PATCH {paths[1]} (taints)", f"PATCH {paths[2]}", f"POST {paths[3]}"]


@pytest.mark.parametrize(("answer", "message"), [
    (reply(404, {"message": f'nodes "{NODE}" not found'}), f'HTTP 404: nodes "{NODE}" not found'),
    (reply(404, {}), "HTTP 404: no node object"),
    (reply(404, []), "HTTP 404: no node object"),
    (reply(500, b"<html>oops</html>"), "HTTP 500: no node object"),
    (reply(201, {"message": "created?"}), "HTTP 201: created?"),
    (reply(204, b""), "HTTP 204: no node object"),
    (reply(200, b"<html>oops</html>"), f"{SHAPE}: not JSON"),
    (reply(200, b""), f"{SHAPE}: not JSON"),
], ids=["404", "404-no-message", "404-list", "500-not-json", "201", "204", "200-not-json", "200-empty"])
def test_apply_read_refused(serve, answer, message):
    server, cluster = serve(answer)
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api.apply(node_patch(), cluster)
    assert str(exc.value) == f"GET {PATH}: {message}"
    assert len(server.requests) == 1


@pytest.mark.parametrize(("code", "body", "reason"), [
    (403, {"message": "nodes/status is forbidden"}, "nodes/status is forbidden"),
    (201, {"message": "not 200"}, "not 200"),
    (500, b"not json", ""),
], ids=["403", "201", "500-not-json"])
def test_apply_condition_refused(serve, code, body, reason):
    _, cluster = serve(reply(200, NODE_OBJECT), reply(200, {}), reply(code, body))
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api.apply(node_patch(), cluster, status=NOW)
    assert str(exc.value) == (f"PATCH {PATH}/status: HTTP {code}: {reason} (label and taint were applied; the "
                              "condition needs `patch` on nodes/status)")


@pytest.mark.parametrize(("code", "body", "reason"), [
    (403, {"message": "events is forbidden"}, "events is forbidden"),
    (202, {"message": "accepted"}, "accepted"),
    (500, b"not json", ""),
], ids=["403", "202", "500-not-json"])
def test_apply_event_refused(serve, code, body, reason):
    _, cluster = serve(reply(200, NODE_OBJECT), reply(200, {}), reply(200, {}), reply(code, body))
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api.apply(node_patch(), cluster, status=NOW)
    assert str(exc.value) == (f"POST /api/v1/namespaces/rlcheck/events: HTTP {code}: {reason} (label, taint and "
                              "condition were applied; the Event needs `create` on events in rlcheck)")


def test_apply_without_a_change_of_status_sends_no_event(serve):
    node = {**NODE_OBJECT, "metadata": {**NODE_OBJECT["metadata"], "labels": {"rlcheck.io/status": "fail"}},
            "spec": {"taints": [GPU_TAINT, OURS]}}
    server, cluster = serve(reply(200, node), reply(200, {}), reply(200, {}))
    assert k8s_api.apply(node_patch(), cluster, status=NOW) == [f"GET {PATH}", f"PATCH {PATH}",
                                                                f"PATCH {PATH}/status"]
    assert len(server.requests) == 3


def test_apply_patch_refused_and_conflicts(serve):
    _, cluster = serve(reply(200, NODE_OBJECT), reply(422, {"message": "invalid taint"}))
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api.apply(node_patch(), cluster)
    assert str(exc.value) == f"PATCH {PATH}: HTTP 422: invalid taint"
    _, cluster = serve(*[reply(200, NODE_OBJECT), reply(409, {"message": "modified"})] * 3)
    with pytest.raises(k8s_api.ApiFailed) as exc:
        k8s_api.apply(node_patch(), cluster)
    assert str(exc.value) == f"PATCH {PATH}: the node changed under every one of 3 tries (HTTP 409)"


def test_apply_pass_on_a_clean_node_sends_no_taints(serve):
    server, cluster = serve(reply(200, NODE_OBJECT), reply(200, {}))
    patch = k8s_node.node_patch([Verdict(check_id="gpu_node_health", status=Status.PASS, summary="ok")], NODE)
    assert k8s_api.apply(patch, cluster) == [f"GET {PATH}", f"PATCH {PATH}"]
    assert "spec" not in json.loads(server.requests[1][3])
