"""Drive a reward server like SLIME does and record what every request and /health probe saw."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from benchmarks.reward_load.workload import Request
from tests.slime_client import SLIME_CONNECTIONS, Reply, post_like_slime, slime_session

HEALTH_INTERVAL_S = 0.25
HEALTH_TIMEOUT_S = 5.0  # longer than a probe's 1 s, so a slow /health is measured, not just failed


@dataclass(kw_only=True, slots=True)
class Sent:
    request: Request
    reply: Reply | None = None
    """None: the phase stopped before the request got an outcome (latency_s is then how long it waited)."""
    latency_s: float = 0.0


@dataclass(kw_only=True, slots=True)
class PhaseLog:
    sent: list[Sent] = field(default_factory=list)
    health: list[tuple[float, int | None]] = field(default_factory=list)
    """(latency_s, HTTP status or None when it got no reply within HEALTH_TIMEOUT_S)."""
    wall_s: float = 0.0
    stop_reason: str = "all requests answered"
    unsent: int = 0


async def _probe_health(url: str, log: PhaseLog, stop: asyncio.Event) -> None:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HEALTH_TIMEOUT_S)) as session:
        while not stop.is_set():
            started = time.monotonic()
            status: int | None = None
            try:
                async with session.get(url) as resp:
                    await resp.read()
                    status = resp.status
            except (aiohttp.ClientError, TimeoutError):
                pass
            log.health.append((time.monotonic() - started, status))
            try:
                await asyncio.wait_for(stop.wait(), HEALTH_INTERVAL_S)
            except TimeoutError:
                pass


async def _send_all(session: aiohttp.ClientSession, url: str, queue: list[Request], log: PhaseLog,
                    stop: asyncio.Event, deadline: float) -> None:
    def give_up(reply: Reply) -> bool:
        if reply.timeouts:  # SLIME's 120 s client timeout: the server stopped answering; the run ends here
            log.stop_reason = "a request reached SLIME's 120 s client timeout"
            stop.set()
        return stop.is_set() or time.monotonic() >= deadline

    while queue and not stop.is_set():
        item = Sent(request=queue.pop())
        log.sent.append(item)
        started = time.monotonic()
        try:
            item.reply = await post_like_slime(session, url, item.request.payload, give_up=give_up)
            item.latency_s = item.reply.latency_s
        finally:  # cancelled when the phase stops: it waited this long without an outcome
            if item.reply is None:
                item.latency_s = time.monotonic() - started


async def run_phase(base_url: str, requests: list[Request], *, cap_s: float) -> PhaseLog:
    """Send every request with 64 in flight; stop at the first client timeout or after cap_s."""
    log, stop = PhaseLog(), asyncio.Event()
    queue = list(reversed(requests))
    started = time.monotonic()
    deadline = started + cap_s
    health = asyncio.create_task(_probe_health(base_url + "/health", log, stop))
    async with slime_session() as session:
        senders = {asyncio.create_task(_send_all(session, base_url + "/score", queue, log, stop, deadline))
                   for _ in range(SLIME_CONNECTIONS)}
        waiting = set(senders)
        while waiting and not stop.is_set():
            if time.monotonic() >= deadline:
                log.stop_reason = f"phase cap of {cap_s:g} s"
                break
            stopper = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({*waiting, stopper}, timeout=deadline - time.monotonic(),
                                         return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            waiting -= done
        stop.set()
        for task in senders:
            task.cancel()
        await asyncio.gather(*senders, return_exceptions=True)
    log.wall_s, log.unsent = time.monotonic() - started, len(queue)
    await asyncio.wait_for(health, HEALTH_TIMEOUT_S + 5)
    return log


async def keepalive_probe(base_url: str, payload: dict[str, Any], gaps_s: list[float]) -> dict[str, Any]:
    """Bursts of 64 requests after idle gaps just under uvicorn's default 5 s keep-alive.

    A connection the client still holds as reusable and the server closes at that moment turns the next
    request into a reset (aiohttp does not resend a POST). Counts resets and reconnects.
    """
    created = 0

    async def on_create(*_: Any) -> None:
        nonlocal created
        created += 1

    trace = aiohttp.TraceConfig()
    trace.on_connection_create_end.append(on_create)
    rounds = []
    async with slime_session(trace_configs=[trace]) as session:
        burst = [post_like_slime(session, base_url + "/score", payload) for _ in range(SLIME_CONNECTIONS)]
        await asyncio.gather(*burst)
        for gap_s in gaps_s:
            before = created
            await asyncio.sleep(gap_s)
            replies = await asyncio.gather(*(post_like_slime(session, base_url + "/score", payload)
                                             for _ in range(SLIME_CONNECTIONS)))
            rounds.append({"idle_gap_s": gap_s, "resets": sum(r.resets for r in replies),
                           "new_connections": created - before, "not_ok": sum(not r.ok for r in replies)})
    return {"rounds": rounds, "resets": sum(r["resets"] for r in rounds),
            "new_connections": sum(r["new_connections"] for r in rounds)}
