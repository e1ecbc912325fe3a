"""Rule table for rlcheck's options table (rlcheck.option_table): which entries it refuses (each refusal's whole
text, both sides of each rule), the add_argument keywords each kind of entry gives (what `pytest --help` and every
command's --help show, and what a flag left out defaults to), and the profile names its --hardware help lists."""

from __future__ import annotations

import argparse

import pytest

from rlcheck import option_table
from rlcheck.option_table import Option


@pytest.mark.parametrize(("fields", "problem"), [
    ({"flag": "-h"}, "flag='-h': a long flag, --name"),
    ({"flag": "--"}, "flag='--': a long flag, --name"),
    ({"flag": "x--y"}, "flag='x--y': a long flag, --name"),
    ({"flag": "--x", "action": "store_true"}, "--x: default=None: a store_true flag defaults to False"),
    ({"flag": "--x", "action": "store_true", "default": 0}, "--x: default=0: a store_true flag defaults to False"),
    ({"flag": "--x", "action": "store_true", "default": True},
     "--x: default=True: a store_true flag defaults to False"),
    ({"flag": "--x", "action": "append"}, "--x: default=None: a repeatable flag defaults to ()"),
    ({"flag": "--x", "action": "append", "default": []}, "--x: default=[]: a repeatable flag defaults to ()"),
])
def test_a_malformed_entry_is_refused_saying_what_is_allowed(fields, problem):
    with pytest.raises(ValueError) as caught:
        Option(help="h", **fields)
    assert str(caught.value) == problem


@pytest.mark.parametrize(("fields", "dest"), [
    ({"flag": "--x"}, "x"),  # the shortest long flag
    ({"flag": "--ray-address", "default": ""}, "ray_address"),
    ({"flag": "--x", "action": "store_true", "default": False}, "x"),
    ({"flag": "--x", "action": "append", "default": ()}, "x"),
    # the default rules are the store_true and append ones only: a stored flag may default to anything
    ({"flag": "--x", "default": False}, "x"),
    ({"flag": "--x", "default": ()}, "x"),
])
def test_a_wellformed_entry_is_kept(fields, dest):
    assert Option(help="h", **fields).dest == dest


@pytest.mark.parametrize(("fields", "kwargs"), [
    # a stored flag: its default, also None, is written (argparse's own is left to it only for store_true)
    ({"flag": "--x"}, {"help": "h", "default": None}),
    ({"flag": "--x", "default": 5, "type": int, "metavar": "N"}, {"help": "h", "default": 5, "type": int,
                                                                    "metavar": "N"}),
    ({"flag": "--x", "choices": ("a", "b")}, {"help": "h", "default": None, "choices": ("a", "b")}),
    ({"flag": "--x", "required": True, "metavar": "NAME"}, {"help": "h", "default": None, "metavar": "NAME",
                                                            "required": True}),
    ({"flag": "--x", "action": "store_true", "default": False}, {"help": "h", "action": "store_true"}),
    ({"flag": "--x", "action": "append", "default": (), "metavar": "ARG"},
     {"help": "h", "action": "append", "default": [], "metavar": "ARG"}),
])
def test_kwargs_are_the_add_argument_keywords_the_entry_says_and_no_others(fields, kwargs):
    assert Option(help="h", **fields).kwargs() == kwargs


def test_kwargs_give_a_repeatable_flag_a_fresh_list_each_time():
    first, second = option_table.JOB_ENV.kwargs()["default"], option_table.JOB_ENV.kwargs()["default"]
    first.append("A=1")
    assert second == []


@pytest.mark.parametrize(("argv", "parsed"), [
    ([], {"band_runs": 5, "quick": False, "job_arg": [], "job_format": None, "hardware": "rtx"}),
    (["--band-runs", "0", "--quick", "--job-arg", "p2p", "--job-arg=-x", "--job-format", "rayjob", "--hardware",
      "h200"], {"band_runs": 0, "quick": True, "job_arg": ["p2p", "-x"], "job_format": "rayjob", "hardware": "h200"}),
])
def test_add_declares_each_option_on_a_parser_as_the_table_says(argv, parsed):
    parser = argparse.ArgumentParser()
    option_table.add(parser, option_table.BAND_RUNS, option_table.QUICK, option_table.JOB_ARG,
                     option_table.JOB_FORMAT, Option(flag="--hardware", default="rtx", help="h"))
    assert vars(parser.parse_args(argv)) == parsed


@pytest.mark.parametrize("argv", [["--job-format", "yaml"], ["--band-runs", "five"]])
def test_a_parser_from_the_table_refuses_a_value_outside_the_choices_or_type(argv, capsys):
    parser = argparse.ArgumentParser()
    option_table.add(parser, option_table.BAND_RUNS, option_table.JOB_FORMAT)
    with pytest.raises(SystemExit):
        parser.parse_args(argv)
    assert "invalid" in capsys.readouterr().err


def test_a_required_entry_makes_its_flag_required(capsys):
    parser = argparse.ArgumentParser()
    option_table.add(parser, option_table.HARDWARE_PROFILE)
    with pytest.raises(SystemExit):
        parser.parse_args([])
    assert "the following arguments are required: --hardware" in capsys.readouterr().err


def test_profile_names_read_only_the_toml_files_of_the_folder(tmp_path, monkeypatch):
    for name in ("zeta.toml", "alpha.toml", "notes.md", "beta.toml.bak"):
        (tmp_path / name).write_text("")
    monkeypatch.setattr(option_table, "HARDWARE_DIR", tmp_path)
    assert option_table.profile_names() == ("alpha", "zeta")


class Marked:
    """A collected item as skipped_by_quick asks it: the markers it carries, by name."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name in self.names else None


@pytest.mark.parametrize(("markers", "quick", "skipped"), [
    (("slow",), True, True), (("slow",), False, False), ((), True, False), (("gpu",), True, False),
    (("gpu", "slow"), True, True), ((), False, False),
])
def test_quick_skips_a_test_marked_slow_and_nothing_else(markers, quick, skipped):
    assert option_table.skipped_by_quick(Marked(*markers), quick) is skipped
