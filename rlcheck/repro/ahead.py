"""Independent runs of one reproducer module started together, ahead of the tests that read them.

A module whose tests each start their own cold interpreters (the numpy-2 side directories) ran them one test after
another: two children, then one, then one. Started at once when the first of those tests runs, the four share the
cores for the whole time instead of leaving one idle, and each test then takes its own result. Only the runs of tests
this session runs start ahead (a test deselected, or whose kept verdict stands in for it, starts nothing; under xdist,
where every worker collects every test, each test starts its own); a run asked for that was not started ahead
starts when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor


class Ahead[T]:
    """`calls` by key; start(keys) begins those, each in a thread of its own; take(key) waits for one."""

    def __init__(self, calls: Mapping[str, Callable[[], T]]) -> None:
        self.calls = dict(calls)
        self.futures: dict[str, Future[T]] = {}

    def start(self, keys: Iterable[str]) -> Ahead[T]:
        """Begin the named calls not begun yet, together (a name without a call is ignored)."""
        new = [key for key in dict.fromkeys(keys) if key in self.calls and key not in self.futures]
        if new:
            pool = ThreadPoolExecutor(max_workers=len(new), thread_name_prefix="rlcheck-ahead")
            self.futures.update({key: pool.submit(self.calls[key]) for key in new})
            pool.shutdown(wait=False)  # the threads end with their calls
        return self

    def take(self, key: str) -> T:
        """The named call's result (its exception raised here), begun now when it was not; KeyError: no such call."""
        return self.start([key]).futures[key].result()
