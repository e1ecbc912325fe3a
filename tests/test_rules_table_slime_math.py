"""slime_math's rules as tables (issue 33): each step of SLIME's math grader, both sides of each rule.

A seeded bug in the grader gives a right answer 0.0 or a wrong one 1.0, and the run learns the wrong thing
without a word, so each rule is pinned on its own: the answer taken out of the last `\\boxed{`, each spelling
rewrite of the first comparison, each rewrite of the text sympy is given, the tuple split, sympy's guards and the
element checks, then whole rewards of real answer shapes. Every row was checked against SLIME's own grader
(grade_answer_verl and the normalizations under it, at 624b824); tests/test_reward_slime_corpus.py holds the
whole differential corpus, too slow to run for each seeded bug.
"""

from __future__ import annotations

import pytest

from rlcheck.reward import slime_math as sm

LAST_BOX = [
    # text, the answer taken out of it
    ("\\boxed{7}", "7"),
    ("so \\boxed{36}.", "36"),
    ("\\boxed{\\frac{1}{\\sqrt{2}}}", "\\frac{1}{\\sqrt{2}}"),  # nested braces are counted
    ("\\boxed{1} then \\boxed{2}", "2"),  # the last box
    ("\\boxed{1} then \\boxed {2}", None),  # the last is not spelled \boxed{
    ("\\boxed{2} then \\boxed", None),  # the last has no braces
    ("\\boxed{2", None),  # open
    ("\\boxed{{2}", None),
    ("\\boxed{{2}}", "{2}"),
    ("\\boxed{2}}", "2"),
    ("\\boxed}{2}", None),  # a closing brace first: the count never comes back to zero at a close
    ("\\boxed{}", ""),
    ("\\fbox{7}", None),  # never read
    ("7", None),
    ("", None),
    ("\\boxedx{7}", None),
]


@pytest.mark.parametrize(("text", "answer"), LAST_BOX)
def test_rules_slime_math_last_box(text: str, answer: str | None) -> None:
    assert sm.last_box(text) == answer


SPELLING = [
    # answer, its spelling form (MATH-dataset normalization)
    ("7", "7"),
    ("  7  ", "7"),
    ("\\text{ 0.5 }", "\\frac{1}{2}"),  # an enclosing \text{} is taken off, then its content stripped
    ("\\text{yes}", "yes"),
    ("\\text{a}\\text{b}", "a}\\text{b"),  # the enclosing match is the shortest to the last brace
    ("x\\text{yes}", "x\\text{yes}"),
    ("1\n2", "12"),
    ("1\\!000", "1000"),
    ("\\\\frac{1}{3}", "\\frac{1}{3}"),
    ("\\tfrac{1}{3}", "\\frac{1}{3}"),
    ("\\dfrac{1}{3}", "\\frac{1}{3}"),
    ("\\left(1,2\\right)", "(1,2)"),
    ("90^{\\circ}", "90"),
    ("90^\\circ", "90"),
    ("\\$5", "5"),
    ("5\\text{ cm}", "5"),  # a unit after the number
    ("5\\text{cm}", "5\\text{cm}"),  # no space: not a unit
    ("5\\text{ cm}\\text{ m}", "5\\text{ cm}\\text{ m}"),  # two units: the answer as it came
    ("50\\%", "50"),
    ("x = .5", "\\frac{1}{2}"),
    ("\\frac{.5}{3}", "\\frac{0.5}{3}"),
    (".5", "\\frac{1}{2}"),
    (".25", "0.25"),
    ("0.5", "\\frac{1}{2}"),
    ("0.50", "0.50"),
    ("\\$", ""),
    ("", ""),
    ("x=3", "3"),
    ("xy=3", "3"),
    ("=3", "3"),
    ("abc=3", "abc=3"),
    ("x=3=4", "x=3=4"),
    ("\\sqrt2", "\\sqrt{2}"),
    ("2\\sqrt23", "2\\sqrt{2}3"),
    ("\\sqrt{2}", "\\sqrt{2}"),
    ("\\sqrt2+\\sqrt3", "\\sqrt{2}+\\sqrt{3}"),
    ("\\sqrt 2", "\\sqrt{}2"),  # the space is the one character, then spaces go
    ("\\sqrt", "\\sqrt"),
    ("2\\sqrt", "2\\sqrt"),
    ("\\frac12", "\\frac{1}{2}"),
    ("\\frac1{7}", "\\frac{1}{7}"),
    ("\\frac{1}{7}", "\\frac{1}{7}"),
    ("\\frac12+\\frac34", "\\frac{1}{2}+\\frac{3}{4}"),
    ("a \\frac1", "a\\frac1"),  # under two characters after \frac: that text, spaces gone
    ("\\frac12+\\frac1", "\\frac12+\\frac1"),
    (" \\dfrac ", "\\dfrac"),  # nothing after \frac: the answer as it came, stripped
    ("1 + 2", "1+2"),
    ("3/4", "\\frac{3}{4}"),
    (" 3 / 4", "\\frac{3}{4}"),
    ("-3/4", "\\frac{-3}{4}"),
    ("03/4", "03/4"),  # not written as Python writes the integer
    ("a/4", "a/4"),
    ("3/b", "3/b"),
    ("1/2/3", "1/2/3"),
]


@pytest.mark.parametrize(("answer", "form"), SPELLING)
def test_rules_slime_math_spelling_form(answer: str, form: str) -> None:
    assert sm.spelling_form(answer) == form


SYMBOLIC = [
    # answer, the text sympy is given
    ("7", "7"),
    ("\\text{5}", "5"),
    ("50\\%", "50"),
    ("50%", "50"),
    ("\\$5", "5"),
    ("$5$", "5"),
    ("1 or 2", "1,2"),
    ("1 and 2", "1,2"),
    ("2 million", "2*10^6"),
    ("2 billion", "2*10^9"),
    ("2 trillion", "2*10^12"),
    ("5 cm", "5"),
    ("5 cm^2", "5"),
    ("5 centimeters", "5"),
    ("5 meters", "5"),
    ("5 inches", "5"),
    ("3 degrees", "3"),
    ("4 minutes", "4"),
    ("2 feet", "2"),
    ("1 foot", "1"),
    ("5 miles", "5"),
    ("5 seconds", "5"),
    ("5 hours", "5"),
    ("5 days", "5"),
    ("5 weeks", "5"),
    ("5 months", "5"),
    ("5 years", "5"),
    ("5 yards", "5"),
    ("5 hour^2", "5"),
    ("90^\\circ", "90"),
    ("90^ \\circ", "90"),
    ("{5}", "5"),
    ("{5.0}", "5"),
    ("{5", "5"),  # one brace: not enclosing (the braces go later anyway)
    ("5}", "5"),
    ("{1}{2}", "12"),
    ("1,\\!000", "1000"),
    ("5.0", "5"),
    ("1e3", "1000"),
    ("5.5", "5.5"),
    ("inf", "inf"),
    ("1e400", "1e400"),
    ("nan", "nan"),
    ("\\frac{1}{2}", "1/2"),
    ("3\\frac{1}{2}", "3+1/2"),  # a mixed number is a sum
    ("\\dfrac{3}{4}", "3/4"),
    ("\\tfrac{3}{4}", "3/4"),
    ("3\\tfrac{1}{2}", "3+1/2"),  # each spelling of \frac reads as a mixed number
    ("3\\dfrac{1}{2}", "3+1/2"),
    ("\\sqrt{2}", "sqrt(2)"),
    ("\\pi", "pi"),
    ("\\infty", "inf"),
    ("[1,2]\\cup[3,4]", "[1,2]u[3,4]"),
    ("2\\cdot3", "2*3"),
    ("2\\times3", "2*3"),
    ("- 5", "-5"),
    ("7 3/4", "7+3/4"),
    ("X + Y", "x+y"),
    ("1,000", "1000"),
    ("1,000,000", "1000000"),
    ("5.00000000001", "5"),
    ("(1, 2)", "(1,2)"),
]


@pytest.mark.parametrize(("answer", "form"), SYMBOLIC)
def test_rules_slime_math_symbolic_form(answer: str, form: str) -> None:
    assert sm.symbolic_form(answer) == form


ELEMENTS = [
    # symbolic form, its elements
    ("", []),
    ("5", ["5"]),
    ("(1,2)", ["1", "2"]),
    ("[1,2)", ["1", "2"]),
    ("(1, 2 )", ["1", "2"]),
    ("(1)", ["1"]),
    ("()", ["()"]),
    ("((1,2),3)", ["((1,2),3)"]),
    ("(1,2", ["(1,2"]),
    ("1,2)", ["1,2)"]),
    ("1,2", ["1,2"]),
    ("X1,2X", ["X1,2X"]),  # only ( ) [ ] enclose
    ("(1,000,2)", ["1000", "2"]),
]


@pytest.mark.parametrize(("expr", "elements"), ELEMENTS)
def test_rules_slime_math_elements(expr: str, elements: list[str]) -> None:
    assert sm._elements(expr) == elements


STRIP_THOUSANDS = [("1,000", "1000"), ("1,000,000", "1000000"), ("1,00", "1,00"), ("1,0000", "1,0000"),
                   ("a,000", "a,000"), ("1,000a", "1000a"), ("1,2", "1,2")]


@pytest.mark.parametrize(("text", "stripped"), STRIP_THOUSANDS)
def test_rules_slime_math_strip_thousands(text: str, stripped: str) -> None:
    assert sm._strip_thousands(text) == stripped


STR_IS_INT = [("5", True), ("5.0", True), ("5.00000009", True), ("5.0000001", False), ("4.99999991", True),
              ("4.9999999", False), ("1,000", True), ("x", False), ("inf", False), ("nan", False), ("", False),
              ("-3", True)]


@pytest.mark.parametrize(("text", "is_int"), STR_IS_INT)
def test_rules_slime_math_str_is_int(text: str, is_int: bool) -> None:
    assert sm._str_is_int(text) is is_int


SYMPY_ALLOWED = [
    ("x+y", True),
    ("x+y+z", False),  # three unknown letters
    ("sqrt(x)+y", True),  # sqrt and frac are no unknowns
    ("frac(x)+y", True),
    ("2^3", True),
    ("2^{3}", False),
    ("2^(3)", False),
    ("2^12", False),  # a power of two digits
    ("2^3^4", False),
    ("2^3+4^5", True),
]


@pytest.mark.parametrize(("expr", "allowed"), SYMPY_ALLOWED)
def test_rules_slime_math_sympy_guards(expr: str, allowed: bool) -> None:
    assert sm._sympy_allowed(expr) is allowed


ELEMENT_EQUAL = [
    # truth, given (both symbolic forms), equal
    ("1/2", "2/4", False),  # unreduced fractions do not count
    ("1/2", "1/2", True),
    ("-1/2", "-1/2", True),
    ("1/2", "0.5", True),  # one side no fraction: sympy decides
    ("2", "4/2", False),  # an integer must match exactly
    ("4/2", "2", False),
    ("2", "2.0", True),
    ("(x+1)^2", "x^2+2x+1", True),
    ("sqrt(8)", "2sqrt(2)", True),  # implicit multiplication
    ("x+y+z", "z+y+x", False),  # past the guards: never given to sympy
    ("1/3", "0.333", False),
    ("x+", "x", False),  # sympy cannot read it: not equal
    ("x", "y", False),
]


@pytest.mark.parametrize(("truth", "given", "equal"), ELEMENT_EQUAL)
def test_rules_slime_math_element_equal(truth: str, given: str, equal: bool) -> None:
    assert sm._element_equal(truth, given) is equal


SYMBOLIC_EQUAL = [
    # given, truth, equal
    ("5", "5", True),
    ("\\$", "5", False),  # nothing given
    ("\\$", "(1,2)", False),
    ("(1,2)", "[1,2]", False),  # (a,b) is not [a,b]
    ("(1,2]", "(1,2)", False),
    ("[1,2)", "(1,2)", False),
    ("(1,2.0)", "(1,2)", True),
    ("(1,2,3)", "(1,2)", False),
    ("(2,1)", "(1,2)", False),
    ("(5)", "5", True),  # one element: the brackets are not compared
    ("(1, 2)", "1,2", False),
]


@pytest.mark.parametrize(("given", "truth", "equal"), SYMBOLIC_EQUAL)
def test_rules_slime_math_symbolic_equal(given: str, truth: str, equal: bool) -> None:
    assert sm.symbolic_equal(given, truth) is equal


REWARDS = [
    # response, label, reward
    ("\\boxed{7}", "7", 1.0),
    ("\\boxed{7}", "8", 0.0),
    ("\\boxed{7}", "", 0.0),  # no label
    ("\\boxed{}", "", 0.0),
    ("the answer is 7", "7", 0.0),  # no box
    ("\\fbox{7}", "7", 0.0),
    ("\\boxed{7}", "\\boxed{7}", 1.0),  # a boxed label is unboxed
    ("\\boxed{7}", "so \\boxed{7}.", 1.0),
    ("\\boxed{7}", "\\boxed{8}", 0.0),
    ("\\boxed{7}", "\\boxed{7", 0.0),  # a label whose box is open has no answer
    ("\\boxed{\\boxed{7}}", "7", 1.0),  # the last \boxed is the inner one
    ("First \\boxed{34}. Wait: \\boxed{36}.", "36", 1.0),
    ("First \\boxed{36}. Wait: \\boxed{34}.", "36", 0.0),
    ("\\boxed{0.5}", "\\frac{1}{2}", 1.0),
    ("\\boxed{\\frac12}", "1/2", 1.0),
    ("\\boxed{\\frac{5}{10}}", "\\frac{1}{2}", 0.0),  # unreduced
    ("\\boxed{3\\frac{1}{2}}", "\\frac{7}{2}", 1.0),  # mixed number
    ("\\boxed{7/2}", "3.5", 1.0),
    ("\\boxed{50\\%}", "50", 1.0),
    ("\\boxed{5 \\text{ cm}}", "5", 1.0),
    ("\\boxed{5 meters}", "5", 1.0),
    ("\\boxed{90^\\circ}", "90", 1.0),
    ("\\boxed{x = 3}", "3", 1.0),
    ("\\boxed{-3}", "-3", 1.0),
    ("\\boxed{-3}", "3", 0.0),
    ("\\boxed{3}", "-3", 0.0),
    ("\\boxed{1,000}", "1000", 1.0),
    ("\\boxed{1\\,000}", "1000", 0.0),
    ("\\boxed{(x+1)^2}", "x^2+2x+1", 1.0),
    ("\\boxed{x^2+2x+1}", "(x+1)^2", 1.0),
    ("\\boxed{(1, 2)}", "(1,2)", 1.0),
    ("\\boxed{[1, 2]}", "(1,2)", 0.0),
    ("\\boxed{2\\sqrt{2}}", "\\sqrt{8}", 1.0),
    ("\\boxed{\\pi}", "\\pi", 1.0),
    ("\\boxed{2}", "\\frac{4}{2}", 0.0),  # an integer must match exactly
    ("\\boxed{\\text{yes}}", "yes", 1.0),
    ("\\boxed{2 million}", "2000000", 0.0),  # 2*10^6 is no integer as written: no exact match
    ("\\boxed{2 million}", "2*10^6", 1.0),
    ("\\boxed{\\$5}", "5", 1.0),
    ("\\boxed{7.}", "7", 1.0),
    ("\\boxed{\\left( 1,2 \\right)}", "(1,2)", 1.0),
]


@pytest.mark.parametrize(("response", "label", "reward"), REWARDS)
def test_rules_slime_math_rewards(response: str, label: str, reward: float) -> None:
    assert sm.score_slime_math(response, label) == reward


def test_rules_slime_math_latex_reader_is_made_once_and_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    monkeypatch.setattr(sm, "_LATEX_TO_TEXT", None)
    quiet = logging.getLogger("pylatexenc")
    monkeypatch.setattr(quiet, "level", logging.NOTSET)
    assert sm.latex_to_text("\\frac{1}{2}") == "1/2"
    reader = sm._LATEX_TO_TEXT
    assert reader is not None and quiet.level == logging.ERROR  # it warns on every \frac without arguments
    assert sm.latex_to_text("\\pi") == "\u03c0" and sm._LATEX_TO_TEXT is reader
