"""The reward service's /metrics as tables (issue 33): the Prometheus text whole, each counter, bucket, gauge and
escape rule, the bound on score series and the fallback window's share and last minute, both sides of each edge.

A watcher fails a run when the fallback share passes its bound and dashboards read these series by name: a series
renamed, a bucket that stops being cumulative or inclusive, or a share that forgets its oldest reply is a wrong
number with nothing to show for it, so the text is compared line for line.
"""

from __future__ import annotations

import pytest

from rlcheck.reward import metrics
from rlcheck.reward.metrics import Counter, FallbackWindow, Histogram, ServiceMetrics, parse_text
from rlcheck.reward.pool import PoolState

POOL = PoolState(idle=2, busy=1, slow=3, starting=4, queued=7, retired={"timeout": 3, "memory": 1}, spawn_failures=0,
                 last_spawn_error="")

RENDERED = [
    '# HELP rlcheck_reward_requests_total POST /score replies by HTTP status code',
    '# TYPE rlcheck_reward_requests_total counter',
    'rlcheck_reward_requests_total{code="200"} 3',
    'rlcheck_reward_requests_total{code="422"} 1',
    '# HELP rlcheck_reward_scores_total Rewards replied (HTTP 200) by value, fallbacks included',
    '# TYPE rlcheck_reward_scores_total counter',
    'rlcheck_reward_scores_total{value="0.0"} 2',
    'rlcheck_reward_scores_total{value="1.0"} 1',
    '# HELP rlcheck_reward_scorer_timeouts_total Scorings killed when they used up their CPU budget'
    ' (fallback replied)',
    '# TYPE rlcheck_reward_scorer_timeouts_total counter',
    'rlcheck_reward_scorer_timeouts_total 1',
    '# HELP rlcheck_reward_scorer_errors_total Scorings that raised or lost their process (fallback)',
    '# TYPE rlcheck_reward_scorer_errors_total counter',
    'rlcheck_reward_scorer_errors_total 2',
    '# HELP rlcheck_reward_fallbacks_total Fallback rewards replied, by reason',
    '# TYPE rlcheck_reward_fallbacks_total counter',
    'rlcheck_reward_fallbacks_total{reason="timeout"} 1',
    '# HELP rlcheck_reward_unavailable_total 503 + Retry-After replies, by reason (pending: the scoring'
    ' goes on and the retry gets its reward)',
    '# TYPE rlcheck_reward_unavailable_total counter',
    'rlcheck_reward_unavailable_total{reason="pending"} 1',
    '# HELP rlcheck_reward_request_duration_seconds POST /score time from request to reply',
    '# TYPE rlcheck_reward_request_duration_seconds histogram',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.001"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.0025"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.005"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.01"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.025"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.05"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.1"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.25"} 1',
    'rlcheck_reward_request_duration_seconds_bucket{le="0.5"} 2',
    'rlcheck_reward_request_duration_seconds_bucket{le="1.0"} 2',
    'rlcheck_reward_request_duration_seconds_bucket{le="2.5"} 2',
    'rlcheck_reward_request_duration_seconds_bucket{le="5.0"} 2',
    'rlcheck_reward_request_duration_seconds_bucket{le="10.0"} 2',
    'rlcheck_reward_request_duration_seconds_bucket{le="30.0"} 2',
    'rlcheck_reward_request_duration_seconds_bucket{le="+Inf"} 3',
    'rlcheck_reward_request_duration_seconds_sum 99.301',
    'rlcheck_reward_request_duration_seconds_count 3',
    '# HELP rlcheck_reward_health_checks_total GET /health results',
    '# TYPE rlcheck_reward_health_checks_total counter',
    'rlcheck_reward_health_checks_total{result="ok"} 1',
    '# HELP rlcheck_reward_fallback_share Share of fallbacks in the last 1000 rewards replied (a run'
    ' should fail above its bound)',
    '# TYPE rlcheck_reward_fallback_share gauge',
    'rlcheck_reward_fallback_share 0.5',
    '# HELP rlcheck_reward_fallback_share_replies Rewards the share is taken over (fewer at start)',
    '# TYPE rlcheck_reward_fallback_share_replies gauge',
    'rlcheck_reward_fallback_share_replies 2',
    '# HELP rlcheck_reward_fallbacks_last_minute Fallback rewards replied in the last 60 s',
    '# TYPE rlcheck_reward_fallbacks_last_minute gauge',
    'rlcheck_reward_fallbacks_last_minute 1',
    '# HELP rlcheck_reward_in_flight_requests POST /score requests being handled',
    '# TYPE rlcheck_reward_in_flight_requests gauge',
    'rlcheck_reward_in_flight_requests 5',
    '# HELP rlcheck_reward_queued_scorings Scorings waiting for a process',
    '# TYPE rlcheck_reward_queued_scorings gauge',
    'rlcheck_reward_queued_scorings 7',
    '# HELP rlcheck_reward_scorer_processes Scorer processes by state (slow = demoted)',
    '# TYPE rlcheck_reward_scorer_processes gauge',
    'rlcheck_reward_scorer_processes{state="idle"} 2',
    'rlcheck_reward_scorer_processes{state="busy"} 1',
    'rlcheck_reward_scorer_processes{state="slow"} 3',
    'rlcheck_reward_scorer_processes{state="starting"} 4',
    '# HELP rlcheck_reward_scorer_processes_retired_total Scorer processes stopped, by reason',
    '# TYPE rlcheck_reward_scorer_processes_retired_total counter',
    'rlcheck_reward_scorer_processes_retired_total{reason="memory"} 1',
    'rlcheck_reward_scorer_processes_retired_total{reason="timeout"} 3',
]


def test_rules_reward_metrics_render_whole_text() -> None:
    m = ServiceMetrics()
    m.requests.inc("200", 3)
    m.requests.inc("422")
    for value in (1, 0.0, 0.0):
        m.score_value(value)
    m.timeouts.inc()
    m.errors.inc(amount=2)
    for seconds in (0.001, 0.3, 99):  # on a bound: counted in it
        m.latency.observe(seconds)
    m.health.inc("ok")
    m.unavailable.inc("pending")
    m.reward_replied(None)
    m.reward_replied("timeout")
    m.in_flight = 5
    assert m.render(POOL) == "\n".join(RENDERED) + "\n"


def test_rules_reward_metrics_render_fresh() -> None:
    series = parse_text(ServiceMetrics().render(PoolState(idle=0, busy=0, slow=0, starting=0, queued=0, retired={},
                                                          spawn_failures=0, last_spawn_error="")))
    assert series == {
        "rlcheck_reward_scorer_timeouts_total": 0, "rlcheck_reward_scorer_errors_total": 0,
        **{f'rlcheck_reward_request_duration_seconds_bucket{{le="{b}"}}': 0
           for b in [*map(repr, metrics.LATENCY_BUCKETS_S), "+Inf"]},
        "rlcheck_reward_request_duration_seconds_sum": 0, "rlcheck_reward_request_duration_seconds_count": 0,
        "rlcheck_reward_fallback_share": 0, "rlcheck_reward_fallback_share_replies": 0,
        "rlcheck_reward_fallbacks_last_minute": 0, "rlcheck_reward_in_flight_requests": 0,
        "rlcheck_reward_queued_scorings": 0,
        **{f'rlcheck_reward_scorer_processes{{state="{s}"}}': 0 for s in ("idle", "busy", "slow", "starting")}}


PARSE = [
    ("", {}),
    ("# HELP a b\n# TYPE a counter\na 1\n\nb{x=\"y z\"} 2.5\n", {"a": 1.0, 'b{x="y z"}': 2.5}),
    ("a 1\na 2", {"a": 2.0}),
    ("a  1", {"a ": 1.0}),  # split at the last space only
]


@pytest.mark.parametrize(("text", "series"), PARSE)
def test_rules_reward_metrics_parse_text(text: str, series: dict[str, float]) -> None:
    assert parse_text(text) == series


def test_rules_reward_metrics_parse_text_value_is_after_the_last_space() -> None:
    with pytest.raises(ValueError):
        parse_text("a\t1 ")  # nothing after the last space


ESCAPE = [("plain", "plain"), ("a\\b", "a\\\\b"), ('say "x"', 'say \\"x\\"'), ("two\nlines", "two\\nlines"),
          ('\\"\n', '\\\\\\"\\n')]


@pytest.mark.parametrize(("value", "escaped"), ESCAPE)
def test_rules_reward_metrics_label_values_are_escaped(value: str, escaped: str) -> None:
    counter = Counter("c", "h", "k")
    counter.inc(value)
    assert counter.render()[2] == f'c{{k="{escaped}"}} 1'


def test_rules_reward_metrics_counter_render() -> None:
    plain = Counter("c_total", "what it counts")
    assert plain.render() == ["# HELP c_total what it counts", "# TYPE c_total counter", "c_total 0"]
    plain.inc()
    plain.inc(amount=4)
    assert plain.render()[2:] == ["c_total 5"]
    labelled = Counter("c_total", "h", "code")
    assert labelled.render() == ["# HELP c_total h", "# TYPE c_total counter"]  # no series before the first
    for code in ("503", "200", "200"):
        labelled.inc(code)
    assert labelled.render()[2:] == ['c_total{code="200"} 2', 'c_total{code="503"} 1']  # sorted by value


HISTOGRAM = [
    # observed values, cumulative counts for le=0.1, 1.0, +Inf
    ([], [0, 0, 0]),
    ([0.05], [1, 1, 1]),
    ([0.1], [1, 1, 1]),  # on the bound: in it
    ([0.10001], [0, 1, 1]),
    ([1.0], [0, 1, 1]),
    ([1.5], [0, 0, 1]),
    ([0.05, 0.5, 0.5, 5.0], [1, 3, 4]),
]


@pytest.mark.parametrize(("values", "counts"), HISTOGRAM)
def test_rules_reward_metrics_histogram(values: list[float], counts: list[int]) -> None:
    hist = Histogram("h", "help", buckets=(0.1, 1.0))
    for value in values:
        hist.observe(value)
    assert hist.render() == ["# HELP h help", "# TYPE h histogram", f'h_bucket{{le="0.1"}} {counts[0]}',
                             f'h_bucket{{le="1.0"}} {counts[1]}', f'h_bucket{{le="+Inf"}} {counts[2]}',
                             f"h_sum {float(sum(values))}", f"h_count {len(values)}"]


def test_rules_reward_metrics_score_series_are_bounded() -> None:
    m = ServiceMetrics()
    for i in range(32):
        m.score_value(i / 100)
    assert len(m.scores.values) == 32 and "other" not in m.scores.values  # 32 distinct values: each its own
    m.score_value(0.5)
    m.score_value(0.0)  # a value already shown keeps its series
    m.score_value(1)
    assert m.scores.values["other"] == 2
    assert m.scores.values["0.0"] == 2
    assert len(m.scores.values) == 33


def test_rules_reward_metrics_reward_replied_counts_fallbacks_by_reason() -> None:
    m = ServiceMetrics()
    for reason in (None, "timeout", "timeout", "error", None):
        m.reward_replied(reason)
    assert dict(m.fallbacks.values) == {"timeout": 2, "error": 1}
    assert (m.fallback_window.share(), m.fallback_window.replies()) == (0.6, 5)


def test_rules_reward_metrics_window_share_forgets_the_oldest() -> None:
    window = FallbackWindow(replies=3, rate_window_s=60.0)
    assert (window.share(), window.replies()) == (0.0, 0)
    shares = []
    for fallback in (True, False, True, False, False, False, True):
        window.add(fallback, now=0.0)
        shares.append((round(window.share(), 3), window.replies()))
    assert shares == [(1.0, 1), (0.5, 2), (0.667, 3), (0.333, 3), (0.333, 3), (0.0, 3), (0.333, 3)]


LAST_MINUTE = [
    # fallback times, the time asked at, fallbacks counted
    ([0.0], 0.0, 1),
    ([0.0], 59.9, 1),
    ([0.0], 60.0, 0),  # exactly a window old: gone
    ([0.0, 10.0, 20.0], 65.0, 2),
    ([], 0.0, 0),
]


@pytest.mark.parametrize(("times", "now", "count"), LAST_MINUTE)
def test_rules_reward_metrics_window_last_minute(times: list[float], now: float, count: int) -> None:
    window = FallbackWindow(replies=10, rate_window_s=60.0)
    for t in times:
        window.add(True, now=t)
    window.add(False, now=times[-1] if times else 0.0)  # a good reply is never counted
    assert window.last_minute(now) == count


def test_rules_reward_metrics_window_trims_when_adding() -> None:
    window = FallbackWindow(replies=10, rate_window_s=60.0)
    window.add(True, now=0.0)
    window.add(False, now=60.0)  # the add trims too
    assert list(window._times) == []


def test_rules_reward_metrics_window_keeps_at_most_100000_times() -> None:
    window = FallbackWindow(replies=10, rate_window_s=60.0)
    for _ in range(100_001):
        window.add(True, now=5.0)
    assert window.last_minute(5.0) == 100_000


def test_rules_reward_metrics_window_defaults() -> None:
    window = FallbackWindow()
    assert (window._recent.maxlen, window.rate_window_s) == (1000, 60.0)


def test_rules_reward_metrics_share_is_rounded_to_6_decimals() -> None:
    m = ServiceMetrics()
    for reason in (None, None, "timeout"):
        m.reward_replied(reason)
    assert "rlcheck_reward_fallback_share 0.333333" in m.render(POOL).splitlines()


@pytest.mark.parametrize(("pairs", "text"), [([], ""), ([("a", "1")], '{a="1"}'),
                                              ([("a", "1"), ("b", 'x"y')], '{a="1",b="x\\"y"}')])
def test_rules_reward_metrics_labels(pairs: list[tuple[str, str]], text: str) -> None:
    assert metrics._labels(pairs) == text
