"""SLIME's metric dict lines as tables: which lines are metric lines (SLIME's `f"{name} {id}: {dict}"` behind Ray's
prefix and SLIME's logger), how each value's repr is read (negative numbers, nan/inf, numpy 2 and tensor reprs,
text), where a cut or malformed dict stops, and the bounds on hostile input (rlcheck.e2e.slime_metrics, pure)."""

from __future__ import annotations

import math

import pytest

from rlcheck.e2e.slime_metrics import MAX_KEYS, MAX_METRIC_CHARS, parse_metrics

PREFIX = "(MegatronTrainRayActor pid=3309, ip=10.1.0.6) [2026-07-01 10:06:01] model.py:660 - "


@pytest.mark.parametrize(("line", "what", "index", "role"), [
    (PREFIX + "step 0: {'train/loss': 0.1}", "step", 0, ""),
    (PREFIX + "critic-step 12: {'train/critic-loss': 0.1}", "step", 12, "critic-"),
    ("rollout 3: {'rollout/raw_reward': -0.5}", "rollout", 3, ""),  # at the line's start
    ("[x] perf 999999999999: {'a': 1}", "perf", 999999999999, ""),  # twelve digits
    ("x\teval 1: {'eval/aime': 0.3}", "eval", 1, ""),
    ("- passrate 2: {'passrate/pass@1': 0.5}", "passrate", 2, ""),
    ("] multi_turn 4: {'multi_turn/rounds': 2.0}", "multi_turn", 4, ""),
    # Miles' process names sit in the prefix's bracket, the message is SLIME's
    ("[2026-12-01 09:25:16.123 actor_cell0_rank3] model.py:918 - step 7: {'train/loss': 0.2}", "step", 7, ""),
])
def test_rules_table_e2e_slime_metrics_heads(line, what, index, role):
    parsed = parse_metrics(line)
    assert parsed is not None and (parsed.what, parsed.index, parsed.role) == (what, index, role)


@pytest.mark.parametrize("line", [
    "xrollout 3: {'a': 1}",  # glued to a word
    "rollout  3: {'a': 1}", "rollout 3 : {'a': 1}", "rollout 3:{'a': 1}",
    "perf 1234567890123: {'a': 1}",  # thirteen digits
    "step -1: {'a': 1}", "step x: {'a': 1}", "steps 1: {'a': 1}", "Rollout 1: {'a': 1}",
    "rollout 3: {}garbage".replace("{}", "["),
    "rollout 3: {a: 1}",  # no quoted key and no closing brace: no dict read
    "rollout 3: {",  # nothing after the brace
    "rollout 3: {'a' 1.0}",  # no ': ' after the key
    "rollout 3: {'a",  # the key never closes
    "rollout 3: {X'a': 1}", "rollout 3: {XaX: 1}",  # a word before the quote, a letter for a quote
    "Timer train end (elapsed: 1.0s)",
])
def test_rules_table_e2e_slime_metrics_not_metric_lines(line):
    assert parse_metrics(line) is None


@pytest.mark.parametrize(("text", "value"), [
    ("0.5", 0.5), ("-0.5", -0.5), ("-0.0", -0.0), ("1e-08", 1e-8), ("-1e-10", -1e-10), ("3", 3.0), (" 2.5 ", 2.5),
    ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("1e999", math.inf),
    ("np.float64(-0.03)", -0.03), ("numpy.float32(0.25)", 0.25), ("np.int64(7)", 7.0), ("float(2)", 2.0),
    ("np.uint64(3)", 3.0), ("np.float16(nan)", math.nan), ("int32(4)", 4.0),
    ("tensor(-0.25, device='cuda:0')", -0.25), ("tensor(0.5)", 0.5), ("tensor(nan, device='cuda:0')", math.nan),
    ("True", "True"), ("False", "False"), ("None", "None"), ("'x, y'", "'x, y'"), ("[1, 2]", "[1, 2]"),
    ("np.float64()", ""), ("tensor()", ""), ("tensor( )", ""),  # wrapped nothing: no number, the empty text
    ("np.float64(1, 2)", "np.float64(1, 2)"), ("np.bool_(True)", "np.bool_(True)"), ("decimal(1)", "decimal(1)"),
])
def test_rules_table_e2e_slime_metrics_values(text, value):
    parsed = parse_metrics(f"step 0: {{'k': {text}, 'after': 1.0}}")
    assert parsed is not None and parsed.complete and parsed.values["after"] == 1.0
    got = parsed.values["k"]
    if isinstance(value, float) and math.isnan(value):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("value", "number", "nonfinite"), [
    ("0.5", 0.5, False), ("-0.5", -0.5, False), ("nan", None, True), ("-inf", None, True), ("'x'", None, False),
    ("None", None, False),
])
def test_rules_table_e2e_slime_metrics_number_and_nonfinite(value, number, nonfinite):
    parsed = parse_metrics(f"rollout 0: {{'rollout/raw_reward': {value}}}")
    assert parsed.number("rollout/raw_reward") == number and parsed.number("missing") is None
    assert parsed.nonfinite == (["rollout/raw_reward"] if nonfinite else [])


@pytest.mark.parametrize(("body", "values", "complete"), [
    ("{}", {}, True),
    ("{ }", {}, True),
    ('{"a": 1.0}', {"a": 1.0}, True),  # double-quoted keys
    ("{'a': 1.0,}", {"a": 1.0}, True),
    ("{'a': 1.0, 'b': 2.0", {"a": 1.0, "b": 2.0}, False),  # cut: what was read is kept
    ("{'a': 1.0, b: 2.0}", {"a": 1.0}, False),  # an unquoted key stops the read
    ("{'a': (1, 2), 'b': 2.0}", {"a": "(1, 2)", "b": 2.0}, True),  # parentheses nest
    ("{'a': [1, [2, 3]], 'b': -1.0}", {"a": "[1, [2, 3]]", "b": -1.0}, True),
    ("{'a': 'x}, y', 'b': 1.0}", {"a": "'x}, y'", "b": 1.0}, True),  # quotes hide , and }
    ("{'a': 1.0, 'b': 'never closed, 'c': 2.0}", {"a": 1.0, "b": "'never closed, 'c': 2.0}"}, False),
    ("{'a': 1.0} trailing text", {"a": 1.0}, True),
    ("{'a': 1.0, ", {"a": 1.0}, False),  # cut right after a separator: nothing past the end is read
    ("{'a': 1.0,", {"a": 1.0}, False),
    ("{'': 1.0, 'b': 2.0}", {"": 1.0, "b": 2.0}, True),  # an empty key
    ("{'a': '', 'b': 2.0}", {"a": "''", "b": 2.0}, True),  # an empty quoted value
    ("{'a': X, 'b': 2.0}", {"a": "X", "b": 2.0}, True),  # a bare word: no quote, no bracket, no separator
    ("{'a': (X, 1), 'b': 2.0}", {"a": "(X, 1)", "b": 2.0}, True),
    ("{'a': [(1, 2), (3, 4)], 'b': 5.0}", {"a": "[(1, 2), (3, 4)]", "b": 5.0}, True),  # closed, then a comma, nested
    ("{'a': ((1), 2), 'b': 5.0}", {"a": "((1), 2)", "b": 5.0}, True),
])
def test_rules_table_e2e_slime_metrics_dict_shapes(body, values, complete):
    parsed = parse_metrics("perf 0: " + body)
    assert parsed is not None and parsed.complete is complete
    assert {k: v for k, v in parsed.values.items()} == values


@pytest.mark.parametrize(("keys", "kept", "complete"), [(MAX_KEYS - 1, MAX_KEYS - 1, True), (MAX_KEYS, MAX_KEYS, False),
                                                        (MAX_KEYS + 5, MAX_KEYS, False)])
def test_rules_table_e2e_slime_metrics_keys_are_bounded(keys, kept, complete):
    parsed = parse_metrics("step 0: {" + ", ".join(f"'k{i}': {i}" for i in range(keys)) + "}")
    assert len(parsed.values) == kept and parsed.complete is complete
    assert parsed.values[f"k{kept - 1}"] == kept - 1


@pytest.mark.parametrize(("pad", "found"), [(MAX_METRIC_CHARS - len("step 0: {'a': 1.0}"), True),
                                            (MAX_METRIC_CHARS - len("step 0: {'a': 1.0"), True),  # cut, kept
                                            (MAX_METRIC_CHARS - len("step 0: {'a"), False),  # no value read
                                            (MAX_METRIC_CHARS - len("step 0: "), False)])
def test_rules_table_e2e_slime_metrics_head_must_be_in_the_first_chars(pad, found):
    parsed = parse_metrics(" " * pad + "step 0: {'a': 1.0}")
    assert (parsed is not None) is found


def test_rules_table_e2e_slime_metrics_dict_is_read_to_its_bound():
    filler = "x" * MAX_METRIC_CHARS
    parsed = parse_metrics(f"step 0: {{'a': 1.0, 'pad': '{filler}', 'late': 2.0}}")
    assert parsed.values["a"] == 1.0 and "late" not in parsed.values and not parsed.complete
