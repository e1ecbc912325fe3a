"""/metrics text: Prometheus format, cumulative buckets, bounded series."""

from __future__ import annotations

from rlcheck.reward.metrics import Histogram, ServiceMetrics, parse_text
from rlcheck.reward.pool import PoolState

IDLE_POOL = PoolState(idle=2, busy=0, slow=0, starting=0, queued=0, retired={"timeout": 3}, spawn_failures=0,
                      last_spawn_error="")


def test_reward_metrics_render_counts_and_types() -> None:
    metrics = ServiceMetrics()
    metrics.requests.inc("200", 3)
    metrics.requests.inc("422")
    for value in (1.0, 0.0, 0.0):
        metrics.score_value(value)
    metrics.timeouts.inc()
    text = metrics.render(IDLE_POOL)
    series = parse_text(text)
    assert series['rlcheck_reward_requests_total{code="200"}'] == 3
    assert series['rlcheck_reward_scores_total{value="0.0"}'] == 2
    assert series["rlcheck_reward_scorer_timeouts_total"] == 1
    assert series["rlcheck_reward_scorer_errors_total"] == 0
    assert series['rlcheck_reward_scorer_processes_retired_total{reason="timeout"}'] == 3
    assert "# TYPE rlcheck_reward_request_duration_seconds histogram" in text
    assert text.endswith("\n")


def test_reward_histogram_buckets_are_cumulative() -> None:
    hist = Histogram("h", "help", buckets=(0.1, 1.0))
    for value in (0.05, 0.5, 0.5, 5.0):
        hist.observe(value)
    series = parse_text("\n".join(hist.render()))
    assert [series['h_bucket{le="0.1"}'], series['h_bucket{le="1.0"}'], series['h_bucket{le="+Inf"}']] == [1, 3, 4]
    assert series["h_count"] == 4


def test_reward_score_values_are_bounded() -> None:
    metrics = ServiceMetrics()
    for i in range(100):
        metrics.score_value(i / 100)
    assert len(metrics.scores.values) == 33  # 32 distinct values, then "other"
    assert metrics.scores.values["other"] == 68


def test_reward_fallback_window_share_and_rate_follow_recent_replies() -> None:
    from rlcheck.reward.metrics import FallbackWindow

    window = FallbackWindow(replies=10, rate_window_s=60.0)
    assert (window.share(), window.replies(), window.last_minute(0.0)) == (0.0, 0, 0)
    for i in range(10):
        window.add(i < 3, now=float(i))  # 3 fallbacks in the first 10 replies
    assert (window.share(), window.last_minute(10.0)) == (0.3, 3)
    for i in range(10, 20):
        window.add(False, now=float(i))  # ten good replies push them out of the share...
    assert window.share() == 0.0
    assert window.last_minute(20.0) == 3  # ...but not out of the last minute
    assert window.last_minute(62.5) == 0  # 60 s after the last one


def test_reward_metrics_render_fallbacks_by_reason_and_share() -> None:
    from rlcheck.reward.metrics import ServiceMetrics, parse_text
    from rlcheck.reward.pool import PoolState

    metrics = ServiceMetrics()
    for reason in (None, None, "timeout", "label"):
        metrics.reward_replied(reason)
    state = PoolState(idle=1, busy=0, slow=0, starting=0, queued=0, retired={}, spawn_failures=0, last_spawn_error="")
    series = parse_text(metrics.render(state))
    assert series['rlcheck_reward_fallbacks_total{reason="timeout"}'] == 1
    assert series['rlcheck_reward_fallbacks_total{reason="label"}'] == 1
    assert series["rlcheck_reward_fallback_share"] == 0.5
    assert series["rlcheck_reward_fallback_share_replies"] == 4
    assert series["rlcheck_reward_fallbacks_last_minute"] == 2
