"""A scorer process's loop as tables (issue 33): what it sends back for each scoring (the reward, or the error that
becomes a counted fallback: a raise, a non-finite reward), when it stops, and how a real one is set up (its memory
limit, its OOM score, the signals it ignores).

A NaN or an infinity sent back as a reward would reach SLIME as one; an error text cut wrong, or a loop that stops
on the first failure, turns every later request into a 503. serve() runs here on an in-process pipe; one real
scorer process, forked as the pool forks it, shows the set-up.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rlcheck.reward import worker
from rlcheck.reward.scorers import LabelError


def _scorer(response: str, label: str) -> float:
    """Answers by the label: a number is the reward, 'raise' and 'boom' raise."""
    if label == "raise":
        raise LabelError("label does not parse: " + response)
    if label == "boom":
        raise RuntimeError("x" * 400)
    return float(label)


def _serve(jobs: list[object], close: bool = False) -> list[tuple[object, ...]]:
    ours, theirs = multiprocessing.Pipe(duplex=True)
    for job in jobs:
        ours.send(job)
    if close:
        ours.close()
    loop = threading.Thread(target=worker.serve, args=(theirs, _scorer))
    loop.start()
    loop.join(10)
    assert not loop.is_alive()  # it stopped
    if close:
        return []
    replies = []
    while ours.poll():
        replies.append(ours.recv())
    return replies


SERVED = [
    # labels of one job, (value, error) sent back
    (("1",), (1.0, "")),
    (("0.5",), (0.5, "")),
    (("0",), (0.0, "")),
    (("inf",), (None, "scorer returned inf")),
    (("-1",), (0.0, "")),  # score_any takes the best from 0.0: below it is 0.0
    (("-inf",), (0.0, "")),
    (("nan",), (0.0, "")),
    (("raise",), (None, "LabelError: label does not parse: R")),
    (("boom",), (None, ("RuntimeError: " + "x" * 400)[:300])),  # cut at 300 characters
    (("raise", "1"), (1.0, "")),  # a list label: any of them
    (("raise", "0"), (None, "LabelError: label does not parse: R")),
]


@pytest.mark.parametrize(("labels", "sent"), SERVED)
def test_rules_reward_worker_serve_replies(labels: tuple[str, ...], sent: tuple[float | None, str]) -> None:
    before = time.perf_counter()
    [reply] = _serve([(7, "R", labels), None])
    elapsed = time.perf_counter() - before
    job_id, value, error, scoring_s, cpu_s = reply
    assert (job_id, value, error) == (7, *sent)
    assert isinstance(scoring_s, float) and 0 <= scoring_s <= elapsed  # its own wall time, within the test's
    assert isinstance(cpu_s, float) and cpu_s > 0  # the process's CPU time so far


def test_rules_reward_worker_serve_goes_on_after_a_failure() -> None:
    replies = _serve([(1, "R", ("raise",)), (2, "R", ("inf",)), (3, "R", ("1",)), None, (4, "R", ("1",))])
    assert [(r[0], r[1], r[2]) for r in replies] == [(1, None, "LabelError: label does not parse: R"),
                                                    (2, None, "scorer returned inf"), (3, 1.0, "")]  # None: it stops


def test_rules_reward_worker_serve_stops_when_the_pipe_closes() -> None:
    assert _serve([], close=True) == []


@pytest.mark.parametrize(("exc", "text"), [(ValueError("bad"), "ValueError: bad"), (KeyError("k"), "KeyError: 'k'"),
                                           (MemoryError(), "MemoryError: "),
                                           (RuntimeError("y" * 500), "RuntimeError: " + "y" * 286)])
def test_rules_reward_worker_describe(exc: BaseException, text: str) -> None:
    assert worker._describe(exc) == text


def _limits(pid: int) -> str:
    return next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines()
                if line.startswith("Max address space"))


def test_rules_reward_worker_real_process_setup() -> None:
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=worker.worker_main, args=(theirs, "boxed", 900 * 1024**2), daemon=True)
    proc.start()
    theirs.close()
    try:
        assert ours.poll(60)
        ready, pid, cpu_s = ours.recv()
        assert (ready, pid) == (worker.READY, proc.pid) and cpu_s > 0
        assert _limits(pid).split()[3:5] == [str(900 * 1024**2)] * 2
        assert Path(f"/proc/{pid}/oom_score_adj").read_text().strip() == "1000"
        sig_ign = int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                           if line.startswith("SigIgn:")).split()[1], 16)
        assert sig_ign & (1 << (signal.SIGINT - 1)) and sig_ign & (1 << (signal.SIGTERM - 1))
        os.kill(pid, signal.SIGTERM)  # ignored: the front decides when a scorer stops
        ours.send((1, "\\boxed{7}", ("7",)))
        assert ours.poll(30)
        assert ours.recv()[:3] == (1, 1.0, "")  # the boxed backend was loaded
        ours.send(None)
        proc.join(30)
        assert proc.exitcode == 0
    finally:
        if proc.is_alive():
            proc.kill()
        ours.close()


def test_rules_reward_worker_serve_ends_on_a_broken_pipe() -> None:
    class _Broken:
        def recv(self) -> object:
            raise OSError("gone")

    assert worker.serve(_Broken(), _scorer) is None  # type: ignore[arg-type, func-returns-value]


def _in_child(conn: Any, hard_limit: int | None) -> None:
    """In a forked child: the worker's set-up steps, then what the kernel says of them."""
    import ctypes
    import resource

    if hard_limit is not None:
        resource.setrlimit(resource.RLIMIT_AS, (hard_limit, hard_limit))
        try:
            resource.setrlimit(resource.RLIMIT_AS, (hard_limit, hard_limit + 1))
            conn.send("may raise hard limits")  # CAP_SYS_RESOURCE: nothing is refused here
            return
        except ValueError:
            pass
        worker._limit_memory(2 * hard_limit)  # above the hard limit: refused by the kernel, and let be
        conn.send(resource.getrlimit(resource.RLIMIT_AS))
        return
    worker._die_with_parent()
    sig = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
    conn.send(sig.value)


@pytest.mark.parametrize(("hard_limit", "seen"), [(None, signal.SIGKILL), (3 << 30, (3 << 30, 3 << 30))])
def test_rules_reward_worker_setup_steps(hard_limit: int | None, seen: object) -> None:
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe()
    proc = ctx.Process(target=_in_child, args=(theirs, hard_limit))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0  # a refused limit is no error
    assert ours.poll(1)
    got = ours.recv()
    if got == "may raise hard limits":
        pytest.skip("this process may raise its hard limits: the kernel refuses nothing")
    assert got == seen


class _Libc:
    """ctypes.CDLL's stand-in: a libc whose prctl calls are recorded, none at all, or one without prctl."""

    def __init__(self, fails: str) -> None:
        self.fails, self.calls = fails, []

    def __call__(self, name: object, use_errno: bool = False) -> object:
        assert (name, use_errno) == (None, True)
        if self.fails == "no libc":
            raise OSError("no libc")
        return object() if self.fails == "no prctl" else self

    def prctl(self, *args: object) -> int:
        self.calls.append(args)
        return 0


SETUP_FAILURES = [
    # how libc fails ("": it does not), what setrlimit raises, /proc/self/oom_score_adj cannot be written
    ("", None, False),
    ("no libc", ValueError("not allowed to raise maximum limit"), True),
    ("no prctl", OSError("denied"), False),
]


@pytest.mark.parametrize(("no_libc", "rlimit_error", "no_oom_file"), SETUP_FAILURES)
def test_rules_reward_worker_main_in_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_libc: str,
                                            rlimit_error: Exception | None, no_oom_file: bool) -> None:
    """worker_main's set-up, each step recorded instead of done to this test's process; a step that fails is let
    be (not Linux, a lower hard limit, no /proc), and the process still scores."""
    import builtins
    import resource

    libc = _Libc(no_libc)
    limits: list[tuple[int, tuple[int, int]]] = []
    handlers: list[tuple[int, object]] = []
    real_open = builtins.open

    def setrlimit(which: int, pair: tuple[int, int]) -> None:
        limits.append((which, pair))
        if rlimit_error is not None:
            raise rlimit_error

    def fake_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        if path == "/proc/self/oom_score_adj":
            if no_oom_file:
                raise PermissionError("read-only /proc")
            assert args == ("w",) and kwargs == {"encoding": "ascii"}
            return real_open(tmp_path / "oom_score_adj", "w", encoding="ascii")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(worker.ctypes, "CDLL", libc)
    monkeypatch.setattr(worker.resource, "setrlimit", setrlimit)
    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(worker.signal, "signal", lambda sig, handler: handlers.append((sig, handler)))
    ours, theirs = multiprocessing.Pipe(duplex=True)
    ours.send((1, "\\boxed{7}", ("7",)))
    ours.send(None)
    worker.worker_main(theirs, "boxed", 900)
    monkeypatch.setattr(builtins, "open", real_open)
    assert libc.calls == ([] if no_libc else [(1, signal.SIGKILL, 0, 0, 0)])  # PR_SET_PDEATHSIG
    assert worker._PR_SET_PDEATHSIG == 1
    assert limits == [(resource.RLIMIT_AS, (900, 900))]
    assert (tmp_path / "oom_score_adj").exists() is not no_oom_file
    if not no_oom_file:
        assert (tmp_path / "oom_score_adj").read_text() == "1000"
    assert handlers == [(signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, signal.SIG_IGN)]
    ready, pid, cpu_s = ours.recv()
    assert (ready, pid) == ("ready", os.getpid()) and isinstance(cpu_s, float)
    assert ours.recv()[:3] == (1, 1.0, "")
    assert not ours.poll()
