"""The service's counters and histograms, rendered in the Prometheus text format (version 0.0.4)."""

from __future__ import annotations

import bisect
import collections
import time
from collections.abc import Iterable

from rlcheck.reward.pool import PoolState

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_MAX_SCORE_VALUES = 32  # a continuous scorer would otherwise grow one series per distinct reward


def parse_text(text: str) -> dict[str, float]:
    """Series -> value from Prometheus text (what /metrics renders), for tests and benchmarks."""
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)
    return f"{{{inner}}}" if inner else ""


class Counter:
    def __init__(self, name: str, help_text: str, label: str | None = None) -> None:
        self.name, self.help_text, self.label = name, help_text, label
        self.values: collections.Counter[str] = collections.Counter()

    def inc(self, label_value: str = "", amount: int = 1) -> None:
        self.values[label_value] += amount

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help_text}", f"# TYPE {self.name} counter"]
        if self.label is None:
            return [*lines, f"{self.name} {self.values['']}"]
        return lines + [f"{self.name}{_labels([(self.label, v)])} {n}" for v, n in sorted(self.values.items())]


class Histogram:
    def __init__(self, name: str, help_text: str, buckets: tuple[float, ...] = LATENCY_BUCKETS_S) -> None:
        self.name, self.help_text, self.buckets = name, help_text, buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total, self.count = 0.0, 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.count += 1

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help_text}", f"# TYPE {self.name} histogram"]
        running = 0
        for bound, n in zip([*map(repr, self.buckets), "+Inf"], self.counts, strict=True):
            running += n
            lines.append(f'{self.name}_bucket{{le="{bound}"}} {running}')
        return [*lines, f"{self.name}_sum {self.total}", f"{self.name}_count {self.count}"]


def _gauge(name: str, help_text: str, series: dict[str, int] | dict[str, float], label: str | None = None) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
    return lines + [f"{name}{_labels([(label, k)] if label else [])} {v}" for k, v in series.items()]


FALLBACK_WINDOW_REPLIES = 1000
FALLBACK_RATE_WINDOW_S = 60.0


class FallbackWindow:
    """The share of fallbacks in the last N rewards replied, and how many fell in the last minute.

    Counters only rise; a watcher that must fail a run whose fallback share passes a bound needs the
    recent share itself, bounded in memory whatever the traffic.
    """

    def __init__(self, replies: int = FALLBACK_WINDOW_REPLIES, rate_window_s: float = FALLBACK_RATE_WINDOW_S) -> None:
        self.rate_window_s = rate_window_s
        self._recent: collections.deque[bool] = collections.deque(maxlen=replies)
        self._fallbacks_in_recent = 0
        self._times: collections.deque[float] = collections.deque()  # fallback times in the rate window

    def add(self, fallback: bool, now: float) -> None:
        if len(self._recent) == self._recent.maxlen and self._recent[0]:
            self._fallbacks_in_recent -= 1
        self._recent.append(fallback)
        self._fallbacks_in_recent += fallback
        if fallback:
            self._times.append(now)
        self._trim(now)

    def _trim(self, now: float) -> None:
        while self._times and self._times[0] <= now - self.rate_window_s:
            self._times.popleft()
        # memory stays bounded even at thousands of fallbacks a second
        while len(self._times) > 100_000:
            self._times.popleft()

    def share(self) -> float:
        return self._fallbacks_in_recent / len(self._recent) if self._recent else 0.0

    def replies(self) -> int:
        return len(self._recent)

    def last_minute(self, now: float) -> int:
        self._trim(now)
        return len(self._times)


class ServiceMetrics:
    """What /metrics shows. Health checks are counted apart, so /score counters match what clients sent."""

    def __init__(self) -> None:
        p = "rlcheck_reward_"
        self.requests = Counter(f"{p}requests_total", "POST /score replies by HTTP status code", "code")
        self.scores = Counter(f"{p}scores_total", "Rewards replied (HTTP 200) by value, fallbacks included", "value")
        self.timeouts = Counter(f"{p}scorer_timeouts_total", "Scorings killed when they used up their CPU "
                                "budget (fallback replied)")
        self.errors = Counter(f"{p}scorer_errors_total", "Scorings that raised or lost their process (fallback)")
        self.latency = Histogram(f"{p}request_duration_seconds", "POST /score time from request to reply")
        self.health = Counter(f"{p}health_checks_total", "GET /health results", "result")
        self.fallbacks = Counter(f"{p}fallbacks_total", "Fallback rewards replied, by reason", "reason")
        self.unavailable = Counter(f"{p}unavailable_total", "503 + Retry-After replies, by reason (pending: the "
                                   "scoring goes on and the retry gets its reward)", "reason")
        self.fallback_window = FallbackWindow()
        self.in_flight = 0

    def score_value(self, value: float) -> None:
        key = repr(float(value))
        if key not in self.scores.values and len(self.scores.values) >= _MAX_SCORE_VALUES:
            key = "other"
        self.scores.inc(key)

    def reward_replied(self, fallback_reason: str | None) -> None:
        """Every 200 reply passes here: fallback_reason is None for a graded reward."""
        if fallback_reason is not None:
            self.fallbacks.inc(fallback_reason)
        self.fallback_window.add(fallback_reason is not None, time.monotonic())

    def render(self, pool: PoolState) -> str:
        p = "rlcheck_reward_"
        window = self.fallback_window
        lines = [*self.requests.render(), *self.scores.render(), *self.timeouts.render(), *self.errors.render(),
                 *self.fallbacks.render(), *self.unavailable.render(), *self.latency.render(), *self.health.render()]
        lines += _gauge(f"{p}fallback_share", f"Share of fallbacks in the last {FALLBACK_WINDOW_REPLIES} rewards "
                        "replied (a run should fail above its bound)", {"": round(window.share(), 6)})
        lines += _gauge(f"{p}fallback_share_replies", "Rewards the share is taken over (fewer at start)",
                        {"": window.replies()})
        lines += _gauge(f"{p}fallbacks_last_minute", "Fallback rewards replied in the last 60 s",
                        {"": window.last_minute(time.monotonic())})
        lines += _gauge(f"{p}in_flight_requests", "POST /score requests being handled", {"": self.in_flight})
        lines += _gauge(f"{p}queued_scorings", "Scorings waiting for a process", {"": pool.queued})
        workers = {"idle": pool.idle, "busy": pool.busy, "slow": pool.slow, "starting": pool.starting}
        lines += _gauge(f"{p}scorer_processes", "Scorer processes by state (slow = demoted)", workers, "state")
        retired = Counter(f"{p}scorer_processes_retired_total", "Scorer processes stopped, by reason", "reason")
        for reason, n in pool.retired.items():
            retired.inc(reason, n)
        return "\n".join(lines + retired.render()) + "\n"
