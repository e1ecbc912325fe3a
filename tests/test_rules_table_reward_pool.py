"""The scorer pool's decisions as tables (issue 33): a scoring past its CPU budget (timeout: the fallback) against one
that only waited for a core (starved: 503, or looked at again), demotion, what a process's message means, which
process is retired and why, the queue's bounds, the spawn backoff and shutdown.

A timeout is the one case that replies the fallback reward: a busy host read as a timeout teaches SLIME's policy a
wrong 0.0, and a real timeout read as "starved" retries forever. Each decision is met with chosen CPU and wall
times: the scorer processes are stand-ins on real pipes (the test plays the process's side), and the handlers are
called as their timers would call them; test_reward_pool.py runs the real processes.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from rlcheck.reward import pool as pool_module
from rlcheck.reward.pool import Outcome, PoolState, ScorerPool, _Job
from rlcheck.reward.worker import READY


class _Process:
    """multiprocessing's process stand-in: what the pool's reaper calls."""

    def __init__(self, pid: int) -> None:
        self.pid, self.killed, self.exitcode = pid, False, None
        self.joins: list[float | None] = []

    def join(self, timeout: float | None = None) -> None:
        self.joins.append(timeout)

    def is_alive(self) -> bool:
        return False

    def kill(self) -> None:
        self.killed = True

    def close(self) -> None:
        pass


class _Scorer(pool_module.ScorerProcess):
    """A scorer process whose other end of the pipe the test holds (`theirs`), with a CPU clock the test sets."""

    __slots__ = ("cpu", "theirs")
    made: list[_Scorer] = []
    fail: Exception | None = None

    @classmethod
    def start(cls, backend: str, max_memory_bytes: int) -> _Scorer:
        if cls.fail is not None:
            raise cls.fail
        ours, theirs = multiprocessing.Pipe(duplex=True)
        scorer = cls(_Process(1000 + len(cls.made)), ours)  # type: ignore[arg-type]
        scorer.theirs, scorer.cpu = theirs, 0.0
        cls.made.append(scorer)
        return scorer

    def cpu_now(self) -> float | None:
        return self.cpu  # type: ignore[no-any-return]


@pytest.fixture(autouse=True)
def _stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "ScorerProcess", _Scorer)
    monkeypatch.setattr(_Scorer, "made", [])
    monkeypatch.setattr(_Scorer, "fail", None)


def _pool(**overrides: Any) -> ScorerPool:
    settings: dict[str, Any] = {"backend": "boxed", "size": 1, "max_slow": 1, "timeout_s": 100.0,
                                "demote_after_cpu_s": 50.0, "max_queue_wait_s": 500.0, "max_memory_bytes": 1 << 30,
                                "wall_timeout_s": 1000.0}
    return ScorerPool(**{**settings, **overrides})


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.002)
    raise AssertionError("never came true")


async def _ready(pool: ScorerPool, count: int = 1) -> list[_Scorer]:
    """Start the pool's processes as its stand-ins and have each say it is ready."""
    pool._loop = asyncio.get_running_loop()
    pool._top_up()
    await _until(lambda: len(_Scorer.made) >= count and not pool._spawning)
    for scorer in _Scorer.made[:count]:
        scorer.theirs.send((READY, scorer.pid, 0.25))
    await _until(lambda: sum(p.ready for p in pool._procs) >= count)
    return _Scorer.made[:count]


class _Clock:
    """pool.py's time: perf_counter and monotonic both read `now`, which only the test (or `_Sleeps`) moves."""

    def __init__(self, now: float = 5000.0) -> None:
        self.now = now

    def perf_counter(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now


class _Sleeps:
    """pool.py's asyncio: each asyncio.sleep of the pool is recorded and moves the clock by `step` (a loaded host may
    give a 20 ms sleep seconds), so a wait loop's checks are counted, not timed; the rest is the real asyncio."""

    def __init__(self, clock: _Clock, step: float = 2.0) -> None:
        self.clock, self.step = clock, step
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.clock.now += self.step
        await asyncio.sleep(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)


def _clock(monkeypatch: pytest.MonkeyPatch, *, sleeps: bool = False) -> tuple[_Clock, _Sleeps]:
    clock = _Clock()
    monkeypatch.setattr(pool_module, "time", clock)
    recorded = _Sleeps(clock)
    if sleeps:
        monkeypatch.setattr(pool_module, "asyncio", recorded)
    return clock, recorded


def _run(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), 20))


async def _running(pool: ScorerPool, scorer: _Scorer, response: str = "R") -> tuple[asyncio.Task[Outcome], _Job]:
    task = asyncio.ensure_future(pool.score(response, ("L",)))
    await _until(lambda: scorer.job is not None)
    assert scorer.theirs.recv() == (scorer.job.job_id, response, ("L",))
    return task, scorer.job


DEADLINES = [
    # CPU s used (None: /proc cannot say), wall s since the hand-over, status (None: looked at again later), detail
    (100.0, 100.0, "timeout", "used 100.00 CPU s, past the 100 s CPU budget"),  # the budget exactly
    (150.0, 100.0, "timeout", "used 150.00 CPU s, past the 100 s CPU budget"),
    (99.99, 100.0, None, ""),  # it waited for a core: looked at again
    (99.99, 999.9, None, ""),
    (10.0, 999.0, None, ""),  # the wall bound comes first: looked at again when it is reached
    (20.0, 1000.0, "starved",  # the wall bound exactly
     "starved: 20.00 CPU s in 1000.0 s, past the 1000 s wall bound (the host is short of CPU)"),
    (20.0, 1001.5, "starved",
     "starved: 20.00 CPU s in 1001.5 s, past the 1000 s wall bound (the host is short of CPU)"),
    (100.0, 1000.0, "timeout", "used 100.00 CPU s, past the 100 s CPU budget"),  # both: the budget speaks
    (None, 100.0, "timeout", "used 100.00 CPU s, past the 100 s CPU budget"),  # no /proc: wall time is CPU time
    (None, 99.0, None, ""),
]


@pytest.mark.parametrize(("used_s", "wall_s", "status", "detail"), DEADLINES)
def test_rules_reward_pool_deadline(monkeypatch: pytest.MonkeyPatch, used_s: float | None, wall_s: float,
                                    status: str | None, detail: str) -> None:
    clock, _ = _clock(monkeypatch)  # wall time read exactly: 1000 s is the bound itself

    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        scorer.cpu = None if used_s is None else 0.25 + used_s  # 0.25: its CPU when it last reported
        job.started = clock.now - wall_s
        timers = len(job.timers)
        pool._on_deadline(scorer, job)
        if status is None:
            assert not task.done() and scorer.job is job and len(job.timers) == timers + 1
            later = job.timers[-1].when() - asyncio.get_running_loop().time()
            want = min(100.0 - (wall_s if used_s is None else used_s), 1000.0 - wall_s)
            assert abs(later - max(want, 0.01)) < 0.5
            scorer.theirs.send((job.job_id, 1.0, "", 0.1, 0.5))
            assert (await task).status == "ok"
            return
        outcome = await task
        assert (outcome.status, outcome.value, outcome.detail, outcome.worker_pid) == (status, None, detail,
                                                                                      scorer.pid)
        assert outcome.scoring_s == wall_s
        assert scorer.job is None and scorer not in pool._procs and scorer.proc.killed  # type: ignore[attr-defined]
        assert pool.state().retired == {status: 1}
    _run(body)


def test_rules_reward_pool_deadline_looks_again_no_sooner_than_10ms() -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        scorer.cpu = 0.25 + 99.999
        job.started = time.perf_counter() - 1.0
        pool._on_deadline(scorer, job)
        later = job.timers[-1].when() - asyncio.get_running_loop().time()
        assert 0.005 < later <= 0.011
        pool._on_deadline(scorer, _Job(999, "R", ("L",), asyncio.get_running_loop().create_future()))  # not its job
        assert scorer.job is job and not task.done()
        scorer.theirs.send((job.job_id, 0.0, "", 0.1, 0.5))
        assert (await task).value == 0.0
    _run(body)


SLOW = [
    # CPU s used (None: /proc cannot say), demoted, next look in s (None: none)
    (50.0, True, None),
    (80.0, True, None),
    (49.0, False, 1.0),
    (49.999, False, 0.01),  # no sooner than 10 ms
    (None, True, None),
]


@pytest.mark.parametrize(("used_s", "demoted", "again_s"), SLOW)
def test_rules_reward_pool_demotion(used_s: float | None, demoted: bool, again_s: float | None) -> None:
    async def body() -> None:
        pool = _pool(max_slow=1)
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        scorer.cpu = None if used_s is None else 0.25 + used_s
        timers = len(job.timers)
        pool._on_slow(scorer, job)
        assert scorer.demoted is demoted
        if again_s is None:
            assert len(job.timers) == timers
            await _until(lambda: len(_Scorer.made) == 2 and not pool._spawning)  # a fresh process takes its slot
            assert pool.state().slow == 1
        else:
            later = job.timers[-1].when() - asyncio.get_running_loop().time()
            assert abs(later - again_s) < 0.005
            assert len(_Scorer.made) == 1 and pool.state().busy == 1
        scorer.theirs.send((job.job_id, 1.0, "", 0.1, 0.5))
        outcome = await task
        assert outcome.status == "ok"
        await _until(lambda: scorer.job is None)
        assert pool.state().retired == ({"slow": 1} if demoted else {})  # a demoted process is not trusted again
    _run(body)


def test_rules_reward_pool_dispatch_arms_the_timers() -> None:
    async def body() -> None:
        for demote_s, timers in ((50.0, [100.0, 50.0]), (0.0, [100.0])):  # 0: never demoted
            _Scorer.made.clear()
            pool = _pool(demote_after_cpu_s=demote_s)
            [scorer] = await _ready(pool)
            task, job = await _running(pool, scorer)
            now = asyncio.get_running_loop().time()
            assert [round(t.when() - now) for t in job.timers] == timers
            scorer.theirs.send((job.job_id, 1.0, "", 0.1, 0.5))
            await task
            assert all(t.cancelled() for t in job.timers)
            await pool.close(drain_s=1)
    _run(body)


MESSAGES = [
    # what the process sends for its job (job id 1), outcome (status, value, detail), retired as (None: kept)
    ((1, 1.0, "", 0.1, 0.5), ("ok", 1.0, ""), None),
    ((1, 0.0, "", 0.1, 0.5), ("ok", 0.0, ""), None),
    ((1, None, "LabelError: bad", 0.1, 0.5), ("error", None, "LabelError: bad"), "error"),
    ((2, 1.0, "", 0.1, 0.5), ("error", None, "its scorer process answered another job"), "error"),
]


@pytest.mark.parametrize(("message", "outcome", "retired"), MESSAGES)
def test_rules_reward_pool_result_messages(message: tuple[Any, ...], outcome: tuple[Any, ...],
                                           retired: str | None) -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        scorer.theirs.send(message)
        got = await task
        assert (got.status, got.value, got.detail, got.worker_pid) == (*outcome, scorer.pid)
        if retired is None:
            await _until(lambda: scorer in pool._idle)
            assert scorer.cpu_s == 0.5 and pool.state().retired == {}
        else:
            assert pool.state().retired == {retired: 1} and scorer.proc.killed  # type: ignore[attr-defined]
    _run(body)


def test_rules_reward_pool_process_that_dies_mid_scoring() -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        scorer.theirs.close()  # EOF: it died
        got = await task
        assert (got.status, got.value, got.detail) == (
            "error", None, f"scorer process {scorer.pid} ended unexpectedly (its exit status is logged when it is "
                           "reaped)")
        assert pool.state().retired == {"died": 1}
        assert (pool.state().spawn_failures, pool.state().last_spawn_error) == (0, "")
        await _until(lambda: len(_Scorer.made) == 2)  # replaced
    _run(body)


@pytest.mark.parametrize("first", ["EOF", ("hello", 1, 0.1)])
def test_rules_reward_pool_process_that_dies_before_ready(first: Any) -> None:
    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        pool._top_up()
        await _until(lambda: len(_Scorer.made) == 1 and not pool._spawning)
        scorer = _Scorer.made[0]
        if first == "EOF":
            scorer.theirs.close()
        else:
            scorer.theirs.send(first)
        await _until(lambda: pool.state().retired == {"died": 1})
        state = pool.state()
        assert (state.spawn_failures, state.last_spawn_error) == (
            1, f"scorer process {scorer.pid} ended before it was ready")
        await _until(lambda: len(_Scorer.made) == 2 and not pool._spawning)  # retried after 0.1 s
        _Scorer.made[1].theirs.send((READY, 1, 0.5))
        await _until(lambda: pool.state().idle == 1)
        assert pool.state().spawn_failures == 0  # a ready process clears the count
    _run(body)


def test_rules_reward_pool_unexpected_message_while_idle() -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        scorer.theirs.send((5, 1.0, "", 0.1, 0.5))  # no job: trusted no more
        await _until(lambda: pool.state().retired == {"error": 1})
        assert scorer not in pool._idle
    _run(body)


def test_rules_reward_pool_ready_takes_a_waiting_job_and_fifo() -> None:
    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        pool._top_up()
        await _until(lambda: len(_Scorer.made) == 1 and not pool._spawning)
        first = asyncio.ensure_future(pool.score("A", ("L",)))
        second = asyncio.ensure_future(pool.score("B", ("L",)))
        await _until(lambda: pool.state().queued == 2)
        scorer = _Scorer.made[0]
        scorer.theirs.send((READY, scorer.pid, 0.25))
        await _until(lambda: scorer.job is not None)
        assert scorer.theirs.recv()[1] == "A" and pool.state().queued == 1  # first in, first scored
        scorer.theirs.send((scorer.job.job_id, 1.0, "", 0.1, 0.5))
        assert (await first).value == 1.0
        await _until(lambda: scorer.job is not None)
        assert scorer.theirs.recv()[1] == "B"
        scorer.theirs.send((scorer.job.job_id, 0.0, "", 0.1, 0.5))
        assert (await second).value == 0.0
        assert pool.state() == PoolState(idle=1, busy=0, slow=0, starting=0, queued=0, retired={}, spawn_failures=0,
                                         last_spawn_error="")
    _run(body)


def test_rules_reward_pool_queue_bound_and_wait() -> None:
    async def body() -> None:
        pool = _pool(max_queued=2, max_queue_wait_s=500.0)
        pool._loop = asyncio.get_running_loop()  # no process at all: everything waits
        waiting = [asyncio.ensure_future(pool.score(str(i), ("L",))) for i in range(2)]
        await _until(lambda: pool.state().queued == 2)
        over = await pool.score("3", ("L",))
        assert (over.status, over.detail) == ("unavailable", "2 scorings already wait for a process (--max-queued)")
        job = pool._queue[0]
        assert [round(t.when() - asyncio.get_running_loop().time()) for t in job.timers] == [500]
        pool._expire(job)
        got = await waiting[0]
        assert (got.status, got.value, got.detail) == ("unavailable", None, "no scorer process free after 500 s")
        assert pool.state().queued == 1
        pool.begin_close()
        got = await waiting[1]
        assert (got.status, got.detail) == ("unavailable", "shutting down")
        closed = await pool.score("4", ("L",))
        assert (closed.status, closed.detail) == ("unavailable", "the pool is not running (shutting down)")
    _run(body)


def test_rules_reward_pool_not_started_is_unavailable() -> None:
    async def body() -> None:
        got = await _pool().score("R", ("L",))
        assert (got.status, got.value, got.detail) == ("unavailable", None,
                                                       "the pool is not running (shutting down)")
    _run(body)


def test_rules_reward_pool_send_to_a_dead_process_moves_the_job() -> None:
    async def body() -> None:
        pool = _pool(size=2)
        first, second = await _ready(pool, 2)
        pool._idle = [second, first]  # the next job goes to `first`
        first.theirs.close()  # it died between jobs: sending to it fails (before its EOF is read)
        job = _Job(7, "R", ("L",), asyncio.get_running_loop().create_future())
        pool._submit(job)
        assert second.job is job and first.job is None
        assert pool.state().retired == {"died": 1}
        assert second.theirs.recv() == (7, "R", ("L",))
        second.theirs.send((7, 1.0, "", 0.1, 0.5))
        assert (await job.future).value == 1.0
    _run(body)


TOP_UP = [
    # size, max_slow, processes demoted, processes started in all
    (2, 0, 0, 2),
    (2, 1, 1, 3),  # a demoted process: one fresh one more
    (2, 1, 2, 3),  # never past size + max_slow
    (1, 4, 1, 2),
    (1, 4, 0, 1),  # enough fresh ones: none more
]


@pytest.mark.parametrize(("size", "max_slow", "demoted", "started"), TOP_UP)
def test_rules_reward_pool_top_up(size: int, max_slow: int, demoted: int, started: int) -> None:
    async def body() -> None:
        pool = _pool(size=size, max_slow=max_slow)
        scorers = await _ready(pool, size)
        for scorer in scorers[:demoted]:
            scorer.demoted = True
        pool._top_up()
        await _until(lambda: not pool._spawning)
        await asyncio.sleep(0.01)
        assert len(_Scorer.made) == started
    _run(body)


@pytest.mark.parametrize(("failures", "delay_s"), [(0, 0.0), (1, 0.2), (2, 0.4), (5, 3.2), (6, 5.0), (9, 5.0)])
def test_rules_reward_pool_spawn_backoff(monkeypatch: pytest.MonkeyPatch, failures: int, delay_s: float) -> None:
    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        delays: list[float] = []

        async def spawn(delay: float) -> None:
            delays.append(delay)

        monkeypatch.setattr(pool, "_spawn", spawn)
        pool._spawn_failures = failures
        pool._top_up()
        await asyncio.sleep(0)
        assert delays == [delay_s]
    _run(body)


def test_rules_reward_pool_spawn_failure_is_counted_and_shown() -> None:
    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        _Scorer.fail = OSError("no fork")
        pool._top_up()
        await _until(lambda: pool._spawn_failures >= 1)
        state = pool.state()
        assert state.last_spawn_error == "cannot start a scorer process: no fork"
        _Scorer.fail = None
        await _until(lambda: len(_Scorer.made) == 1 and not pool._spawning)  # retried
        pool.begin_close()
    _run(body)


def test_rules_reward_pool_close_lets_running_scorings_finish() -> None:
    async def body() -> None:
        pool = _pool(size=2)
        await _ready(pool, 2)
        first, second = pool._idle[-1], pool._idle[0]  # the next job goes to the last idle one
        assert isinstance(first, _Scorer) and isinstance(second, _Scorer)
        task, job = await _running(pool, first)
        closing = asyncio.ensure_future(pool.close(drain_s=5))
        await asyncio.sleep(0.05)
        assert not closing.done()  # the running scoring may finish
        first.theirs.send((job.job_id, 1.0, "", 0.1, 0.5))
        assert (await task).value == 1.0
        await closing
        assert pool.state().retired == {"shutdown": 2}
        assert second.theirs.recv() is None and not second.proc.killed  # type: ignore[attr-defined]
        assert first.theirs.recv() is None  # finished in time: told to stop, not killed
    _run(body)


def test_rules_reward_pool_close_kills_what_outlives_the_drain() -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        await pool.close(drain_s=0.05)
        assert pool.state().retired == {"shutdown": 1} and scorer.proc.killed  # type: ignore[attr-defined]
        task.cancel()
    _run(body)


def test_rules_reward_pool_state_counts() -> None:
    async def body() -> None:
        pool = _pool(size=3, max_slow=0)
        a, b, c = await _ready(pool, 3)
        nxt = pool._idle[-1]
        assert isinstance(nxt, _Scorer)
        task_a, _ = await _running(pool, nxt)
        busy = next(p for p in (a, b, c) if p.job is not None)
        busy.demoted = True
        pool._spawning = 2
        state = pool.state()
        assert (state.idle, state.busy, state.slow, state.starting, state.queued) == (2, 0, 1, 2, 0)
        pool._spawning = 0
        busy.demoted = False
        assert (pool.state().busy, pool.state().slow) == (1, 0)
        task_a.cancel()
    _run(body)


def test_rules_reward_pool_wall_bound_is_never_under_the_budget() -> None:
    assert _pool(timeout_s=5.0, wall_timeout_s=1.0).wall_timeout_s == 5.0
    assert _pool(timeout_s=5.0, wall_timeout_s=None).wall_timeout_s == 600.0
    assert _pool(timeout_s=700.0, wall_timeout_s=None).wall_timeout_s == 700.0
    assert _pool(timeout_s=5.0, wall_timeout_s=9.0).wall_timeout_s == 9.0


def test_rules_reward_pool_job_finish_once() -> None:
    async def body() -> None:
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        job = _Job(1, "R", ("L",), future)
        timer = asyncio.get_running_loop().call_later(100, lambda: None)
        job.timers = [timer]
        job.finish(Outcome(status="ok", value=1.0))
        job.finish(Outcome(status="error", value=None))  # a second end changes nothing
        assert future.result().status == "ok" and timer.cancelled()
    _run(body)


def test_rules_reward_pool_timers_fire_their_handlers(caplog: pytest.LogCaptureFixture) -> None:
    """The timers themselves: demotion, then a deadline that first finds a wait for a core and looks again."""
    async def body() -> None:
        pool = _pool(timeout_s=0.05, demote_after_cpu_s=0.02, wall_timeout_s=30.0, max_slow=0)
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        await asyncio.sleep(0.1)  # both looked once: no CPU used yet, so each looks again
        assert not task.done() and not scorer.demoted
        scorer.cpu = 0.25 + 1.0
        outcome = await asyncio.wait_for(task, 10)
        assert scorer.demoted
        assert (outcome.status, outcome.detail, outcome.worker_pid) == (
            "timeout", "used 1.00 CPU s, past the 0.05 s CPU budget", scorer.pid)
        assert 0 <= outcome.scoring_s
        await _until(lambda: not pool._tasks)  # the reaper ran and was forgotten
        assert scorer.proc.joins == [0.5]  # type: ignore[attr-defined]  # killed: half a second to end
    _run(body)


def test_rules_reward_pool_queue_wait_timer() -> None:
    async def body() -> None:
        pool = _pool(max_queue_wait_s=0.05)
        pool._loop = asyncio.get_running_loop()
        outcome = await asyncio.wait_for(pool.score("R", ("L",)), 10)
        assert (outcome.status, outcome.detail) == ("unavailable", "no scorer process free after 0.05 s")
    _run(body)


def test_rules_reward_pool_died_is_reaped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        before = time.perf_counter()
        task, job = await _running(pool, scorer)
        scorer.proc.exitcode = -9  # type: ignore[attr-defined]
        with caplog.at_level(logging.ERROR, logger="rlcheck.reward"):
            scorer.theirs.close()
            outcome = await task
            await _until(lambda: not pool._tasks)
        assert outcome.worker_pid == scorer.pid and 0 <= outcome.scoring_s <= time.perf_counter() - before
        assert [r.getMessage() for r in caplog.records if r.name == "rlcheck.reward"] == [
            f"rlcheck-reward: scorer process {scorer.pid} ended unexpectedly: killed by signal 9"]
        assert scorer.proc.joins == [0.5] and scorer.proc.killed  # type: ignore[attr-defined]
    _run(body)


def test_rules_reward_pool_graceful_shutdown_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        with caplog.at_level(logging.ERROR, logger="rlcheck.reward"):
            await pool.close(drain_s=1)
        assert [r for r in caplog.records if r.name == "rlcheck.reward"] == []
        assert scorer.proc.joins == [2.0] and not scorer.proc.killed  # type: ignore[attr-defined]
        assert not pool._tasks
    _run(body)


def test_rules_reward_pool_unexpected_message_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        before = time.perf_counter()
        task, job = await _running(pool, scorer)
        with caplog.at_level(logging.ERROR, logger="rlcheck.reward"):
            scorer.theirs.send((job.job_id + 5, 1.0, "", 0.1, 0.5))
            outcome = await task
        assert [r.getMessage() for r in caplog.records if r.name == "rlcheck.reward"][:1] == [
            f"rlcheck-reward: scorer process {scorer.pid} sent an unexpected message ({job.job_id + 5},)"]
        assert outcome.status == "error"
        scorer2 = _Scorer.made[-1]
        await _until(lambda: len(_Scorer.made) == 2)
        assert scorer2 is not None and 0 <= outcome.scoring_s <= time.perf_counter() - before
    _run(body)


def test_rules_reward_pool_result_carries_its_scoring_time() -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        before = time.perf_counter()
        task, job = await _running(pool, scorer)
        scorer.theirs.send((job.job_id, 1.0, "", 0.1, 0.5))
        outcome = await task
        assert 0 <= outcome.scoring_s <= time.perf_counter() - before
        task2, job2 = await _running(pool, scorer)
        assert job2.job_id == job.job_id + 1  # each job its own id
        scorer.theirs.send((job2.job_id, 0.0, "", 0.1, 0.6))
        await task2
    _run(body)


def test_rules_reward_pool_start_waits_for_ready_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "ensure_forkserver", lambda: None)

    async def body() -> None:
        pool = _pool(size=2)

        async def answer() -> None:
            await _until(lambda: len(_Scorer.made) == 2)
            for scorer in _Scorer.made:
                scorer.theirs.send((READY, scorer.pid, 0.1))

        helper = asyncio.ensure_future(answer())
        await asyncio.wait_for(pool.start(timeout_s=10), 15)
        assert pool.state().idle == 2 and [s.ready for s in _Scorer.made] == [True, True]
        await helper
        starts: list[tuple[str, int]] = []
        def refused(cls: type[_Scorer], backend: str, max_memory_bytes: int) -> _Scorer:
            starts.append((backend, max_memory_bytes))
            raise OSError("x")

        monkeypatch.setattr(_Scorer, "start", classmethod(refused))
        silent = _pool(size=1)
        with pytest.raises(RuntimeError) as raised:
            await silent.start(timeout_s=0.1)
        assert str(raised.value) == ("0/1 scorer processes ready after 0.1 s; last error: cannot start a scorer "
                                     "process: x")
        assert starts[0] == ("boxed", 1 << 30)
        silent.begin_close()
    _run(body)


def test_rules_reward_pool_start_timeout_without_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "ensure_forkserver", lambda: None)

    async def body() -> None:
        pool = _pool(size=1)
        with pytest.raises(RuntimeError) as raised:
            await pool.start(timeout_s=0.1)  # started, never ready
        assert str(raised.value) == "0/1 scorer processes ready after 0.1 s; last error: none"
        pool.begin_close()
    _run(body)


def test_rules_reward_pool_died_before_ready_adds_to_the_failures() -> None:
    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        pool._top_up()
        await _until(lambda: len(_Scorer.made) == 1 and not pool._spawning)
        pool._spawn_failures = 3
        _Scorer.made[0].theirs.close()
        await _until(lambda: pool.state().retired == {"died": 1})
        assert pool._spawn_failures == 4
        pool.begin_close()
    _run(body)


def test_rules_reward_pool_starting_counts_spawning_and_unready() -> None:
    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        pool._top_up()
        await _until(lambda: len(_Scorer.made) == 1 and not pool._spawning)
        pool._spawning = 2
        assert pool.state().starting == 3
        pool._spawning = 0
        pool.begin_close()
    _run(body)


def test_rules_reward_pool_spawn_finished_while_closing_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    gate = threading.Event()
    real = _Scorer.start.__func__  # type: ignore[attr-defined]

    def held(cls: type[_Scorer], backend: str, max_memory_bytes: int) -> _Scorer:
        gate.wait(10)
        return real(cls, backend, max_memory_bytes)  # type: ignore[no-any-return]

    monkeypatch.setattr(_Scorer, "start", classmethod(held))

    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        pool._top_up()
        pool.begin_close()
        gate.set()
        await _until(lambda: pool.state().retired == {"shutdown": 1})
        assert not pool._procs and _Scorer.made[0].theirs.recv() is None
    _run(body)


def test_rules_reward_pool_dead_send_goes_back_to_the_front() -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        waiting = _Job(50, "W", ("L",), asyncio.get_running_loop().create_future())
        pool._queue.append(waiting)
        scorer.theirs.close()
        job = _Job(51, "R", ("L",), asyncio.get_running_loop().create_future())
        pool._submit(job)
        assert list(pool._queue) == [job, waiting]
        pool.begin_close()
    _run(body)


def test_rules_reward_pool_a_timer_of_another_job_changes_nothing() -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        scorer.cpu = 0.25 + 500.0  # past every bound: only its own job's timers may act on it
        other = _Job(999, "R", ("L",), asyncio.get_running_loop().create_future())
        other.started = time.perf_counter() - 5000.0
        pool._on_deadline(scorer, other)
        pool._on_slow(scorer, other)
        assert scorer.job is job and not scorer.demoted and not task.done() and not other.future.done()
        assert scorer in pool._procs and pool.state().retired == {}
        scorer.theirs.send((job.job_id, 1.0, "", 0.1, 0.5))
        assert (await task).value == 1.0
    _run(body)


def test_rules_reward_pool_spawn_failure_adds_one(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        pool = _pool()
        pool._loop = asyncio.get_running_loop()
        _Scorer.fail = OSError("no fork")
        pool._spawn_failures = 2  # the next try waits 0.4 s
        with caplog.at_level(logging.ERROR, logger="rlcheck.reward"):
            pool._top_up()
            await _until(lambda: pool._spawn_failures != 2)
        assert pool._spawn_failures == 3
        assert [r.getMessage() for r in caplog.records if r.name == "rlcheck.reward"] == [
            "rlcheck-reward: cannot start a scorer process: no fork"]
        pool.begin_close()
    _run(body)


@pytest.mark.parametrize("how", ["result", "error", "died"])
def test_rules_reward_pool_outcome_carries_the_time_since_the_hand_over(monkeypatch: pytest.MonkeyPatch,
                                                                      how: str) -> None:
    clock, _ = _clock(monkeypatch)

    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task, job = await _running(pool, scorer)
        assert job.started == clock.now  # handed over now
        clock.now += 2.5
        if how == "died":
            scorer.theirs.close()
        else:
            scorer.theirs.send((job.job_id, 1.0 if how == "result" else None, "" if how == "result" else "E", 0.1, 0.5))
        outcome = await task
        assert (outcome.status, outcome.scoring_s) == ("ok" if how == "result" else "error", 2.5)
    _run(body)


DRAINS = [
    # drain_s, the job still running at the end, sleeps of 0.02 s taken (each moves the clock 2 s)
    (10.0, True, 5),  # looks at 5000, 5002 ... 5008; at 5010 the drain is over
    (9.0, True, 5),
    (10.5, True, 6),
    (0.0, True, 0),
    (10.0, False, 0),  # nothing running: stops at once
]


@pytest.mark.parametrize(("drain_s", "running", "sleeps"), DRAINS)
def test_rules_reward_pool_close_drains_for_drain_s(monkeypatch: pytest.MonkeyPatch, drain_s: float, running: bool,
                                                   sleeps: int) -> None:
    async def body() -> None:
        pool = _pool()
        [scorer] = await _ready(pool)
        task = (await _running(pool, scorer))[0] if running else None
        _, recorded = _clock(monkeypatch, sleeps=True)
        await pool.close(drain_s=drain_s)
        assert recorded.slept == [0.02] * sleeps
        assert pool.state().retired == {"shutdown": 1} and scorer.proc.killed is running  # type: ignore[attr-defined]
        if task is not None:
            task.cancel()
    _run(body)


@pytest.mark.parametrize(("timeout_s", "sleeps"), [(None, 31), (4.0, 3), (5.0, 3), (6.0, 4)])
def test_rules_reward_pool_start_waits_up_to_its_timeout(monkeypatch: pytest.MonkeyPatch, timeout_s: float | None,
                                                        sleeps: int) -> None:
    """No process ever ready: start() looks every 20 ms until the clock is past its timeout (default 60 s), then
    says so; each sleep moves the clock 2 s, so 60 s is looked at 31 times (5000 ... 5060, ended at 5062)."""
    monkeypatch.setattr(pool_module, "ensure_forkserver", lambda: None)

    async def body() -> None:
        pool = _pool()
        monkeypatch.setattr(pool, "_top_up", lambda: None)  # started, never ready
        _, recorded = _clock(monkeypatch, sleeps=True)
        with pytest.raises(RuntimeError) as raised:
            await (pool.start() if timeout_s is None else pool.start(timeout_s=timeout_s))
        shown = 60.0 if timeout_s is None else timeout_s
        assert str(raised.value) == f"0/1 scorer processes ready after {shown} s; last error: none"
        assert recorded.slept == [0.02] * sleeps
    _run(body)
