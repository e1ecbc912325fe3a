"""The `slime_math` grading mode: grades as SLIME's built-in `--rm-type math` reward does.

Written for rlcheck from the behaviour of SLIME's rm_hub math grader (checked against THUDM/slime
main, 2026): the answer is the content of the response's LAST `\\boxed{...}` (no box: 0); a boxed
label is unboxed the same way; the two are equal when their spelling-normalized forms match, or, failing
that, when sympy finds their difference simplifies to 0 under the same guards (integers and a/b
fractions must match exactly; at most two unknown letters; no `^{`, `^(` or multi-digit powers, which
keeps giant powers away from sympy). SLIME turns LaTeX into text with pylatexenc before sympy; rlcheck
does that step itself for the usual macros (frac, sqrt, pi, cdot, times, infty), so an answer in
rarer LaTeX that only the sympy step would equate can differ (see the README's mode table).
"""

from __future__ import annotations

import re

_SYMPY_UNITS = ("degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour", "day", "week", "month",
                "year", "foot", "feet", "inch", "yard")
_UNITS = [re.compile(rf"{unit}(es)?(s)? *(\^[0-9]+)?") for unit in _SYMPY_UNITS]  # applied in this order
_ENCLOSING_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")
_BAD_POWERS = re.compile(r"\^[0-9]+\^|\^[0-9][0-9]+")
_FRACTION = re.compile(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$")
_THOUSANDS = re.compile(r"(\d)(,)(\d\d\d)($|\D)")
_LATEX_SYMBOLS = {"\\pi": "pi", "\\infty": "inf", "\\cdot": "*", "\\times": "*", "\\cup": "U", "\\left": "",
                  "\\right": "", "\\,": "", "\\!": "", "\\;": "", "\\ ": " "}


def last_box(text: str) -> str | None:
    """Content of the last `\\boxed{...}` (`\\fbox` only when there is no `\\boxed`); None when absent or open."""
    start = text.rfind("\\boxed")
    if start < 0:
        start = text.rfind("\\fbox")
    if start < 0 or not text.startswith("\\boxed{", start):  # SLIME reads only the `\boxed{` spelling
        return None
    depth = 0
    for i in range(start + len("\\boxed"), len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + len("\\boxed{"):i]
    return None


def _wrap_one_char(text: str, macro: str) -> str:
    """`\\sqrt3` -> `\\sqrt{3}`; `\\frac12` -> `\\frac{1}{2}`: the spelling shortcuts SLIME's grader accepts."""
    head, *parts = text.split(macro)
    out = [head]
    for part in parts:
        if macro == "\\sqrt":
            out.append(macro + (part if part.startswith("{") else "{" + part[0] + "}" + part[1:]))
        elif part.startswith("{"):
            out.append(macro + part)
        elif len(part) < 2:
            raise ValueError("a \\frac without two arguments")
        elif part[1] == "{":
            out.append(macro + "{" + part[0] + "}" + part[1:])
        else:
            out.append(macro + "{" + part[0] + "}{" + part[1] + "}" + part[2:])
    return "".join(out)


def spelling_form(answer: str) -> str:
    """The string both sides are compared as first (SLIME's MATH-style normalization)."""
    answer = answer.strip()
    try:
        match = _ENCLOSING_TEXT.search(answer)
        text = match.group("text").strip() if match else answer
        for old, new in (("\n", ""), ("\\!", ""), ("\\\\", "\\"), ("tfrac", "frac"), ("dfrac", "frac"),
                         ("\\left", ""), ("\\right", ""), ("^{\\circ}", ""), ("^\\circ", ""), ("\\$", "")):
            text = text.replace(old, new)
        if "\\text{ " in text:  # a unit after the number
            head, *rest = text.split("\\text{ ")
            if len(rest) != 1:
                raise ValueError("more than one unit")
            text = head
        text = text.replace("\\%", "").replace(" .", " 0.").replace("{.", "{0.")
        if not text:
            return text
        text = "0" + text if text.startswith(".") else text
        sides = text.split("=")
        if len(sides) == 2 and len(sides[0]) <= 2:  # "x = 3" -> "3"
            text = sides[1]
        text = _wrap_one_char(text, "\\sqrt").replace(" ", "")
        text = _wrap_one_char(text, "\\frac") if "\\frac" in text else text
        text = "\\frac{1}{2}" if text == "0.5" else text
        numerator, slash, denominator = text.partition("/")
        if slash and "/" not in denominator and numerator.lstrip("-").isdigit() and denominator.lstrip("-").isdigit():
            if text == f"{int(numerator)}/{int(denominator)}":
                text = f"\\frac{{{int(numerator)}}}{{{int(denominator)}}}"
        return text
    except (ValueError, IndexError):  # a spelling it cannot normalize is compared as written
        return answer


def _latex_to_text(expr: str) -> str:
    for old, new in _LATEX_SYMBOLS.items():
        expr = expr.replace(old, new)
    expr = expr.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    for _ in range(32):  # innermost first; bounded: nesting deeper than this stays as written
        new = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r" (\1)/(\2)", expr)
        new = re.sub(r"\\sqrt\{([^{}]*)\}|\\sqrt(\w)", r"sqrt(\1\2)", new)
        new = re.sub(r"\\frac(\w)(\w)", r" (\1)/(\2)", new)
        if new == expr:
            break
        expr = new
    return expr.replace("\\", "").strip()


def _strip_thousands(text: str) -> str:
    while True:  # each pass removes every other separator of "1,000,000"
        stripped = _THOUSANDS.sub(r"\1\3\4", text)
        if stripped == text:
            return text
        text = stripped


def _is_int_text(text: str) -> bool:
    try:
        value = float(_strip_thousands(text))
        return abs(value - round(value)) <= 1e-7
    except (ValueError, OverflowError):  # not a number, or inf/nan
        return False


def symbolic_form(expr: str) -> str:
    """The string sympy is given (SLIME's second normalization: units, words, LaTeX to text, no braces)."""
    match = _ENCLOSING_TEXT.search(expr)
    expr = match.group("text") if match else expr
    for old, new in (("\\%", "%"), ("\\$", "$"), ("$", ""), ("%", ""), (" or ", " , "), (" and ", " , "),
                     ("million", "*10^6"), ("billion", "*10^9"), ("trillion", "*10^12")):
        expr = expr.replace(old, new)
    for unit in _UNITS:
        expr = unit.sub("", expr)
    expr = re.sub(r"\^ *\\circ", "", expr)
    if len(expr) > 1 and expr[0] == "{" and expr[-1] == "}":
        expr = expr[1:-1]
    expr = re.sub(r",\\! *", "", expr)
    if _is_int_text(expr) and "," not in expr:
        expr = str(round(float(expr)))
    if "\\" in expr:
        expr = _latex_to_text(expr)
    expr = re.sub(r"([0-9]) +([0-9])", r"\1+\2", re.sub(r"- *", "-", expr))  # "7 3/4" is 7+3/4
    expr = expr.replace(" ", "").replace("{", "").replace("}", "").lower()
    return str(int(float(expr.replace(",", "")))) if _is_int_text(expr) else expr


def _elements(expr: str) -> list[str]:
    """A tuple or interval "(a,b]" splits into its elements; anything else is one element."""
    expr = _strip_thousands(expr)
    if not expr:
        return []
    if len(expr) > 2 and expr[0] in "()[]" and expr[-1] in "()[]" and not any(c in expr[1:-1] for c in "()[]"):
        return [part.strip() for part in expr[1:-1].split(",")]
    return [expr]


def _sympy_allowed(expr: str) -> bool:
    letters = {c for c in expr.replace("sqrt", "").replace("frac", "") if c.isalpha()}
    return len(letters) <= 2 and "^{" not in expr and "^(" not in expr and not _BAD_POWERS.search(expr)


def _sympy_equal(truth: str, given: str) -> bool:
    expr = f"({truth})-({given})"
    if not _sympy_allowed(expr):
        return False
    import sympy
    from sympy.parsing import sympy_parser

    names = {k: v for k, v in vars(sympy).items() if not k.startswith("_")}  # sympy names, no builtins
    transformations = (*sympy_parser.standard_transformations, sympy_parser.implicit_multiplication_application)
    try:
        parsed = sympy_parser.parse_expr(expr.replace("^", "**"), local_dict={},
                                         global_dict={"__builtins__": {}, **names}, transformations=transformations)
        return bool(sympy.simplify(parsed) == 0)
    except Exception:  # noqa: BLE001 - as SLIME's grader: what sympy cannot read is not equal
        return False


def _element_equal(truth: str, given: str) -> bool:
    if _FRACTION.search(truth) and _FRACTION.search(given):  # unreduced fractions do not count
        return truth == given
    if _is_int_text(truth) != _is_int_text(given):  # an integer answer must match exactly
        return False
    return _sympy_equal(truth, given)


def symbolic_equal(given: str, truth: str) -> bool:
    truth, given = symbolic_form(truth), symbolic_form(given)
    if truth == given:
        return True
    if not given:
        return False
    truths, givens = _elements(truth), _elements(given)
    if len(truths) > 1 and (truth[0] != given[0] or truth[-1] != given[-1]):  # (a,b) is not [a,b]
        return False
    if len(truths) != len(givens):
        return False
    return all(_element_equal(t, g) for t, g in zip(truths, givens, strict=True))


def score_slime_math(response: str, label: str) -> float:
    """1.0 when the response's last \\boxed{} equals the label as SLIME's math grader decides, else 0.0."""
    truth = last_box(label) if "\\boxed" in label else label
    given = last_box(response)
    if truth is None or given is None:
        return 0.0
    if spelling_form(given) == spelling_form(truth):
        return 1.0
    return 1.0 if symbolic_equal(given, truth) else 0.0
