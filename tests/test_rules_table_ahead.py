"""Rule table for runs started ahead (rlcheck.repro.ahead), beside test_repro_ahead.py: every call named starts in
a thread of its own however many there are (more than any default pool would run at once), and start() returns
while they still run."""

from __future__ import annotations

import threading

from rlcheck.repro.ahead import Ahead


def test_every_call_named_runs_at_once_however_many():
    count = 40  # over ThreadPoolExecutor's default of min(32, cores + 4) workers on any machine
    barrier = threading.Barrier(count, timeout=10)

    def meet(i: int) -> int:
        barrier.wait()
        return i

    ahead = Ahead({str(i): (lambda i=i: meet(i)) for i in range(count)}).start(str(i) for i in range(count))
    assert [ahead.take(str(i)) for i in range(count)] == list(range(count))


def test_start_returns_while_the_calls_still_run():
    release = threading.Event()
    ahead = Ahead({"a": lambda: release.wait(timeout=5)}).start(["a"])
    running = not ahead.futures["a"].done()
    release.set()
    assert running and ahead.take("a") is True
