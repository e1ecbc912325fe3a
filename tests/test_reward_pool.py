"""The scorer pool with real scorer processes: results, deadlines, crashes, demotion, shutdown."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from multiprocessing import forkserver

from rlcheck.reward.pool import Outcome, ScorerPool

FREEZER = "\\boxed{9^{9^{9^{9}}}}"  # sympy computes 9**387420489 in C: no signal reaches it
SLOW = "\\boxed{\\binom{250000}{125000}}"  # about 3 s of sympy in Python frames
MARGIN_S = 1.5  # a kill, a reply and a loaded CI machine


def run_with_pool(body: Callable[[ScorerPool], Awaitable[None]], **overrides: float) -> None:
    settings = {"size": 2, "max_slow": 4, "timeout_s": 1.0, "demote_after_cpu_s": 0.05, "max_queue_wait_s": 30.0}
    settings.update(overrides)

    async def main() -> None:
        pool = ScorerPool(backend="math_verify", max_memory_bytes=1024**3, **settings)  # type: ignore[arg-type]
        await pool.start(timeout_s=60)
        try:
            await asyncio.wait_for(body(pool), 60)
        finally:
            await pool.close(drain_s=2)

    asyncio.run(main())


async def _settled(pool: ScorerPool, *, idle: int) -> None:
    """Wait (bounded) until the pool has topped itself back up to `idle` idle processes."""
    for _ in range(300):
        if pool.state().idle == idle and not pool.state().starting:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"pool did not settle: {pool.state()}")


def test_reward_pool_scores_more_requests_than_processes() -> None:
    async def body(pool: ScorerPool) -> None:
        outcomes = await asyncio.gather(*(pool.score(f"so \\boxed{{{i}}}", (str(i + i % 2),)) for i in range(40)))
        assert [o.status for o in outcomes] == ["ok"] * 40
        assert [o.value for o in outcomes] == [1.0 if i % 2 == 0 else 0.0 for i in range(40)]
        assert pool.state().retired == {}

    run_with_pool(body)


def test_reward_pool_kills_a_scoring_at_its_deadline_and_replaces_the_process() -> None:
    async def body(pool: ScorerPool) -> None:
        started = time.monotonic()
        frozen = await pool.score(FREEZER, ("1",))
        elapsed = time.monotonic() - started
        assert (frozen.status, frozen.value) == ("timeout", None)
        assert "past the 1 s CPU budget" in frozen.detail
        assert 1.0 <= elapsed < 20.0 + MARGIN_S
        assert frozen.worker_pid is not None
        await _settled(pool, idle=2)
        assert pool.state().retired.get("timeout") == 1
        assert await _gone(frozen.worker_pid)
        assert (await pool.score("\\boxed{3}", ("3",))).value == 1.0

    # never demoted, so it keeps full priority and reaches its CPU budget before the wall bound
    run_with_pool(body, demote_after_cpu_s=0, wall_timeout_s=20.0)


def test_reward_pool_waiting_for_a_core_is_not_a_timeout() -> None:
    """The CPU budget counts the scorer's own CPU: a scoring starved of CPU 3x its budget still gets graded."""
    async def body(pool: ScorerPool) -> None:
        pid = next(iter(pool._procs)).pid
        os.kill(pid, signal.SIGSTOP)  # a host so busy that the scorer gets no CPU at all
        try:
            pending = asyncio.ensure_future(pool.score("\\boxed{(x+1)^2}", ("x^2+2x+1",)))
            await asyncio.sleep(1.0)
            assert not pending.done()
        finally:
            os.kill(pid, signal.SIGCONT)
        outcome = await pending
        assert (outcome.status, outcome.value) == ("ok", 1.0), outcome

    run_with_pool(body, size=1, timeout_s=0.3, wall_timeout_s=10.0)


def test_reward_pool_scoring_with_no_progress_ends_starved_at_the_safety_bound() -> None:
    """A process that gets no CPU at all ends as "starved" (the service answers 503), never as a timeout."""
    async def body(pool: ScorerPool) -> None:
        pid = next(iter(pool._procs)).pid
        os.kill(pid, signal.SIGSTOP)
        started = time.monotonic()
        outcome = await pool.score("\\boxed{5}", ("5",))
        assert (outcome.status, outcome.value) == ("starved", None)
        assert outcome.detail.startswith("starved:") and "past the 1.5 s wall bound" in outcome.detail
        assert 1.5 <= time.monotonic() - started < 1.5 + MARGIN_S
        await _settled(pool, idle=1)
        assert pool.state().retired.get("starved") == 1

    run_with_pool(body, size=1, timeout_s=0.3, wall_timeout_s=1.5)


def test_reward_pool_queue_past_its_bound_is_unavailable_at_once() -> None:
    async def body(pool: ScorerPool) -> None:
        pid = next(iter(pool._procs)).pid
        os.kill(pid, signal.SIGSTOP)  # the one process is busy for as long as this test wants
        try:
            running = asyncio.ensure_future(pool.score("\\boxed{1}", ("1",)))
            queued = [asyncio.ensure_future(pool.score("\\boxed{2}", ("2",))) for _ in range(2)]
            await asyncio.sleep(0.05)
            assert pool.state().queued == 2
            started = time.monotonic()
            refused = await pool.score("\\boxed{3}", ("3",))
            assert time.monotonic() - started < 0.5
            assert (refused.status, refused.value) == ("unavailable", None)
            assert "2 scorings already wait for a process (--max-queued)" in refused.detail
        finally:
            os.kill(pid, signal.SIGCONT)
        assert [o.value for o in await asyncio.gather(running, *queued)] == [1.0, 1.0, 1.0]

    run_with_pool(body, size=1, max_slow=0, max_queued=2)


def test_reward_pool_begin_close_answers_waiting_jobs_and_lets_running_ones_finish() -> None:
    async def body(pool: ScorerPool) -> None:
        pid = next(iter(pool._procs)).pid
        os.kill(pid, signal.SIGSTOP)
        try:
            running = asyncio.ensure_future(pool.score("\\boxed{1}", ("1",)))
            waiting = asyncio.ensure_future(pool.score("\\boxed{2}", ("2",)))
            await asyncio.sleep(0.05)
            pool.begin_close()
            late = await pool.score("\\boxed{3}", ("3",))
            assert (await waiting).status == "unavailable" and "shutting down" in (await waiting).detail
            assert late.status == "unavailable"
        finally:
            os.kill(pid, signal.SIGCONT)
        assert (await running).value == 1.0

    run_with_pool(body, size=1, max_slow=0)


def _exited(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


async def _gone(pid: int, timeout_s: float = 3.0) -> bool:
    """The process has exited (SIGKILL of a process deep in a big-integer multiply takes a moment)."""
    for _ in range(int(timeout_s / 0.01)):
        if _exited(pid):
            return True
        await asyncio.sleep(0.01)
    return False


def test_reward_pool_slow_scoring_keeps_its_priority_and_does_not_hold_a_slot() -> None:
    """A slow scoring is replaced in its slot but never moved to idle priority, where a busy host starves it."""
    async def body(pool: ScorerPool) -> None:
        slow = asyncio.ensure_future(pool.score(SLOW, ("1",)))
        await asyncio.sleep(0.3)
        state = pool.state()
        assert state.slow == 1, state
        slow_pid = next(p.pid for p in pool._procs if p.demoted)
        assert os.sched_getscheduler(slow_pid) == os.SCHED_OTHER
        assert os.getpriority(os.PRIO_PROCESS, slow_pid) == os.getpriority(os.PRIO_PROCESS, 0)
        fast = await asyncio.gather(*(pool.score(f"\\boxed{{{i}}}", (str(i),)) for i in range(20)))
        assert all(o.value == 1.0 for o in fast)
        assert (await slow).status == "timeout"

    run_with_pool(body, size=1)


def test_reward_pool_does_not_demote_a_scoring_that_waits_for_the_cpu() -> None:
    async def body(pool: ScorerPool) -> None:
        pid = next(iter(pool._procs)).pid
        os.kill(pid, signal.SIGSTOP)  # its scoring is now waiting, using no CPU, like on a crowded machine
        try:
            pending = asyncio.ensure_future(pool.score("\\boxed{5}", ("5",)))
            await asyncio.sleep(0.3)  # six times demote_after_cpu_s of wall time
            assert pool.state().slow == 0
        finally:
            os.kill(pid, signal.SIGCONT)
        assert (await pending).value == 1.0
        assert "slow" not in pool.state().retired

    run_with_pool(body, size=1)


def test_reward_pool_scorer_error_and_process_death_are_errors_not_zeros() -> None:
    async def body(pool: ScorerPool) -> None:
        bad_label = await pool.score("\\boxed{1}", ("}{",))
        assert (bad_label.status, bad_label.value) == ("error", None)
        assert "LabelError: label does not parse" in bad_label.detail
        slow = asyncio.ensure_future(pool.score(SLOW, ("1",)))
        await asyncio.sleep(0.2)
        victim = next(p.pid for p in pool._procs if p.job is not None)
        os.kill(victim, signal.SIGKILL)  # what the kernel's OOM killer would do
        died: Outcome = await slow
        assert (died.status, died.worker_pid) == ("error", victim)
        assert "ended unexpectedly" in died.detail
        await _settled(pool, idle=2)
        assert pool.state().retired.get("error") == 1 and pool.state().retired.get("died") == 1

    run_with_pool(body)


def test_reward_pool_request_waiting_too_long_is_unavailable() -> None:
    async def body(pool: ScorerPool) -> None:
        busy = asyncio.ensure_future(pool.score(FREEZER, ("1",)))
        await asyncio.sleep(0.05)
        queued = await pool.score("\\boxed{1}", ("1",))
        assert (queued.status, queued.value) == ("unavailable", None)
        assert "no scorer process free after 0.2 s" in queued.detail
        assert (await busy).status == "timeout"

    run_with_pool(body, size=1, max_slow=0, max_queue_wait_s=0.2)


def test_reward_pool_close_stops_every_process() -> None:
    pids: list[int] = []

    async def body(pool: ScorerPool) -> None:
        pids.extend(p.pid for p in pool._procs)
        assert (await pool.score("\\boxed{2}", ("2",))).value == 1.0

    run_with_pool(body)
    assert len(pids) == 2
    assert all(_exited(pid) for pid in pids)


def test_reward_pool_recovers_when_the_forkserver_dies() -> None:
    async def body(pool: ScorerPool) -> None:
        server_pid = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
        assert server_pid
        os.kill(server_pid, signal.SIGKILL)  # its scorer processes die with it (PR_SET_PDEATHSIG)
        for _ in range(300):  # the pool sees both deaths; multiprocessing restarts the forkserver on the next start
            if pool.state().retired.get("died") == 2 and pool.state().idle == 2:
                break
            await asyncio.sleep(0.02)
        assert pool.state().retired.get("died") == 2, pool.state()
        assert forkserver._forkserver._forkserver_pid != server_pid  # type: ignore[attr-defined]
        assert (await pool.score("\\boxed{6}", ("6",))).value == 1.0

    run_with_pool(body)
