"""The requests of the benchmark: distinct normal math answers, and slow-for-sympy expressions.

Everything is generated from a seed, so both services get exactly the same requests in the same order.
Labels are strings in several spellings (the baseline's pydantic model takes only strings).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

FREEZER = "9^{9^{9^{9}}}"  # sympy computes 9**387420489 in C and then never finishes
_WORDS = ("we", "compute", "the", "sum", "of", "terms", "so", "then", "factor", "both", "sides", "and", "divide",
          "by", "note", "that", "hence", "substitute", "into", "equation", "gives", "check", "case", "each")


@dataclass(frozen=True, kw_only=True, slots=True)
class Request:
    kind: str
    """normal | pathological | freezer"""
    payload: dict[str, Any]
    expected: float | None
    """The right reward for a normal request; None where only a timely fallback is asked for."""


def _reasoning(rng: random.Random) -> str:
    count = rng.randint(40, 250)
    words = [rng.choice(_WORDS) if rng.random() < 0.8 else str(rng.randint(2, 999)) for _ in range(count)]
    return "Let me think step by step. " + " ".join(words) + "."


def _answer(rng: random.Random) -> tuple[str, list[str]]:
    """A LaTeX answer and labels that equal it, in different spellings."""
    kind = rng.randrange(4)
    if kind == 0:
        n = rng.randint(-10**6, 10**6)
        return str(n), [str(n), f"\\boxed{{{n}}}", f"${n}$"]
    if kind == 1:
        frac = Fraction(rng.randint(1, 999), rng.randint(2, 999))
        labels = [f"{frac.numerator}/{frac.denominator}", f"\\frac{{{frac.numerator}}}{{{frac.denominator}}}"]
        return f"\\frac{{{frac.numerator}}}{{{frac.denominator}}}", labels
    if kind == 2:
        a, b = rng.randint(2, 99), rng.choice((2, 3, 5, 6, 7, 10, 11))
        return f"{a}\\sqrt{{{b}}}", [f"{a}\\sqrt{{{b}}}", f"\\boxed{{{a} \\sqrt{{{b}}}}}"]
    x = round(rng.uniform(0, 1000), 2)
    return f"{x}", [f"{x}", f"{x:.2f}"]


def _wrong(answer: str) -> str:
    return f"{answer}+1"


def normal(rng: random.Random) -> Request:
    answer, labels = _answer(rng)
    right = rng.random() < 0.5
    response = f"{_reasoning(rng)} Therefore the answer is $\\boxed{{{answer if right else _wrong(answer)}}}$."
    prompt: Any = "Solve the problem." if rng.random() < 0.5 else [{"role": "user", "content": "Solve the problem."}]
    return Request(kind="normal", payload={"prompt": prompt, "response": response, "label": rng.choice(labels)},
                   expected=1.0 if right else 0.0)


def slow_expression(i: int) -> str:
    """The i-th distinct expression that takes sympy about 1.5-4 s here (distinct: its caches cannot help)."""
    template = i % 4
    if template == 0:
        return f"{(7, 11, 13)[i % 3]}^{{{3_000_017 + 7919 * i}}}"
    if template == 1:
        n = 150_000 + 1013 * i
        return f"\\binom{{{n}}}{{{n // 2}}}"
    if template == 2:
        return f"{350_000 + 1511 * i}!"
    return f"10^{{{3_000_000 + 20_011 * i}}}+{i}"


def pathological(i: int, expression: str, kind: str = "pathological") -> Request:
    response = f"After a long computation the answer is $\\boxed{{{expression}}}$."
    return Request(kind=kind, payload={"prompt": f"problem {i}", "response": response, "label": "42"}, expected=None)


def mix(n: int, *, pathological_share: float, seed: int) -> list[Request]:
    """n requests; pathological ones evenly spaced, the freezer in the middle one of them."""
    rng = random.Random(seed)
    requests = [normal(rng) for _ in range(n)]
    count = round(n * pathological_share)
    if count:
        spacing = n // count
        for i in range(count):
            kind = "freezer" if i == count // 2 else "pathological"
            requests[i * spacing + spacing // 2] = pathological(i, FREEZER if kind == "freezer" else
                                                                slow_expression(i), kind)
    return requests
