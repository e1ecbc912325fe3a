"""Test double: a client that calls a reward service the way SLIME's remote_rm does (v0.2.4, rm_hub/__init__.py).

One shared aiohttp session with 64 connections and a 120 s total timeout per attempt; a failed
attempt (any exception, a non-2xx status included) is retried after min(2**attempt, 30) + U(0, 1)
seconds, 10 attempts in all, and the last error is raised to the rollout. Here the outcome is
returned instead, with what each attempt saw, so tests and benchmarks can assert on it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

SLIME_CONNECTIONS = 64
SLIME_TOTAL_TIMEOUT_S = 120.0
SLIME_ATTEMPTS = 10
RESET_ERRORS = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, ConnectionResetError)


def slime_backoff_s(attempt: int) -> float:
    return min(2**attempt, 30) + random.random()


def slime_session(connections: int = SLIME_CONNECTIONS, total_timeout_s: float = SLIME_TOTAL_TIMEOUT_S,
                  **kwargs: Any) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=connections),
                                 timeout=aiohttp.ClientTimeout(total=total_timeout_s), **kwargs)


@dataclass(kw_only=True, slots=True)
class Reply:
    ok: bool
    """A 2xx reply with a JSON body arrived (within the attempts)."""
    value: Any = None
    status: int | None = None
    """HTTP status of the last attempt (None: no HTTP reply at all)."""
    reward_status: str = ""
    """The service's X-Reward-Status header (ok, timeout, error), when it sends one."""
    latency_s: float = 0.0
    """From the first attempt to the outcome, backoff included."""
    attempts: int = 0
    resets: int = 0
    """Attempts that ended in a dropped or reset connection."""
    timeouts: int = 0
    errors: list[str] = field(default_factory=list)


async def _attempt(session: aiohttp.ClientSession, url: str, payload: dict[str, Any], reply: Reply) -> bool:
    try:
        async with session.post(url, json=payload) as resp:
            reply.status = resp.status
            if resp.status >= 300:
                reply.errors.append(f"HTTP {resp.status}: {(await resp.text())[:200]}")
                return False
            reply.value, reply.reward_status = await resp.json(), resp.headers.get("X-Reward-Status", "")
            return True
    except RESET_ERRORS as exc:
        reply.resets += 1
        reply.errors.append(f"{type(exc).__name__}: {exc}")
    except TimeoutError:
        reply.timeouts += 1
        reply.errors.append("client timeout")
    except aiohttp.ClientError as exc:
        reply.errors.append(f"{type(exc).__name__}: {exc}")
    return False


async def post_like_slime(session: aiohttp.ClientSession, url: str, payload: dict[str, Any], *,
                          attempts: int = SLIME_ATTEMPTS, give_up: Callable[[Reply], bool] | None = None) -> Reply:
    """POST with SLIME's retry policy; give_up(reply), asked after each failed attempt, can end the retries."""
    reply, started = Reply(ok=False), time.monotonic()
    for attempt in range(attempts):
        reply.attempts = attempt + 1
        reply.ok = await _attempt(session, url, payload, reply)
        if reply.ok or attempt + 1 == attempts or (give_up is not None and give_up(reply)):
            break
        await asyncio.sleep(slime_backoff_s(attempt))
    reply.latency_s = time.monotonic() - started
    return reply
