"""Samples drawn from SLIME's own grader verdicts, and how a side's replies are tallied against them.

The ground truth is tests/data/reward/slime_grader_corpus.jsonl: answers graded by SLIME's
grade_answer_verl (what `--rm-type math` runs) at v0.2.4 and 624b824 (they agree on every one). Labels
sent as JSON numbers are left out: the reference design answers them 422 and SLIME would retry each
for minutes. Pathological answers from the corpus keep their verdict; slow expressions and the
9^{9^{9^{9}}} freezer have none (SLIME's grader itself may never finish them): only an answer counts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from benchmarks.reward_load import stats, workload
from benchmarks.reward_load.ground_truth import Sample
from tests.slime_client import Reply

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "reward" / "slime_grader_corpus.jsonl"
SLIME_COMMIT = "624b824"
# The answer SLIME's grader accepts after about 0.75 CPU s of sympy (issue 29): checked at the start of a run.
SLOW_RIGHT_RESPONSE = "\\boxed{(x**2-1)**60/(x-1)**60/(x+1)**58}"
SLOW_RIGHT_LABEL = "x^2+2x+1"
NO_VERDICT_KINDS = ("slow_expression", "freezer")


def corpus_rows(path: Path = CORPUS) -> list[dict[str, Any]]:
    """The corpus's graded answers whose label is a string (the header line is skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [row for row in map(json.loads, lines) if isinstance(row["label"], str)]


def _sample(row: dict[str, Any], i: int) -> Sample:
    return Sample(kind="pathological" if row["kind"] == "pathological" else "graded",
                  payload={"prompt": f"problem {i}", "response": row["response"], "label": row["label"]},
                  expected=row["rewards"][SLIME_COMMIT])


def normal_mix(rows: list[dict[str, Any]], n: int, *, seed: int) -> list[Sample]:
    """n graded answers that are not pathological, drawn without replacement."""
    graded = [r for r in rows if r["kind"] != "pathological"]
    return [_sample(r, i) for i, r in enumerate(random.Random(seed).sample(graded, n))]


def pathological_mix(rows: list[dict[str, Any]], n: int, *, seed: int, share: float = 0.08,
                     slow_expressions: int = 2, freezers: int = 1) -> list[Sample]:
    """A normal mix with a share of the corpus's pathological answers, slow expressions and freezers spread in."""
    rng = random.Random(seed)
    samples = normal_mix(rows, n, seed=seed)
    patho = [r for r in rows if r["kind"] == "pathological"]
    extra = [_sample(r, i) for i, r in enumerate(rng.sample(patho, round(n * share)))]
    for i in range(slow_expressions):
        request = workload.pathological(i, workload.slow_expression(i))
        extra.append(Sample(kind="slow_expression", payload=request.payload, expected=None))
    for i in range(freezers):
        request = workload.pathological(1000 + i, workload.FREEZER)
        extra.append(Sample(kind="freezer", payload=request.payload, expected=None))
    for j, sample in enumerate(extra):  # evenly spaced, the freezer last: it lands in the second half
        samples[(j * n) // len(extra) + n // (2 * len(extra))] = sample
    return samples


def done_when_mix(rows: list[dict[str, Any]], others: int, slow: int, *, seed: int, tag: str) -> list[Sample]:
    """`others` graded answers with `slow` distinct bodies of the slow right answer spread among them."""
    samples = normal_mix(rows, others, seed=seed)
    for k in range(slow):  # distinct text before the box: each is its own scoring, not a cached result
        response = f"Run {tag}, try {k}: simplifying, the expression is {SLOW_RIGHT_RESPONSE}"
        samples.insert((k * others) // slow, Sample(kind="slow_right", expected=1.0,
                                                    payload={"prompt": f"slow {tag} {k}", "response": response,
                                                             "label": SLOW_RIGHT_LABEL}))
    return samples


def reward_of(reply: Reply) -> Any:
    return next(iter(reply.value.values())) if isinstance(reply.value, dict) else reply.value


def _cause(reply: Reply | None) -> str:
    if reply is None:
        return "stuck"
    if not reply.ok:
        return "no_reward"
    return {"timeout": "timeout_fallback", "error": "error_fallback"}.get(reply.reward_status, "grading_difference")


def tally(samples: list[Sample], replies: list[Reply | None], wall_s: float) -> dict[str, Any]:
    """Right/wrong against SLIME's verdicts; None is a request with no outcome when the phase was cut (stuck)."""
    right, wrong = 0, {"no_reward": 0, "timeout_fallback": 0, "error_fallback": 0, "grading_difference": 0}
    kinds: dict[str, dict[str, int]] = {}
    for sample, reply in zip(samples, replies, strict=True):
        entry = kinds.setdefault(sample.kind, {"sent": 0, "answered": 0, "stuck_or_unanswered": 0})
        entry["sent"] += 1
        answered = reply is not None and reply.ok
        entry["answered" if answered else "stuck_or_unanswered"] += 1
        if sample.expected is None or reply is None:
            continue
        if answered and reward_of(reply) == sample.expected:
            right += 1
        else:
            wrong[_cause(reply)] += 1
    got = [r for r in replies if r is not None]
    latencies = [r.latency_s for r in got if r.ok]
    answered_n = len(latencies)
    return {"samples": len(samples), "answered": answered_n, "stuck": sum(r is None for r in replies),
            "right": right, "wrong": sum(wrong.values()), "wrong_by_cause": wrong, "by_kind": kinds,
            "wall_s": round(wall_s, 2), "samples_per_s": round(answered_n / wall_s, 1) if wall_s else None,
            "latency_p50_s": _round(stats.percentile(latencies, 50)),
            "latency_p99_s": _round(stats.percentile(latencies, 99)),
            "http_503_seen": sum(e.startswith("HTTP 503") for r in got for e in r.errors),
            "attempts": sum(r.attempts for r in got), "retried_samples": sum(r.attempts > 1 for r in got),
            "connection_resets": sum(r.resets for r in got), "client_timeouts": sum(r.timeouts for r in got),
            "other_http_errors": sorted({e.split(":")[0] for r in got for e in r.errors
                                         if e.startswith("HTTP") and not e.startswith("HTTP 503")})}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
