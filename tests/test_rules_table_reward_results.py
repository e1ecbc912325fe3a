"""The scorings kept for SLIME's retries as tables (issue 33): which request reuses a scoring, which outcome is kept,
when a kept one expires, which one is dropped first past the bound, and that a stale scoring never drops a newer one.

SLIME retries a request answered 503 with the same body; the retry must find the scoring its first attempt started
(never score twice, never lose the reward), while an outcome that says nothing about the answer (no process free,
the service stopping) must be scored afresh. The clock is the test's own, so each edge is met exactly.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from rlcheck.reward import results
from rlcheck.reward.pool import Outcome
from rlcheck.reward.results import ScoringResults, content_key


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(results, "time", fake)
    return fake


class _Starts:
    """start() callables whose scorings end when the test says, with the outcome it says."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.gates: dict[str, list[asyncio.Future[Outcome]]] = {}

    def start(self, key: str) -> Callable[[], Coroutine[Any, Any, Outcome]]:
        async def scoring() -> Outcome:
            gate: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
            self.gates.setdefault(key, []).append(gate)
            return await gate
        return lambda: (self.started.append(key), scoring())[1]

    async def finish(self, key: str, status: str = "ok") -> None:
        self.gates[key][-1].set_result(Outcome(status=status, value=1.0 if status == "ok" else None))
        for _ in range(3):  # the scoring's task, then its done callback
            await asyncio.sleep(0)


def _run(body: Callable[[ScoringResults, _Starts], Coroutine[Any, Any, None]], **kwargs: float) -> None:
    async def main() -> None:
        await body(ScoringResults(**kwargs), _Starts())  # type: ignore[arg-type]
    asyncio.run(main())


async def _settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


KEYS = [
    # response, labels, the JSON hashed
    ("r", ("a",), '["r", ["a"]]'),
    ("r", ("a", "b"), '["r", ["a", "b"]]'),
    ("", (), '["", []]'),
    ("\ud800", ("\u00e9",), '["\\ud800", ["\\u00e9"]]'),  # a lone surrogate is escaped, never an encoding error
]


@pytest.mark.parametrize(("response", "labels", "text"), KEYS)
def test_rules_reward_results_content_key(response: str, labels: tuple[str, ...], text: str) -> None:
    assert content_key(response, labels) == hashlib.sha256(text.encode("ascii")).hexdigest()
    assert json.dumps([response, labels]) == text


def test_rules_reward_results_content_key_tells_labels_apart() -> None:
    keys = {content_key("r", ("ab",)), content_key("r", ("a", "b")), content_key("r", ("b", "a")),
            content_key("ra", ()), content_key("r", ("a",))}
    assert len(keys) == 5


@pytest.mark.parametrize(("status", "kept"), [("ok", True), ("timeout", True), ("error", True), ("starved", False),
                                              ("unavailable", False)])
def test_rules_reward_results_which_outcomes_are_kept(clock: _Clock, status: str, kept: bool) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        first = res.scoring("k", starts.start("k"))
        await _settle()
        assert res.running() == 1
        again = res.scoring("k", starts.start("k"))  # a retry while it runs: the same scoring
        assert again is first and res.reused == 1 and starts.started == ["k"]
        await starts.finish("k", status)
        assert res.running() == 0
        third = res.scoring("k", starts.start("k"))
        assert (third is first, res.reused, starts.started) == (
            (True, 2, ["k"]) if kept else (False, 1, ["k", "k"]))
        if not kept:
            await _settle()
            assert res.running() == 1
            await starts.finish("k")
    _run(body)


def test_rules_reward_results_unkept_outcome_seen_before_its_callback(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        first = res.scoring("k", starts.start("k"))
        await _settle()
        starts.gates["k"][-1].set_result(Outcome(status="unavailable", value=None))
        await asyncio.sleep(0)  # the task is done, its done callback not run yet
        assert first.done() and res._entries["k"] is first
        assert res.scoring("k", starts.start("k")) is not first
        assert res.reused == 0 and starts.started == ["k", "k"]
        await _settle()
        await starts.finish("k")
    _run(body)


def test_rules_reward_results_cancelled_scoring_is_dropped(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        first = res.scoring("k", starts.start("k"))
        await _settle()
        first.cancel()
        await _settle()
        assert "k" not in res._entries
        assert res.scoring("k", starts.start("k")) is not first and res.reused == 0
        await _settle()
        await starts.finish("k")
    _run(body)


TTL = [
    # seconds after the scoring ended, whether a retry still finds it
    (0.0, True),
    (10.0, True),  # exactly ttl_s: kept
    (10.5, False),
    (100.0, False),
]


@pytest.mark.parametrize(("after_s", "found"), TTL)
def test_rules_reward_results_ttl(clock: _Clock, after_s: float, found: bool) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        first = res.scoring("k", starts.start("k"))
        await _settle()
        clock.now += 3.0  # the ttl counts from the end, not the start
        await starts.finish("k")
        clock.now += after_s
        assert (res.scoring("k", starts.start("k")) is first) is found
        assert ("k" in res._done_at) is found
        await _settle()
        if not found:
            await starts.finish("k")
    _run(body, ttl_s=10.0)


def test_rules_reward_results_running_scoring_never_expires(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        first = res.scoring("k", starts.start("k"))
        await _settle()
        clock.now += 1000.0
        assert res.scoring("k", starts.start("k")) is first
        await starts.finish("k")
    _run(body, ttl_s=10.0)


def test_rules_reward_results_expiry_goes_in_order_of_ending(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        for key in ("a", "b", "c"):
            res.scoring(key, starts.start(key))
        await _settle()
        for key in ("b", "a", "c"):  # ended at 1000, 1004, 1008
            await starts.finish(key)
            clock.now += 4.0
        clock.now = 1000.0 + 10.0 + 4.5  # b and a are over ttl_s, c is not
        res._expire(clock.now)
        assert list(res._entries) == ["c"] and set(res._done_at) == {"c"}
    _run(body, ttl_s=10.0)


def test_rules_reward_results_bound_drops_the_oldest(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        for key in ("a", "b"):
            res.scoring(key, starts.start(key))
            await _settle()
            await starts.finish(key)
        assert list(res._entries) == ["a", "b"]  # at the bound: all kept
        res.scoring("c", starts.start("c"))
        await _settle()
        res.scoring("d", starts.start("d"))  # past the bound: the oldest goes
        assert list(res._entries) == ["b", "c", "d"]
        assert "a" not in res._done_at and "b" in res._done_at
        res.scoring("e", starts.start("e"))
        assert list(res._entries) == ["c", "d", "e"] and "b" not in res._done_at
        await _settle()
        for key in ("c", "d", "e"):
            await starts.finish(key)
    _run(body, max_entries=2)


def test_rules_reward_results_rescored_key_moves_to_the_end(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        res.scoring("a", starts.start("a"))
        await _settle()
        await starts.finish("a", "unavailable")  # not kept: dropped
        res.scoring("b", starts.start("b"))
        await _settle()
        res.scoring("a", starts.start("a"))
        assert list(res._entries) == ["b", "a"]
        await _settle()
        await starts.finish("a")
        await starts.finish("b")
    _run(body)


def test_rules_reward_results_stale_ending_keeps_the_newer_scoring(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        first = res.scoring("a", starts.start("a"))
        await _settle()
        res.scoring("b", starts.start("b"))  # bound 1: "a" is dropped while it still runs
        await _settle()
        second = res.scoring("a", starts.start("a"))  # "b" dropped, "a" started again
        await _settle()
        assert second is not first
        starts.gates["a"][0].set_result(Outcome(status="unavailable", value=None))  # the first one ends
        await _settle()
        assert res._entries.get("a") is second  # the stale ending dropped nothing
        starts.gates["a"][1].set_result(Outcome(status="ok", value=1.0))
        await _settle()
        assert res.scoring("a", starts.start("a")) is second
        await starts.finish("b")
    _run(body, max_entries=1)


def test_rules_reward_results_rescored_after_drop_expires_by_its_own_end(clock: _Clock) -> None:
    async def body(res: ScoringResults, starts: _Starts) -> None:
        res.scoring("a", starts.start("a"))
        await _settle()
        await starts.finish("a")  # ended at 1000
        res.scoring("b", starts.start("b"))  # bound 1: "a" dropped
        await _settle()
        clock.now = 1005.0
        second = res.scoring("a", starts.start("a"))
        await _settle()
        await starts.finish("a")  # ended at 1005
        clock.now = 1010.5  # the first ending is over ttl_s, the second is not
        assert res.scoring("a", starts.start("a")) is second
        clock.now = 1015.5
        assert res.scoring("a", starts.start("a")) is not second
        await _settle()
        await starts.finish("a")
        await starts.finish("b")
    _run(body, ttl_s=10.0, max_entries=1)


def test_rules_reward_results_defaults() -> None:
    res = ScoringResults()
    assert (res.ttl_s, res.max_entries, res.reused, res.running()) == (600.0, 200_000, 0, 0)
    assert results.NOT_KEPT == {"unavailable", "starved"}
