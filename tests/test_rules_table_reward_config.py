"""The reward service's settings as tables (issue 33): each bound on both sides with its message word for word,
the waits derived from them, and how many CPUs the scorer processes are sized from (affinity, cgroup v2, v1).

A bound moved by one step lets a setting through that the service cannot keep (a scorer timeout longer than the
wall timeout that answers SLIME's retry), or refuses one a user needs; the message is what `rlcheck reward-service`
prints as its usage error, so it is compared whole.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlcheck.reward import config as reward_config
from rlcheck.reward.config import ServiceConfig, cpu_quota, usable_cpus

BOUNDS = [
    # fields, the ValueError's message (None: valid)
    ({"backend": "slime_math"}, None),
    ({"backend": "math_verify"}, None),
    ({"backend": "boxed"}, None),
    ({"backend": "exact"}, "backend='exact': one of slime_math, math_verify, boxed"),
    ({"host": "0.0.0.0"}, None),
    ({"host": " "}, "host=' ': a non-empty address"),
    ({"host": ""}, "host='': a non-empty address"),
    ({"port": 1}, None),
    ({"port": 0}, "port=0: 1..65535"),
    ({"port": 65535}, None),
    ({"port": 65536}, "port=65536: 1..65535"),
    ({"workers": 1}, None),
    ({"workers": 0}, "workers=0: 1..256"),
    ({"workers": 256}, None),
    ({"workers": 257}, "workers=257: 1..256"),
    ({"max_slow_workers": 0}, None),
    ({"max_slow_workers": -1}, "max_slow_workers=-1: 0..1024"),
    ({"max_slow_workers": 1024}, None),
    ({"max_slow_workers": 1025}, "max_slow_workers=1025: 0..1024"),
    ({"max_body_bytes": 1024}, None),
    ({"max_body_bytes": 1023}, "max_body_bytes=1023: 1 KiB..1 GiB"),
    ({"max_body_bytes": 1024**3}, None),
    ({"max_body_bytes": 1024**3 + 1}, "max_body_bytes=1073741825: 1 KiB..1 GiB"),
    ({"scorer_timeout_s": 0.01, "demote_after_cpu_s": 0.0}, None),
    ({"scorer_timeout_s": 0.009, "demote_after_cpu_s": 0.0}, "scorer_timeout_s=0.009: 0.01..600 seconds"),
    ({"scorer_timeout_s": 600.0, "scorer_wall_timeout_s": 600.0, "scoring_max_wall_s": 600.0}, None),
    ({"scorer_timeout_s": 600.5, "scorer_wall_timeout_s": 600.5, "scoring_max_wall_s": 600.5},
     "scorer_timeout_s=600.5: 0.01..600 seconds"),
    ({"scorer_wall_timeout_s": 2.0}, None),  # = scorer_timeout_s
    ({"scorer_wall_timeout_s": 1.99}, "scorer_wall_timeout_s=1.99: scorer_timeout_s..600 seconds"),
    ({"scorer_wall_timeout_s": 600.0}, None),
    ({"scorer_wall_timeout_s": 600.5}, "scorer_wall_timeout_s=600.5: scorer_timeout_s..600 seconds"),
    ({"reply_mode": "retry"}, None),
    ({"reply_mode": "wait"}, None),
    ({"reply_mode": "never"}, "reply_mode='never': one of retry, wait"),
    ({"wait_reply_s": 0.1}, None),
    ({"wait_reply_s": 0.09}, "wait_reply_s=0.09: 0.1..3600 seconds"),
    ({"wait_reply_s": 3600.0}, None),
    ({"wait_reply_s": 3600.5}, "wait_reply_s=3600.5: 0.1..3600 seconds"),
    ({"scoring_max_wall_s": 2.0}, None),  # = scorer_timeout_s
    ({"scoring_max_wall_s": 1.99}, "scoring_max_wall_s=1.99: scorer_timeout_s..3600 seconds"),
    ({"scoring_max_wall_s": 3600.0}, None),
    ({"scoring_max_wall_s": 3600.5}, "scoring_max_wall_s=3600.5: scorer_timeout_s..3600 seconds"),
    ({"results_ttl_s": 1.0}, None),
    ({"results_ttl_s": 0.99}, "results_ttl_s=0.99: 1..86400 seconds"),
    ({"results_ttl_s": 86400.0}, None),
    ({"results_ttl_s": 86400.5}, "results_ttl_s=86400.5: 1..86400 seconds"),
    ({"demote_after_cpu_s": 0.0}, None),
    ({"demote_after_cpu_s": -0.01}, "demote_after_cpu_s=-0.01: 0 <= value < scorer_timeout_s"),
    ({"demote_after_cpu_s": 1.99}, None),
    ({"demote_after_cpu_s": 2.0}, "demote_after_cpu_s=2.0: 0 <= value < scorer_timeout_s"),  # = scorer_timeout_s
    ({"max_queue_wait_s": 0.01}, None),
    ({"max_queue_wait_s": 0.0}, "max_queue_wait_s=0.0: 0 < value <= 600 seconds"),
    ({"max_queue_wait_s": 600.0}, None),
    ({"max_queue_wait_s": 600.5}, "max_queue_wait_s=600.5: 0 < value <= 600 seconds"),
    ({"max_queued": 1}, None),
    ({"max_queued": 0}, "max_queued=0: 1..1000000"),
    ({"max_queued": 1_000_000}, None),
    ({"max_queued": 1_000_001}, "max_queued=1000001: 1..1000000"),
    ({"read_timeout_s": 0.1}, None),
    ({"read_timeout_s": 0.09}, "read_timeout_s=0.09: 0.1..600 seconds"),
    ({"read_timeout_s": 600.0}, None),
    ({"read_timeout_s": 600.5}, "read_timeout_s=600.5: 0.1..600 seconds"),
    ({"max_connections": 8}, None),
    ({"max_connections": 7}, "max_connections=7: 8..1000000"),
    ({"max_connections": 1_000_000}, None),
    ({"max_connections": 1_000_001}, "max_connections=1000001: 8..1000000"),
    ({"fallback_reward": -1.0}, None),
    ({"fallback_reward": float("inf")}, "fallback_reward=inf: a finite number"),
    ({"fallback_reward": float("nan")}, "fallback_reward=nan: a finite number"),
    ({"keep_alive_s": 1}, None),
    ({"keep_alive_s": 0}, "keep_alive_s=0: 1..3600 seconds"),
    ({"keep_alive_s": 3600}, None),
    ({"keep_alive_s": 3601}, "keep_alive_s=3601: 1..3600 seconds"),
    ({"reward_key": None}, None),
    ({"reward_key": "score"}, None),
    ({"reward_key": ""}, "reward_key='': unset or a non-empty key"),
    ({"reward_key": " "}, "reward_key=' ': unset or a non-empty key"),
    ({"worker_max_memory_bytes": 256 * 1024**2}, None),
    ({"worker_max_memory_bytes": 256 * 1024**2 - 1}, "worker_max_memory_bytes=268435455: >= 256 MiB"),
    # two bad fields: the first in the table is named
    ({"port": 0, "workers": 0}, "port=0: 1..65535"),
]


@pytest.mark.parametrize(("fields", "message"), BOUNDS)
def test_rules_reward_config_bounds(fields: dict[str, object], message: str | None) -> None:
    if message is None:
        config = ServiceConfig(**fields)  # type: ignore[arg-type]
        assert all(getattr(config, k) == v for k, v in fields.items())
        return
    with pytest.raises(ValueError) as raised:
        ServiceConfig(**fields)  # type: ignore[arg-type]
    assert str(raised.value) == message


WAITS = [
    # fields, reply_wait_s, shutdown_grace_s, graceful_shutdown_s
    ({}, 6.0, 2.0, 7),  # retry: the wall timeout; ceil(max(2.0, read 5.0)) + 2
    ({"reply_mode": "wait"}, 240.0, 2.0, 7),
    ({"reply_mode": "wait", "wait_reply_s": 1.5}, 1.5, 1.5, 7),
    ({"scorer_timeout_s": 0.5, "scorer_wall_timeout_s": 1.0, "demote_after_cpu_s": 0.1}, 1.0, 1.0, 7),
    ({"read_timeout_s": 0.5}, 6.0, 2.0, 4),  # the grace is the longer one
    ({"read_timeout_s": 0.5, "reply_mode": "wait", "wait_reply_s": 1.2}, 1.2, 1.2, 4),
    ({"read_timeout_s": 7.2}, 6.0, 2.0, 10),  # rounded up
    ({"read_timeout_s": 7.0}, 6.0, 2.0, 9),
]


@pytest.mark.parametrize(("fields", "reply_wait", "grace", "graceful"), WAITS)
def test_rules_reward_config_waits(fields: dict[str, object], reply_wait: float, grace: float,
                                   graceful: int) -> None:
    config = ServiceConfig(**fields)  # type: ignore[arg-type]
    assert (config.reply_wait_s, config.shutdown_grace_s, config.graceful_shutdown_s) == (reply_wait, grace, graceful)
    assert isinstance(config.graceful_shutdown_s, int)


CPU_MAX = [
    ("400000 100000\n", 4.0),
    ("50000 100000", 0.5),
    ("max 100000", None),
    ("max", None),
    ("", None),
    ("1 2 3", None),
    ("a 100000", None),
    ("100000 0", None),
    ("100000", None),
]


@pytest.mark.parametrize(("line", "cpus"), CPU_MAX)
def test_rules_reward_config_cpu_quota(line: str, cpus: float | None) -> None:
    assert cpu_quota(line) == cpus


def _cgroup(root: Path, v2: str | None = None, v1: tuple[str, str] | None = None) -> Path:
    root.mkdir()
    if v2 is not None:
        (root / "cpu.max").write_text(v2)
    if v1 is not None:
        (root / "cpu").mkdir()
        (root / "cpu" / "cpu.cfs_quota_us").write_text(v1[0])
        (root / "cpu" / "cpu.cfs_period_us").write_text(v1[1])
    return root


USABLE = [
    # cgroup v2 cpu.max, cgroup v1 (quota, period), CPUs usable with 8 in the affinity
    (None, None, 8),
    ("400000 100000", None, 4),
    ("150000 100000", None, 2),  # a part of a CPU counts as one more
    ("50000 100000", None, 1),
    ("1 100000", None, 1),
    ("0 100000", None, 1),  # never under one process
    ("-100000 100000", None, 1),
    ("1600000 100000", None, 8),  # the affinity caps a larger limit
    ("800000 100000", None, 8),
    ("max 100000", None, 8),
    ("max 100000", ("100000", "100000"), 8),  # a v2 file read: v1 is not looked at
    (None, ("200000", "100000"), 2),
    (None, ("150000", "100000"), 2),
    (None, ("50000", "100000"), 1),
    (None, ("1", "100000"), 1),  # the smallest quota is a limit
    (None, ("1", "1"), 1),  # and the shortest period
    (None, ("-1", "100000"), 8),  # v1's "no limit"
    (None, ("0", "100000"), 8),
    (None, ("100000", "0"), 8),
    (None, ("100000", "-1"), 8),
    (None, ("x", "100000"), 8),
    (None, ("100000", "x"), 8),
]


@pytest.mark.parametrize(("v2", "v1", "cpus"), USABLE)
def test_rules_reward_config_usable_cpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, v2: str | None,
                                         v1: tuple[str, str] | None, cpus: int) -> None:
    monkeypatch.setattr(reward_config.os, "sched_getaffinity", lambda pid: set(range(8)))
    assert usable_cpus(_cgroup(tmp_path / "cg", v2, v1)) == cpus


@pytest.mark.parametrize(("cpu_count", "v2", "cpus"), [(6, None, 6), (None, None, 1), (6, "200000 100000", 2),
                                                         (None, "200000 100000", 1)])
def test_rules_reward_config_usable_cpus_without_affinity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          cpu_count: int | None, v2: str | None, cpus: int) -> None:
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: cpu_count)
    assert usable_cpus(_cgroup(tmp_path / "cg", v2)) == cpus


def test_rules_reward_config_usable_cpus_is_never_under_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reward_config.os, "sched_getaffinity", lambda pid: set())
    assert usable_cpus(_cgroup(tmp_path / "cg")) == 1
