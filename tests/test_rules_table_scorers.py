"""The scorers' rules as tables (issue 33): the `boxed` mode's extraction and spelling rules, a list label, the
label that cannot be scored, and which scorer a backend name loads.

A list label means "any of these answers": the best reward counts, and a label that raises is a counted fallback
only when no other label gave 1.0. The `boxed` mode compares spellings only, so each spelling rule is pinned on
both sides (what it removes, what it leaves).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rlcheck.reward import scorers
from rlcheck.reward.slime_math import score_slime_math

BOXED_LABEL = [("7", "\\boxed{7}"), ("\\boxed{7}", "\\boxed{7}"), ("so \\boxed{7}.", "so \\boxed{7}."),
               ("", "\\boxed{}"), ("{7}", "\\boxed{{7}}")]


@pytest.mark.parametrize(("label", "boxed"), BOXED_LABEL)
def test_rules_scorers_label_is_boxed_for_math_verify(label: str, boxed: str) -> None:
    assert scorers.boxed(label) == boxed


LAST_BOXED = [
    # text, the content of its last closed \boxed{} or \fbox{}
    ("\\boxed{7}", "7"),
    ("\\fbox{7}", "7"),
    ("\\boxed {7}", "7"),  # spaces before the brace are allowed here
    ("\\boxed\n{7}", "7"),
    ("\\boxed{1} \\boxed{2}", "2"),
    ("\\boxed{1} \\fbox{2}", "2"),
    ("\\boxed{1} \\boxed{2", "1"),  # the last one is open: the one before it
    ("\\boxed{2", None),
    ("\\boxed{\\frac{1}{\\sqrt{2}}} y", "\\frac{1}{\\sqrt{2}}"),
    ("\\boxed{a}}", "a"),
    ("\\boxed{}", ""),
    ("\\boxed 7", None),
    ("no box: 7", None),
    ("", None),
]


@pytest.mark.parametrize(("text", "answer"), LAST_BOXED)
def test_rules_scorers_last_boxed(text: str, answer: str | None) -> None:
    assert scorers.last_boxed(text) == answer


NORMALIZE = [
    # answer, its spelling for the boxed mode
    ("7", "7"),
    (" 7 ", "7"),
    ("7.", "7"),
    ("7..", "7"),
    ("7. ", "7"),
    ("$7$", "7"),
    (" $7$. ", "7"),
    ("$7.$", "7"),  # a period inside the dollars, once they are gone
    ("7.5", "7.5"),
    ("\\text{yes}", "yes"),
    ("\\mathrm{cm}", "cm"),
    ("\\textbf{no}", "no"),
    ("\\text{a{b}}", "\\text{a{b}}"),  # nested braces: not a plain \text{}, kept
    ("\\left(1,2\\right)", "(1,2)"),
    ("1\\!000", "1000"),
    ("1\\,000", "1000"),
    ("1\\;000", "1000"),
    ("1\\:000", "1000"),
    ("1\\ 000", "1000"),
    ("1 000", "1000"),
    ("1\t000", "1000"),
    ("90^\\circ", "90"),
    ("90^{\\circ}", "90"),
    ("90^{\\circ", "90"),
    ("\\dfrac{1}{2}", "\\frac{1}{2}"),
    ("\\tfrac{1}{2}", "\\frac{1}{2}"),
    ("\\frac{1}{2}", "\\frac{1}{2}"),
    ("\\text{7.}", "7"),  # the period the \text{} held
    ("7.\\,", "7"),
    ("", ""),
    (".", ""),
    ("X", "X"),  # only periods, spaces and dollars are stripped
    ("7X.", "7X"),
    ("$X$", "X"),
]


@pytest.mark.parametrize(("answer", "form"), NORMALIZE)
def test_rules_scorers_normalize(answer: str, form: str) -> None:
    assert scorers.normalize(answer) == form


SCORE_BOXED = [
    # response, label, reward
    ("\\boxed{7}", "7", 1.0),
    ("\\boxed{7}", "8", 0.0),
    ("\\boxed{7}", "\\boxed{7}", 1.0),  # a boxed label is unboxed
    ("\\boxed{7}", "so \\boxed{7}.", 1.0),
    ("\\boxed{7}", "\\boxed{7", 0.0),  # an open box in the label: the label as written
    ("\\boxed{\\boxed{7", "\\boxed{7", 0.0),
    ("7", "7", 0.0),  # no box in the response
    ("\\boxed{}", "7", 0.0),
    ("\\boxed{ 7. }", "$7$", 1.0),
    ("\\fbox{7}", "7", 1.0),
    ("\\boxed{\\dfrac{1}{2}}", "\\frac{1}{2}", 1.0),
    ("\\boxed{0.5}", "\\frac{1}{2}", 0.0),  # spellings only
]


@pytest.mark.parametrize(("response", "label", "reward"), SCORE_BOXED)
def test_rules_scorers_score_boxed(response: str, label: str, reward: float) -> None:
    assert scorers.score_boxed(response, label) == reward


@pytest.mark.parametrize("label", ["", "  ", "$$", ".", "\\boxed{}", "\\boxed{ . }", "\\text{}"])
def test_rules_scorers_boxed_label_empty_after_normalization_raises(label: str) -> None:
    with pytest.raises(scorers.LabelError) as raised:
        scorers.score_boxed("\\boxed{7}", label)
    assert str(raised.value) == f"label is empty after normalization: {label[:80]!r}"


def test_rules_scorers_label_error_quotes_80_characters() -> None:
    label = "\\boxed{" + " " * 100 + "}"
    with pytest.raises(scorers.LabelError) as raised:
        scorers.score_boxed("\\boxed{7}", label)
    assert str(raised.value) == f"label is empty after normalization: {label[:80]!r}"
    assert isinstance(raised.value, ValueError)


MATH_VERIFY = [
    ("\\boxed{7}", "7", 1.0),
    ("\\boxed{7}", "8", 0.0),
    ("\\boxed{7}", "\\boxed{7}", 1.0),
    ("no answer", "7", 0.0),
]


@pytest.mark.parametrize(("response", "label", "reward"), MATH_VERIFY)
def test_rules_scorers_math_verify(response: str, label: str, reward: float) -> None:
    assert scorers.score_math_verify(response, label) == reward


@pytest.mark.parametrize("label", ["}{", "\\boxed{}", "}" * 100])
def test_rules_scorers_math_verify_label_that_does_not_parse(label: str) -> None:
    with pytest.raises(scorers.LabelError) as raised:
        scorers.score_math_verify("\\boxed{7}", label)
    assert str(raised.value) == f"label does not parse as math: {label[:80]!r}"


def _fake(rewards: dict[str, float | str]) -> Callable[[str, str], float]:
    """A scorer answering each label from the table; a text is raised as the error."""
    def score(response: str, label: str) -> float:
        assert response == "R"
        got = rewards[label]
        if isinstance(got, str):
            raise scorers.LabelError(got)
        return got
    return score


SCORE_ANY = [
    # rewards per label, labels, the reward (or the error's text raised)
    ({"a": 1.0}, ("a",), 1.0),
    ({"a": 0.0}, ("a",), 0.0),
    ({"a": 0.0, "b": 1.0}, ("a", "b"), 1.0),
    ({"a": 0.25, "b": 0.5, "c": 0.0}, ("a", "b", "c"), 0.5),  # the best, not the last
    ({"a": 0.5, "b": 0.25}, ("a", "b"), 0.5),
    ({"a": 1.0, "b": "bad b"}, ("a", "b"), 1.0),  # 1.0 ends it: the bad label is never scored
    ({"a": "bad a", "b": 1.0}, ("a", "b"), 1.0),  # a label matched: the error is not raised
    ({"a": "bad a", "b": 0.0}, ("a", "b"), "bad a"),
    ({"a": 0.5, "b": "bad b"}, ("a", "b"), "bad b"),
    ({"a": "bad a", "b": "bad b"}, ("a", "b"), "bad a"),  # the first error
    ({}, (), 0.0),
]


@pytest.mark.parametrize(("rewards", "labels", "want"), SCORE_ANY)
def test_rules_scorers_score_any(rewards: dict[str, float | str], labels: tuple[str, ...],
                                 want: float | str) -> None:
    scorer = _fake(rewards)
    if isinstance(want, str):
        with pytest.raises(scorers.LabelError, match=f"^{want}$"):
            scorers.score_any(scorer, "R", labels)
    else:
        assert scorers.score_any(scorer, "R", labels) == want


def test_rules_scorers_score_any_stops_at_the_first_full_reward() -> None:
    scored: list[str] = []

    def score(response: str, label: str) -> float:
        scored.append(label)
        return {"a": 0.5, "b": 1.0, "c": 1.0}[label]

    assert scorers.score_any(score, "R", ("a", "b", "c")) == 1.0
    assert scored == ["a", "b"]


def test_rules_scorers_backends_load_their_scorer() -> None:
    assert scorers.load_scorer("slime_math") is score_slime_math
    assert scorers.load_scorer("math_verify") is scorers.score_math_verify
    assert scorers.load_scorer("boxed") is scorers.score_boxed
    assert set(scorers.SCORERS) == set(scorers.HEALTH_PAIRS) == {"slime_math", "math_verify", "boxed"}
    with pytest.raises(KeyError):
        scorers.load_scorer("exact")


def test_rules_scorers_math_verify_runs_off_the_main_thread() -> None:
    """math-verify's own timeouts are signal alarms, which only the main thread may set: they are turned off (the
    scorer process's CPU deadline bounds a scoring), so a scoring in any thread gives its reward."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(scorers.score_math_verify, "\\boxed{7}", "7").result(timeout=60) == 1.0
        assert pool.submit(scorers.score_math_verify, "\\boxed{7}", "8").result(timeout=60) == 0.0


def test_rules_scorers_math_verify_load_quiets_its_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    monkeypatch.setattr(logging.getLogger("math_verify"), "level", logging.NOTSET)
    assert scorers.load_scorer("math_verify") is scorers.score_math_verify
    assert logging.getLogger("math_verify").level == logging.ERROR  # its "timeouts are off" warning, once a process


def test_rules_scorers_health_pairs() -> None:
    """The pairs /health scores, as its problems quote them."""
    pairs = {backend: [(p.response, p.label, p.expected) for p in known]
             for backend, known in scorers.HEALTH_PAIRS.items()}
    assert pairs == {
        "slime_math": [("so the answer is \\boxed{(x+1)^2}", "x^2+2x+1", 1.0),
                       ("so the answer is \\boxed{7}", "8", 0.0)],
        "math_verify": [("so the answer is \\boxed{\\frac{1}{2}}", "0.5", 1.0),
                        ("so the answer is \\boxed{7}", "8", 0.0)],
        "boxed": [("so the answer is \\boxed{\\dfrac{1}{2}}", "\\frac{1}{2}", 1.0),
                  ("so the answer is \\boxed{7}", "8", 0.0)],
    }
