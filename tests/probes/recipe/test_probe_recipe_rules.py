"""Recipe rules: every known-bad variant FAILs with its catalogue id; every shipped recipe passes where it fits."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe import recipe_rules
from rlcheck.verdict import Status
from tests.bad_recipes import BAD_VARIANTS
from tests.test_recipes import FITS


def all_rules(recipe, profile):
    return [recipe_rules.evaluate_batch(recipe), recipe_rules.evaluate_layout(recipe),
            recipe_rules.evaluate_engines(recipe, profile), recipe_rules.evaluate_log_levels(recipe),
            recipe_rules.evaluate_connections(recipe, profile), recipe_rules.evaluate_pp_split(recipe)]


@pytest.mark.parametrize("variant", [v for v in BAD_VARIANTS if v.failure_id != "placement-group-oversubscribed"
                                     and v.failure_id != "sglang-dead-flag"], ids=lambda v: v.name)
def test_probe_recipe_rules_fail_each_bad_variant(variant):
    verdicts = all_rules(variant.build(), get_profile(variant.hardware))
    failed = [v for v in verdicts if v.status is Status.FAIL]
    assert [v.failure_id for v in failed] == [variant.failure_id], [v.render() for v in failed]


PAIRS = [(r, hw) for r in recipes.RECIPE_IDS for hw in sorted(FITS[r])]


@pytest.mark.parametrize(("recipe_id", "hw"), PAIRS, ids=[f"{r}-{h}" for r, h in PAIRS])
def test_probe_recipe_rules_pass_shipped_recipes(recipe_id, hw):
    profile = get_profile(hw)
    verdicts = all_rules(recipes.get(recipe_id, profile), profile)
    assert all(v.status in (Status.PASS, Status.SKIP) for v in verdicts), [v.render() for v in verdicts]


def test_probe_recipe_rules_without_profile_skip_hardware_checks():
    verdict = recipe_rules.evaluate_connections(recipes.get("qwen3-30b-a3b-disaggregated"), None)
    assert verdict.status is Status.SKIP and "needs a hardware profile (--hardware): found none" in verdict.summary


@pytest.mark.parametrize(("level", "status"), [("warning", Status.PASS), ("WARN", Status.FAIL),
                                               ("warn", Status.FAIL), ("fatal", Status.FAIL), ("WARNING", Status.FAIL)])
def test_probe_recipe_log_levels(level, status):
    from rlcheck.recipes.recipe import with_sglang

    recipe = with_sglang(recipes.get("qwen3-4b-colocated"), {"log-level-http": level})
    assert recipe_rules.evaluate_log_levels(recipe).status is status


def test_probe_recipe_driver_probe_reach():
    assert recipe_rules.reaches_gpu_probes(recipes.get("qwen3-30b-a3b-disaggregated"))
    assert not recipe_rules.reaches_gpu_probes(recipes.get("qwen3-4b-colocated"))


@pytest.mark.parametrize(("parallel", "fragment"), [
    ({"tp": 3}, "world size 16 is not divisible by TP 3 x PP 1 x CP 2"),
    ({"ep": 3}, "world size 16 is not divisible by EP 3 x expert-TP 1 x PP 1"),
], ids=["tp3-on-16", "ep3-on-16"])
def test_probe_recipe_layout_fails_uneven_parallelism(parallel, fragment):
    import dataclasses

    base = recipes.get("qwen3-30b-a3b-disaggregated")
    recipe = base.replace(parallel=dataclasses.replace(base.parallel, **parallel),
                          placement=dataclasses.replace(base.placement, actor_gpus_per_node=8))
    verdict = recipe_rules.evaluate_layout(recipe)
    assert verdict.status is Status.FAIL and verdict.failure_id == "parallel-layout-mismatch"
    assert fragment in verdict.summary
