"""Scorers: (response, label) -> reward. They run inside scorer processes, never in the HTTP front.

A scorer raises when it cannot score (a label that does not parse): the service turns that into the
counted, logged fallback instead of a quiet 0.0 that looks like a wrong answer.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from rlcheck.reward.slime_math import score_slime_math

Scorer = Callable[[str, str], float]


class LabelError(ValueError):
    """The label cannot be compared against anything (empty, or it does not parse)."""


def boxed(label: str) -> str:
    return label if "\\boxed" in label else f"\\boxed{{{label}}}"


def score_math_verify(response: str, label: str) -> float:
    """1.0 when math-verify finds the response's answer equal to the label, else 0.0."""
    from math_verify import parse, verify

    # math-verify's own timeouts use signal.alarm; the scorer process's deadline replaces them.
    gold = parse(boxed(label), parsing_timeout=None)
    if not gold:
        raise LabelError(f"label does not parse as math: {label[:80]!r}")
    answer = parse(response, parsing_timeout=None)
    return 1.0 if verify(gold, answer, timeout_seconds=None) else 0.0


_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_DROP = re.compile(r"\\left|\\right|\\[!,;: ]|\s+|\^\{?\\circ\}?")
_TEXT = re.compile(r"\\(?:text|mathrm|textbf)\{([^{}]*)\}")


def last_boxed(text: str) -> str | None:
    """Content of the last \\boxed{...} (braces balanced), or None when there is none."""
    for match in reversed(list(_BOXED.finditer(text))):
        depth, start = 1, match.end()
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                return text[start:i]
    return None


def normalize(answer: str) -> str:
    """Spelling-only normalization: spaces, $...$, \\left/\\right, \\dfrac, \\text{}, a trailing period."""
    out = _TEXT.sub(r"\1", answer.strip().rstrip(".").strip().strip("$"))
    out = _DROP.sub("", out).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return out.rstrip(".")


def score_boxed(response: str, label: str) -> float:
    """1.0 when the response's last \\boxed{} equals the label after normalize(), else 0.0."""
    boxed_gold = last_boxed(label)  # an empty box is an empty label, not the text "\\boxed{}"
    gold = normalize(label if boxed_gold is None else boxed_gold)
    if not gold:
        raise LabelError(f"label is empty after normalization: {label[:80]!r}")
    answer = last_boxed(response)
    return 1.0 if answer is not None and normalize(answer) == gold else 0.0


SCORERS: dict[str, Scorer] = {"slime_math": score_slime_math, "math_verify": score_math_verify, "boxed": score_boxed}


def score_any(scorer: Scorer, response: str, labels: tuple[str, ...]) -> float:
    """The best reward over the labels (a list label means "any of these answers").

    A label that cannot be scored is not read as a wrong answer: when no label gives 1.0 and one raised,
    the error is raised (a counted fallback).
    """
    best, error = 0.0, None
    for label in labels:
        try:
            best = max(best, scorer(response, label))
        except Exception as exc:  # noqa: BLE001 - re-raised below unless another label matched
            error = error or exc
        if best >= 1.0:
            return best
    if error is not None:
        raise error
    return best


def load_scorer(backend: str) -> Scorer:
    if backend == "slime_math":
        import pylatexenc.latex2text  # noqa: F401  (same reason as below; SLIME's grader reads LaTeX with it)
        import sympy  # noqa: F401
    if backend == "math_verify":
        import math_verify  # noqa: F401  (import now: a broken install fails the process at start, not per request)

        # It warns once per process that its timeouts are off; the deadline is ours (see pool.py).
        logging.getLogger("math_verify").setLevel(logging.ERROR)
    return SCORERS[backend]


@dataclass(frozen=True, kw_only=True, slots=True)
class KnownPair:
    """A pair /health scores: one right and one wrong answer catch both 'always 0.0' and 'always 1.0'."""

    response: str
    label: str
    expected: float


HEALTH_PAIRS: dict[str, tuple[KnownPair, ...]] = {
    "slime_math": (
        KnownPair(response="so the answer is \\boxed{(x+1)^2}", label="x^2+2x+1", expected=1.0),
        KnownPair(response="so the answer is \\boxed{7}", label="8", expected=0.0),
    ),
    "math_verify": (
        KnownPair(response="so the answer is \\boxed{\\frac{1}{2}}", label="0.5", expected=1.0),
        KnownPair(response="so the answer is \\boxed{7}", label="8", expected=0.0),
    ),
    "boxed": (
        KnownPair(response="so the answer is \\boxed{\\dfrac{1}{2}}", label="\\frac{1}{2}", expected=1.0),
        KnownPair(response="so the answer is \\boxed{7}", label="8", expected=0.0),
    ),
}
