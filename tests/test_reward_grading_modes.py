"""Grading modes side by side, and slime_math against rewards recorded from SLIME's own grader.

MODES is the table the README shows: where the modes differ, which one a SLIME user expects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcheck.reward.scorers import load_scorer, score_any
from rlcheck.reward.slime_math import last_box, spelling_form

RECORDED = json.loads((Path(__file__).parent / "data" / "reward" / "slime_math_recorded.json").read_text())

MODES = [
    # response, labels, slime_math, math_verify, boxed
    ("First \\boxed{34}. Wait, that is wrong: \\boxed{36}.", ("36",), 1.0, 0.0, 1.0),  # self-correcting
    ("The answer is 34.", ("34",), 0.0, 1.0, 0.0),  # unboxed
    ("$x = 34$", ("34",), 0.0, 1.0, 0.0),  # unboxed
    ("So \\boxed{36}.", ("34", "36"), 1.0, 1.0, 1.0),  # a list label: any of these answers
    ("So \\boxed{35}.", ("34", "36"), 0.0, 0.0, 0.0),
    ("\\boxed{(x+1)^2}", ("x^2+2x+1",), 1.0, 1.0, 0.0),
    ("\\boxed{2/4}", ("1/2",), 0.0, 1.0, 0.0),  # SLIME wants fractions reduced
    ("\\boxed{\\{1,2\\}}", ("\\{2,1\\}",), 0.0, 1.0, 0.0),  # sets
    ("\\fbox{7}", ("7",), 0.0, 0.0, 1.0),
    ("\\boxed{0.5}", ("\\frac{1}{2}",), 1.0, 1.0, 0.0),
    ("\\boxed{5 \\text{ cm}}", ("5",), 1.0, 1.0, 0.0),
]


@pytest.mark.parametrize(("response", "labels", "slime_math", "math_verify", "boxed"), MODES)
def test_reward_grading_modes_side_by_side(response: str, labels: tuple[str, ...], slime_math: float,
                                           math_verify: float, boxed: float) -> None:
    got = {mode: score_any(load_scorer(mode), response, labels) for mode in ("slime_math", "math_verify", "boxed")}
    assert got == {"slime_math": slime_math, "math_verify": math_verify, "boxed": boxed}


@pytest.mark.parametrize("case", RECORDED["cases"], ids=[f"{c['response'][:24]}|{c['label']}" for c in
                                                         RECORDED["cases"]])
def test_reward_slime_math_matches_slime_grader(case: dict) -> None:
    assert load_scorer("slime_math")(case["response"], case["label"]) == case["reward"]


def test_reward_slime_math_recorded_cases_cover_both_rewards() -> None:
    rewards = [c["reward"] for c in RECORDED["cases"]]
    assert rewards.count(1.0) >= 10 and rewards.count(0.0) >= 10


def test_reward_slime_math_reads_only_the_last_box() -> None:
    assert last_box("\\boxed{1} then \\boxed{\\frac{1}{\\sqrt{2}}} end") == "\\frac{1}{\\sqrt{2}}"
    assert last_box("\\boxed{1} then \\boxed {2}") is None  # SLIME reads only the `\boxed{` spelling
    assert last_box("unclosed \\boxed{2") is None
    assert spelling_form("\\text{ 0.5 }") == "\\frac{1}{2}"


def test_reward_score_any_raises_only_when_no_label_matched() -> None:
    scorer = load_scorer("math_verify")
    assert score_any(scorer, "\\boxed{3}", ("}{", "3")) == 1.0
    with pytest.raises(ValueError, match="label does not parse"):
        score_any(scorer, "\\boxed{4}", ("}{", "3"))


def test_reward_slime_math_keeps_giant_powers_from_sympy() -> None:
    # these would take sympy minutes; the guards SLIME's grader has answer them at once, as 0
    for answer in ("9^{9^{9^{9}}}", "7^{12345678}", "10^{3000017}"):
        assert load_scorer("slime_math")(f"\\boxed{{{answer}}}", "x+1") == 0.0
