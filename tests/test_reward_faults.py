"""Fault injection on a real reward service (loopback): a killed front, SIGTERM under load, hostile clients.

Each hostile client is recorded here as the bytes it sends and when; each test also shows the other
side of its bound (a prompt client is served, a normal request still gets its reward).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
import requests

from rlcheck.process.wait import free_loopback_port
from rlcheck.reward.harness import ServerProcess, running_server, service_argv
from rlcheck.reward.metrics import parse_text

READ_TIMEOUT_S = 1.0
MARGIN_S = 2.0  # a timer, a close and a loaded 2-core machine
NORMAL = {"prompt": "p", "response": "so \\boxed{(x+1)^2}", "label": "x^2+2x+1"}


def _group(pgid: int) -> list[int]:
    """Running (not zombie) processes of process group pgid."""
    live = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            live.append(int(entry.name))
    return live


def test_reward_fault_sigkill_of_the_front_leaves_no_process_behind(tmp_path: Path) -> None:
    port = free_loopback_port()
    argv = service_argv(port, "--backend", "math_verify", "--workers", "2", "--scorer-timeout-s", "30",
                        "--scorer-wall-timeout-s", "60")
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server:
        # a scorer busy in C (sympy's 9**387420489) when the front dies: no signal handler of its own runs
        body = {"prompt": "p", "response": "\\boxed{9^{9^{9^{9}}}}", "label": "1"}
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        data = json.dumps(body).encode()
        sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        time.sleep(1.0)
        before = _group(server.pid)
        assert len(before) >= 4, before  # the front, the forkserver, scorer processes (health and requests)
        os.kill(server.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while _group(server.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _group(server.pid)
        sock.close()
    assert left == [], f"still running 5 s after SIGKILL of the front: {left} (of {before})"


async def _post_all(url: str, bodies: list[dict], after_s: float, stop: ServerProcess) -> list[int | str]:
    async def one(session: aiohttp.ClientSession, body: dict) -> int | str:
        try:
            async with session.post(url, json=body) as resp:
                await resp.read()
                return resp.status
        except aiohttp.ClientError as exc:  # a connection the closing server refused: SLIME retries it
            return type(exc).__name__

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100),
                                     timeout=aiohttp.ClientTimeout(total=60)) as session:
        tasks = [asyncio.ensure_future(one(session, b)) for b in bodies]
        await asyncio.sleep(after_s)
        await asyncio.to_thread(stop.stop, 20.0)
        return list(await asyncio.gather(*tasks))


def test_reward_fault_sigterm_with_80_in_flight_gives_no_500(tmp_path: Path) -> None:
    port = free_loopback_port()
    # one process, 1 s of CPU per slow scoring: the queue (about 10 s) outlasts uvicorn's graceful timeout
    argv = service_argv(port, "--backend", "math_verify", "--workers", "1", "--max-slow-workers", "0",
                        "--scorer-timeout-s", "1", "--scorer-wall-timeout-s", "2", "--demote-after-cpu-s", "0")
    slow = {"prompt": "p", "response": "\\boxed{7^{12345678}}", "label": "1"}
    bodies = [slow if i % 8 == 0 else NORMAL for i in range(80)]
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server:
        statuses = asyncio.run(_post_all(server.base_url + "/score", bodies, 0.5, server))
    assert server.stopped is not None and server.stopped.by_sigterm, server.log_tail()
    assert 500 not in statuses, statuses
    assert set(statuses) <= {200, 503, "ClientConnectorError", "ServerDisconnectedError"}, statuses
    assert statuses.count(503) >= 1, statuses  # what it could not score within the shutdown grace: 503
    assert "Traceback" not in server.log_path.read_text()


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    port = free_loopback_port()
    argv = service_argv(port, "--workers", "1", "--read-timeout-s", str(READ_TIMEOUT_S), "--max-connections", "16")
    with running_server(argv, port=port, log_path=tmp_path_factory.mktemp("faults") / "service.log") as server:
        yield server


def _connect(server: ServerProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", int(server.base_url.rsplit(":", 1)[1])), timeout=10)


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """(did the server close it within seconds, what it sent before)."""
    sock.settimeout(0.1)
    got, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True, got
        if not chunk:
            return True, got
        got += chunk
    return False, got


def test_reward_fault_header_dribbling_client_is_closed(bounded: ServerProcess) -> None:
    dribbler = _connect(bounded)
    dribbler.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()
    closed = False
    while time.monotonic() - started < READ_TIMEOUT_S + MARGIN_S and not closed:
        try:
            dribbler.sendall(b"X-A: b\r\n")  # one header line every 0.2 s, never the blank line
        except OSError:
            closed = True
            break
        closed, _ = _closed_within(dribbler, 0.2)
    assert closed, "a client dribbling headers kept its connection"
    assert time.monotonic() - started >= READ_TIMEOUT_S - 0.1
    # the other side: a client that sends its request promptly is served on a connection kept alive
    with requests.Session() as session:
        for _ in range(2):
            assert session.post(bounded.base_url + "/score", json=NORMAL, timeout=10).json() == 1.0
    assert "no complete request headers within 1 s" in bounded.log_path.read_text()


def test_reward_fault_stalled_body_gets_408_and_is_dropped(bounded: ServerProcess) -> None:
    stalled = _connect(bounded)
    stalled.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 4194304\r\n\r\n" + b" " * 1_000_000)  # a quarter of a 4 MiB body, then nothing
    closed, reply = _closed_within(stalled, READ_TIMEOUT_S + MARGIN_S)
    assert closed and reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert b"body not complete after 1 s (1000000 bytes arrived" in reply
    # the other side: a body sent in pieces that arrives within the timeout is scored
    slow = _connect(bounded)
    data = json.dumps(NORMAL).encode()
    slow.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(data)}\r\n\r\n".encode() + data[:10])
    time.sleep(READ_TIMEOUT_S / 3)
    slow.sendall(data[10:])
    _, reply = _closed_within(slow, 3.0)
    assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"1.0"), reply[:200]


def test_reward_fault_client_gone_mid_body_logs_one_line(bounded: ServerProcess) -> None:
    gone = _connect(bounded)
    gone.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"{" * 1000)
    time.sleep(0.2)
    gone.close()
    deadline = time.monotonic() + 5
    log = ""
    while "client disconnected after 1000 bytes" not in log and time.monotonic() < deadline:
        time.sleep(0.1)
        log = bounded.log_path.read_text()
    assert "client disconnected after 1000 bytes of the body" in log
    assert "Traceback" not in log
    metrics = parse_text(requests.get(bounded.base_url + "/metrics", timeout=10).text)
    assert metrics['rlcheck_reward_requests_total{code="499"}'] >= 1


def test_reward_fault_connection_cap_says_503_then_recovers(bounded: ServerProcess) -> None:
    idle = [_connect(bounded) for _ in range(16)]  # at the cap, each before its headers
    time.sleep(0.2)
    refused = requests.post(bounded.base_url + "/score", json=NORMAL, timeout=10)
    assert refused.status_code == 503
    for sock in idle:  # the header timeout frees them; after it, requests are served again
        assert _closed_within(sock, READ_TIMEOUT_S + MARGIN_S)[0]
    time.sleep(0.2)
    assert requests.post(bounded.base_url + "/score", json=NORMAL, timeout=10).json() == 1.0
