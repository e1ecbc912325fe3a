"""The weight-sync process group's option name against torch (torch-pg-options-renamed): source reading and every
verdict branch, with the boundary versions on both sides of torch 2.6 and 2.10."""

from __future__ import annotations

import pytest

from rlcheck.probes.image import torch_pg
from rlcheck.probes.image.torch_pg import PgObservation, compares_version_as_string, evaluate_pg, keyword_choices
from rlcheck.scan import Matcher
from rlcheck.verdict import Status

# Written for these tests in the two shapes SLIME shipped (before and after THUDM/slime#1667), not copied.
STRING_COMPARE = 'name = "backend_options" if str(torch.__version__) >= "2.6" else "pg_options"\n'
SEMANTIC = 'name = "backend_options" if V(torch.__version__) >= V("2.6") else "pg_options"\n'
TORCH_VERSION_OBJECT = 'name = "backend_options" if torch.__version__ >= "2.6" else "pg_options"\n'
REVERSED = 'old = "2.6" > str(torch.__version__)\n'
EQUALITY_ONLY = 'same = str(torch.__version__) == "2.6"\n'
SLIME = "site-packages/slime/utils/distributed_utils.py"


@pytest.mark.parametrize(("source", "expected"), [
    (STRING_COMPARE, True), (REVERSED, True), (SEMANTIC, False), (TORCH_VERSION_OBJECT, False),
    (EQUALITY_ONLY, False), ("x = str(torch.__version__)\n", False),
])
def test_string_compare_found_only_for_an_ordering_of_a_stringified_version(source, expected):
    assert compares_version_as_string(source) is expected


@pytest.mark.parametrize(("torch", "wanted", "picked"), [
    ("2.5.1", "pg_options", "pg_options"),
    ("2.6.0", "backend_options", "backend_options"),
    ("2.9.1", "backend_options", "backend_options"),
    ("2.10.0", "backend_options", "pg_options"),
    ("2.10.0+cu128", "backend_options", "pg_options"),
    ("2.11.0", "backend_options", "pg_options"),
])
def test_keyword_choices_across_the_rename_and_the_two_digit_minor(torch, wanted, picked):
    assert keyword_choices(torch) == (wanted, picked)


@pytest.mark.parametrize(("obs", "status", "phrase"), [
    (PgObservation(source=None, string_compare=False, torch="2.10.0"), Status.SKIP, "found neither"),
    (PgObservation(source=SLIME, string_compare=False, torch="2.10.0"), Status.PASS, "does not compare"),
    (PgObservation(source=SLIME, string_compare=True, torch=None), Status.UNKNOWN, "torch is not installed"),
    (PgObservation(source=SLIME, string_compare=True, torch="not-a-version"), Status.UNKNOWN, "not a PEP 440"),
    (PgObservation(source=SLIME, string_compare=True, torch="2.10.0"), Status.FAIL,
     "passes pg_options where torch wants backend_options"),
    (PgObservation(source=SLIME, string_compare=True, torch="2.9.1"), Status.WARN, "wrong from torch 2.10"),
    (PgObservation(source=SLIME, string_compare=True, torch="2.5.1"), Status.WARN, "right for torch 2.5.1"),
])
def test_evaluate_pg_every_branch(obs, status, phrase):
    verdict = evaluate_pg(obs)
    assert verdict.status is status and phrase in verdict.summary, verdict.summary
    assert verdict.failure_id == "torch-pg-options-renamed"
    assert bool(verdict.remedy) is (status in (Status.FAIL, Status.WARN))


def test_collect_reads_the_installed_framework_source(tmp_path, monkeypatch):
    (tmp_path / "slime" / "utils").mkdir(parents=True)
    (tmp_path / "slime" / "utils" / "distributed_utils.py").write_text(STRING_COMPARE, encoding="utf-8")
    monkeypatch.setattr(torch_pg, "package_root", lambda top: tmp_path if top == "slime" else None)
    obs = torch_pg.collect_pg()
    assert obs.source == str(tmp_path / "slime" / "utils" / "distributed_utils.py") and obs.string_compare


def test_collect_without_a_framework_observes_none(monkeypatch):
    monkeypatch.setattr(torch_pg, "package_root", lambda top: None)
    assert torch_pg.collect_pg().source is None


def test_the_failure_the_check_predicts_is_the_line_the_scanner_names():
    wanted, picked = keyword_choices("2.10.0")
    line = f"TypeError: _new_process_group_helper() got an unexpected keyword argument '{picked}'"
    assert Matcher().match_line(line) == ["torch-pg-options-renamed"] and wanted != picked
