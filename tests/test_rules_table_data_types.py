"""Rule table for the type checks of rlcheck's TOML data files (rlcheck.data_types): which value each kind accepts
(a bool is no number, an empty list or table conforms, every element is looked at), the whole message of each
refusal (an unknown field, a wrong type naming the exact element, a missing required field, in that order), the
shown value cut at 80 characters, and a recorded reading with a key its dataclass lacks."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import data_types

# --- which value each kind accepts -----------------------------------------------------------------------------------

ACCEPTS = {
    "str": ["", "x"],
    "int": [0, -3, 2**70],
    "number": [0, 1.5, -2, float("inf")],
    "table": [{}, {"a": 1}],
    "list[str]": [[], ["a", ""]],
    "list[table]": [[], [{}, {"a": 1}]],
    "table[str]": [{}, {"a": "b"}],
    "table[number]": [{}, {"a": 1, "b": 2.5}],
}
REFUSES = {
    "str": [1, None, ["x"], b"x"],
    "int": [True, False, 1.0, "1", None],
    "number": [True, False, "1", None, [1]],
    "table": [[], "x", None, [{"a": 1}]],
    "list[str]": ["abc", ("a",), {"a": "b"}, ["a", 1], [None], None],
    "list[table]": [{"a": 1}, [{}, []], [1], "x", None],
    "table[str]": [["a"], {"a": 1}, {"a": "b", "c": None}, "x", None],
    "table[number]": [[1], {"a": True}, {"a": "1"}, {"a": 1, "b": None}, 1, None],
}


@pytest.mark.parametrize(("kind", "value"), [(k, v) for k, vs in ACCEPTS.items() for v in vs])
def test_a_value_of_its_kind_conforms(kind, value):
    assert data_types.conforms(value, kind) is True


@pytest.mark.parametrize(("kind", "value"), [(k, v) for k, vs in REFUSES.items() for v in vs])
def test_a_value_of_another_kind_does_not(kind, value):
    assert data_types.conforms(value, kind) is False


def test_every_kind_is_judged_and_an_unknown_kind_is_an_error():
    assert set(ACCEPTS) == set(REFUSES) == set(data_types.KINDS)
    with pytest.raises(ValueError) as exc:
        data_types.conforms("x", "list[int]")
    assert str(exc.value) == ("kind='list[int]': one of str, int, number, table, list[str], list[table], table[str], "
                              "table[number]")


# --- the refusals, word for word -------------------------------------------------------------------------------------

SPEC = {"name": "str", "gpus": "int", "hbm": "number", "meta": "table", "tags": "list[str]", "alt": "list[table]",
        "source": "table[str]", "floors": "table[number]"}


@pytest.mark.parametrize(("raw", "message"), [
    ({"name": 5}, "name=5: must be a string"),
    ({"gpus": 8.5}, "gpus=8.5: must be a whole number"),
    ({"gpus": True}, "gpus=True: must be a whole number"),
    ({"hbm": "141"}, "hbm='141': must be a number"),
    ({"meta": [1]}, "meta=[1]: must be a table"),
    ({"tags": "a"}, "tags='a': must be a list of strings"),
    ({"tags": ["a", "b", 3, 4]}, "tags[2]=3: must be a string"),
    ({"tags": [1]}, "tags[0]=1: must be a string"),
    # a table where a list was meant is wrong as a whole: `[alt]` for `[[alt]]`, never one of its values
    ({"tags": {"a": 1}}, "tags={'a': 1}: must be a list of strings"),
    ({"alt": {"field": "x"}}, "alt={'field': 'x'}: must be an array of tables ([[...]])"),
    ({"alt": [{}, "x"]}, "alt[1]='x': must be a table"),
    ({"source": {"a": "ok", "hbm_gib": 5}}, "source.hbm_gib=5: must be a string"),
    ({"source": ["a", 1]}, "source=['a', 1]: must be a table of strings"),
    ({"source": "x"}, "source='x': must be a table of strings"),
    ({"floors": {"a": 1, "b": "2", "c": "3"}}, "floors.b='2': must be a number"),
    ({"floors": [1, "x"]}, "floors=[1, 'x']: must be a table of numbers"),
])
def test_a_wrong_type_names_the_field_what_it_got_and_what_is_allowed(raw, message):
    with pytest.raises(ValueError) as exc:
        data_types.check_fields(raw, SPEC)
    assert str(exc.value) == message


def test_the_first_wrong_field_in_the_specs_order_is_named():
    with pytest.raises(ValueError) as exc:
        data_types.check_fields({"floors": "x", "name": 5}, SPEC)
    assert str(exc.value) == "name=5: must be a string"


@pytest.mark.parametrize(("raw", "message"), [
    ({"name": "x", "colour": 1, "blue": 2}, "unknown field(s) ['blue', 'colour']: allowed are name, gpus"),
    ({"colour": 1, "name": 5}, "unknown field(s) ['colour']: allowed are name, gpus"),  # unknown before wrong type
    ({"name": 5}, "name=5: must be a string"),  # wrong type before missing
    ({}, "missing field(s) ['name', 'gpus']"),
    ({"gpus": 8}, "missing field(s) ['name']"),
])
def test_unknown_then_wrong_then_missing(raw, message):
    with pytest.raises(ValueError) as exc:
        data_types.check_fields(raw, {"name": "str", "gpus": "int"}, required=("name", "gpus"))
    assert str(exc.value) == message


def test_a_table_of_the_right_types_passes_and_optional_fields_may_be_absent():
    assert data_types.check_fields({"name": "h200", "floors": {"a": 1}, "alt": [{"x": 1}]}, SPEC, ("name",)) is None
    assert data_types.check_fields({}, SPEC) is None


@pytest.mark.parametrize(("length", "shown"), [
    (78, "'" + "a" * 78 + "'"),  # repr 80 characters: whole
    (79, "'" + "a" * 76 + "..."),  # 81: cut to 77 (the quote and 76) and ...
    (200, "'" + "a" * 76 + "..."),
])
def test_the_value_shown_is_cut_at_80_characters(length, shown):
    with pytest.raises(ValueError) as exc:
        data_types.check_fields({"gpus": "a" * length}, SPEC)
    assert str(exc.value) == f"gpus={shown}: must be a whole number"


def test_an_elements_value_is_cut_alike():
    with pytest.raises(ValueError) as exc:
        data_types.check_fields({"source": {"k": ["b" * 100]}}, SPEC)
    assert str(exc.value) == "source.k=['" + "b" * 75 + "...: must be a string"


# --- a recorded reading with a key its dataclass lacks ---------------------------------------------------------------


@dataclasses.dataclass
class Reading:
    driver: str = ""
    gpus: int = 0


def test_a_reading_with_only_known_keys_passes():
    fields = dataclasses.fields(Reading)
    assert data_types.refuse_unknown_keys({"driver": "580", "gpus": 8}, fields, "a node reading") is None
    assert data_types.refuse_unknown_keys({}, fields, "a node reading") is None


def test_a_reading_with_unknown_keys_names_them_sorted():
    with pytest.raises(ValueError) as exc:
        data_types.refuse_unknown_keys({"driver": "580", "zz": 1, "nvlink": 2}, dataclasses.fields(Reading),
                                       "a node reading")
    assert str(exc.value) == "a node reading keys ['nvlink', 'zz'] are not known to this rlcheck"
