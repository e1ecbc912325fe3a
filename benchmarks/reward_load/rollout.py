"""SLIME's rollout side of the benchmark: one OS process per 256 in flight, each with its own client pool.

Each process opens one session shaped like SLIME's remote_rm client (tests/slime_client.py: 64
connections, 120 s total timeout per attempt, 10 attempts with min(2**attempt, 30) + U(0, 1) s backoff
on any failure, 503 included) and sends its samples in groups of 256 with asyncio.gather, as SLIME's
rollout does. A phase is cut at cap_s: a request with no outcome by then is stuck (None), and groups
not started are never sent. CPU hogs are plain spinning processes, stopped by PID.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from tests.slime_client import Reply, post_like_slime, slime_session

GROUP = 256  # samples one SLIME rollout process gathers at once


async def _rollout(url: str, payloads: list[dict[str, Any]], deadline: float) -> tuple[list[Reply | None], int]:
    replies: list[Reply | None] = []
    unsent = 0
    async with slime_session() as session:
        for start in range(0, len(payloads), GROUP):
            group = payloads[start:start + GROUP]
            if time.monotonic() >= deadline:
                replies.extend([None] * len(group))
                unsent += len(group)
                continue
            tasks = [asyncio.ensure_future(post_like_slime(session, url, p)) for p in group]
            await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()))
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            replies.extend(t.result() if t.done() and not t.cancelled() else None for t in tasks)
    return replies, unsent


def _process_main(url: str, payloads: list[dict[str, Any]], deadline: float) -> tuple[list[Reply | None], int,
                                                                                         float, float]:
    started = time.monotonic()  # CLOCK_MONOTONIC is system-wide on Linux: comparable across processes
    replies, unsent = asyncio.run(_rollout(url, payloads, deadline))
    return replies, unsent, started, time.monotonic()


def run_phase(url: str, payloads: list[dict[str, Any]], in_flight: int, cap_s: float
              ) -> tuple[list[Reply | None], int, float]:
    """Replies in payload order (None: stuck or never sent), never-sent count, wall seconds of the phase."""
    processes = max(1, in_flight // GROUP)
    shares = [list(range(i, len(payloads), processes)) for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
        list(pool.map(time.sleep, [0.5] * processes))  # start every process before the clock does
        deadline = time.monotonic() + cap_s
        futures = [pool.submit(_process_main, url, [payloads[j] for j in share], deadline) for share in shares]
        done = [f.result(timeout=cap_s + 300) for f in futures]
    replies: list[Reply | None] = [None] * len(payloads)
    for share, (share_replies, _, _, _) in zip(shares, done, strict=True):
        for j, reply in zip(share, share_replies, strict=True):
            replies[j] = reply
    wall_s = max(end for *_, end in done) - min(start for *_, start, _ in done)
    return replies, sum(unsent for _, unsent, _, _ in done), wall_s


@contextmanager
def cpu_hogs(count: int, cap_s: float) -> Iterator[list[int]]:
    """`count` processes spinning `while True: pass` (each ends itself after cap_s at the latest)."""
    spin = f"import time\nend = time.monotonic() + {cap_s}\nwhile time.monotonic() < end: pass\n"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", spin]))
        yield [p.pid for p in procs]
    finally:
        for proc in procs:  # by PID, only what this benchmark started
            proc.kill()
            proc.wait(timeout=10)
