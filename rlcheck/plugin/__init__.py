"""rlcheck's pytest plugin, split by role: options, markers, gating, report, JUnit, shared resources and progress
lines.

The plugin loads in every pytest run of an environment where rlcheck is installed (its pytest11 entry point), also in
a project that never uses rlcheck. What loads then is this module alone, with pytest: the options (flags.py), the
markers, and stand-ins for rlcheck's fixtures. The roles (ROLES) and what they import (recipes, probes, the report,
Ray's helpers) load in a run that asks for rlcheck, and only there (asked_for says why, or ''):
- the plugin named: `-p rlcheck.plugin` (as `rlcheck preflight` runs it), `pytest_plugins = ["rlcheck.plugin"]` in
  a conftest.py (a checkout), PYTEST_PLUGINS, or loaded any way but its entry point;
- an rlcheck option given (--hardware, --recipe, --job, --progress-s, ...: any set to other than its default);
- rlcheck's own tests given to collect (`pytest --pyargs rlcheck.checks`, a path inside the installed package).
A test of a run that did not ask, which uses one of rlcheck's fixtures, fails saying how to ask.
"""

from __future__ import annotations

import importlib
import os
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from rlcheck.plugin import flags

NAME = "rlcheck.plugin"
ROLES = ("rlcheck.plugin.options", "rlcheck.plugin.gating", "rlcheck.plugin.report", "rlcheck.plugin.junit",
         "rlcheck.plugin.resources", "rlcheck.plugin.progress")
"""The roles, loaded in this order once rlcheck is asked for (options first: the others read its run context)."""
pytest_plugins = ["rlcheck.plugin.markers"]  # the markers' descriptions, in every run (pytest alone)
PACKAGE_DIR = Path(__file__).resolve().parents[1]
active_key = pytest.StashKey[str]()
"""Why the roles were loaded in this run (absent: they were not)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    flags.add(parser)


def _own_tests(args: Sequence[str], pyargs: bool, invocation_dir: Path) -> str:
    """The first argument that names rlcheck's own tests (a module of the package, or a path inside it), or ''."""
    for arg in args:
        target = str(arg).split("::", 1)[0]
        if pyargs and (target == "rlcheck" or target.startswith("rlcheck.")):
            return target
        try:
            path = (invocation_dir / target).resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if path == PACKAGE_DIR or PACKAGE_DIR in path.parents:
            return target
    return ""


def _from_entry_point(config: pytest.Config) -> bool:
    here = config.pluginmanager.get_plugin(NAME)
    return any(plugin is here for plugin, _ in config.pluginmanager.list_plugin_distinfo())


def _named_by_a_plugin(config: pytest.Config) -> str:
    """The file of a loaded conftest.py (or plugin module) whose pytest_plugins names this plugin, or ''."""
    for plugin in config.pluginmanager.get_plugins():
        if not isinstance(plugin, types.ModuleType) or plugin.__name__ == __name__:
            continue
        names = getattr(plugin, "pytest_plugins", None)
        names = [names] if isinstance(names, str) else names
        if isinstance(names, list | tuple) and NAME in names:
            return str(getattr(plugin, "__file__", plugin.__name__))
    return ""


def asked_for(config: pytest.Config, namespace: Any, args: Sequence[str]) -> str:
    """Why this run asks for rlcheck, or '' when it does not (see the module's doc). namespace: pytest's parsed
    options (early: known_args_namespace); args: the paths or modules to collect."""
    if NAME in (getattr(namespace, "plugins", None) or []):
        return f"-p {NAME}"
    if NAME in [p.strip() for p in os.environ.get("PYTEST_PLUGINS", "").split(",")]:
        return f"PYTEST_PLUGINS={os.environ['PYTEST_PLUGINS']}"
    if not _from_entry_point(config):
        return f"{NAME} loaded by name"
    given = flags.given(namespace)
    if given:
        return f"--{given[0].replace('_', '-')} given"
    own = _own_tests(args, bool(getattr(namespace, "pyargs", False)), config.invocation_params.dir)
    if own:
        return f"collects rlcheck's tests ({own})"
    named = _named_by_a_plugin(config)
    return f"pytest_plugins in {named}" if named else ""


def _activate(config: pytest.Config, why: str) -> list[object]:
    """Load the roles; the plugins that came with them (to replay an early hook on them)."""
    config.stash[active_key] = why
    before = config.pluginmanager.get_plugins()
    for name in ROLES:  # registered as pytest_plugins would, without marking them for assertion rewriting
        if config.pluginmanager.get_plugin(name) is None:  # (report imports junit first: pytest would warn)
            config.pluginmanager.register(importlib.import_module(name), name)
    return [p for p in config.pluginmanager.get_plugins() if p not in before]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """As early as a run can tell (its options are read; conftest.py files are not loaded yet): a role that starts
    work here (the progress lines) starts now, before slow conftest.py files."""
    namespace = early_config.known_args_namespace
    why = asked_for(early_config, namespace, getattr(namespace, "file_or_dir", None) or [])
    if why and active_key not in early_config.stash:
        new = _activate(early_config, why)
        old = [p for p in early_config.pluginmanager.get_plugins() if p not in new]
        early = early_config.pluginmanager.subset_hook_caller("pytest_load_initial_conftests", old)
        early(early_config=early_config, parser=parser, args=args)  # the hook is under way: the roles' own part


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Where a conftest.py's pytest_plugins shows (and a plugin loaded by one arrives): the roles load here, and
    their own pytest_configure runs as each registers (the options' first: it resolves the run context)."""
    if active_key not in config.stash:
        why = asked_for(config, config.option, config.args)
        if why:
            _activate(config, why)


def _stand_in(name: str) -> Callable[..., Any]:
    def fixture() -> None:
        pytest.fail(f"{name} is rlcheck's fixture, and this run does not ask for rlcheck: add "
                    f"pytest_plugins = [\"{NAME}\"] to the conftest.py, or run pytest with -p {NAME}", pytrace=False)

    return pytest.fixture(name=name)(fixture)


# Stand-ins: where the roles load, their own fixtures (registered after this module) are the ones used.
standin_rlcheck_context = _stand_in("rlcheck_context")
standin_record_verdict = _stand_in("record_verdict")
standin_record_reproduction = _stand_in("record_reproduction")
standin_local_ray = _stand_in("local_ray")
standin_ray_cluster = _stand_in("ray_cluster")
standin_check_inputs = _stand_in("check_inputs")
