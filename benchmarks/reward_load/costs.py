"""What bounding each scoring costs: a pool round trip against an in-process call, and a respawn."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from benchmarks.reward_load.workload import FREEZER, normal
from rlcheck.reward.pool import ScorerPool
from rlcheck.reward.scorers import load_scorer

PAIRS = 300
RESPAWNS = 5


def _pool(backend: str, timeout_s: float = 2.0) -> ScorerPool:
    return ScorerPool(backend=backend, size=1, max_slow=0, timeout_s=timeout_s, demote_after_cpu_s=0,
                      max_queue_wait_s=30, max_memory_bytes=1024**3)


async def _per_call_ms(backend: str, pairs: list[tuple[str, str]]) -> tuple[float, float]:
    """Median ms per scoring: in this process, then through a 1-process pool (both see the pairs cold)."""
    scorer, direct = load_scorer(backend), []
    for response, label in pairs:
        started = time.perf_counter()
        scorer(response, label)
        direct.append(time.perf_counter() - started)
    pool, pooled = _pool(backend), []
    await pool.start()
    try:
        for response, label in pairs:
            started = time.perf_counter()
            await pool.score(response, (label,))
            pooled.append(time.perf_counter() - started)
    finally:
        await pool.close(drain_s=1)
    return 1000 * statistics.median(direct), 1000 * statistics.median(pooled)


async def _respawn_ms(pair: tuple[str, str]) -> float:
    pool, waits = _pool("math_verify", timeout_s=0.3), []
    await pool.start()
    try:
        for _ in range(RESPAWNS):
            await pool.score(f"\\boxed{{{FREEZER}}}", ("1",))  # killed at 0.3 s
            started = time.perf_counter()
            await pool.score(pair[0], (pair[1],))  # waits for the replacement process
            waits.append(time.perf_counter() - started)
    finally:
        await pool.close(drain_s=1)
    return 1000 * statistics.median(waits)


async def measure() -> dict[str, Any]:
    """One request at a time, in this process, with nothing else running."""
    rng = random.Random(1)
    pairs = [(r.payload["response"], r.payload["label"]) for r in (normal(rng) for _ in range(PAIRS))]
    boxed_direct, boxed_pooled = await _per_call_ms("boxed", pairs)
    mv_direct, mv_pooled = await _per_call_ms("math_verify", pairs)
    return {"boxed_ms_per_scoring": {"in_process": round(boxed_direct, 3), "through_pool": round(boxed_pooled, 3)},
            "math_verify_ms_per_scoring": {"in_process": round(mv_direct, 3), "through_pool": round(mv_pooled, 3)},
            "pool_round_trip_overhead_ms": round(boxed_pooled - boxed_direct, 3),
            "kill_to_next_result_ms_median": round(await _respawn_ms(pairs[0]), 1),
            "note": f"medians over {PAIRS} normal pairs scored one at a time; the boxed scorer takes microseconds, "
                    "so its pooled time is the cost of the process boundary (pickle, pipe, wake-up); "
                    "kill_to_next_result is a scoring right after a deadline kill: respawn + one scoring"}
