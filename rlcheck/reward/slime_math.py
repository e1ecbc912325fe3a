"""The `slime_math` grading mode: the reward SLIME's built-in `--rm-type math` gives, answer for answer.

Written for rlcheck from the behaviour of SLIME's rm_hub math grader (`grade_answer_verl`, the same at
v0.2.4 and 624b824), step by step, and proven differentially: benchmarks/reward_grader_corpus grades a
corpus of several thousand answers with SLIME's own grader, tests/data/reward/slime_grader_corpus.jsonl
keeps its verdicts and tests/test_reward_slime_corpus.py holds rlcheck to every one of them.

The answer is the content of the response's last `\\boxed{...}`; a boxed label is unboxed the same way.
Two comparisons, either one suffices: the MATH-dataset spelling normalization (`spelling_form`), then a
second normalization (`symbolic_form`: units, words, LaTeX to text through pylatexenc, as SLIME does)
followed by element-wise checks and a sympy difference under SLIME's guards (integers and a/b fractions
must match exactly; at most two unknown letters; no `^{`, `^(` or multi-digit powers). Where SLIME's
grader swallows an error and goes on with what it had, so does this code: that is where the two would
otherwise part ways (`\\frac{5}{10}` is not `\\frac{1}{2}`; `3\\frac{1}{2}` is `7/2`).
"""

from __future__ import annotations

import logging
import re

_UNIT_WORDS = ("degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour", "day", "week", "month",
               "year", "foot", "feet", "inch", "yard")
_UNITS = [re.compile(rf"{unit}(es)?(s)? *(\^[0-9]+)?") for unit in _UNIT_WORDS]  # applied in this order
_ENCLOSING_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")
_BAD_POWERS = (re.compile(r"\^[0-9]+\^"), re.compile(r"\^[0-9][0-9]+"))
_FRACTION = re.compile(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$")
_THOUSANDS = re.compile(r"(\d)(,)(\d\d\d)($|\D)")
_MIXED_NUMBER = re.compile("([0-9]) +([0-9])")
_UNICODE_TO_SYMPY = (("√", "sqrt"), ("π", "pi"), ("∞", "inf"), ("∪", "U"), ("·", "*"), ("×", "*"))
_TUPLE_CHARS = "()[]"


# ---- the answer ------------------------------------------------------------------------------------
def last_box(text: str) -> str | None:
    """Content of the last `\\boxed{...}`; None when there is no `\\boxed`, it is not spelled `\\boxed{`, or it is open.

    The braces are counted from the `\\boxed` on; a `\\fbox` is never read (SLIME looks for one only in text that
    has no `\\boxed`, and such text has no answer at all).
    """
    start = text.rfind("\\boxed")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                whole = text[start:i + 1]
                return whole[len("\\boxed{"):-1] if whole.startswith("\\boxed{") else None
    return None


# ---- first comparison: MATH-dataset spelling ----------------------------------------------------
class _KeepAsIs(Exception):
    """A spelling step failed: the whole normalization falls back to the answer as it came in."""


def _split_one_char_sqrt(text: str) -> str:
    head, *parts = text.split("\\sqrt")
    for part in parts:
        if not part:
            raise _KeepAsIs
        head += "\\sqrt" + (part if part[0] == "{" else "{" + part[0] + "}" + part[1:])
    return head


def _split_one_char_frac(text: str) -> str:
    """`\\frac12` -> `\\frac{1}{2}`, `\\frac1{7}` -> `\\frac{1}{7}`; a `\\frac` with under two characters after it
    leaves the whole text as it was."""
    head, *parts = text.split("\\frac")
    for part in parts:
        if not part:
            raise _KeepAsIs
        if part[0] == "{":
            head += "\\frac" + part
        elif len(part) < 2:
            return text
        elif part[1] == "{":
            head += "\\frac{" + part[0] + "}" + part[1:]
        else:
            head += "\\frac{" + part[0] + "}{" + part[1] + "}" + part[2:]
    return head


def _int_or_raise(text: str) -> int:
    return int(text)


def _slash_to_frac(text: str) -> str:
    """`3/4` -> `\\frac{3}{4}` when both sides are plain integers written as Python writes them."""
    parts = text.split("/")
    if len(parts) != 2:
        return text
    try:
        top, bottom = _int_or_raise(parts[0]), _int_or_raise(parts[1])
    except ValueError:
        return text
    return f"\\frac{{{top}}}{{{bottom}}}" if text == f"{top}/{bottom}" else text


def _spelling_steps(text: str) -> str:
    for old, new in (("\n", ""), ("\\!", ""), ("\\\\", "\\"), ("tfrac", "frac"), ("dfrac", "frac"), ("\\left", ""),
                     ("\\right", ""), ("^{\\circ}", ""), ("^\\circ", ""), ("\\$", "")):
        text = text.replace(old, new)
    if "\\text{ " in text:  # a unit after the number; more than one is not understood
        head, *rest = text.split("\\text{ ")
        if len(rest) != 1:
            raise _KeepAsIs
        text = head
    text = text.replace("\\%", "").replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    text = "0" + text if text[0] == "." else text
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:  # "x = 3" -> "3"
        text = sides[1]
    text = _split_one_char_sqrt(text) if "\\sqrt" in text else text
    text = _split_one_char_frac(text.replace(" ", ""))
    text = "\\frac{1}{2}" if text == "0.5" else text
    return _slash_to_frac(text)


def spelling_form(answer: str) -> str:
    """The string both sides are compared as first (the MATH dataset's normalization, as SLIME applies it)."""
    answer = answer.strip()
    match = _ENCLOSING_TEXT.search(answer)
    if match:
        answer = match.group("text").strip()
    try:
        return _spelling_steps(answer)
    except (_KeepAsIs, IndexError):
        return answer


# ---- second comparison: text for sympy ------------------------------------------------------------
def _strip_thousands(text: str) -> str:
    while True:  # each pass removes every other separator of "1,000,000"
        stripped = _THOUSANDS.sub(r"\1\3\4", text)
        if stripped == text:
            return text
        text = stripped


def _near_int(value: float) -> bool:
    try:
        return abs(value - int(round(value))) <= 1e-7
    except (OverflowError, ValueError):  # inf, nan
        return False


def _float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _str_is_int(text: str) -> bool:
    value = _float_or_none(_strip_thousands(text))
    return value is not None and _near_int(value)


_LATEX_TO_TEXT = None


def latex_to_text(expr: str) -> str:
    """LaTeX to plain text through pylatexenc, the library SLIME's grader uses (its output decides what sympy sees)."""
    global _LATEX_TO_TEXT
    if _LATEX_TO_TEXT is None:
        from pylatexenc import latex2text

        logging.getLogger("pylatexenc").setLevel(logging.ERROR)  # it warns on every \frac without arguments
        _LATEX_TO_TEXT = latex2text.LatexNodes2Text()
    return str(_LATEX_TO_TEXT.latex_to_text(expr))


def _latex_for_sympy(expr: str) -> str:
    expr = expr.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac").replace("\\frac", " \\frac")
    expr = latex_to_text(expr)  # a space before \frac: "3\frac{1}{2}" reads "3 1/2", a mixed number
    for old, new in _UNICODE_TO_SYMPY:
        expr = expr.replace(old, new)
    return expr.strip()


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
    if expr and expr[0] == "{" and expr[-1] == "}":
        expr = expr[1:-1]
    expr = re.sub(r",\\! *", "", expr)
    value = _float_or_none(expr)
    if value is not None and _near_int(value):
        expr = str(int(round(value)))
    if "\\" in expr:
        try:
            expr = _latex_for_sympy(expr)
        except Exception:  # noqa: BLE001 - as SLIME's grader: LaTeX it cannot read stays as written
            pass
    expr = _MIXED_NUMBER.sub(r"\1+\2", re.sub("- *", "-", expr))  # "7 3/4" is 7+3/4
    expr = expr.replace(" ", "").replace("{", "").replace("}", "").lower()
    if _str_is_int(expr):
        expr = str(int(float(expr.replace(",", ""))))
    return expr


def _elements(expr: str) -> list[str]:
    """A tuple or interval "(a,b]" splits into its elements; anything else is one element."""
    expr = _strip_thousands(expr)
    if not expr:
        return []
    if len(expr) > 2 and expr[0] in _TUPLE_CHARS and expr[-1] in _TUPLE_CHARS and not any(
            c in expr[1:-1] for c in _TUPLE_CHARS):
        return [part.strip() for part in expr[1:-1].split(",")]
    return [expr]


def _sympy_allowed(expr: str) -> bool:
    letters = {c for c in expr.replace("sqrt", "").replace("frac", "") if c.isalpha()}
    return (len(letters) <= 2 and "^{" not in expr and "^(" not in expr
            and not any(bad.search(expr) for bad in _BAD_POWERS))


def _sympy_equal(truth: str, given: str) -> bool:
    expr = f"({truth})-({given})"
    if not _sympy_allowed(expr):
        return False
    try:
        import sympy
        from sympy.parsing import sympy_parser

        names = {k: v for k, v in vars(sympy).items() if not k.startswith("_")}  # sympy names, no builtins
        transformations = (*sympy_parser.standard_transformations, sympy_parser.implicit_multiplication_application)
        parsed = sympy_parser.parse_expr(expr.replace("^", "**"), local_dict={},
                                         global_dict={"__builtins__": {}, **names}, transformations=transformations)
        return bool(sympy.simplify(parsed) == 0)
    except Exception:  # noqa: BLE001 - as SLIME's grader: what sympy cannot read is not equal
        return False


def _element_equal(truth: str, given: str) -> bool:
    if _FRACTION.search(truth) and _FRACTION.search(given):  # unreduced fractions do not count
        return truth == given
    if _str_is_int(truth) != _str_is_int(given):  # an integer answer must match exactly
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
    if not label:
        return 0.0
    truth = last_box(label) if "\\boxed" in label else label
    given = last_box(response)
    if truth is None or given is None:
        return 0.0
    if spelling_form(given) == spelling_form(truth):
        return 1.0
    return 1.0 if symbolic_equal(given, truth) else 0.0
