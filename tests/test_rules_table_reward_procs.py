"""A scorer process as the pool sees it, as tables (issue 33): the CPU time it has used (what tells a timeout, the
fallback, from a scoring that only waited for a core), how its exit is described in the log, how it is stopped, and
what the forkserver is told before the first process.

CPU time read in the wrong unit turns every scoring into a timeout (or none); the pool's decisions on these
readings are judged in test_rules_table_reward_pool.py. Processes here are this test's own, or stand-ins.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

import pytest

from rlcheck.reward import procs


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_rules_reward_procs_cpu_now_reads_schedstat_in_seconds() -> None:
    me = procs.ScorerProcess(_Proc(os.getpid()), None)  # type: ignore[arg-type]
    before = me.cpu_now()
    _busy(0.05)
    after = me.cpu_now()
    assert before is not None and after is not None
    assert int(Path(f"/proc/{os.getpid()}/schedstat").read_text().split()[0]) / 1e9 >= after
    assert 0.04 <= after - before < 5  # seconds, not ms or ns


@pytest.mark.parametrize("pid", [0, 2**22 + 12345])
def test_rules_reward_procs_cpu_now_without_proc(pid: int) -> None:
    assert procs.ScorerProcess(_Proc(pid), None).cpu_now() is None  # type: ignore[arg-type]


def test_rules_reward_procs_cpu_now_of_unreadable_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import builtins

    real_open = builtins.open
    for text in ("", "x 1 2"):
        (tmp_path / "schedstat").write_text(text)
        monkeypatch.setattr(builtins, "open", lambda path, *a, **k: real_open(tmp_path / "schedstat", *a, **k))
        assert procs.ScorerProcess(_Proc(1), None).cpu_now() is None  # type: ignore[arg-type]
        monkeypatch.setattr(builtins, "open", real_open)


class _Proc:
    """multiprocessing's process stand-in: it ends after `ends_after` joins, or never."""

    def __init__(self, pid: int | None, ends_after: int | None = 0, exitcode: int | None = 0,
                 closes: bool = True) -> None:
        self.pid, self.ends_after, self._exitcode, self.closes = pid, ends_after, exitcode, closes
        self.joins: list[float | None] = []
        self.killed = self.closed = False

    def join(self, timeout: float | None = None) -> None:
        self.joins.append(timeout)

    def is_alive(self) -> bool:
        return self.ends_after is None or len(self.joins) <= self.ends_after

    def kill(self) -> None:
        self.killed = True

    @property
    def exitcode(self) -> int | None:
        return -9 if self.killed and self._exitcode is None else self._exitcode

    def close(self) -> None:
        if not self.closes:
            raise ValueError("process is still running")
        self.closed = True


STOPS = [
    # ends after this many joins (None: never), exit code, closes, exit code returned, killed, joins
    (0, 0, True, 0, False, [3.0]),
    (1, None, True, -9, True, [3.0, 2.0]),  # still running after the grace: SIGKILL, then 2 s more
    (None, None, False, -9, True, [3.0, 2.0]),  # alive after SIGKILL: left to the OS
]


@pytest.mark.parametrize(("ends_after", "exitcode", "closes", "returned", "killed", "joins"), STOPS)
def test_rules_reward_procs_stop_blocking(caplog: pytest.LogCaptureFixture, ends_after: int | None,
                                          exitcode: int | None, closes: bool, returned: int, killed: bool,
                                          joins: list[float]) -> None:
    proc = _Proc(4242, ends_after, exitcode, closes)
    assert procs.stop_blocking(proc, 3.0) == returned  # type: ignore[arg-type]
    assert (proc.killed, proc.joins, proc.closed) == (killed, joins, closes)
    warned = [r.getMessage() for r in caplog.records if r.name == "rlcheck.reward"]
    assert warned == ([] if closes else ["scorer process 4242 did not exit after SIGKILL"])


EXITS = [(None, "exit status unknown"), (0, "exit code 0"), (3, "exit code 3"), (-9, "killed by signal 9"),
         (-15, "killed by signal 15"), (-1, "killed by signal 1"), (1, "exit code 1")]


@pytest.mark.parametrize(("exitcode", "text"), EXITS)
def test_rules_reward_procs_describe_exit(exitcode: int | None, text: str) -> None:
    assert procs.describe_exit(exitcode) == text


def test_rules_reward_procs_scorer_process_starts_unready() -> None:
    scorer = procs.ScorerProcess(_Proc(77), "conn")  # type: ignore[arg-type]
    assert (scorer.pid, scorer.conn, scorer.ready, scorer.demoted, scorer.job, scorer.cpu_s) == (
        77, "conn", False, False, None, 0.0)
    assert procs.ScorerProcess(_Proc(None), None).pid == 0  # type: ignore[arg-type]


def test_rules_reward_procs_forkserver_preloads_the_scorers(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []
    preloaded: list[list[str]] = []
    monkeypatch.setattr(forkserver, "ensure_running", lambda: started.append(os.environ[procs.FRONT_PID_ENV]))
    monkeypatch.setattr(procs._CTX, "set_forkserver_preload", preloaded.append)
    monkeypatch.delenv(procs.FRONT_PID_ENV, raising=False)
    procs.ensure_forkserver()
    assert preloaded == [["rlcheck.reward.preload", "rlcheck.cli"]]
    assert started == [str(os.getpid())]  # the forkserver follows this process's death
    assert procs.FRONT_PID_ENV == "RLCHECK_REWARD_FRONT_PID"
    assert procs._CTX.get_start_method() == "forkserver"


class _Context:
    """The forkserver context's stand-in: a real pipe, a process that records how it was made and started."""

    def __init__(self) -> None:
        self.made: list[dict[str, Any]] = []
        self.pipes: list[tuple[Any, Any]] = []

    def Pipe(self, duplex: bool = True) -> tuple[Any, Any]:  # noqa: N802 - multiprocessing's name
        pipe = multiprocessing.Pipe(duplex=duplex)
        self.pipes.append((duplex, pipe))
        return pipe

    def Process(self, **kwargs: Any) -> Any:  # noqa: N802 - multiprocessing's name
        made = self.made

        class _Made:
            pid = 4321

            def start(self) -> None:
                made.append({**kwargs, "started": True})

        return _Made()


def test_rules_reward_procs_start_hands_the_process_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _Context()
    monkeypatch.setattr(procs, "_CTX", ctx)
    scorer = procs.ScorerProcess.start("boxed", 123)
    [(duplex, (ours, theirs))] = ctx.pipes
    assert duplex is True
    assert ctx.made == [{"target": procs.worker_main, "args": (theirs, "boxed", 123), "daemon": True,
                         "name": "rlcheck-scorer", "started": True}]
    assert theirs.closed and not ours.closed  # its death reads as EOF on our end
    assert (scorer.conn, scorer.pid, scorer.ready) == (ours, 4321, False)
    ours.close()
