"""Scorer processes with a CPU budget per scoring, driven from the front's event loop.

Each job goes to an idle process, or waits in a FIFO of at most max_queued (past it, and past
max_queue_wait_s in line, the caller is told "unavailable": a 503 SLIME retries, never a wrong reward).
The budget is the process's own CPU time, never wall time: on a busy host a scoring waits for a core
as long as it must, and its reward does not depend on how busy the host is.
- once a job has used demote_after_cpu_s of CPU it is "slow": a fresh process takes its slot (within
  max_slow extra processes), so pathological expressions do not hold the slots normal ones need. The
  slow process keeps its normal CPU priority: a scoring moved to idle priority starves on a host that
  is never idle, and that starvation used to end as a wrong reward.
- once it has used timeout_s of CPU, the process is SIGKILLed and the job ends as "timeout" (the one
  case that gets the fallback reward). Killing is the only bound that holds: sympy's big-integer powers
  run in C, out of reach of signals.
- wall_timeout_s is a safety bound for a process that makes no progress at all (stopped, or a host so
  overloaded it gets nothing for minutes): it ends as "starved", which the service answers with 503
  (SLIME retries), never with a reward.
A process that was slow, failed, or timed out is retired; the pool tops itself back up.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from rlcheck.reward.procs import ScorerProcess, describe_exit, ensure_forkserver, stop_blocking
from rlcheck.reward.worker import READY

log = logging.getLogger("rlcheck.reward")


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    status: str
    """ok | timeout (its CPU budget used up) | error | starved (no progress within the safety wall bound) |
    unavailable (no process free in time, or shutting down)."""
    value: float | None
    detail: str = ""
    worker_pid: int | None = None
    scoring_s: float = 0.0
    """From hand-over to the process until the result (or the kill)."""


@dataclass(eq=False, slots=True)
class _Job:
    job_id: int
    response: str
    labels: tuple[str, ...]
    future: asyncio.Future[Outcome]
    started: float = 0.0
    timers: list[asyncio.TimerHandle] = field(default_factory=list)

    def finish(self, outcome: Outcome) -> None:
        for timer in self.timers:
            timer.cancel()
        if not self.future.done():  # the caller may have been cancelled meanwhile
            self.future.set_result(outcome)


@dataclass(frozen=True, kw_only=True, slots=True)
class PoolState:
    idle: int
    busy: int
    slow: int
    starting: int
    queued: int
    retired: dict[str, int]
    spawn_failures: int
    last_spawn_error: str


class ScorerPool:
    def __init__(self, *, backend: str, size: int, max_slow: int, timeout_s: float, demote_after_cpu_s: float,
                 max_queue_wait_s: float, max_memory_bytes: int, wall_timeout_s: float | None = None,
                 max_queued: int = 1 << 30) -> None:
        self.backend, self.size, self.max_slow = backend, size, max_slow
        self.timeout_s, self.demote_after_cpu_s, self.max_queue_wait_s = timeout_s, demote_after_cpu_s, max_queue_wait_s
        self.wall_timeout_s = max(600.0 if wall_timeout_s is None else wall_timeout_s, timeout_s)  # safety only
        self.max_queued, self.max_memory_bytes = max_queued, max_memory_bytes
        self._procs: set[ScorerProcess] = set()
        self._idle: list[ScorerProcess] = []
        self._queue: collections.deque[_Job] = collections.deque()
        self._tasks: set[asyncio.Task[None]] = set()
        self._retired: collections.Counter[str] = collections.Counter()
        self._spawning = self._spawn_failures = self._next_id = 0
        self._last_spawn_error = ""
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # ---- public -------------------------------------------------------------------------------
    async def start(self, timeout_s: float = 60.0) -> None:
        """Start `size` processes and wait (bounded) until all are ready."""
        self._loop = asyncio.get_running_loop()
        ensure_forkserver()  # blocks about 1 s, once, before serving; on this (main) thread: see procs.py
        self._top_up()
        deadline = time.monotonic() + timeout_s
        while sum(p.ready for p in self._procs) < self.size:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{sum(p.ready for p in self._procs)}/{self.size} scorer processes ready after "
                                   f"{timeout_s} s; last error: {self._last_spawn_error or 'none'}")
            await asyncio.sleep(0.02)

    async def score(self, response: str, labels: tuple[str, ...]) -> Outcome:
        """Score one response against its labels (any of them); always returns: by its CPU budget, or the safety
        wall bound, after a process took it (or max_queue_wait_s in line)."""
        if self._closing or self._loop is None:
            return Outcome(status="unavailable", value=None, detail="the pool is not running (shutting down)")
        if not self._idle and len(self._queue) >= self.max_queued:
            return Outcome(status="unavailable", value=None,
                           detail=f"{len(self._queue)} scorings already wait for a process (--max-queued)")
        self._next_id += 1
        job = _Job(self._next_id, response, labels, self._loop.create_future())
        self._submit(job)
        return await job.future

    def state(self) -> PoolState:
        busy = [p for p in self._procs if p.job is not None]
        return PoolState(idle=len(self._idle), busy=sum(not p.demoted for p in busy), slow=sum(p.demoted for p in busy),
                         starting=self._spawning + sum(not p.ready for p in self._procs), queued=len(self._queue),
                         retired=dict(self._retired), spawn_failures=self._spawn_failures,
                         last_spawn_error=self._last_spawn_error)

    def begin_close(self) -> None:
        """Take no more jobs: waiting ones get "unavailable" now (a 503 SLIME retries); running ones finish."""
        self._closing = True
        while self._queue:
            self._queue.popleft().finish(Outcome(status="unavailable", value=None, detail="shutting down"))

    async def close(self, drain_s: float) -> None:
        """Let running jobs finish for up to drain_s, then stop every process (None, then SIGKILL)."""
        self.begin_close()
        deadline = time.monotonic() + drain_s
        while (any(p.job for p in self._procs) or self._spawning) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        for proc in list(self._procs):
            self._retire(proc, "shutdown")
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=drain_s + 5)

    # ---- scheduling (all on the event loop) ---------------------------------------------------
    def _dispatch(self, proc: ScorerProcess, job: _Job) -> None:
        assert self._loop is not None
        for timer in job.timers:  # the queue-wait timer
            timer.cancel()
        job.started, proc.job = time.perf_counter(), job
        try:
            proc.conn.send((job.job_id, job.response, job.labels))
        except OSError:  # it died between jobs: another process takes the job
            proc.job = None
            self._retire(proc, "died")
            self._submit(job, front=True)
            return
        job.timers = [self._loop.call_later(self.timeout_s, self._on_deadline, proc, job)]
        if self.demote_after_cpu_s > 0:  # CPU time never runs ahead of wall time: check no earlier than this
            job.timers.append(self._loop.call_later(self.demote_after_cpu_s, self._on_slow, proc, job))

    def _submit(self, job: _Job, front: bool = False) -> None:
        """To an idle process, or into the queue (front: it was already first in line)."""
        assert self._loop is not None
        if self._idle:
            self._dispatch(self._idle.pop(), job)
            return
        self._queue.appendleft(job) if front else self._queue.append(job)
        job.timers = [self._loop.call_later(self.max_queue_wait_s, self._expire, job)]

    def _release(self, proc: ScorerProcess) -> None:
        if self._closing:
            return
        while self._queue:
            job = self._queue.popleft()
            if not job.future.done():
                self._dispatch(proc, job)
                return
        self._idle.append(proc)

    def _on_readable(self, proc: ScorerProcess) -> None:
        try:
            msg = proc.conn.recv()
        except Exception:  # noqa: BLE001 - EOF (it died), or a message that does not unpickle: either way, gone
            self._on_died(proc)
            return
        if not proc.ready:
            if msg[0] != READY:
                self._on_died(proc)
                return
            proc.ready, proc.cpu_s, self._spawn_failures = True, msg[2], 0
            self._release(proc)
            return
        job, proc.job = proc.job, None
        if job is None or msg[0] != job.job_id:  # cannot happen (a late result's process is retired): trust it no more
            log.error("rlcheck-reward: scorer process %d sent an unexpected message %r", proc.pid, msg[:1])
            if job is not None:
                job.finish(Outcome(status="error", value=None, detail="its scorer process answered another job",
                                   worker_pid=proc.pid))
            self._retire(proc, "error")
            return
        _, value, error, _, proc.cpu_s = msg
        elapsed = time.perf_counter() - job.started
        job.finish(Outcome(status="error" if error else "ok", value=value, detail=error, worker_pid=proc.pid,
                           scoring_s=elapsed))
        if error or proc.demoted:  # a failed or demoted process is not trusted with the next job
            self._retire(proc, "error" if error else "slow")
        else:
            self._release(proc)

    def _on_slow(self, proc: ScorerProcess, job: _Job) -> None:
        if proc.job is not job or self._loop is None:
            return
        cpu_now = proc.cpu_now()
        used_s = self.demote_after_cpu_s if cpu_now is None else cpu_now - proc.cpu_s
        if used_s < self.demote_after_cpu_s:  # waiting for a core, not computing: look again later
            job.timers.append(self._loop.call_later(max(self.demote_after_cpu_s - used_s, 0.01), self._on_slow,
                                                    proc, job))
            return
        proc.demoted = True  # "slow": replaced in its slot, never moved to a lower CPU priority
        self._top_up()

    def _on_deadline(self, proc: ScorerProcess, job: _Job) -> None:
        if proc.job is not job or self._loop is None:
            return
        wall_s = time.perf_counter() - job.started
        cpu_now = proc.cpu_now()
        used_s = wall_s if cpu_now is None else cpu_now - proc.cpu_s  # no /proc: wall time is all there is
        if used_s < self.timeout_s and wall_s < self.wall_timeout_s:  # it waited for a core: look again later
            wait_s = min(self.timeout_s - used_s, self.wall_timeout_s - wall_s)
            job.timers.append(self._loop.call_later(max(wait_s, 0.01), self._on_deadline, proc, job))
            return
        if used_s >= self.timeout_s:
            detail = f"used {used_s:.2f} CPU s, past the {self.timeout_s:g} s CPU budget"
        else:
            detail = (f"starved: {used_s:.2f} CPU s in {wall_s:.1f} s, past the {self.wall_timeout_s:g} s wall "
                      "bound (the host is short of CPU)")
        proc.job = None
        status = "timeout" if used_s >= self.timeout_s else "starved"
        job.finish(Outcome(status=status, value=None, detail=detail, worker_pid=proc.pid, scoring_s=wall_s))
        self._retire(proc, "timeout" if used_s >= self.timeout_s else "starved")

    def _on_died(self, proc: ScorerProcess) -> None:
        job, proc.job = proc.job, None
        why = f"scorer process {proc.pid} ended unexpectedly (its exit status is logged when it is reaped)"
        if job is not None:
            job.finish(Outcome(status="error", value=None, detail=why, worker_pid=proc.pid,
                               scoring_s=time.perf_counter() - job.started))
        elif not proc.ready:
            self._spawn_failures += 1
            self._last_spawn_error = f"scorer process {proc.pid} ended before it was ready"
        self._retire(proc, "died")

    def _expire(self, job: _Job) -> None:
        if job in self._queue:
            self._queue.remove(job)
        job.finish(Outcome(status="unavailable", value=None,
                           detail=f"no scorer process free after {self.max_queue_wait_s:g} s"))

    # ---- process lifecycle --------------------------------------------------------------------
    def _retire(self, proc: ScorerProcess, reason: str) -> None:
        if proc not in self._procs:
            return
        assert self._loop is not None
        self._procs.discard(proc)
        if proc in self._idle:
            self._idle.remove(proc)
        self._loop.remove_reader(proc.conn.fileno())
        graceful = reason == "shutdown" and proc.job is None
        try:
            proc.conn.send(None) if graceful else proc.proc.kill()
        except (OSError, ValueError):
            pass
        proc.conn.close()
        self._retired[reason] += 1
        self._background(self._reap(proc, grace_s=2.0 if graceful else 0.5, report=reason == "died"))
        self._top_up()

    async def _reap(self, proc: ScorerProcess, *, grace_s: float, report: bool) -> None:
        exitcode = await asyncio.to_thread(stop_blocking, proc.proc, grace_s)
        if report:
            log.error("rlcheck-reward: scorer process %d ended unexpectedly: %s", proc.pid, describe_exit(exitcode))

    def _top_up(self) -> None:
        """Keep `size` processes at full priority, within size + max_slow in all."""
        if self._closing:
            return
        fast = self._spawning + sum(not p.demoted for p in self._procs)
        total = self._spawning + len(self._procs)
        while fast < self.size and total < self.size + self.max_slow:
            fast, total = fast + 1, total + 1
            self._spawning += 1
            # A process that dies at start would otherwise be restarted in a tight loop.
            delay_s = min(0.1 * 2**self._spawn_failures, 5.0) if self._spawn_failures else 0.0
            self._background(self._spawn(delay_s))

    async def _spawn(self, delay_s: float) -> None:
        assert self._loop is not None
        try:
            await asyncio.sleep(delay_s)
            proc = await asyncio.to_thread(ScorerProcess.start, self.backend, self.max_memory_bytes)
        except Exception as exc:  # noqa: BLE001 - counted, shown by /health, retried with backoff
            self._spawn_failures += 1
            self._last_spawn_error = f"cannot start a scorer process: {exc}"
            log.error("rlcheck-reward: %s", self._last_spawn_error)
            self._spawning -= 1
            self._top_up()
            return
        self._spawning -= 1
        self._procs.add(proc)
        self._loop.add_reader(proc.conn.fileno(), self._on_readable, proc)
        if self._closing:
            self._retire(proc, "shutdown")

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
