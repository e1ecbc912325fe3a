"""Runs started ahead of the tests that read them: together, only those named, each result (or error) to its taker."""

from __future__ import annotations

import threading

import pytest

from rlcheck.repro.ahead import Ahead


def test_ahead_runs_the_named_calls_together():
    """Each started call waits for the other: run one after another, the barrier would break."""
    barrier = threading.Barrier(2, timeout=10)

    def meet(key: str) -> str:
        barrier.wait()
        return f"{key} ran"

    ahead = Ahead({"a": lambda: meet("a"), "b": lambda: meet("b")}).start(["a", "b"])
    assert (ahead.take("b"), ahead.take("a")) == ("b ran", "a ran")


def test_ahead_starts_only_the_named_and_the_rest_when_taken():
    calls: list[str] = []
    threads: dict[str, str] = {}

    def run(key: str) -> str:
        calls.append(key)
        threads[key] = threading.current_thread().name
        return key

    ahead = Ahead({k: (lambda k=k: run(k)) for k in ("a", "b", "c")}).start(["b", "b", "not a call"])
    assert ahead.take("b") == "b"
    assert calls == ["b"]  # a and c not started: their tests are not in this session
    first = ahead.futures["b"]
    assert ahead.start(["b"]).futures["b"] is first  # begun once
    assert ahead.take("c") == "c"
    assert calls == ["b", "c"]
    assert list(ahead.futures) == ["b", "c"]
    assert threads["b"].startswith("rlcheck-ahead") and threads["c"].startswith("rlcheck-ahead")


def test_ahead_nothing_named_starts_nothing():
    ahead: Ahead[int] = Ahead({"a": lambda: 1}).start([])
    assert ahead.futures == {}
    assert ahead.take("a") == 1


def test_ahead_error_raised_to_the_taker():
    def broken() -> int:
        raise RuntimeError("child could not start")

    ahead = Ahead({"a": broken, "b": lambda: 2}).start(["a", "b"])
    assert ahead.take("b") == 2
    with pytest.raises(RuntimeError, match="child could not start"):
        ahead.take("a")
    with pytest.raises(KeyError):
        ahead.take("unknown")
