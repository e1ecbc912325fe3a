"""The differential corpus of slime_math: answers and labels, built deterministically (no grader here).

Groups of spellings of one value: every spelling is graded against every other spelling of its group
(as label and as response) and against the spellings of a neighbouring value; then the same values are
wrapped the ways a model writes them (several boxes, no box, a cut-off box, \\fbox, prose around) and
pathological answers are added. SLIME's verdicts are recorded by grade.py, outside this module.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

GROUPS: dict[str, list[list[str]]] = {
    "integer": [
        ["36", "36.0", "36.00", "+36", " 36 ", "\\text{36}", "36^\\circ", "36^{\\circ}", "$36$", "36.", "{36}"],
        ["1000", "1,000", "1{,}000", "1\\,000", "1000.0", "10^3", "1 000"],
        ["-7", "- 7", "-7.0", "(-7)", "−7"],
        ["0", "0.0", "-0", "00"],
        ["1000000", "1,000,000", "1 million", "10^6", "1e6"],
    ],
    "decimal": [
        ["0.5", ".5", "0.50", "\\frac{1}{2}", "\\frac12", "1/2", "\\dfrac{1}{2}", "\\tfrac{1}{2}", "2^{-1}", "50\\%"],
        ["0.25", ".25", "\\frac{1}{4}", "1/4", "\\frac14", "25\\%", "0.250"],
        ["1.5", "1.50", "\\frac{3}{2}", "3/2", "1\\frac{1}{2}", "1 \\frac{1}{2}", "1 1/2", "\\frac{6}{4}"],
        ["3.14", "\\pi", "3.14159", "\\frac{22}{7}"],
        ["0.333", "\\frac{1}{3}", "0.\\overline{3}", "1/3", "0.3333333333"],
    ],
    "fraction": [
        ["\\frac{1}{2}", "\\frac{5}{10}", "\\frac{2}{4}", "2/4", "5/10", "\\frac{10}{20}", "\\dfrac{5}{10}"],
        ["\\frac{3}{4}", "\\frac{6}{8}", "3/4", "6/8", "\\frac{-3}{-4}", "0.75"],
        ["-\\frac{2}{3}", "\\frac{-2}{3}", "\\frac{2}{-3}", "-2/3", "-\\dfrac{2}{3}", "-\\frac{4}{6}"],
        ["\\frac{7}{3}", "2\\frac{1}{3}", "2 \\frac{1}{3}", "2 1/3", "7/3", "\\frac{14}{6}"],
        ["\\frac{a}{b}", "a/b", "\\frac{2a}{2b}", "\\frac ab", "a b^{-1}"],
        ["\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", "\\sqrt{2}/2", "\\frac{\\sqrt2}{2}", "\\sqrt{\\frac{1}{2}}"],
    ],
    "mixed_number": [
        ["3\\frac{1}{2}", "\\frac{7}{2}", "3.5", "7/2", "3 \\frac{1}{2}", "3 1/2", "3\\tfrac{1}{2}", "3\\frac12"],
        ["-3\\frac{1}{2}", "-\\frac{7}{2}", "-3.5", "-7/2", "- 3 \\frac{1}{2}"],
        ["10\\frac{3}{4}", "\\frac{43}{4}", "10.75", "10 3/4", "43/4"],
        ["1\\dfrac{2}{3}", "\\frac{5}{3}", "5/3", "1 2/3", "1.666"],
    ],
    "percentage": [
        ["50\\%", "50%", "50", "50 \\%", "0.5", "\\frac{1}{2}", "50 percent", "50\\text{\\%}"],
        ["12.5\\%", "12.5%", "12.5", "\\frac{1}{8}", "0.125"],
    ],
    "set_tuple": [
        ["\\{1, 2\\}", "\\{2, 1\\}", "\\{1,2\\}", "1, 2", "1,2", "\\left\\{1,2\\right\\}", "{1,2}"],
        ["(1, 2)", "(1,2)", "\\left(1, 2\\right)", "(2, 1)", "[1, 2]", "(1, 2, 3)", "(1.0, 2)"],
        ["(-1, \\frac{1}{2})", "(-1, 0.5)", "(-1,1/2)", "\\left(-1, \\dfrac{1}{2}\\right)", "(-1, \\frac{2}{4})"],
        ["(3, 4, 5)", "(3,4,5)", "3, 4, 5", "(5, 4, 3)", "[3, 4, 5]"],
        ["1, 3", "1 \\text{ and } 3", "1 and 3", "1 or 3", "x = 1, 3", "3, 1"],
    ],
    "interval": [
        ["(0, 1]", "(0,1]", "\\left(0, 1\\right]", "[0, 1]", "(0, 1)", "0 < x \\le 1"],
        ["[0, \\infty)", "[0,\\infty)", "[0, \\infty )", "x \\ge 0", "[0, inf)"],
        ["(-\\infty, 3) \\cup (4, \\infty)", "(-\\infty,3)\\cup(4,\\infty)", "(-inf, 3) U (4, inf)",
         "(-\\infty, 3) \\cup (4, +\\infty)"],
        ["[-2, 5)", "[-2,5)", "\\left[-2, 5\\right)", "[-2, 5]"],
    ],
    "unit": [
        ["5", "5 \\text{ cm}", "5\\text{ cm}", "5 cm", "5cm", "5 \\text{cm}", "5 centimeters", "5 \\mbox{ cm}"],
        ["90", "90^\\circ", "90^{\\circ}", "90 degrees", "90\\text{ degrees}", "90°", "\\frac{\\pi}{2}"],
        ["12", "12 \\text{ meters}", "12 meters", "12 m", "12 \\text{ m}^2", "12 \\text{ square meters}"],
        ["3", "3 \\text{ hours}", "3 hours", "3 hrs", "180 \\text{ minutes}", "3\\text{ hr}"],
        ["\\$10", "10", "\\$10.00", "10 \\text{ dollars}", "$10$", "10\\$"],
    ],
    "latex": [
        ["2\\sqrt{3}", "\\sqrt{12}", "2 \\sqrt 3", "2\\sqrt3", "\\sqrt{3} \\cdot 2",
         "2 \\times \\sqrt{3}", "2*sqrt(3)"],
        ["(x+1)^2", "x^2+2x+1", "x^{2}+2x+1", "(x + 1)(x + 1)", "x^2 + 2 x + 1", "\\left(x+1\\right)^2"],
        ["2\\pi", "2 \\pi", "\\pi \\cdot 2", "6.283", "2\\pi r", "\\tau"],
        ["\\text{yes}", "yes", "Yes", "\\textbf{yes}", "\\mathrm{yes}", "YES", "\\text{no}"],
        ["\\sqrt{2}", "2^{1/2}", "\\sqrt2", "1.414", "\\sqrt{ 2 }", "\\sqrt[2]{2}"],
        ["e^{2}", "e^2", "\\exp(2)", "e\\cdot e", "7.389"],
        ["\\log_2 8", "3", "\\log_{2}{8}", "\\ln 8 / \\ln 2"],
        ["\\sin x", "\\sin(x)", "sin x", "\\cos(\\pi/2 - x)"],
        ["\\alpha + \\beta", "\\beta + \\alpha", "alpha+beta", "\\alpha+\\beta"],
        ["x = 4", "4", "y = 4", "x=4", "k = 4", "abc = 4", "4 = x"],
        ["\\infty", "\\infinity", "inf", "+\\infty", "\\infty."],
        ["\\frac{1}{\\sqrt{3}}", "\\frac{\\sqrt{3}}{3}", "\\sqrt{3}/3", "3^{-1/2}"],
        ["\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1, 2)"],
        ["\\mathbf{(A)}", "A", "(A)", "\\text{(A)}", "\\textbf{(A)}", "B"],
    ],
}

WRAPPERS = [
    "\\boxed{{{a}}}",
    "The answer is $\\boxed{{{a}}}$.",
    "First \\boxed{{0}}, then on reflection \\boxed{{{a}}}",
    "\\boxed{{{a}}} and finally \\boxed{{wrong}}",
    "Therefore the answer is {a}.",
    "\\boxed{{{a}",
    "\\fbox{{{a}}}",
    "\\boxed {{{a}}}",
    "\\boxed{{ {a} }}",
    "Final: \\boxed{{\\boxed{{{a}}}}}",
    "$\\boxed{{{a}}}$ \\fbox{{1}}",
    "\\boxed{{{a}}}\n\n</think> \\boxed{{{a}}}",
]

PATHOLOGICAL = [
    "", " ", "\\boxed{}", "\\boxed{ }", "{", "}", "\\boxed{{}}", "\\boxed{\\}", "\\boxed{9^{9^{9^{9}}}}",
    "\\boxed{7^{12345678}}", "\\boxed{10^{3000017}}", "\\boxed{2^100}", "\\boxed{2^{10}}", "\\boxed{2^10}",
    "\\boxed{2^1^2}", "\\boxed{x^(2)}", "\\boxed{abc + d}", "\\boxed{a+b+c}", "\\boxed{a+b}",
    "\\boxed{" + "1" * 400 + "}", "\\boxed{" + "(" * 50 + "1" + ")" * 50 + "}",
    "\\boxed{" + "{" * 30 + "1" + "}" * 30 + "}",
    "\\boxed{\\frac{}{}}", "\\boxed{\\frac{1}}", "\\boxed{\\frac1}", "\\boxed{\\sqrt}", "\\boxed{\\sqrt{}}",
    "\\boxed{1/0}", "\\boxed{0/0}", "\\boxed{nan}", "\\boxed{inf}", "\\boxed{1e400}", "\\boxed{-}", "\\boxed{=}",
    "\\boxed{==}", "\\boxed{\\text{}}", "\\boxed{\\text{ }}", "\\boxed{\\text{ cm}}", "\\boxed{\\text{ a}\\text{ b}}",
    "\\boxed{1 \\text{ cm} \\text{ m}}", "\\boxed{__import__('os')}", "\\boxed{lambda: 1}", "\\boxed{x.y}",
    "\\boxed{\\undefinedmacro{3}}", "\\boxed{\\begin{cases} 1 \\end{cases}}", "\\boxed{\\left(}", "\\boxed{)(}",
    "\\boxed{1,2,3,4,5,6,7,8,9,10}", "\\boxed{(,)}", "\\boxed{[]}", "\\boxed{()}", "\\boxed{1;2}",
    "\\boxed{3.}", "\\boxed{.}", "\\boxed{..5}", "\\boxed{0.5.}", "\\boxed{١٢}", "\\boxed{３}", "\\boxed{½}",
    "\\boxed{\\%}", "\\boxed{\\$}", "\\boxed{$}", "\\boxed{%}", "\\boxed{\\\\}", "\\boxed{\\,}", "\\boxed{\\!}",
    "\\boxed{1\\!000}", "\\boxed{1,\\!000}", "\\boxed{x = y = 3}", "\\boxed{f(x)}", "\\boxed{\\emptyset}",
    "\\boxed{\\varnothing}", "\\boxed{\\{\\}}", "\\boxed{I}", "\\boxed{E}", "\\boxed{S}", "\\boxed{N}",
    "\\boxed{\\frac{(x**2-1)**60}{(x-1)**60}}", "\\boxed{\\sqrt{-1}}", "\\boxed{i}", "\\boxed{j}",
]
PATHOLOGICAL_LABELS = ["3", "x+1", "0", "1/2", "\\frac{1}{2}", "I", "(1,2)", "\\boxed{3}", "\\boxed{}", "\\boxed{3",
                       "1000", "yes", "\\emptyset", "i"]


def _values() -> Iterator[tuple[str, int, list[str]]]:
    for kind, groups in GROUPS.items():
        for index, group in enumerate(groups):
            yield kind, index, group


def cases(seed: int = 29) -> list[dict[str, object]]:
    """Every case once: {kind, response, label}; the order is fixed by the seed."""
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: str, response: str, label: object) -> None:
        key = (response, repr(label))
        if key not in seen:
            seen.add(key)
            out.append({"kind": kind, "response": response, "label": label})

    for kind, index, group in _values():
        neighbour = GROUPS[kind][(index + 1) % len(GROUPS[kind])]
        for label, answer in itertools.product(group, group):  # every spelling against every other
            add(kind, f"\\boxed{{{answer}}}", label)
        for label, answer in itertools.product(group[:3], neighbour):  # near neighbours: mostly wrong
            add(kind, f"\\boxed{{{answer}}}", label)
        for answer in group:  # the ways a model writes an answer
            for wrapper in rng.sample(WRAPPERS, 5):
                add(f"{kind}/wrapped", wrapper.format(a=answer), group[0])
        for answer in group[:2]:  # a boxed label
            add(f"{kind}/boxed_label", f"\\boxed{{{answer}}}", f"\\boxed{{{group[0]}}}")
    for response, label in itertools.product(PATHOLOGICAL, PATHOLOGICAL_LABELS):
        add("pathological", response, label)
    # Labels that arrive as JSON numbers. Not 0: SLIME's grader gives 0 to every answer of a falsy label, while
    # rlcheck grades the label "0" (README: the one known difference).
    for label in (36, 0.5, 1000, -7, 3.0, 1e20, 2.5e-05):
        for answer in ("36", "0", "0.5", "\\frac{1}{2}", "1000", "1,000", "-7", "3", "3.0", "1e20", "2.5e-05"):
            add("numeric_label", f"\\boxed{{{answer}}}", label)
    return out


if __name__ == "__main__":
    import json
    import sys

    for case in cases():
        sys.stdout.write(json.dumps(case) + "\n")
