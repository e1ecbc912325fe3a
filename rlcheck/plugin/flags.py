"""rlcheck's pytest options, declared at start-up without importing what they configure.

pytest reads its command line before any test runs, so the options must be declared in every run the plugin loads
in, also in a project that never uses rlcheck: this module imports nothing but pytest and rlcheck.option_table (the
standard library only). The options themselves, with their help, defaults and choices, are the table's PLUGIN
entries, which the command line (rlcheck slurm, rlcheck k8s, ...) reads too: a new option goes there.
"""

from __future__ import annotations

import pytest

from rlcheck import option_table


def add(parser: pytest.Parser) -> None:
    group = parser.getgroup("rlcheck", "rlcheck preflight and test cases")
    for option in option_table.PLUGIN:
        group.addoption(option.flag, **option.kwargs())


DESTS = tuple(option.dest for option in option_table.PLUGIN)
"""Every option's name in pytest's namespace."""
DEFAULTS: dict[str, object] = {o.dest: o.default for o in option_table.PLUGIN
                               if o.default is not None and o.default is not False and o.default != ()}
"""Defaults other than None, False and []: an option whose value differs from its default was given."""


def given(namespace: object) -> list[str]:
    """The rlcheck options set on this command line (or in addopts) to something other than their default."""
    found = []
    for dest in DESTS:
        value = getattr(namespace, dest, None)
        unset = value is None or value is False or value == [] or (dest in DEFAULTS and value == DEFAULTS[dest])
        if not unset:  # (0 is a value: --progress-s=0 and --band-runs=0 are given)
            found.append(dest)
    return found
