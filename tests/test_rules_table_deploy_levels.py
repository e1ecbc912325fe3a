"""Rule table for the per-node run levels (rlcheck.deploy.levels): the checks of each level in the order they run, the
budget each is held to (its own or the one given, 0 included), the inputs the checks see (the recipe on the profile,
declared or detected), and --hardware NAME|auto|none at each level (auto detects within a third of the budget, at
most 10 s; an unknown name or level refused before any probe runs)."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import hardware
from rlcheck.deploy import levels
from rlcheck.preflight import slurm
from rlcheck.probes.node import gpus
from rlcheck.verdict import Status, Verdict

RECIPE = "qwen3-4b-colocated"
QUICK = [c.id for c in slurm.quick_checks()]


def test_levels_and_their_budgets():
    assert levels.LEVELS == ("quick", "standard", "long")
    assert levels.BUDGET_S == {"quick": 25.0, "standard": 120.0, "long": 420.0}


@pytest.mark.parametrize(("level", "extra"), [
    ("quick", []), ("standard", ["gpu_bf16_gemm"]), ("long", ["gpu_bf16_gemm", "gpu_nccl_allreduce"]),
])
def test_level_checks_are_the_quick_tier_then_the_gpu_work(level, extra):
    assert [c.id for c in levels.level_checks(level)] == [*QUICK, *extra]


@pytest.mark.parametrize("level", ["medium", "Quick", "", "r3"])
def test_level_checks_refuse_an_unknown_level(level):
    with pytest.raises(ValueError) as raised:
        levels.level_checks(level)
    assert str(raised.value) == f"level={level!r}: one of quick, standard, long"


@pytest.fixture
def tier(monkeypatch):
    """slurm.run_tier replaced: what the level hands it, answered with one PASS."""
    seen: dict = {}

    def run_tier(checks, inputs, budget_s):
        seen.update(checks=[c.id for c in checks], inputs=inputs, budget_s=budget_s)
        return [Verdict(check_id="x", status=Status.PASS, summary="ok")]

    monkeypatch.setattr(slurm, "run_tier", run_tier)
    return seen


@pytest.mark.parametrize(("level", "budget_s", "held_s"), [
    ("quick", None, 25.0), ("standard", None, 120.0), ("long", None, 420.0), ("long", 7.5, 7.5), ("standard", 0.0, 0.0),
])
def test_judge_node_runs_the_levels_checks_within_its_budget(tier, level, budget_s, held_s):
    profile = hardware.get_profile("h200")
    got = levels.judge_node(level, profile, RECIPE, budget_s, declared=True)
    assert got == [Verdict(check_id="x", status=Status.PASS, summary="ok")]
    assert tier["checks"] == [c.id for c in levels.level_checks(level)] and tier["budget_s"] == held_s
    inputs = tier["inputs"]
    assert inputs.profile is profile and inputs.declared is True and inputs.recipe.id == RECIPE


@pytest.mark.parametrize("declared", [True, False])
def test_judge_node_inputs_are_the_gates_with_declared_as_given(tier, declared):
    from rlcheck.preflight import gate

    levels.judge_node("standard", None, RECIPE, declared=declared)
    assert tier["inputs"] == dataclasses.replace(gate.inputs_for(RECIPE, None), declared=declared)
    levels.judge_node("standard", None, RECIPE)
    assert tier["inputs"].declared is False  # not declared unless said


def test_judge_node_unknown_level_refused(tier):
    with pytest.raises(ValueError, match="level='r3'"):
        levels.judge_node("r3", None, RECIPE)
    assert tier == {}


def test_judge_node_past_its_budget_every_check_unknown():
    verdicts = levels.judge_node("long", None, RECIPE, budget_s=0.0)
    assert [v.check_id for v in verdicts] == [*QUICK, "gpu_bf16_gemm", "gpu_nccl_allreduce"]
    assert {v.status for v in verdicts} == {Status.UNKNOWN}


@pytest.fixture
def here(monkeypatch, tier):
    """judge_here's collaborators replaced: the quick tier's own judge_here, and the GPU detection."""
    calls: dict = {"tier": tier}

    def quick(hardware_name, recipe_id, budget_s):
        calls["quick"] = (hardware_name, recipe_id, budget_s)
        return []

    class Detection:
        profile = hardware.get_profile("b200")

    def detect(timeout_s=None):
        calls["detect_timeout_s"] = timeout_s
        return Detection()

    monkeypatch.setattr(slurm, "judge_here", quick)
    monkeypatch.setattr(gpus, "detect", detect)
    return calls


@pytest.mark.parametrize(("budget_s", "held_s"), [(None, 25.0), (3.0, 3.0)])
def test_judge_here_quick_is_the_slurm_tiers_own(here, budget_s, held_s):
    assert levels.judge_here("quick", "h200", RECIPE, budget_s) == []
    assert here["quick"] == ("h200", RECIPE, held_s) and "detect_timeout_s" not in here and here["tier"] == {}


@pytest.mark.parametrize(("name", "profile", "declared"), [("h200", "h200", True), ("none", None, False)])
def test_judge_here_a_named_or_no_profile_is_not_detected(here, name, profile, declared):
    levels.judge_here("long", name, RECIPE)
    inputs = here["tier"]["inputs"]
    assert (inputs.profile.name if inputs.profile else None, inputs.declared) == (profile, declared)
    assert here["tier"]["budget_s"] == 420.0 and "detect_timeout_s" not in here and "quick" not in here


@pytest.mark.parametrize(("budget_s", "detect_s"), [(None, 10.0), (30.0, 10.0), (29.0, 29.0 / 3), (3.0, 1.0)])
def test_judge_here_auto_detects_within_a_third_of_the_budget_at_most_10_s(here, budget_s, detect_s):
    levels.judge_here("standard", "auto", RECIPE, budget_s)
    assert here["detect_timeout_s"] == pytest.approx(detect_s)
    tier = here["tier"]
    assert tier["inputs"].profile.name == "b200" and tier["inputs"].declared is False
    assert tier["budget_s"] == (120.0 if budget_s is None else budget_s)


def test_judge_here_unknown_hardware_refused_before_any_probe(here):
    with pytest.raises(ValueError) as raised:
        levels.judge_here("standard", "h300", RECIPE)
    assert str(raised.value) == f"--hardware='h300': one of {', '.join(hardware.load_profiles())}, auto, none"
    assert here == {"tier": {}}


@pytest.mark.parametrize("budget_s", [None, 5.0])  # without a budget it once raised KeyError
def test_judge_here_unknown_level_refused_before_the_hardware_is_read(here, monkeypatch, budget_s):
    monkeypatch.setattr(hardware, "load_profiles", lambda: pytest.fail("profiles read for an unknown level"))
    with pytest.raises(ValueError) as raised:
        levels.judge_here("r3", "auto", RECIPE, budget_s)
    assert str(raised.value) == "level='r3': one of quick, standard, long"
    assert here == {"tier": {}}
