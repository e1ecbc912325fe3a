"""The busy-host reward benchmark's own logic: its samples and how replies are tallied (no server, no timing)."""

from __future__ import annotations

from benchmarks.reward_load import corpus_mix
from benchmarks.reward_load.ground_truth import Sample
from tests.slime_client import Reply


def test_reward_benchmark_samples_carry_slime_verdicts_and_string_labels() -> None:
    rows = corpus_mix.corpus_rows()
    mix = corpus_mix.pathological_mix(rows, 256, seed=0)
    assert len(mix) == 256 and all(isinstance(s.payload["label"], str) for s in mix)
    assert {s.kind for s in mix} == {"graded", "pathological", "slow_expression", "freezer"}
    assert all((s.expected is None) == (s.kind in corpus_mix.NO_VERDICT_KINDS) for s in mix)
    done = corpus_mix.done_when_mix(rows, 256, 10, seed=1, tag="t")
    slow = [s for s in done if s.kind == "slow_right"]
    assert len(done) == 266 and len({s.payload["response"] for s in slow}) == 10
    assert all(corpus_mix.SLOW_RIGHT_RESPONSE in s.payload["response"] and s.expected == 1.0 for s in slow)


def test_reward_benchmark_tally_splits_right_wrong_and_stuck() -> None:
    def sample(expected: float | None, kind: str = "graded") -> Sample:
        return Sample(kind=kind, payload={}, expected=expected)

    samples = [sample(1.0), sample(1.0), sample(0.0), sample(1.0), sample(None, "freezer"), sample(0.0)]
    replies: list[Reply | None] = [
        Reply(ok=True, value=1.0, attempts=1, latency_s=0.1),
        Reply(ok=True, value=0.0, reward_status="timeout", attempts=1, latency_s=0.2),
        Reply(ok=True, value={"score": 0.0}, attempts=3, errors=["HTTP 503: busy", "HTTP 503: busy"], latency_s=4.0),
        Reply(ok=False, attempts=10, errors=["HTTP 500: x"], latency_s=9.0),
        None,
        None,
    ]
    result = corpus_mix.tally(samples, replies, wall_s=2.0)
    assert (result["right"], result["wrong"], result["stuck"], result["answered"]) == (2, 2, 2, 3)
    assert result["wrong_by_cause"] == {"no_reward": 1, "timeout_fallback": 1, "error_fallback": 0,
                                        "grading_difference": 0}
    assert (result["http_503_seen"], result["attempts"], result["retried_samples"]) == (2, 15, 2)
    assert result["by_kind"]["freezer"] == {"sent": 1, "answered": 0, "stuck_or_unanswered": 1}
    assert result["other_http_errors"] == ["HTTP 500"]
