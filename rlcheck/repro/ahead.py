"""Independent runs of one reproducer module started together, ahead of the tests that read them.

A module whose tests each start their own cold interpreters (the numpy-2 side directories) ran them one test after
another: two children, then one, then one. Started at once when the first of those tests runs, the four share the
cores for the whole time instead of leaving one idle, and each test then takes its own result. Only the runs of tests
this session runs start ahead (a test deselected, or whose kept verdict stands in for it, starts nothing); a run
asked for that was not started ahead runs when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor


class Ahead[T]:
    """`calls` by key; those named in `start` begin now, each in a thread of its own; take(key) waits for one."""

    def __init__(self, calls: Mapping[str, Callable[[], T]], start: Iterable[str]) -> None:
        self.calls = dict(calls)
        keys = [key for key in dict.fromkeys(start) if key in self.calls]
        self.futures: dict[str, Future[T]] = {}
        if keys:
            pool = ThreadPoolExecutor(max_workers=len(keys), thread_name_prefix="rlcheck-ahead")
            self.futures = {key: pool.submit(self.calls[key]) for key in keys}
            pool.shutdown(wait=False)  # the threads end with their calls

    def take(self, key: str) -> T:
        """The result of the run started ahead (its exception raised here), else of the run made now."""
        future = self.futures.get(key)
        return future.result() if future is not None else self.calls[key]()
