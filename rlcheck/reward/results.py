"""Scorings by request content: a retry of a request whose scoring outlived its reply gets that scoring's result.

A scoring is started once per (response, labels) and runs to its end whatever happens to the request
that started it: a request that cannot wait longer is answered 503 + Retry-After, and SLIME's retry
(the same body) finds the scoring running or done. A result is kept ttl_s after it is known, at most
max_entries of them (the oldest go first); only the outcome is kept, never the response text.
An outcome that says nothing about the answer (no process was free, the service is stopping) is not
kept: the next request scores afresh.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rlcheck.reward.pool import Outcome

NOT_KEPT = frozenset({"unavailable", "starved"})


def content_key(response: str, labels: tuple[str, ...]) -> str:
    # ensure_ascii: a lone surrogate (valid JSON text, no UTF-8) is escaped, never an encoding error
    return hashlib.sha256(json.dumps([response, labels]).encode("ascii")).hexdigest()


class ScoringResults:
    def __init__(self, *, ttl_s: float = 600.0, max_entries: int = 200_000) -> None:
        self.ttl_s, self.max_entries = ttl_s, max_entries
        self._entries: collections.OrderedDict[str, asyncio.Future[Outcome]] = collections.OrderedDict()
        self._done_at: dict[str, float] = {}
        self._done_order: collections.deque[tuple[float, str]] = collections.deque()  # by completion time
        self.reused = 0
        """Requests that found their scoring already started or done (SLIME's retries among them)."""

    def running(self) -> int:
        return sum(not f.done() for f in self._entries.values())

    def scoring(self, key: str, start: Callable[[], Coroutine[Any, Any, Outcome]]) -> asyncio.Future[Outcome]:
        """The scoring of this content: the one started or done before, or a new one from start()."""
        self._expire(time.monotonic())
        future = self._entries.get(key)
        if future is not None and not (future.done() and future.result().status in NOT_KEPT):
            self.reused += 1
            return future
        future = asyncio.ensure_future(start())
        self._entries[key] = future
        self._entries.move_to_end(key)
        self._done_at.pop(key, None)
        future.add_done_callback(lambda f: self._finished(key, f))
        return future

    def _finished(self, key: str, future: asyncio.Future[Outcome]) -> None:
        if self._entries.get(key) is not future:
            return
        if future.cancelled() or future.result().status in NOT_KEPT:
            del self._entries[key]
            return
        now = time.monotonic()
        self._done_at[key] = now
        self._done_order.append((now, key))

    def _expire(self, now: float) -> None:
        while self._done_order and self._done_order[0][0] < now - self.ttl_s:
            done_at, key = self._done_order.popleft()
            if self._done_at.get(key) == done_at:  # not scored again since
                self._done_at.pop(key)
                self._entries.pop(key, None)
        while len(self._entries) > self.max_entries:  # oldest first; a running scoring is kept by its task
            key, _ = self._entries.popitem(last=False)
            self._done_at.pop(key, None)
