"""The service's counters and histograms, rendered in the Prometheus text format (version 0.0.4)."""

from __future__ import annotations

import bisect
import collections
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


def _gauge(name: str, help_text: str, series: dict[str, int], label: str | None = None) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
    return lines + [f"{name}{_labels([(label, k)] if label else [])} {v}" for k, v in series.items()]


class ServiceMetrics:
    """What /metrics shows. Health checks are counted apart, so /score counters match what clients sent."""

    def __init__(self) -> None:
        p = "rlcheck_reward_"
        self.requests = Counter(f"{p}requests_total", "POST /score replies by HTTP status code", "code")
        self.scores = Counter(f"{p}scores_total", "Rewards replied (HTTP 200) by value, fallbacks included", "value")
        self.timeouts = Counter(f"{p}scorer_timeouts_total", "Scorings killed at the deadline (fallback replied)")
        self.errors = Counter(f"{p}scorer_errors_total", "Scorings that raised or lost their process (fallback)")
        self.latency = Histogram(f"{p}request_duration_seconds", "POST /score time from request to reply")
        self.health = Counter(f"{p}health_checks_total", "GET /health results", "result")
        self.in_flight = 0

    def score_value(self, value: float) -> None:
        key = repr(float(value))
        if key not in self.scores.values and len(self.scores.values) >= _MAX_SCORE_VALUES:
            key = "other"
        self.scores.inc(key)

    def render(self, pool: PoolState) -> str:
        p = "rlcheck_reward_"
        lines = [*self.requests.render(), *self.scores.render(), *self.timeouts.render(), *self.errors.render(),
                 *self.latency.render(), *self.health.render()]
        lines += _gauge(f"{p}in_flight_requests", "POST /score requests being handled", {"": self.in_flight})
        lines += _gauge(f"{p}queued_scorings", "Scorings waiting for a process", {"": pool.queued})
        workers = {"idle": pool.idle, "busy": pool.busy, "slow": pool.slow, "starting": pool.starting}
        lines += _gauge(f"{p}scorer_processes", "Scorer processes by state (slow = demoted)", workers, "state")
        retired = Counter(f"{p}scorer_processes_retired_total", "Scorer processes stopped, by reason", "reason")
        for reason, n in pool.retired.items():
            retired.inc(reason, n)
        return "\n".join(lines + retired.render()) + "\n"
