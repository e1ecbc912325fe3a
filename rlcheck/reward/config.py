"""The reward service's settings: one frozen, validated dataclass (the CLI fills it)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

BACKENDS = ("slime_math", "math_verify", "boxed")
REPLY_MODES = ("retry", "wait")

# SLIME's remote_rm keeps idle connections for aiohttp's default 15 s; common L7 proxies use 60 s.
# A server keep-alive longer than both means the client side always closes an idle connection first,
# so a request is never written into a connection the server is closing (uvicorn's default is 5 s).
DEFAULT_KEEP_ALIVE_S = 75


def cpu_quota(cpu_max: str) -> float | None:
    """CPUs granted by a cgroup v2 `cpu.max` line ("400000 100000" -> 4.0; "max 100000" -> None)."""
    fields = cpu_max.split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        return int(fields[0]) / int(fields[1])
    except (ValueError, ZeroDivisionError):
        return None


def _cgroup_quota(cgroup_root: Path) -> float | None:
    try:  # cgroup v2
        return cpu_quota((cgroup_root / "cpu.max").read_text())
    except OSError:
        pass
    try:  # cgroup v1: a quota of -1 means no limit
        quota = int((cgroup_root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((cgroup_root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def usable_cpus(cgroup_root: Path = Path("/sys/fs/cgroup")) -> int:
    """CPUs this process may use: its affinity, capped by the container's CPU limit when there is one.

    In a pod with a 4-CPU limit on a 96-core node, os.cpu_count() says 96; scorer processes are sized
    from this instead.
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = _cgroup_quota(cgroup_root)
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    return max(1, cpus)


@dataclass(frozen=True, kw_only=True, slots=True)
class ServiceConfig:
    """Everything `rlcheck reward-service` runs with."""

    backend: str = "slime_math"
    """Grading mode: `slime_math` (as SLIME's --rm-type math: last \\boxed{}, its normalization and sympy
    check), `math_verify` (math-verify on the whole response; the label is boxed when it is not) or `boxed`
    (last \\boxed{} string match after spelling normalization)."""
    host: str = "127.0.0.1"
    """Address to bind; the Kubernetes manifest sets 0.0.0.0."""
    port: int = 8000
    workers: int = 2
    """Scorer processes at full CPU priority (the HTTP front is one asyncio process)."""
    max_slow_workers: int = 16
    """Extra processes that finish slow scorings (at normal priority) while fresh ones take their slots."""
    max_body_bytes: int = 4 * 1024 * 1024
    """Larger bodies get 413. 4 MiB holds a 128k-token answer even with every character \\u-escaped."""
    scorer_timeout_s: float = 2.0
    """CPU seconds one scoring may use; past it the process is killed and the fallback is returned (the only
    case that gets the fallback)."""
    scorer_wall_timeout_s: float = 6.0
    """reply_mode retry: a request whose scoring has not ended within this many seconds is answered 503 +
    Retry-After; the scoring goes on and SLIME's retry of the same body gets its reward."""
    reply_mode: str = "retry"
    """`retry`: past scorer_wall_timeout_s, 503 + Retry-After (SLIME retries, 10 attempts). `wait`: the
    request waits for its scoring up to wait_reply_s (for clients that never retry, such as Miles)."""
    wait_reply_s: float = 240.0
    """reply_mode wait: how long a request waits for its scoring; keep it under the client's timeout
    (Miles: aiohttp's default 300 s)."""
    scoring_max_wall_s: float = 600.0
    """Safety bound on one scoring that makes no progress at all (a stopped process, a host that gives it
    nothing for minutes): it is killed and the request gets 503, never a reward."""
    results_ttl_s: float = 600.0
    """How long a finished scoring's result is kept for a retry of the same request."""
    demote_after_cpu_s: float = 0.2
    """A scoring that has used this much CPU (a warm symbolic one uses under 0.1 s) is "slow": a fresh
    process takes its slot while it finishes at normal priority; 0 = never."""
    max_queue_wait_s: float = 30.0
    """A request waiting this long for a scorer process gets 503 (SLIME retries it)."""
    max_queued: int = 1024
    """Scorings allowed to wait for a process; one more gets 503 with Retry-After at once."""
    read_timeout_s: float = 5.0
    """Request headers, and then the body, must arrive within this (slow or stalled clients: closed / 408)."""
    max_connections: int = 2048
    """Open connections past which requests get 503 (SLIME opens at most 64 per rollout process)."""
    fallback_reward: float = 0.0
    """Reward returned (and counted, and logged) when scoring times out or fails."""
    keep_alive_s: int = DEFAULT_KEEP_ALIVE_S
    """Seconds an idle HTTP connection is kept open."""
    reward_key: str | None = None
    """When set, reply {reward_key: value} (use SLIME's --reward-key) instead of a bare number."""
    worker_max_memory_bytes: int = 1024**3
    """Address-space limit of each scorer process (one uses about 75 MB): a runaway sympy integer raises
    MemoryError, a counted error, instead of growing until the pod's memory limit kills everything."""
    access_log: bool = False

    def __post_init__(self) -> None:
        checks = [
            ("backend", self.backend in BACKENDS, f"one of {', '.join(BACKENDS)}"),
            ("host", bool(self.host.strip()), "a non-empty address"),
            ("port", 1 <= self.port <= 65535, "1..65535"),
            ("workers", 1 <= self.workers <= 256, "1..256"),
            ("max_slow_workers", 0 <= self.max_slow_workers <= 1024, "0..1024"),
            ("max_body_bytes", 1024 <= self.max_body_bytes <= 1024**3, "1 KiB..1 GiB"),
            ("scorer_timeout_s", 0.01 <= self.scorer_timeout_s <= 600, "0.01..600 seconds"),
            ("scorer_wall_timeout_s", self.scorer_timeout_s <= self.scorer_wall_timeout_s <= 600,
             "scorer_timeout_s..600 seconds"),
            ("reply_mode", self.reply_mode in REPLY_MODES, f"one of {', '.join(REPLY_MODES)}"),
            ("wait_reply_s", 0.1 <= self.wait_reply_s <= 3600, "0.1..3600 seconds"),
            ("scoring_max_wall_s", self.scorer_timeout_s <= self.scoring_max_wall_s <= 3600,
             "scorer_timeout_s..3600 seconds"),
            ("results_ttl_s", 1 <= self.results_ttl_s <= 86400, "1..86400 seconds"),
            ("demote_after_cpu_s", 0 <= self.demote_after_cpu_s < self.scorer_timeout_s,
             "0 <= value < scorer_timeout_s"),
            ("max_queue_wait_s", 0 < self.max_queue_wait_s <= 600, "0 < value <= 600 seconds"),
            ("max_queued", 1 <= self.max_queued <= 1_000_000, "1..1000000"),
            ("read_timeout_s", 0.1 <= self.read_timeout_s <= 600, "0.1..600 seconds"),
            ("max_connections", 8 <= self.max_connections <= 1_000_000, "8..1000000"),
            ("fallback_reward", math.isfinite(self.fallback_reward), "a finite number"),
            ("keep_alive_s", 1 <= self.keep_alive_s <= 3600, "1..3600 seconds"),
            ("reward_key", self.reward_key is None or bool(self.reward_key.strip()), "unset or a non-empty key"),
            ("worker_max_memory_bytes", self.worker_max_memory_bytes >= 256 * 1024**2, ">= 256 MiB"),
        ]
        for name, ok, allowed in checks:
            if not ok:
                raise ValueError(f"{name}={getattr(self, name)!r}: {allowed}")

    @property
    def reply_wait_s(self) -> float:
        """How long a request waits for its scoring before 503 + Retry-After."""
        return self.wait_reply_s if self.reply_mode == "wait" else self.scorer_wall_timeout_s

    @property
    def shutdown_grace_s(self) -> float:
        """After SIGTERM, how long a request still waits for its scoring before 503 + Retry-After."""
        return min(self.reply_wait_s, 2.0)

    @property
    def graceful_shutdown_s(self) -> int:
        """How long uvicorn waits for in-flight requests once the service has drained (they are answered
        within shutdown_grace_s, a body within the read timeout)."""
        return math.ceil(max(self.shutdown_grace_s, self.read_timeout_s)) + 2
