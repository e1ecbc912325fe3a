"""Samples with the reward SLIME's own `--rm-type math` grader gives them (the ground truth).

Kinds: plain answers (integers, fractions, roots, decimals, in several label spellings), symbolic
answers (a factored polynomial against its expansion), self-correcting responses (two boxes, the last
one counts), unboxed answers (SLIME's grader gives 0), and a few pathological answers (slow for
sympy; only a timely reply is asked of them). Generated from a seed: every service gets the same.
"""

from __future__ import annotations

import collections
import random
from dataclasses import dataclass
from typing import Any

from benchmarks.reward_load import workload


@dataclass(frozen=True, kw_only=True, slots=True)
class Sample:
    kind: str
    payload: dict[str, Any]
    expected: float | None
    """SLIME's reward; None for a pathological answer (any reward, by the deadline)."""


def _plain(rng: random.Random) -> Sample:
    request = workload.normal(rng)
    return Sample(kind="plain", payload=request.payload, expected=request.expected)


def _symbolic(rng: random.Random) -> Sample:
    a, right = rng.randint(1, 9), rng.random() < 0.5
    if rng.random() < 0.5:
        factored, expanded = f"(x+{a})^2", f"x^2+{2 * a}x+{a * a}"
    else:
        factored, expanded = f"(x-{a})(x+{a})", f"x^2-{a * a}"
    label = expanded if right else f"{expanded}+1"
    response = f"{workload._reasoning(rng)} So the expression is $\\boxed{{{factored}}}$."
    return Sample(kind="symbolic", payload={"prompt": "p", "response": response, "label": label},
                  expected=1.0 if right else 0.0)


def _self_correcting(rng: random.Random) -> Sample:
    answer, wrong = rng.randint(2, 999), rng.randint(1000, 1999)
    right_last = rng.random() < 0.5
    first, last = (wrong, answer) if right_last else (answer, wrong)
    response = (f"So \\boxed{{{first}}}. Wait, let me check that again. {workload._reasoning(rng)} "
                f"It is \\boxed{{{last}}}.")
    return Sample(kind="self_correcting", payload={"prompt": "p", "response": response, "label": str(answer)},
                  expected=1.0 if right_last else 0.0)


def _unboxed(rng: random.Random) -> Sample:
    answer = rng.randint(2, 999)
    response = f"{workload._reasoning(rng)} The answer is {answer}."
    return Sample(kind="unboxed", payload={"prompt": "p", "response": response, "label": str(answer)}, expected=0.0)


def mix(n: int, *, seed: int, pathological_share: float = 0.005) -> list[Sample]:
    rng = random.Random(seed)
    makers = [(_plain, 0.64), (_symbolic, 0.2), (_self_correcting, 0.08), (_unboxed, 0.08)]
    samples = [rng.choices([m for m, _ in makers], weights=[w for _, w in makers])[0](rng) for _ in range(n)]
    count = round(n * pathological_share)
    for i in range(count):  # evenly spaced; not the 9^9^9^9 freezer: the reference design would never answer it
        request = workload.pathological(i, workload.slow_expression(i))
        samples[(i * n) // count + n // (2 * count)] = Sample(kind="pathological", payload=request.payload,
                                                              expected=None)
    return samples


def describe(samples: list[Sample]) -> dict[str, Any]:
    kinds = collections.Counter(s.kind for s in samples)
    rewards = collections.Counter(str(s.expected) for s in samples)
    return {"samples": len(samples), "by_kind": dict(kinds), "by_expected_reward": dict(rewards)}
