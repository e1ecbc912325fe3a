"""Independent runs of the reproducers started together, ahead of the tests that read them.

Run one test after another, the reproducers left a core idle most of the time: each waits on its own children (a
cold interpreter, a forked one, a Ray job) and the next began only when it ended. Started together once the warm
interpreters have imported (reproducers/conftest.py), their children share the cores for the whole time, and each
test then takes its own result. Runs that mostly wait (Ray jobs, a health wait replayed to its deadline) start the
same way, so their waits overlap the tests before theirs instead of adding to them.

Only the runs of tests this session runs start ahead (running_here: a test deselected, skipped by --quick, or whose
kept verdict stands in for it starts nothing; under xdist, where every worker collects every test, each test starts
its own); a run asked for that was not started ahead starts when asked (urgent: its test waits for it).

A run whose children import the stack (`heavy`: cold interpreters, or forks that import Megatron themselves) holds
one of CPU_SLOTS (one per core) while it runs, so at most that many such runs share the cores, in the order they
were begun (the tests' order), and each child's own timeout keeps its meaning on a small machine; a slot not free
within SLOT_WAIT_S is not waited for longer (the run goes on without one: a verdict, never a hang). An urgent run
takes no slot.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

SLOT_WAIT_S = 900.0
"""The longest a heavy run started ahead waits for a free CPU slot before it runs without one."""
TAKE_S = 3600.0
"""The longest a test waits for its run (every run's children have bounds of their own, far shorter: this one only
turns a run that hangs in its own code into the test's error instead of a hung session)."""


def cores() -> int:
    """The cores this process may run on (its affinity, as a container's cpuset limits it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity call on this platform
        return max(1, os.cpu_count() or 1)


def cores_idle() -> bool:
    """Whether this machine is not loaded by others: its 1-minute load average below two per core (cores()). A run
    that just ended leaves up to about one per core behind it; the load at which a Ray head started beside other cold
    starts missed Ray's own start deadline was 7-12 per core. False where the load cannot be read (a loaded machine
    is the safe guess)."""
    try:
        return os.getloadavg()[0] < 2 * cores()
    except (AttributeError, OSError):  # no load average on this platform
        return False


class Slots:
    """At most `count` holders at once; a holder waits at most wait_s for its turn, then goes on without one."""

    def __init__(self, count: int, wait_s: float = SLOT_WAIT_S) -> None:
        if count < 1:
            raise ValueError(f"slots must be 1 or more, not {count}")
        self.count, self.wait_s = count, wait_s
        self._free = threading.BoundedSemaphore(count)

    @contextlib.contextmanager
    def hold(self) -> Iterator[bool]:
        """One slot while the block runs; yields whether it got one (False: waited wait_s, runs all the same)."""
        got = self._free.acquire(timeout=self.wait_s)
        try:
            yield got
        finally:
            if got:
                self._free.release()


CPU_SLOTS = Slots(cores())
"""The session's slots for heavy runs started ahead: one per core."""


def running(session: Any) -> list[Any]:
    """The tests (pytest.Function items) the pytest session will run: a kept verdict's stand-in is none, and a test
    that --quick skips (marked slow) does not count."""
    import pytest

    from rlcheck.option_table import skipped_by_quick

    quick = bool(session.config.getoption("quick", default=False))
    return [item for item in session.items if isinstance(item, pytest.Function) and not skipped_by_quick(item, quick)]


def running_here(session: Any, module_file: str) -> list[str]:
    """Names of the tests of one module (a reproducer's __file__) that the pytest session will run (running)."""
    return [item.name for item in running(session) if Path(str(item.path)) == Path(module_file)]


_MADE = threading.RLock()


def once[A](session: Any, key: Any, make: Callable[[], A]) -> A:
    """The object kept in the session's stash under key, made by make() the first time (one maker wins when the
    thread that starts the runs ahead and a test's fixture both ask at once)."""
    with _MADE:
        if (made := session.stash.get(key, None)) is None:
            made = session.stash[key] = make()
        return made


class Ahead[T]:
    """`calls` by key; start(keys) begins those, each in a thread of its own; take(key) waits for one.

    heavy: each call started ahead holds one of `slots` while it runs."""

    def __init__(self, calls: Mapping[str, Callable[[], T]], *, heavy: bool = False, slots: Slots = CPU_SLOTS) -> None:
        self.calls = dict(calls)
        self.heavy, self.slots = heavy, slots
        self.futures: dict[str, Future[T]] = {}
        self._lock = threading.Lock()

    def _run(self, key: str, slot: bool) -> T:
        if not slot:
            return self.calls[key]()
        with self.slots.hold():
            return self.calls[key]()

    def start(self, keys: Iterable[str], *, urgent: bool = False) -> Ahead[T]:
        """Begin the named calls not begun yet, together (a name without a call is ignored), each in a slot when
        heavy, unless urgent (a test is about to wait for them)."""
        with self._lock:  # each call begun once, whichever thread asks first
            new = [key for key in dict.fromkeys(keys) if key in self.calls and key not in self.futures]
            if new:
                slot = self.heavy and not urgent
                pool = ThreadPoolExecutor(max_workers=len(new), thread_name_prefix="rlcheck-ahead")
                self.futures.update({key: pool.submit(self._run, key, slot) for key in new})
                pool.shutdown(wait=False)  # the threads end with their calls
        return self

    def take(self, key: str, timeout_s: float = TAKE_S) -> T:
        """The named call's result (its exception raised here), begun now when it was not (urgent: the caller waits
        for it); KeyError: no such call; TimeoutError naming it when it has not ended within timeout_s."""
        future = self.start([key], urgent=True).futures[key]
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            raise TimeoutError(f"the run {key!r} did not end within {timeout_s:g} s") from None


def begin[T](session: Any, module_file: str, key: Any, make: Callable[[], Ahead[T]],
             reads: Mapping[str, Iterable[str]] | None = None) -> Ahead[T]:
    """A reproducer module's runs for this session: made once (make), and, outside xdist, the runs of its tests
    that this session runs begun ahead. reads: the calls each test reads, by test name (default: the call named
    as the test)."""
    ahead = once(session, key, make)
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # there every worker collects every test: each starts its own
        names = running_here(session, module_file)
        ahead.start(call for name in names for call in (reads.get(name, ()) if reads is not None else (name,)))
    return ahead


_KEYS: dict[str, Any] = {}


def begin_one[T](session: Any, module_file: str, run: Callable[[Path], T], *, heavy: bool = False) -> Ahead[T]:
    """begin() for a module whose one test is named as its file and whose whole run goes ahead: run(folder), with
    a fresh folder of the session's tmp_path_factory (what the tmp_path fixture would have handed the test); kept
    under a stash key of that module's own."""
    import pytest

    with _MADE:
        key = _KEYS.setdefault(module_file, pytest.StashKey[Ahead[T]]())
    return begin(session, module_file, key, lambda: _one(session, Path(module_file).stem, run, heavy))


def _one[T](session: Any, test: str, run: Callable[[Path], T], heavy: bool) -> Ahead[T]:
    folder = session.config._tmp_path_factory.mktemp(test.removeprefix("test_repro_"))
    return Ahead({test: lambda: run(folder)}, heavy=heavy)
