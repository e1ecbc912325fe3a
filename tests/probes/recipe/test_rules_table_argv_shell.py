"""A job's argv through Ray's entrypoint shell as rule tables (rlcheck/probes/recipe/argv_shell.py): which leading
tokens set the trainer's environment rather than its argv (assignments, `env` with its options, at the end of the
argv too), how the first difference is named when one side is shorter, and the whole WARN for bare tokens."""

from __future__ import annotations

import subprocess

import pytest

from rlcheck.probes.recipe.argv_shell import GLOB_REMEDY, bare_tokens, command_of, difference, evaluate_argv_intact
from rlcheck.verdict import Status


@pytest.mark.parametrize(("meant", "command"), [
    (["python", "t.py"], ["python", "t.py"]),
    (["A=1", "python", "t.py"], ["python", "t.py"]),
    (["A=1"], []),  # assignments alone: no command
    (["env"], []),
    (["env", "-i"], []),
    (["env", "python", "t.py"], ["python", "t.py"]),
    (["A=1", "env", "python"], ["python"]),
    (["env", "A=1", "B=2", "python", "t.py"], ["python", "t.py"]),
    (["env", "-u", "X", "python", "t.py"], ["python", "t.py"]),  # -u takes the next token
    (["env", "--chdir", "/w", "-i", "python"], ["python"]),
    (["env", "-i", "python", "-u", "t.py"], ["python", "-u", "t.py"]),  # the trainer's own options stay
    (["python", "A=1"], ["python", "A=1"]),
    (["1A=1", "python"], ["1A=1", "python"]),  # not a shell name
])
def test_rules_table_argv_shell_command_of(meant, command):
    assert command_of(meant) == command


@pytest.mark.parametrize(("meant", "got", "said"), [
    (["a", "b"], ["a", "b"], ""),
    (["a", "b"], ["a"], "argv changed through `/bin/sh -c`: 2 token(s) meant, 1 received; first difference at "
                        "token 1: meant 'b', got '(nothing)'"),
    (["a"], ["a", "b"], "argv changed through `/bin/sh -c`: 1 token(s) meant, 2 received; first difference at "
                        "token 1: meant '(nothing)', got 'b'"),
    (["a", "[1]*2"], ["a", "[1]"], "argv changed through `/bin/sh -c`: 2 token(s) meant, 2 received; first difference "
                                   "at token 1: meant '[1]*2', got '[1]'"),
])
def test_rules_table_argv_shell_difference(meant, got, said):
    assert difference(meant, got) == said


def test_rules_table_argv_shell_bare_tokens_warn_whole():
    meant = ["python", "t.py", "--layers", "[1]*48", "--x", "$HOME"]
    verdict = evaluate_argv_intact(meant, meant, subprocess.list2cmdline(meant))
    bare = bare_tokens(meant)
    assert bare == ["argv token 3 `[1]*48` reaches /bin/sh unquoted: a glob, replaced by any file of the job's "
                    "working dir it matches", "argv token 5 `$HOME` reaches /bin/sh unquoted: the shell interprets it"]
    assert (verdict.status, verdict.failure_id, verdict.remedy) == (Status.WARN, "model-args-glob", GLOB_REMEDY)
    assert verdict.summary == f"2 argv token(s) reach /bin/sh unquoted; {bare[0]}"
    assert verdict.details == "\n".join(bare)
