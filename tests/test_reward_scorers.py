"""The scorers, in this process: right answers 1.0, wrong 0.0, a label that cannot be compared raises."""

from __future__ import annotations

import pytest

from rlcheck.reward.scorers import HEALTH_PAIRS, LabelError, last_boxed, load_scorer, normalize

MATH_VERIFY = [
    # response, label, reward
    ("So the answer is \\boxed{42}.", "42", 1.0),
    ("So the answer is \\boxed{42}.", "\\boxed{42}", 1.0),
    ("So the answer is \\boxed{42}.", "$42$", 1.0),
    ("So the answer is \\boxed{42}.", "41", 0.0),
    ("Thus \\boxed{\\frac{1}{2}}", "0.5", 1.0),
    ("Thus \\boxed{\\frac{3}{4}}", "3/4", 1.0),
    ("Thus \\boxed{2\\sqrt{2}}", "\\sqrt{8}", 1.0),
    ("I could not solve it.", "42", 0.0),  # no answer at all is a wrong answer, not an error
]


@pytest.mark.parametrize(("response", "label", "reward"), MATH_VERIFY)
def test_reward_math_verify_scores(response: str, label: str, reward: float) -> None:
    assert load_scorer("math_verify")(response, label) == reward


@pytest.mark.parametrize("label", ["}{", "\\boxed{}"])
def test_reward_math_verify_label_that_does_not_parse_raises(label: str) -> None:
    with pytest.raises(LabelError, match="label does not parse"):
        load_scorer("math_verify")("\\boxed{1}", label)


BOXED = [
    ("First \\boxed{1}, then \\boxed{\\frac{a}{b}}.", "\\frac{a}{b}", 1.0),
    ("\\boxed{ \\dfrac{1}{2} }", "\\frac{1}{2}", 1.0),
    ("\\boxed{90^\\circ}", "90", 1.0),
    ("\\boxed{\\text{yes}}", "yes", 1.0),
    ("\\boxed{7}", "8", 0.0),
    ("no box here: 7", "7", 0.0),
    ("unclosed \\boxed{7", "7", 0.0),
]


@pytest.mark.parametrize(("response", "label", "reward"), BOXED)
def test_reward_boxed_scores(response: str, label: str, reward: float) -> None:
    assert load_scorer("boxed")(response, label) == reward


def test_reward_boxed_extraction_keeps_nested_braces() -> None:
    assert last_boxed("x \\boxed{\\frac{1}{\\sqrt{2}}} y") == "\\frac{1}{\\sqrt{2}}"
    assert normalize(" $\\left( 1, 2 \\right)$. ") == "(1,2)"


def test_reward_boxed_empty_label_raises() -> None:
    with pytest.raises(LabelError, match="empty"):
        load_scorer("boxed")("\\boxed{1}", "\\boxed{ }")


@pytest.mark.parametrize("backend", sorted(HEALTH_PAIRS))
def test_reward_health_pairs_score_as_expected(backend: str) -> None:
    scorer = load_scorer(backend)
    assert [scorer(p.response, p.label) for p in HEALTH_PAIRS[backend]] == [p.expected for p in
                                                                            HEALTH_PAIRS[backend]]
    assert {p.expected for p in HEALTH_PAIRS[backend]} == {0.0, 1.0}  # catches always-0 and always-1
