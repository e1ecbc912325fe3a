"""The process-group keyword SLIME / Miles pick by comparing torch's version as a string, as a rule table
(rlcheck/probes/image/torch_pg.py): the keyword torch wants and the one a string comparison picks on both sides of
2.6, and every verdict with its whole summary."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.image.torch_pg import FAILURE_ID, PgObservation, evaluate_pg, keyword_choices
from rlcheck.verdict import Status

SRC = "/site/slime/utils/distributed_utils.py"


@pytest.mark.parametrize(("torch", "choices"), [
    ("2.5.1", ("pg_options", "pg_options")),
    ("2.6", ("backend_options", "backend_options")),  # tied at the rename: both sides take the new name
    ("2.6.0", ("backend_options", "backend_options")),
    ("2.6.0+cu124", ("backend_options", "backend_options")),
    ("2.10.0", ("backend_options", "pg_options")),  # "2.10.0" < "2.6" as strings
    ("2.5", ("pg_options", "pg_options")),
])
def test_rules_table_torch_pg_keyword_choices(torch, choices):
    assert keyword_choices(torch) == choices


@pytest.mark.parametrize(("obs", "status", "summary"), [
    (PgObservation(source=None, string_compare=False, torch="2.6.0"), Status.SKIP,
     "needs SLIME or Miles installed: found neither"),
    (PgObservation(source=SRC, string_compare=False, torch="2.10.0"), Status.PASS,
     f"{SRC} does not compare the torch version as a string"),
    (PgObservation(source=SRC, string_compare=True, torch=None), Status.UNKNOWN,
     f"{SRC} compares the torch version as a string and torch is not installed to tell which name it picks"),
    (PgObservation(source=SRC, string_compare=True, torch="nightly"), Status.UNKNOWN,
     "torch version 'nightly' is not a PEP 440 version"),
    (PgObservation(source=SRC, string_compare=True, torch="2.10.0"), Status.FAIL,
     f"{SRC} compares the torch version as a string: with torch 2.10.0 it passes pg_options where torch wants "
     "backend_options; the weight-update group dies"),
    (PgObservation(source=SRC, string_compare=True, torch="2.6.0"), Status.WARN,
     f"{SRC} compares the torch version as a string: right for torch 2.6.0, wrong from torch 2.10 (an image upgrade "
     "breaks the weight update)"),
])
def test_rules_table_torch_pg_verdicts(obs, status, summary):
    verdict = evaluate_pg(obs)
    assert (verdict.status, verdict.summary, verdict.failure_id) == (status, summary, FAILURE_ID)
    assert verdict.remedy == (catalog.get(FAILURE_ID).remedy if status in (Status.FAIL, Status.WARN) else "")


def test_rules_table_torch_pg_collect_reads_slime_then_miles(tmp_path, monkeypatch):
    from rlcheck.probes.image import torch_pg

    monkeypatch.setattr(torch_pg.catalog, "installed_versions", lambda names: {"torch": "2.10.0"})
    roots = {"slime": None, "miles": tmp_path}
    monkeypatch.setattr(torch_pg, "package_root", lambda name: roots[name])
    assert torch_pg.collect_pg() == PgObservation(source=None, string_compare=False, torch="2.10.0")
    source = tmp_path / "miles" / "utils" / "distributed_utils.py"
    source.parent.mkdir(parents=True)
    source.write_text('import torch\nif str(torch.__version__) >= "2.6":\n    key = "backend_options"\n',
                      encoding="utf-8")
    assert torch_pg.collect_pg() == PgObservation(source=str(source), string_compare=True, torch="2.10.0")
    source.write_text("import torch\nkey = 'backend_options'\n", encoding="utf-8")
    found = torch_pg.collect_pg()
    assert found.string_compare is False and found.torch == "2.10.0"
