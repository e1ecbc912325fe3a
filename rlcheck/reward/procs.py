"""Scorer processes as the front sees them: start, pipe, CPU time, stop. No scheduling here (pool.py)."""

from __future__ import annotations

import logging
import multiprocessing
import os
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import Any

from rlcheck.reward.worker import worker_main

log = logging.getLogger("rlcheck.reward")

# Workers fork from a forkserver that has imported and warmed the scorers: a fork is ~5 ms, a fresh
# interpreter ~0.6 s. Forking the front itself is unsafe (it runs an event loop and threads).
_CTX: ForkServerContext = multiprocessing.get_context("forkserver")


FRONT_PID_ENV = "RLCHECK_REWARD_FRONT_PID"


def ensure_forkserver() -> None:
    """Start the forkserver (about 1 s: it imports and warms the scorers).

    Call it from the main thread: the forkserver asks the kernel to kill it when the thread that
    started it ends (PR_SET_PDEATHSIG, see preload.py), and a worker thread of a pool ends early.
    """
    # Each child also re-runs the parent's main script (multiprocessing's main-module fix-up); when that
    # is the `rlcheck` console script, preloading rlcheck.cli makes the re-run nearly free.
    _CTX.set_forkserver_preload(["rlcheck.reward.preload", "rlcheck.cli"])
    os.environ[FRONT_PID_ENV] = str(os.getpid())  # the forkserver inherits it: whose death it follows
    forkserver.ensure_running()


class ScorerProcess:
    """One scorer process and the front's end of its pipe; `job` is what it is scoring now."""

    __slots__ = ("conn", "cpu_s", "demoted", "job", "pid", "proc", "ready")

    def __init__(self, proc: BaseProcess, conn: Connection) -> None:
        self.proc, self.conn = proc, conn
        self.pid: int = proc.pid or 0
        self.ready = False
        self.demoted = False
        self.job: Any = None
        self.cpu_s = 0.0
        """Its CPU seconds when it last reported (at READY and with each result): the start of the current job."""

    @classmethod
    def start(cls, backend: str, max_memory_bytes: int) -> ScorerProcess:
        """Blocking (a few ms; 0.6 s more when multiprocessing restarts a forkserver that died): run it in a thread."""
        ours, theirs = _CTX.Pipe(duplex=True)
        proc = _CTX.Process(target=worker_main, args=(theirs, backend, max_memory_bytes), daemon=True,
                            name="rlcheck-scorer")
        proc.start()
        theirs.close()  # so that the process's death reads as EOF on our end
        return cls(proc, ours)

    def cpu_now(self) -> float | None:
        """Its CPU seconds now (the scheduler's run time, ns precision), or None when /proc cannot say."""
        try:
            with open(f"/proc/{self.pid}/schedstat", encoding="ascii") as f:
                return int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            return None


def describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "exit status unknown"
    return f"killed by signal {-exitcode}" if exitcode < 0 else f"exit code {exitcode}"


def stop_blocking(proc: BaseProcess, grace_s: float) -> int | None:
    """Wait up to grace_s for the process to end (after None or a kill), SIGKILL it if needed; its exit code."""
    proc.join(grace_s)
    if proc.is_alive():
        proc.kill()
        proc.join(2.0)
    exitcode = proc.exitcode
    try:
        proc.close()
    except ValueError:  # still running after SIGKILL + 2 s: leave it to the OS
        log.warning("scorer process %s did not exit after SIGKILL", proc.pid)
    return exitcode
