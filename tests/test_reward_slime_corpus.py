"""slime_math against SLIME's own grader on the differential corpus (no SLIME code here: its verdicts are data).

tests/data/reward/slime_grader_corpus.jsonl was written by benchmarks/reward_grader_corpus/grade.py from
SLIME's grade_answer_verl at every SLIME version rlcheck supports. The answers reach the scorer as the
service hands them over: the label through the payload parser (a JSON number becomes its text).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

from rlcheck.reward.payload import parse_payload
from rlcheck.reward.scorers import load_scorer, score_any

CORPUS = Path(__file__).parent / "data" / "reward" / "slime_grader_corpus.jsonl"
HEADER, *CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
KINDS = ("integer", "decimal", "fraction", "mixed_number", "percentage", "set_tuple", "interval", "unit", "latex",
         "pathological", "numeric_label")


def _rlcheck_reward(case: dict) -> float:
    payload = parse_payload(json.dumps({"prompt": "", "response": case["response"], "label": case["label"]}).encode())
    return 0.0 if payload.label_problem else score_any(load_scorer("slime_math"), payload.response, payload.labels)


def test_reward_slime_corpus_is_large_varied_and_graded_at_each_slime_version() -> None:
    assert len(CASES) == HEADER["cases"] >= 2000
    assert {"v0.2.4", "624b824"} <= set(HEADER["slime_commits"])
    kinds = collections.Counter(case["kind"].split("/")[0] for case in CASES)
    assert set(KINDS) <= set(kinds), kinds
    for version in HEADER["slime_commits"]:
        rewards = [case["rewards"][version] for case in CASES]
        assert None not in rewards  # SLIME's grader answered every one
        assert rewards.count(1.0) >= 500 and rewards.count(0.0) >= 500


def test_reward_slime_math_agrees_with_slime_on_the_whole_corpus() -> None:
    disagreements = []
    for case in CASES:
        got = _rlcheck_reward(case)
        for version, want in case["rewards"].items():
            if got != want:
                disagreements.append(f"{case['kind']}: response {case['response']!r} label {case['label']!r}: "
                                     f"rlcheck {got}, SLIME {version} {want}")
    assert not disagreements, f"{len(disagreements)} of {len(CASES)}:\n" + "\n".join(disagreements[:40])


def test_reward_slime_corpus_holds_the_cases_that_once_differed() -> None:
    by_pair = {(case["response"], case["label"]): case["rewards"]["624b824"] for case in CASES}
    assert by_pair[("\\boxed{\\frac{5}{10}}", "\\frac{1}{2}")] == 0.0  # unreduced fractions are wrong
    assert by_pair[("\\boxed{3\\frac{1}{2}}", "\\frac{7}{2}")] == 1.0  # a mixed number is its value
    assert by_pair[("\\boxed{1\\,000}", "1000")] == 0.0
