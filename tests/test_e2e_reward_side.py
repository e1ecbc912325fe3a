"""The remote-rm case's reward side: what the reward service's /metrics must show for a run to pass.

Every fallback reward is a wrong 0.0 to the trainer: the rule table shows both sides of each bound (scored
requests, non-200 replies, the fallback share at, just above and below its bound, and a share that
cannot be read), first on recorded /metrics text, then on what the service itself renders.
"""

from __future__ import annotations

import pytest

from rlcheck.e2e import runner as e2e
from rlcheck.reward.metrics import ServiceMetrics
from rlcheck.reward.pool import PoolState
from rlcheck.verdict import Status

CASE, MIN_SCORED = "qwen3-4b-remote-rm", 250


def _metrics_text(*, ok: int = 256, share: str | None = "0.0", timeouts: int = 0,
                  fallbacks: dict[str, int] | None = None, extra: str = "") -> str:
    """/metrics as the service renders it, reduced to the series the reward side reads."""
    lines = ["# HELP rlcheck_reward_requests_total POST /score replies by HTTP status code",
             "# TYPE rlcheck_reward_requests_total counter",
             f'rlcheck_reward_requests_total{{code="200"}} {ok}',
             f"rlcheck_reward_scorer_timeouts_total {timeouts}", "rlcheck_reward_scorer_errors_total 0",
             *(f'rlcheck_reward_fallbacks_total{{reason="{r}"}} {n}' for r, n in (fallbacks or {}).items())]
    if share is not None:
        lines += ["# TYPE rlcheck_reward_fallback_share gauge", f"rlcheck_reward_fallback_share {share}",
                  "rlcheck_reward_fallback_share_replies 1000"]
    return "\n".join(lines) + "\n" + extra


BOUND = e2e.FALLBACK_SHARE_FAIL_ABOVE
RULES = [
    # name, /metrics text, status, fragment of the summary, failure id
    ("healthy", _metrics_text(), Status.PASS,
     "256 scored (200), other replies none, scorer timeouts/errors 0, fallbacks none, fallback share 0 of the last "
     "1000 replies (bound 0.05) (>= 250)", None),
    ("scored-at-min", _metrics_text(ok=MIN_SCORED), Status.PASS, "250 scored (200)", None),
    ("scored-below-min", _metrics_text(ok=MIN_SCORED - 1), Status.FAIL, "249 scored (200)", None),
    ("non-200", _metrics_text(extra='rlcheck_reward_requests_total{code="413"} 2\n'), Status.FAIL,
     "other replies {'code_413': 2}", None),
    ("fallbacks-counted-earlier", _metrics_text(timeouts=3, fallbacks={"timeout": 3}), Status.WARN,
     "scorer timeouts/errors 3, fallbacks {'timeout': 3}, fallback share 0 ", "reward-silent-zero"),
    ("share-just-above-0", _metrics_text(share="0.001", timeouts=1, fallbacks={"starved": 1}), Status.WARN,
     "fallbacks {'starved': 1}, fallback share 0.001 of the last 1000 replies", "reward-silent-zero"),
    ("share-at-bound", _metrics_text(share=repr(BOUND), timeouts=50, fallbacks={"timeout": 50}), Status.WARN,
     "fallback share 0.05 of the last 1000 replies (bound 0.05); every fallback is a wrong 0", "reward-silent-zero"),
    ("share-just-above-bound", _metrics_text(share="0.050001", timeouts=51, fallbacks={"timeout": 51}), Status.FAIL,
     "fallback share 0.050001 of the last 1000 replies (bound 0.05); expected >= 250 scored, all 200, fallback "
     "share <= 0.05", "reward-silent-zero"),
    ("all-fallbacks", _metrics_text(share="1.0", fallbacks={"label": 256}), Status.FAIL, "fallback share 1 ",
     "reward-silent-zero"),
    ("share-missing", _metrics_text(share=None), Status.UNKNOWN,
     "fallback share unreadable: rlcheck_reward_fallback_share is not in /metrics; the fallback bound could not "
     "be judged", None),
    ("share-not-a-number", _metrics_text(share="NaN"), Status.UNKNOWN,
     "rlcheck_reward_fallback_share is nan, not a share in 0..1", None),
    ("share-garbled", _metrics_text(share="zero"), Status.UNKNOWN, "rlcheck_reward_fallback_share is not in", None),
    # a failure the metrics do show is not hidden behind the share that could not be read
    ("share-missing-and-too-few", _metrics_text(ok=12, share=None), Status.FAIL,
     "12 scored (200), other replies none, scorer timeouts/errors 0, fallbacks none, fallback share unreadable", None),
]


@pytest.mark.parametrize(("text", "status", "fragment", "failure_id"), [r[1:] for r in RULES],
                         ids=[r[0] for r in RULES])
def test_e2e_remote_rm_reward_side(text: str, status: Status, fragment: str, failure_id: str | None) -> None:
    verdict = e2e.reward_verdict(CASE, e2e.reward_counts(text), MIN_SCORED)
    assert (verdict.status, verdict.failure_id) == (status, failure_id), verdict.summary
    assert fragment in verdict.summary
    assert verdict.check_id == f"e2e_{CASE}_reward"
    assert bool(verdict.remedy) == (status is not Status.PASS)


def _rendered(graded: int, fallbacks: int) -> str:
    metrics = ServiceMetrics()
    for _ in range(graded):
        metrics.requests.inc("200")
        metrics.reward_replied(None)
    for _ in range(fallbacks):
        metrics.requests.inc("200")
        metrics.timeouts.inc()
        metrics.reward_replied("timeout")
    idle = PoolState(idle=2, busy=0, slow=0, starting=0, queued=0, retired={}, spawn_failures=0, last_spawn_error="")
    return metrics.render(idle)


@pytest.mark.parametrize(("graded", "fallbacks", "status"), [
    (1000, 0, Status.PASS), (999, 1, Status.WARN), (950, 50, Status.WARN), (949, 51, Status.FAIL),
], ids=["none", "one", "at-bound", "one-past-bound"])
def test_e2e_remote_rm_reward_side_reads_what_the_service_renders(graded: int, fallbacks: int,
                                                                  status: Status) -> None:
    counts = e2e.reward_counts(_rendered(graded, fallbacks))
    assert counts["fallback_share"] == fallbacks / 1000 and counts["fallback_share_replies"] == 1000
    assert counts.get("fallbacks_timeout", 0) == fallbacks
    verdict = e2e.reward_verdict(CASE, counts, MIN_SCORED)
    assert verdict.status is status, verdict.summary


@pytest.mark.parametrize(("bound", "share", "status"), [
    (0.0, "0.0", Status.PASS), (0.0, "0.001", Status.FAIL), (0.2, "0.2", Status.WARN), (0.2, "0.200001", Status.FAIL),
], ids=["zero-bound-none", "zero-bound-one", "own-bound-at", "own-bound-past"])
def test_e2e_remote_rm_reward_side_takes_its_own_bound(bound: float, share: str, status: Status) -> None:
    counts = e2e.reward_counts(_metrics_text(share=share))
    assert e2e.reward_verdict(CASE, counts, MIN_SCORED, max_fallback_share=bound).status is status


@pytest.mark.parametrize("bound", [-0.01, 1.0, float("nan")])
def test_e2e_remote_rm_reward_side_refuses_a_bound_outside_0_to_1(bound: float) -> None:
    with pytest.raises(ValueError, match="max_fallback_share=.*: 0 <= value < 1"):
        e2e.reward_verdict(CASE, {}, MIN_SCORED, max_fallback_share=bound)
