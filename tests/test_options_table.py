"""One options table (rlcheck.option_table) for the pytest plugin and the command line: every `rlcheck` flag that the
table names is declared from it (help, default, choices, type, metavar equal to an entry's), no module that builds the
command line or the plugin declares one by hand, and the texts the table copies equal their sources."""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlcheck import cli, option_table
from rlcheck.option_table import Option

ROOT = Path(__file__).resolve().parents[1]
TABLE_FLAGS = {o.flag for o in option_table.TABLE}
BUILDERS = sorted([*(ROOT / "rlcheck").glob("cli*.py"), *(ROOT / "rlcheck" / "plugin").glob("*.py"),
                   ROOT / "rlcheck" / "reward" / "cli.py"])
"""The modules that build the `rlcheck` command line and the pytest plugin's options."""


def _signature(action: argparse.Action) -> tuple[object, ...]:
    return (type(action), tuple(action.option_strings), action.dest, action.help, action.default, action.choices,
            action.type, action.metavar, action.required, action.nargs, action.const)


def _declared(option: Option) -> argparse.Action:
    return argparse.ArgumentParser(add_help=False).add_argument(option.flag, **option.kwargs())


ENTRIES = {o: _signature(_declared(o)) for o in option_table.TABLE}


def _actions(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{path} {name}")
        else:
            yield path, action


def off_table(parser: argparse.ArgumentParser, prog: str = "rlcheck") -> dict[str, list[Option]]:
    """Every option of this command line whose flag the table names: the entries it equals (none: it was written by
    hand, or edited beside the table)."""
    out = {}
    for path, action in _actions(parser, prog):
        for flag in set(action.option_strings) & TABLE_FLAGS:
            out[f"{path} {flag}"] = [o for o, sig in ENTRIES.items() if sig == _signature(action)]
    return out


class _ByHand(ast.NodeVisitor):
    """add_argument / addoption("--hardware", ...) calls with a table flag written as a literal, named by the
    function they are in."""

    def __init__(self) -> None:
        self.where = ["module"]
        self.found: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.where.append(f"{node.name}()")
        self.generic_visit(node)
        self.where.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("add_argument", "addoption"):
            self.found += [f"{self.where[-1]}: {a.value}" for a in node.args
                           if isinstance(a, ast.Constant) and a.value in TABLE_FLAGS]
        self.generic_visit(node)


def by_hand(path: Path, root: Path = ROOT) -> list[str]:
    """Where this file declares a table flag by hand."""
    visitor = _ByHand()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    name = path.relative_to(root).as_posix()
    return [f"{name} {line}" for line in visitor.found]


def test_every_table_flag_of_the_command_line_equals_a_table_entry():
    found = off_table(cli.build_parser())
    assert {where for where, entries in found.items() if not entries} == set()
    assert {"rlcheck slurm --hardware", "rlcheck k8s apply-node-status --recipe", "rlcheck render --hardware",
            "rlcheck k8s render --ray-address", "rlcheck watch --framework",
            "rlcheck baseline --hardware"} <= set(found)


@pytest.mark.parametrize(("where", "entry"), [
    ("rlcheck slurm --hardware", option_table.HARDWARE),  # the plugin's own: auto, none or a profile
    ("rlcheck slurm --recipe", option_table.RECIPE),
    ("rlcheck slurm --level", option_table.LEVEL),
    ("rlcheck slurm --budget-s", option_table.BUDGET_S),
    ("rlcheck k8s apply-node-status --hardware", option_table.HARDWARE),
    ("rlcheck k8s apply-node-status --level", option_table.LEVEL),
    ("rlcheck k8s apply-node-status --dry-run", option_table.DRY_RUN_PATCH),
    ("rlcheck k8s render --hardware", option_table.HARDWARE_PROFILE),
    ("rlcheck k8s render --recipe", option_table.RECIPE),
    ("rlcheck k8s render --ray-address", option_table.RAY_DASHBOARD),
    ("rlcheck render --hardware", option_table.HARDWARE_PROFILE),
    ("rlcheck watch --framework", option_table.FRAMEWORK_OF_LOG),
    ("rlcheck baseline --hardware", option_table.HARDWARE_OF_BASELINE),
    ("rlcheck job --job-format", option_table.CAPTURE_FORMAT),  # PATH's format: a capture has no --job
    ("rlcheck job --job-env", option_table.CAPTURE_ENV),
])
def test_a_command_takes_the_entry_of_its_meaning(where, entry):
    assert off_table(cli.build_parser())[where] == [entry]


def test_every_table_entry_is_declared_somewhere():
    used = {o for entries in off_table(cli.build_parser()).values() for o in entries} | set(option_table.PLUGIN)
    assert [o.flag for o in option_table.TABLE if o not in used] == []


def test_an_option_edited_beside_the_table_is_found():
    parser = argparse.ArgumentParser(prog="tool")
    sub = parser.add_subparsers()
    p = sub.add_parser("run")
    p.add_argument("--hardware", default="auto", metavar="NAME", help="profile, auto (detect) or none")  # own help
    option_table.add(p, option_table.RECIPE)
    q = sub.add_parser("other")
    q.add_argument("--recipe", default="qwen3-4b-colocated", metavar="ID", help=option_table.RECIPE.help,
                   choices=option_table.RECIPE_IDS)  # choices the table does not have
    option_table.add(q, option_table.LEVEL)
    assert off_table(parser, "tool") == {"tool run --hardware": [], "tool run --recipe": [option_table.RECIPE],
                                         "tool other --recipe": [], "tool other --level": [option_table.LEVEL]}


def test_no_module_of_the_command_line_or_the_plugin_declares_a_table_flag_by_hand():
    assert {line for path in BUILDERS for line in by_hand(path)} == set()


def test_a_flag_declared_by_hand_is_found(tmp_path):
    path = tmp_path / "rlcheck" / "cli_x.py"
    path.parent.mkdir()
    path.write_text('from rlcheck import option_table\n'
                    'def add(p):\n'
                    '    p.add_argument("--hardware", default="auto")\n'
                    '    p.add_argument("--hardware-file")\n'
                    '    option_table.add(p, option_table.RECIPE)\n'
                    'def plugin(group):\n'
                    '    group.addoption("--ray-address", "--address")\n', encoding="utf-8")
    assert by_hand(path, tmp_path) == ["rlcheck/cli_x.py add(): --hardware", "rlcheck/cli_x.py plugin(): --ray-address"]


def _getoption_names(path: Path) -> set[str]:
    return {node.args[0].value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "getoption"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)}


def test_every_option_the_plugin_reads_is_one_the_table_declares():
    read = set().union(*(_getoption_names(p) for p in (ROOT / "rlcheck").rglob("*.py")))
    assert read, "the plugin reads its options with config.getoption(...)"
    assert read - {o.dest for o in option_table.PLUGIN} == set()


def test_the_texts_the_table_copies_equal_their_sources():
    from rlcheck import hardware, recipes
    from rlcheck.deploy import levels
    from rlcheck.job.capture import CAPTURE_FORMATS
    from rlcheck.plugin import progress
    from rlcheck.probes.node import gpus

    assert (option_table.RECIPE_IDS, option_table.DEFAULT_RECIPE) == (recipes.RECIPE_IDS, recipes.DEFAULT_RECIPE)
    assert option_table.CAPTURE_FORMATS == CAPTURE_FORMATS
    assert option_table.LEVELS == levels.LEVELS
    assert option_table.DETECT_TIMEOUT_S == gpus.DETECT_TIMEOUT_S
    assert option_table.PROGRESS_S == progress.DEFAULT_S
    assert set(option_table.profile_names()) == set(hardware.load_profiles())


def test_a_repeatable_option_gives_each_parse_its_own_list():
    first, second = argparse.ArgumentParser(), argparse.ArgumentParser()
    option_table.add(first, option_table.JOB_ENV)
    option_table.add(second, option_table.JOB_ENV)
    assert first.parse_args(["--job-env", "A=1"]).job_env == ["A=1"]
    assert second.parse_args([]).job_env == []
    assert first.parse_args([]).job_env == []


@pytest.mark.parametrize(("fields", "problem"), [
    ({"flag": "-h"}, "flag='-h': a long flag"),
    ({"flag": "--"}, "flag='--': a long flag"),
    ({"flag": "--x", "action": "store_true"}, "--x: default=None: a store_true flag defaults to False"),
    ({"flag": "--x", "action": "append", "default": []}, "--x: default=[]: a repeatable flag defaults to ()"),
])
def test_a_malformed_entry_is_refused(fields, problem):
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        Option(help="h", **fields)


@pytest.mark.parametrize("fields", [{"flag": "--x"}, {"flag": "--x", "action": "store_true", "default": False},
                                    {"flag": "--x", "action": "append", "default": ()}])
def test_a_wellformed_entry_is_kept(fields):
    assert Option(help="h", **fields).dest == "x"
