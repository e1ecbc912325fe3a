"""Rule table for the pytest plugin's option declarations (rlcheck.plugin.flags): every table entry declared in
rlcheck's own group with the table's keywords, and which values count as given on a command line (what makes an
unrelated pytest run load rlcheck's roles: `--band-runs=0` is given, the default or an unset option is not)."""

from __future__ import annotations

import argparse

import pytest

from rlcheck import option_table
from rlcheck.plugin import flags


class _Parser:
    """pytest's Parser and OptionGroup as flags.add uses them: what was asked, in order."""

    def __init__(self) -> None:
        self.groups: list[tuple[str, str]] = []
        self.options: list[tuple[str, dict[str, object]]] = []

    def getgroup(self, name: str, description: str) -> _Parser:
        self.groups.append((name, description))
        return self

    def addoption(self, flag: str, **kwargs: object) -> None:
        self.options.append((flag, kwargs))


def test_add_declares_every_plugin_entry_in_rlchecks_group_with_the_tables_keywords():
    parser = _Parser()
    flags.add(parser)  # type: ignore[arg-type]
    assert parser.groups == [("rlcheck", "rlcheck preflight and test cases")]
    assert parser.options == [(o.flag, o.kwargs()) for o in option_table.PLUGIN]
    assert [flag for flag, _ in parser.options][:3] == ["--hardware", "--ray-address", "--recipe"]


def _unset() -> dict[str, object]:
    """Every option as argparse leaves it when the command line does not name it."""
    parser = argparse.ArgumentParser()
    option_table.add(parser, *option_table.PLUGIN)
    return vars(parser.parse_args([]))


@pytest.mark.parametrize(("values", "given"), [
    ({}, []),
    # the default itself, written out, is not a value given
    ({"hardware": "auto", "recipe": "qwen3-4b-colocated", "report_dir": "rlcheck-report", "band_runs": 5,
      "hardware_timeout_s": 30.0, "progress_s": 5.0}, []),
    # None, False and an empty list are how argparse leaves an option no one named
    ({"ray_address": None, "quick": False, "job_env": [], "job_arg": []}, []),
    ({"hardware": "h200"}, ["hardware"]),
    ({"hardware": None}, []),
    ({"band_runs": 0}, ["band_runs"]),  # 0 is a value: it turns the band off
    ({"band_runs": 6}, ["band_runs"]),
    ({"progress_s": 0.0}, ["progress_s"]),
    ({"hardware_timeout_s": 29.9}, ["hardware_timeout_s"]),
    ({"ray_address": ""}, ["ray_address"]),  # an option without a default: anything but None, False, [] is given
    ({"ray_address": "ray://head:10001"}, ["ray_address"]),
    ({"quick": True}, ["quick"]),
    ({"job_env": ["A=1"]}, ["job_env"]),
    # in the table's order, whatever order they were set in
    ({"progress_s": 1.0, "quick": True, "hardware": "b200", "job_env": ["A=1"]},
     ["hardware", "job_env", "quick", "progress_s"]),
])
def test_an_option_is_given_when_its_value_is_neither_unset_nor_its_default(values, given):
    assert flags.given(argparse.Namespace(**{**_unset(), **values})) == given


def test_a_namespace_without_rlchecks_options_gives_none():
    """pytest's early namespace before rlcheck declared its options: nothing there is rlcheck's."""
    assert flags.given(argparse.Namespace(plugins=["x"])) == []
    assert flags.given(argparse.Namespace(quick=True)) == ["quick"]
