"""The reward service as a real process on loopback: health, metrics, keep-alive, 503 past the queue bound, SIGTERM,
start failures."""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from rlcheck.process import subproc
from rlcheck.process.wait import free_loopback_port
from rlcheck.reward.harness import REPO_ROOT, ServerProcess, running_server, service_argv
from rlcheck.reward.metrics import parse_text
from tests.slime_client import Reply, post_like_slime, slime_session

TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    port = free_loopback_port()
    argv = service_argv(port, "--backend", "math_verify", "--scorer-timeout-s", str(TIMEOUT_S), "--workers", "2")
    with running_server(argv, port=port, log_path=tmp_path_factory.mktemp("reward") / "service.log") as server:
        yield server


def test_reward_service_health_scores_known_pairs(service: ServerProcess) -> None:
    resp = requests.get(service.base_url + "/health", timeout=10)
    body = resp.json()
    assert resp.status_code == 200, body
    assert (body["status"], body["backend"], body["problems"]) == ("ok", "math_verify", [])
    assert body["scorer_processes"]["idle"] + body["scorer_processes"]["busy"] == 2


def test_reward_service_health_fails_when_every_answer_scores_0(tmp_path: Path) -> None:
    always_zero = Path(__file__).parent / "data" / "reward" / "always_zero"  # a math-verify that says "wrong"
    port = free_loopback_port()
    env = {"PYTHONPATH": os.pathsep.join([str(always_zero), str(REPO_ROOT)])}
    with running_server(service_argv(port, "--backend", "math_verify", "--workers", "1"), port=port,
                        log_path=tmp_path / "svc.log",
                        ready_path="/metrics", env=env) as server:
        resp = requests.get(server.base_url + "/health", timeout=10)
        score = requests.post(server.base_url + "/score", json={"prompt": "p", "response": "\\boxed{2}", "label": "2"},
                              timeout=10)
    assert score.json() == 0.0  # what SLIME would train on, with no error anywhere
    assert resp.status_code == 503
    body = resp.json()
    assert body["status"] == "fail" and len(body["problems"]) == 1
    assert "got ok 0.0" in body["problems"][0] and "expected 1.0" in body["problems"][0]


def test_reward_service_scores_on_root_path_too(service: ServerProcess) -> None:
    # SLIME posts to --rm-url verbatim, and its help text's example URL has no path.
    resp = requests.post(service.base_url + "/", json={"prompt": "p", "response": "\\boxed{4}", "label": "4"},
                         timeout=10)
    assert (resp.status_code, resp.json(), resp.headers["X-Reward-Status"]) == (200, 1.0, "ok")
    assert len(resp.headers["X-Request-ID"]) == 16


def test_reward_service_keeps_a_safe_client_request_id_only(service: ServerProcess) -> None:
    body = {"prompt": "p", "response": "\\boxed{4}", "label": "4"}
    kept = requests.post(service.base_url + "/score", json=body, headers={"X-Request-ID": "rollout-7.sample-3"},
                         timeout=10)
    replaced = requests.post(service.base_url + "/score", json=body, headers={"X-Request-ID": "a b' -> fallback"},
                             timeout=10)
    assert kept.headers["X-Request-ID"] == "rollout-7.sample-3"
    assert replaced.headers["X-Request-ID"] != "a b' -> fallback"  # it would forge log lines
    assert len(replaced.headers["X-Request-ID"]) == 16


def test_reward_service_metrics_are_prometheus_text(service: ServerProcess) -> None:
    resp = requests.get(service.base_url + "/metrics", timeout=10)
    assert resp.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    for name in ("rlcheck_reward_requests_total", "rlcheck_reward_scores_total", "rlcheck_reward_scorer_errors_total",
                 "rlcheck_reward_scorer_timeouts_total", "rlcheck_reward_request_duration_seconds"):
        assert f"# TYPE {name} " in resp.text


def test_reward_service_keeps_an_idle_connection_past_uvicorn_default(service: ServerProcess) -> None:
    # uvicorn closes idle connections after 5 s by default; SLIME's aiohttp reuses them for 15 s, and a
    # POST written into a connection the server is closing fails (aiohttp does not resend a POST).
    conn = http.client.HTTPConnection("127.0.0.1", int(service.base_url.rsplit(":", 1)[1]), timeout=10)
    body = json.dumps({"prompt": "p", "response": "\\boxed{1}", "label": "1"})
    try:
        conn.request("POST", "/score", body=body, headers={"Content-Type": "application/json"})
        assert conn.getresponse().read() == b"1.0"
        local = conn.sock.getsockname()
        time.sleep(5.5)
        conn.request("POST", "/score", body=body, headers={"Content-Type": "application/json"})
        assert conn.getresponse().read() == b"1.0"
        assert conn.sock.getsockname() == local  # the same connection, not a new one
    finally:
        conn.close()


def _post(base_url: str, response: str) -> requests.Response:
    return requests.post(base_url + "/score", json={"prompt": "p", "response": response, "label": "42"}, timeout=20)


def _live_group_members(pgid: int, wait_s: float = 5.0) -> list[int]:
    """Processes of group pgid that are still running (not zombies), after waiting up to wait_s for none."""
    deadline = time.monotonic() + wait_s
    while True:
        live = []
        for entry in Path("/proc").iterdir():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                live.append(int(entry.name))
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.1)


def _stop_by_pid_only(server: ServerProcess, sig: signal.Signals) -> int:
    """Signal the service's PID alone (as Kubernetes does) and wait for it; leftovers are then looked for
    before the harness's own clean-up (which SIGKILLs the whole group) could hide them."""
    os.kill(server.pid, sig)
    return server.proc.wait(timeout=15)


def test_reward_service_sigterm_finishes_in_flight_requests(tmp_path: Path) -> None:
    port = free_loopback_port()
    argv = service_argv(port, "--backend", "math_verify", "--scorer-timeout-s", str(TIMEOUT_S), "--workers", "2",
                        "--demote-after-cpu-s", "0")
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server, \
            concurrent.futures.ThreadPoolExecutor(2) as pool:
        frozen = pool.submit(_post, server.base_url, "\\boxed{9^{9^{9^{9}}}}")
        normal = pool.submit(_post, server.base_url, "\\boxed{42}")
        time.sleep(0.3)
        started = time.monotonic()
        # uvicorn re-raises the signal once it has shut down cleanly
        assert _stop_by_pid_only(server, signal.SIGTERM) == -signal.SIGTERM, server.log_tail()
        assert time.monotonic() - started < TIMEOUT_S + 5
        assert not _live_group_members(server.pid)  # no forkserver or scorer process outlived the service
        # its reward (the fallback: it used up its CPU budget) or, when its budget outlasts the shutdown grace,
        # 503 + Retry-After for SLIME to retry elsewhere: never a reset, never a 500
        if frozen.result().status_code == 200:
            assert frozen.result().json() == 0.0 and frozen.result().headers["X-Reward-Status"] == "timeout"
        else:
            assert frozen.result().status_code == 503 and "Retry-After" in frozen.result().headers
        assert normal.result().json() == 1.0
    log = server.log_path.read_text()
    assert "Traceback" not in log and "Finished server process" in log
    assert f"request_id={frozen.result().headers['X-Request-ID']}" in log or frozen.result().status_code == 503


def _wait_for_pool(base_url: str, *, busy: int, queued: int, wait_s: float = 60.0) -> dict[str, float]:
    """/metrics once the request pool has `busy` scorings running and `queued` waiting (a bound, not a timing)."""
    deadline = time.monotonic() + wait_s
    while True:
        metrics = parse_text(requests.get(base_url + "/metrics", timeout=10).text)
        now = (metrics['rlcheck_reward_scorer_processes{state="busy"}'], metrics["rlcheck_reward_queued_scorings"])
        if now == (busy, queued) or time.monotonic() > deadline:
            assert now == (busy, queued), f"(busy, queued) = {now} after {wait_s} s"
            return metrics
        time.sleep(0.05)


def test_reward_service_past_max_queued_says_503_with_retry_after(tmp_path: Path) -> None:
    # one scorer process, none extra for slow scorings, one place in line: the frozen scoring holds the
    # process (2 CPU s, and a wall bound far past any wait here), the next request waits, the one after is past
    port = free_loopback_port()
    argv = service_argv(port, "--backend", "math_verify", "--workers", "1", "--max-slow-workers", "0",
                        "--max-queued", "1", "--demote-after-cpu-s", "0", "--scorer-timeout-s", "2",
                        "--scorer-wall-timeout-s", "60")
    body = {"prompt": "p", "response": "\\boxed{42}", "label": "42"}
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server, \
            concurrent.futures.ThreadPoolExecutor(2) as pool:
        url = server.base_url + "/score"
        frozen = pool.submit(requests.post, url, json={**body, "response": "\\boxed{9^{9^{9^{9}}}}"}, timeout=120)
        _wait_for_pool(server.base_url, busy=1, queued=0)
        at_bound = pool.submit(requests.post, url, json=body, timeout=120)  # the one place in line: it waits
        _wait_for_pool(server.base_url, busy=1, queued=1)
        other = {**body, "response": "\\boxed{43}", "label": "43"}  # the same body would share the scoring in line
        past = requests.post(url, json=other, timeout=30)
        retried = asyncio.run(_post_once_like_slime(url, other))  # SLIME retries a 503 until it is scored
        metrics = parse_text(requests.get(server.base_url + "/metrics", timeout=10).text)
    assert past.status_code == 503, past.text
    assert past.headers["Retry-After"].isdigit() and int(past.headers["Retry-After"]) >= 1  # delay-seconds
    assert "1 scorings already wait for a process (--max-queued)" in past.json()["detail"]
    assert f"request_id={past.headers['X-Request-ID']}" in server.log_path.read_text()
    assert (at_bound.result().status_code, at_bound.result().json()) == (200, 1.0)
    assert frozen.result().headers["X-Reward-Status"] == "timeout"
    assert (retried.ok, retried.value) == (True, 1.0), retried.errors
    assert metrics['rlcheck_reward_requests_total{code="503"}'] == retried.attempts  # the first, then any retry's
    assert metrics['rlcheck_reward_requests_total{code="200"}'] == 3


async def _post_once_like_slime(url: str, body: dict[str, str]) -> Reply:
    async with slime_session() as session:
        return await post_like_slime(session, url, body)


def test_reward_service_boxed_backend_with_reward_key(tmp_path: Path) -> None:
    port = free_loopback_port()
    argv = service_argv(port, "--backend", "boxed", "--reward-key", "score", "--workers", "1")
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server:
        resp = requests.post(server.base_url + "/score", timeout=10,
                             json={"prompt": [{"role": "user", "content": "q"}], "response": "\\boxed{x+1}",
                                   "label": "x + 1"})
        assert resp.json() == {"score": 1.0}  # SLIME: --reward-key score
        assert requests.get(server.base_url + "/health", timeout=10).json()["backend"] == "boxed"


def test_reward_service_port_in_use_exits_3_and_says_why() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subproc.run(service_argv(port, "--workers", "1"), timeout_s=60,
                           env=subproc.child_env([str(Path(__file__).resolve().parents[1])]))
    assert (done.timed_out, done.returncode) == (False, 3), done.tail()  # uvicorn's startup-failure code
    assert "address already in use" in done.stderr


def test_reward_service_sigint_from_a_terminal_is_a_clean_stop(tmp_path: Path) -> None:
    # Ctrl-C reaches the whole process group: scorer processes must leave the stop to the front.
    port = free_loopback_port()
    with running_server(service_argv(port, "--workers", "1"), port=port, log_path=tmp_path / "svc.log") as server:
        os.killpg(server.pid, signal.SIGINT)
        assert server.proc.wait(timeout=15) == 0
        assert not _live_group_members(server.pid)
    log = server.log_path.read_text()
    assert "Traceback" not in log and "Finished server process" in log
