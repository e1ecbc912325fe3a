"""A scorer process: receives (job_id, response, labels), sends back (job_id, value, error, scoring_s, cpu_s).

cpu_s is the process's CPU time so far: the front measures a running job's CPU use against it.

It scores in its main thread with no deadline of its own: the parent kills it at the deadline (a
sympy integer power runs in C and cannot be interrupted from inside, by signal.alarm or otherwise).
"""

from __future__ import annotations

import ctypes
import math
import os
import resource
import signal
import time
from multiprocessing.connection import Connection

from rlcheck.reward.scorers import Scorer, load_scorer, score_any

READY = "ready"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """SIGKILL this process when its parent (the forkserver) exits, so no orphan keeps computing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the pipe's EOF still ends an idle worker
        pass


def _limit_memory(max_bytes: int) -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    except (ValueError, OSError):  # a lower hard limit is already in place
        pass
    try:  # if the pod still runs out of memory, the kernel kills a scorer (a counted error), not the front
        with open("/proc/self/oom_score_adj", "w", encoding="ascii") as f:
            f.write("1000")
    except OSError:
        pass


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def serve(conn: Connection, scorer: Scorer) -> None:
    """Score jobs until the parent sends None or closes the pipe."""
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        job_id, response, labels = job
        started = time.perf_counter()
        value: float | None = None
        try:
            value = float(score_any(scorer, response, labels))
            error = "" if math.isfinite(value) else f"scorer returned {value}"
        except Exception as exc:  # noqa: BLE001 - any scorer failure becomes a counted, logged fallback
            error = _describe(exc)
        conn.send((job_id, None if error else value, error, time.perf_counter() - started, time.process_time()))


def worker_main(conn: Connection, backend: str, max_memory_bytes: int) -> None:
    """Entry point of a scorer process (started through the forkserver, see pool.py)."""
    _die_with_parent()
    _limit_memory(max_memory_bytes)
    # Ctrl-C or a group-wide SIGTERM reaches every process; the front decides when scorers stop, and
    # kills them itself (a scorer that outlives the front dies with the forkserver: see _die_with_parent).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    scorer = load_scorer(backend)
    conn.send((READY, os.getpid(), time.process_time()))
    serve(conn, scorer)
