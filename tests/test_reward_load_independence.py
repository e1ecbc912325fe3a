"""No reward depends on load: a scoring that outlives its request's wait goes on, the reply is 503 +
Retry-After, and SLIME's retry gets the real reward; `--reply-mode wait` waits instead (Miles never
retries); SIGTERM answers every request in flight, 512 of them, with no reset and no 500.

A host with no CPU to spare is played by SIGSTOP on the scorer processes (no timing is asserted beyond
generous bounds); heavy load lives in benchmarks/reward_load_busy.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from rlcheck.process.wait import free_loopback_port
from rlcheck.reward.harness import ServerProcess, running_server, service_argv
from rlcheck.reward.metrics import parse_text
from tests.slime_client import Reply, post_like_slime, slime_session

RIGHT = {"prompt": "p", "response": "so \\boxed{(x+1)^2}", "label": "x^2+2x+1"}


def _scorer_pids(front_pid: int) -> list[int]:
    """The front's descendants (forkserver and scorer processes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [front_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@contextmanager
def _frozen_scorers(server: ServerProcess) -> Iterator[None]:
    """A host that gives the scorers no CPU at all, until the block ends."""
    pids = _scorer_pids(server.pid)
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def _metrics(server: ServerProcess) -> dict[str, float]:
    return parse_text(requests.get(server.base_url + "/metrics", timeout=10).text)


async def _post(url: str, payload: dict[str, str], attempts: int = 10) -> Reply:
    async with slime_session() as session:
        return await post_like_slime(session, url, payload, attempts=attempts)


async def _post_while_frozen(server: ServerProcess, frozen_s: float, attempts: int = 10) -> Reply:
    with _frozen_scorers(server):
        task = asyncio.ensure_future(_post(server.base_url + "/score", RIGHT, attempts))
        await asyncio.sleep(frozen_s)
    return await task


def test_reward_load_scoring_past_the_wall_bound_is_503_and_the_retry_gets_the_reward(tmp_path: Path) -> None:
    port = free_loopback_port()
    argv = service_argv(port, "--workers", "1", "--scorer-timeout-s", "1", "--scorer-wall-timeout-s", "1")
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server:
        reply = asyncio.run(_post_while_frozen(server, frozen_s=3.0))
        metrics = _metrics(server)
    assert (reply.ok, reply.value, reply.reward_status) == (True, 1.0, "ok"), reply.errors
    assert reply.attempts >= 2 and all("HTTP 503" in e for e in reply.errors), reply.errors
    assert metrics['rlcheck_reward_unavailable_total{reason="pending"}'] >= 1
    assert not any(k.startswith("rlcheck_reward_fallbacks_total{") for k in metrics)  # no fallback at all
    assert metrics['rlcheck_reward_requests_total{code="200"}'] == 1


def test_reward_load_wait_mode_answers_the_reward_without_a_retry(tmp_path: Path) -> None:
    port = free_loopback_port()
    argv = service_argv(port, "--workers", "1", "--scorer-timeout-s", "1", "--scorer-wall-timeout-s", "1",
                        "--reply-mode", "wait", "--wait-reply-s", "60")
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server:
        reply = asyncio.run(_post_while_frozen(server, frozen_s=3.0, attempts=1))  # Miles: one attempt
    assert (reply.ok, reply.value, reply.attempts) == (True, 1.0, 1), reply.errors
    assert reply.latency_s >= 3.0


def test_reward_load_cpu_budget_alone_gives_the_fallback(tmp_path: Path) -> None:
    port = free_loopback_port()
    argv = service_argv(port, "--workers", "1", "--scorer-timeout-s", "0.5", "--scorer-wall-timeout-s", "30")
    frozen = {"prompt": "p", "response": "\\boxed{9^{9^{9^{9}}}}", "label": "1"}  # math_verify would hang; here:
    slow = {"prompt": "p", "response": "\\boxed{(x**2-1)**600/(x-1)**600/(x+1)**598}", "label": "x^2+2x+1"}
    with running_server(argv, port=port, log_path=tmp_path / "service.log") as server:
        replies = [asyncio.run(_post(server.base_url + "/score", body, attempts=1)) for body in (frozen, slow)]
        metrics = _metrics(server)
    assert (replies[0].value, replies[0].reward_status) == (0.0, "ok")  # SLIME's guard: giant powers are 0
    assert (replies[1].ok, replies[1].value, replies[1].reward_status) == (True, 0.0, "timeout")
    assert metrics['rlcheck_reward_fallbacks_total{reason="timeout"}'] == 1


async def _sigterm_with_in_flight(server: ServerProcess, n: int) -> tuple[list[Reply], int | None]:
    async with slime_session(connections=n, total_timeout_s=60) as session:
        tasks = [asyncio.ensure_future(post_like_slime(
            session, server.base_url + "/score",
            {"prompt": "p", "response": f"\\boxed{{{i}}}", "label": str(i)}, attempts=1)) for i in range(n)]
        await asyncio.sleep(0.3)
        stopped = await asyncio.to_thread(server.stop, 30.0)
        return list(await asyncio.gather(*tasks)), stopped.returncode


def test_reward_load_sigterm_answers_512_in_flight_without_a_reset(tmp_path: Path) -> None:
    port = free_loopback_port()
    with running_server(service_argv(port, "--workers", "2"), port=port, log_path=tmp_path / "service.log") as server:
        started = time.monotonic()
        replies, returncode = asyncio.run(_sigterm_with_in_flight(server, 512))
    assert returncode == -signal.SIGTERM and time.monotonic() - started < 60
    statuses = [r.status for r in replies]
    assert sum(r.resets for r in replies) == 0, [r.errors for r in replies if r.resets][:5]
    assert set(statuses) <= {200, 503}, sorted(set(map(str, statuses)))
    assert all(r.value == 1.0 for r in replies if r.status == 200)  # a reward replied is the right one
