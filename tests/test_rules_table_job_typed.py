"""Rule table for reading untrusted job documents by type (rlcheck.job.typed): each reader's value on both sides of
its type and bound, and the whole JobFormatError a user reads for every wrong shape (never a crash); YAML bounded
in size and refused with an alias."""

from __future__ import annotations

import sys

import pytest
import yaml

from rlcheck.job import typed
from rlcheck.job.submit import JobFormatError

W = "job.json: job"


def _refused(call, *args, **kwargs) -> str:
    with pytest.raises(JobFormatError) as exc:
        call(*args, **kwargs)
    return str(exc.value)


@pytest.mark.parametrize(("doc", "kind", "default", "value"), [
    ({"k": 3}, int, None, 3),
    ({"k": 0}, int, 5, 0),  # a falsy value is a value, not absent
    ({"k": ""}, str, "d", ""),
    ({"k": []}, list, None, []),
    ({"k": None}, int, 5, 5),  # null is absent
    ({}, str, "d", "d"),
    ({}, str, None, None),
    ({"k": True}, bool, None, True),
    ({"k": False}, (bool, int), None, False),
    ({"k": "x"}, (int, str), None, "x"),
    ({"k": {"a": 1}}, dict, None, {"a": 1}),
])
def test_get_returns_a_value_of_its_kind_and_the_default_for_none_or_absent(doc, kind, default, value):
    assert typed.get(doc, "k", kind, W, default=default) == value


@pytest.mark.parametrize(("doc", "kind", "text"), [
    ([1], int, "job.json: job: expected a mapping, found list"),
    ("k", int, "job.json: job: expected a mapping, found str"),
    (None, int, "job.json: job: expected a mapping, found NoneType"),
    # a bool is an int to isinstance, never to a reader that did not ask for one
    ({"k": True}, int, "job.json: job.k=True: expected an integer"),
    ({"k": False}, (int, str), "job.json: job.k=False: expected an integer or a string"),
    ({"k": "3"}, int, "job.json: job.k: expected an integer, found str"),
    ({"k": 3}, str, "job.json: job.k: expected a string, found int"),
    ({"k": 3}, dict, "job.json: job.k: expected a mapping, found int"),
    ({"k": {}}, list, "job.json: job.k: expected a list, found dict"),
    ({"k": "x"}, (int, float), "job.json: job.k: expected an integer or float, found str"),
    ({"k": 1.5}, (dict, list, str, int), "job.json: job.k: expected a mapping or a list or a string or an integer, "
                                         "found float"),
])
def test_get_refuses_a_wrong_type_naming_the_field_and_the_kinds(doc, kind, text):
    assert _refused(typed.get, doc, "k", kind, W) == text


@pytest.mark.parametrize(("doc", "required", "value"), [
    ({"k": ["a", "b"]}, False, ["a", "b"]),
    ({"k": ["a"]}, True, ["a"]),
    ({"k": []}, False, []),
    ({}, False, []),
    ({"k": None}, False, []),
])
def test_strings_reads_a_list_of_strings(doc, required, value):
    assert typed.strings(doc, "k", W, required=required) == value


def test_strings_is_optional_unless_required():
    assert typed.strings({}, "k", W) == []


@pytest.mark.parametrize(("doc", "required", "text"), [
    ({}, True, "job.json: job.k: required, a non-empty list of strings"),
    ({"k": None}, True, "job.json: job.k: required, a non-empty list of strings"),
    ({"k": []}, True, "job.json: job.k: a non-empty list of strings (item None: none)"),
    ({"k": [1, "a"]}, False, "job.json: job.k: a non-empty list of strings (item 0: int)"),
    ({"k": ["a", None]}, True, "job.json: job.k: a non-empty list of strings (item 1: NoneType)"),
    ({"k": ["a", "b", ["c"]]}, False, "job.json: job.k: a non-empty list of strings (item 2: list)"),
    # a string is refused, never split into its characters
    ({"k": "python3 train.py"}, False, "job.json: job.k: expected a list, found str"),
])
def test_strings_refuses_what_is_no_list_of_strings(doc, required, text):
    assert _refused(typed.strings, doc, "k", W, required=required) == text


@pytest.mark.parametrize(("doc", "value"), [
    ({}, {}),
    ({"k": None}, {}),
    ({"k": {"A": "1", "B": 2, "C": 0.5, "D": ""}}, {"A": "1", "B": "2", "C": "0.5", "D": ""}),
])
def test_string_map_reads_names_to_text(doc, value):
    assert typed.string_map(doc, "k", W) == value


@pytest.mark.parametrize(("doc", "text"), [
    ({"k": {"A": "1", "B": [1]}}, "job.json: job.k['B']: expected a string value, found list"),
    ({"k": {"A": None}}, "job.json: job.k['A']: expected a string value, found NoneType"),
    ({"k": {"A": {"x": 1}}}, "job.json: job.k['A']: expected a string value, found dict"),
    ({"k": {1: "a"}}, "job.json: job.k[1]: expected a string value, found str"),
    ({"k": ["A=1"]}, "job.json: job.k: expected a mapping, found list"),
])
def test_string_map_refuses_a_value_that_is_no_text_naming_its_key(doc, text):
    assert _refused(typed.string_map, doc, "k", W) == text


@pytest.mark.parametrize(("doc", "default", "value"), [
    ({"k": 0}, None, 0),
    ({"k": 8}, None, 8),
    ({"k": "16"}, None, 16),  # as Kubernetes quantities are written
    ({"k": " 2 "}, None, 2),
    ({"k": "0"}, 4, 0),
    ({}, None, None),
    ({}, 1, 1),
    ({"k": None}, 3, 3),
])
def test_count_reads_a_whole_number_at_or_above_zero(doc, default, value):
    assert typed.count(doc, "k", W, default=default) == value


@pytest.mark.parametrize(("value", "text"), [
    (-1, "job.json: job.k=-1: expected >= 0"),
    ("-1", "job.json: job.k='-1': expected a whole number"),
    ("two", "job.json: job.k='two': expected a whole number"),
    ("", "job.json: job.k='': expected a whole number"),
    ("1.5", "job.json: job.k='1.5': expected a whole number"),
    ("²", "job.json: job.k='²': expected a whole number"),  # a digit to str.isdigit, not to int()
    ("٣", "job.json: job.k='٣': expected a whole number"),
    (True, "job.json: job.k=True: expected an integer or a string"),
    (2.0, "job.json: job.k: expected an integer or a string, found float"),
])
def test_count_refuses_what_is_no_whole_number(value, text):
    assert _refused(typed.count, {"k": value}, "k", W) == text


def test_count_refuses_a_negative_default_too():
    assert _refused(typed.count, {}, "k", W, default=-2) == "job.json: job.k=-2: expected >= 0"


@pytest.mark.parametrize(("text", "docs"), [
    ("kind: RayJob\nspec: {a: 1}\n", [{"kind": "RayJob", "spec": {"a": 1}}]),
    ("---\na: 1\n---\n---\nb: [x]\n", [{"a": 1}, {"b": ["x"]}]),  # empty documents dropped
    ("", []),
    ("# only a comment\n", []),
    ("a: '&x *x'\n", [{"a": "&x *x"}]),  # alias marks inside a string are text
])
def test_load_yaml_all_returns_every_document(text, docs):
    assert typed.load_yaml_all(text, "job.yaml", "the RayJob") == docs


def test_load_yaml_all_refuses_an_alias_naming_its_anchor():
    assert _refused(typed.load_yaml_all, "a: &big [1, 2]\nb: *big\n", "job.yaml", "the RayJob") == (
        "job.yaml: the RayJob uses a YAML alias (*big); rlcheck reads no aliases (a few lines of them can expand to "
        "gigabytes): write the values out")


@pytest.mark.parametrize("text", ["a: [1\n", "a: b: c\n", "\ud800: 1\n"])
def test_load_yaml_all_refuses_what_is_not_yaml_with_the_parsers_reason(text):
    try:
        list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        reason = str(exc)
    assert _refused(typed.load_yaml_all, text, "job.yaml", "runtimeEnvYAML") == (
        f"job.yaml: runtimeEnvYAML is not valid YAML ({reason})")


def test_load_yaml_all_refuses_a_text_over_the_cap_in_bytes():
    big = "a: " + "x" * (typed.YAML_CAP_BYTES - 3) + "\n"
    assert _refused(typed.load_yaml_all, big, "job.yaml", "the RayJob") == (
        "job.yaml: the RayJob is over 1 MiB; a manifest is kilobytes")


@pytest.mark.parametrize(("text", "over"), [
    ("a: 1234\n", False),  # 8 bytes: at the cap
    ("a: 12345\n", True),
    ("a: ééé\n", True),  # 7 characters, 10 bytes: bytes count, not characters
    ("a: é\n", False),
])
def test_load_yaml_all_cap_is_counted_in_utf8_bytes(monkeypatch, text, over):
    monkeypatch.setattr(typed, "YAML_CAP_BYTES", 8)
    if over:
        assert _refused(typed.load_yaml_all, text, "s", "w") == "s: w is over 0 MiB; a manifest is kilobytes"
    else:
        assert typed.load_yaml_all(text, "s", "w") == [yaml.safe_load(text)]


def test_load_yaml_all_without_pyyaml_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml raises ImportError
    assert _refused(typed.load_yaml_all, "a: 1\n", "job.yaml", "the RayJob") == (
        "job.yaml: reading a RayJob YAML needs PyYAML, which is not installed here (pip install pyyaml; or give the "
        "job as its launch script)")
