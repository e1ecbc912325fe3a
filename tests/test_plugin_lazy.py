"""The pytest plugin in a run that never uses rlcheck: its entry point loads rlcheck.plugin, which declares the options
and markers and imports nothing else of rlcheck; the roles load where a run asks for rlcheck. Asserted on sys.modules
in a pytest subprocess (the entry point loads there as in any project), never on time."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

import rlcheck.plugin
from rlcheck import option_table
from rlcheck.plugin import flags

LIGHT = ["rlcheck", "rlcheck.option_table", "rlcheck.plugin", "rlcheck.plugin.flags", "rlcheck.plugin.markers"]
PROBE = """
import sys

def test_modules():
    print("RLCHECK_MODULES", sorted(m for m in sys.modules if m.startswith("rlcheck")))
"""


def _modules(result: pytest.RunResult) -> list[str]:
    (line,) = [x for x in result.outlines if "RLCHECK_MODULES " in x]
    return ast.literal_eval(line.split("RLCHECK_MODULES ", 1)[1])  # the list this test's own probe printed


def test_an_unrelated_run_imports_nothing_of_rlcheck_but_the_entry_module(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    assert result.ret == 0
    assert _modules(result) == LIGHT  # rlcheck.plugin there: the entry point did load it


def test_an_option_of_rlchecks_loads_the_roles(pytester: pytest.Pytester):
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", "-W", "error", "--hardware=none",
                                           "--progress-s=0")
    assert result.ret == 0, result.stdout.str()
    loaded = _modules(result)
    assert {f"rlcheck.plugin.{r}" for r in ("options", "gating", "report", "junit", "resources", "progress")} <= set(
        loaded)


def test_a_fixture_of_rlchecks_in_an_unrelated_run_says_how_to_ask_for_it(pytester: pytest.Pytester):
    pytester.makepyfile(test_uses="def test_uses(record_verdict):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*record_verdict is rlcheck's fixture, and this run does not ask for rlcheck: add "
                                 "pytest_plugins = [[]\"rlcheck.plugin\"[]] to the conftest.py*"])


class _Group:
    def __init__(self) -> None:
        self.declared: dict[str, object] = {}

    def addoption(self, name: str, **kwargs: object) -> None:
        default = kwargs.get("default", False if kwargs.get("action") == "store_true" else None)
        self.declared[name.removeprefix("--").replace("-", "_")] = default

    def getgroup(self, *_: object) -> _Group:
        return self


def _declared() -> dict[str, object]:
    group = _Group()
    flags.add(group)  # type: ignore[arg-type]
    return group.declared


def test_every_declared_option_is_known_with_its_default():
    declared = _declared()
    assert tuple(declared) == flags.DESTS
    assert {d: v for d, v in declared.items() if v not in (None, False, [])} == flags.DEFAULTS


@pytest.mark.parametrize(("values", "given"), [
    ({}, []),
    ({"hardware": "auto", "band_runs": 5, "progress_s": option_table.PROGRESS_S, "job_env": []}, []),
    ({"progress_s": option_table.PROGRESS_S + 3}, ["progress_s"]),  # the old default (8 s) is a value now
    ({"hardware": "h200"}, ["hardware"]),
    ({"band_runs": 0}, ["band_runs"]),  # 0 is a value, not unset
    ({"progress_s": 0.0}, ["progress_s"]),
    ({"quick": True, "job_env": ["A=1"]}, ["job_env", "quick"]),
])
def test_an_option_counts_as_given_when_it_differs_from_its_default(values, given):
    namespace = argparse.Namespace(**{**_declared(), **values})
    assert flags.given(namespace) == given


@pytest.mark.parametrize(("args", "pyargs", "found"), [
    ([], False, ""),
    (["tests/test_x.py"], False, ""),
    (["rlcheck.checks"], True, "rlcheck.checks"),
    (["rlcheck"], True, "rlcheck"),
    (["rlcheckers.tests"], True, ""),
    (["rlcheck.checks"], False, ""),  # without --pyargs it is a path, and none is there
    ([str(rlcheck.plugin.PACKAGE_DIR / "checks" / "test_image.py") + "::test_image"], False, "test_image.py"),
    ([str(rlcheck.plugin.PACKAGE_DIR)], False, "rlcheck"),
    ([str(rlcheck.plugin.PACKAGE_DIR.parent / "rlcheck-other")], False, ""),
])
def test_rlchecks_own_tests_are_told_from_a_projects(args, pyargs, found, tmp_path):
    own = rlcheck.plugin._own_tests(args, pyargs, tmp_path)
    assert (Path(own).name if own and not pyargs else own) == found
