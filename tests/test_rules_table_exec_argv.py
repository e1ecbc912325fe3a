"""Rule table for the RayJob entrypoint that execs the argv carried as JSON (rlcheck.cluster.exec_argv): which values
of $RLCHECK_ARGV are taken (a non-empty list of strings) and the whole error for each other shape, the exit code 2
with its one line, and the exec of the argv token for token with the entrypoint's own extra arguments after it."""

from __future__ import annotations

import json

import pytest

from rlcheck.cluster import exec_argv


@pytest.mark.parametrize("argv", [["python3"], ["python3", "train.py", "$HOME", "a b", "[0]*3", ""]])
def test_a_non_empty_list_of_strings_is_the_argv(argv):
    assert exec_argv.parse(json.dumps(argv)) == argv


@pytest.mark.parametrize("raw", [None, ""])
def test_an_unset_or_empty_variable_is_refused(raw):
    with pytest.raises(ValueError) as err:
        exec_argv.parse(raw)
    assert str(err.value) == ('$RLCHECK_ARGV is empty: expected a JSON list of strings, e.g. ["python3", '
                              '"train.py"]')


@pytest.mark.parametrize("raw", ["[]", '"python3"', '{"argv": ["x"]}', '["python3", 1]', "[null]", "null",
                                 '[["python3"]]', "0"])
def test_any_other_json_is_refused_with_its_text(raw):
    with pytest.raises(ValueError) as err:
        exec_argv.parse(raw)
    assert str(err.value) == f"$RLCHECK_ARGV={raw!r}: expected a non-empty JSON list of strings"


def test_a_long_value_is_quoted_up_to_200_characters():
    raw = json.dumps({"k": "x" * 300})
    with pytest.raises(ValueError) as err:
        exec_argv.parse(raw)
    assert str(err.value) == f"$RLCHECK_ARGV={raw[:200]!r}: expected a non-empty JSON list of strings"


def test_text_that_is_not_json_is_a_value_error():
    with pytest.raises(ValueError, match="Expecting value"):
        exec_argv.parse("python3 train.py")


@pytest.fixture
def execs(monkeypatch):
    calls = []
    monkeypatch.setattr(exec_argv.os, "execvp", lambda program, argv: calls.append((program, argv)))
    return calls


@pytest.mark.parametrize(("raw", "line"), [
    (None, '$RLCHECK_ARGV is empty: expected a JSON list of strings, e.g. ["python3", "train.py"]'),
    ("[]", "$RLCHECK_ARGV='[]': expected a non-empty JSON list of strings"),
    ("not json", "Expecting value: line 1 column 1 (char 0)"),
])
def test_main_says_why_in_one_line_and_exits_2(monkeypatch, capsys, execs, raw, line):
    if raw is None:
        monkeypatch.delenv("RLCHECK_ARGV", raising=False)
    else:
        monkeypatch.setenv("RLCHECK_ARGV", raw)
    assert exec_argv.main() == 2
    assert capsys.readouterr() == ("", f"rlcheck.exec_argv: {line}\n")
    assert execs == []


def test_main_execs_the_argv_then_its_own_arguments(monkeypatch, capsys, execs):
    monkeypatch.setenv("RLCHECK_ARGV", json.dumps(["python3", "train.py", "a b"]))
    monkeypatch.setattr(exec_argv.sys, "argv", ["exec_argv", "--extra", "$X"])
    assert exec_argv.main() == 127  # only when execvp returned, which a real one never does
    assert execs == [("python3", ["python3", "train.py", "a b", "--extra", "$X"])]
    assert capsys.readouterr() == ("", "")
