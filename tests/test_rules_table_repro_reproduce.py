"""Rule table for judging a reproducer against the catalogue's affected range (rlcheck.repro.reproduce): each of the
five outcomes as its whole verdict and report state, the range text of each package (inside, outside, absent, no
range), and which versions a reproduction is judged against (the catalogue's packages, SLIME/Miles as detected)."""

from __future__ import annotations

import types

import pytest

from rlcheck import catalog
from rlcheck.framework.detect import Installed
from rlcheck.repro import reproduce
from rlcheck.repro.reproduce import Reproduction, judge, versions_for
from rlcheck.verdict import Status, Verdict


def entry(*affected: tuple[str, str]) -> catalog.KnownFailure:
    return catalog.KnownFailure(
        id="x-fail", layer="sglang", severity="crash", title="t", signatures=("^boom$",), examples=("boom",),
        near_misses=("boom!",), cause="c", remedy="do the fix",
        affected=tuple(catalog.Affected(package=p, specifier=s) for p, s in affected))


@pytest.fixture
def known(monkeypatch):
    """catalog.get as reproduce reads it, answering the entry the test puts in."""
    entries: dict[str, catalog.KnownFailure] = {}
    monkeypatch.setattr(reproduce, "catalog", types.SimpleNamespace(get=lambda fid: entries[fid],
                                                                    installed_versions=catalog.installed_versions))
    return entries


def run(versions, reproduced, fix_verified, details="d"):
    return judge(Reproduction(failure_id="x-fail", versions=versions, reproduced=reproduced,
                              fix_verified=fix_verified, evidence="E", details=details))


def verdict(status, summary, remedy=""):
    return Verdict(status=status, summary=summary, details="d", failure_id="x-fail", remedy=remedy,
                   check_id="repro_x-fail")


ONE = (("uvicorn", ">=0.50,<0.60"),)
IN, OUT = {"uvicorn": "0.54.0"}, {"uvicorn": "0.10.0"}
IN_TEXT, OUT_TEXT = "uvicorn 0.54.0 vs >=0.50,<0.60", "uvicorn 0.10.0 vs >=0.50,<0.60"


@pytest.mark.parametrize(("versions", "reproduced", "fixed", "expected", "state"), [
    # inside the range: must reproduce, and the fix must work
    (IN, True, True, verdict(Status.PASS, f"present in this environment; fix verified ({IN_TEXT}): E"),
     "present in this environment; fix verified"),
    (IN, False, True, verdict(Status.FAIL, f"catalogue says affected but it did not reproduce ({IN_TEXT})",
                              "re-check the affected range in the catalogue"), "unexpectedly absent"),
    (IN, False, False, verdict(Status.FAIL, f"catalogue says affected but it did not reproduce ({IN_TEXT})",
                               "re-check the affected range in the catalogue"), "unexpectedly absent"),
    (IN, True, False, verdict(Status.FAIL, "reproduced, but the recommended fix did not work: E", "do the fix"),
     "present; fix failed"),
    # outside it: must not reproduce
    (OUT, True, True, verdict(Status.FAIL, f"reproduces outside the affected range ({OUT_TEXT})",
                              "widen the affected range in the catalogue"), "present outside range"),
    (OUT, True, False, verdict(Status.FAIL, f"reproduces outside the affected range ({OUT_TEXT})",
                               "widen the affected range in the catalogue"), "present outside range"),
    (OUT, False, True, verdict(Status.PASS, f"fixed upstream; fix verified ({OUT_TEXT}): E"),
     "fixed upstream; fix verified"),
    (OUT, False, False, verdict(Status.PASS, f"fixed upstream ({OUT_TEXT}): E"), "fixed upstream"),
    # a package not installed: the range cannot say, so it must reproduce
    ({"uvicorn": None}, False, True, verdict(
        Status.FAIL, "catalogue says affected but it did not reproduce (uvicorn absent vs >=0.50,<0.60)",
        "re-check the affected range in the catalogue"), "unexpectedly absent"),
    ({}, True, True, verdict(Status.PASS, "present in this environment; fix verified (uvicorn absent vs "
                                          ">=0.50,<0.60): E"), "present in this environment; fix verified"),
])
def test_each_outcome_against_one_range(known, versions, reproduced, fixed, expected, state):
    known["x-fail"] = entry(*ONE)
    assert run(versions, reproduced, fixed) == (expected, {"state": state})


@pytest.mark.parametrize(("reproduced", "fixed", "expected", "state"), [
    (False, True, verdict(Status.FAIL, "catalogue says affected but it did not reproduce (not tied to a package "
                                       "version)", "re-check the affected range in the catalogue"),
     "unexpectedly absent"),
    (True, True, verdict(Status.PASS, "present in this environment; fix verified (not tied to a package version): E"),
     "present in this environment; fix verified"),
    (True, False, verdict(Status.FAIL, "reproduced, but the recommended fix did not work: E", "do the fix"),
     "present; fix failed"),
])
def test_an_entry_without_a_range_must_reproduce(known, reproduced, fixed, expected, state):
    known["x-fail"] = entry()
    assert run({"uvicorn": "0.54.0"}, reproduced, fixed) == (expected, {"state": state})


def test_two_packages_are_named_in_the_catalogues_order_and_one_outside_is_outside(known):
    known["x-fail"] = entry(("uvicorn", "<1"), ("sglang", ">=0.5"))
    got, state = run({"sglang": "0.4.0", "uvicorn": "0.2"}, True, True, details="")
    assert got == Verdict(status=Status.FAIL, summary="reproduces outside the affected range (uvicorn 0.2 vs <1, "
                          "sglang 0.4.0 vs >=0.5)", details="", failure_id="x-fail",
                          remedy="widen the affected range in the catalogue", check_id="repro_x-fail")
    assert state == {"state": "present outside range"}


def test_a_real_catalogue_entry_is_judged_by_its_own_range():
    got, state = judge(Reproduction(failure_id="uvicorn-log-level", versions={"uvicorn": "0.10.0"},
                                    reproduced=False, fix_verified=False, evidence="E"))
    assert (got.status, got.check_id, got.failure_id, state) == (Status.PASS, "repro_uvicorn-log-level",
                                                                 "uvicorn-log-level", {"state": "fixed upstream"})
    assert got.summary.startswith("fixed upstream (uvicorn 0.10.0 vs ") and got.summary.endswith("): E")


def test_versions_are_the_entrys_packages_with_the_framework_judged(known, monkeypatch):
    known["x-fail"] = entry(("slime", ">=0.2"), ("uvicorn", "<1"))
    asked = []
    monkeypatch.setattr(reproduce, "catalog", types.SimpleNamespace(
        get=lambda fid: known[fid],
        installed_versions=lambda packages: asked.append(packages) or {"slime": None, "uvicorn": "0.3"}))
    monkeypatch.setattr(reproduce, "collect_installed", lambda: Installed(framework="slime", version="0.3.1"))
    assert versions_for("x-fail") == {"slime": "0.3.1", "uvicorn": "0.3"}
    assert asked == [("slime", "uvicorn")]
    # the framework given (--framework) wins over the one detected here
    assert versions_for("x-fail", Installed(framework="slime", version="0.2.4")) == {"slime": "0.2.4",
                                                                                   "uvicorn": "0.3"}
    assert versions_for("x-fail", Installed(framework="miles", version="0.2.4")) == {"slime": None,
                                                                                   "uvicorn": "0.3"}
