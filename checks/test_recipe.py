"""Recipe checks: the typed recipe for --recipe on --hardware, judged before any GPU is asked for."""

from __future__ import annotations

from rlcheck.probes import recipe_rules
from rlcheck.probes.memory import evaluate_kv_pool, evaluate_stage_memory
from rlcheck.probes.sglang_flags import collect_sglang_options, evaluate_sglang_flags
from rlcheck.verdict import Status, Verdict


def test_recipe_fits_hardware(record_verdict, recipe_under_check):
    """The recipe has a shape for this hardware (e.g. glm5.2-gb300 needs GB300 nodes)."""
    rc = recipe_under_check
    if rc.refusal:
        record_verdict(Verdict(check_id="x", status=Status.FAIL, summary=rc.refusal))
    elif rc.profile is None:
        record_verdict(Verdict(check_id="x", status=Status.SKIP,
                               summary="needs a hardware profile (--hardware): found none; judging the base recipe"))
    else:
        record_verdict(Verdict(check_id="x", status=Status.PASS, summary=f"{rc.recipe.id} is shaped for "
                                                                         f"{rc.profile.name}"))


def test_recipe_batch(record_verdict, recipe_under_check):
    record_verdict(recipe_rules.evaluate_batch(recipe_under_check.recipe))


def test_recipe_layout(record_verdict, recipe_under_check):
    record_verdict(recipe_rules.evaluate_layout(recipe_under_check.recipe))


def test_recipe_engines(record_verdict, recipe_under_check):
    record_verdict(recipe_rules.evaluate_engines(recipe_under_check.recipe, recipe_under_check.profile))


def test_recipe_log_levels(record_verdict, recipe_under_check):
    record_verdict(recipe_rules.evaluate_log_levels(recipe_under_check.recipe))


def test_recipe_cuda_device_max_connections(record_verdict, recipe_under_check):
    record_verdict(recipe_rules.evaluate_connections(recipe_under_check.recipe, recipe_under_check.profile))


def test_recipe_pp_split(record_verdict, recipe_under_check):
    record_verdict(recipe_rules.evaluate_pp_split(recipe_under_check.recipe))


def test_recipe_sglang_flags(record_verdict, recipe_under_check):
    record_verdict(evaluate_sglang_flags(recipe_under_check.recipe.argv(), collect_sglang_options()))


def test_recipe_stage_memory(record_verdict, recipe_under_check):
    """Training memory of the most loaded pipeline stage against the GPU's budget (pp-stage-oom)."""
    record_verdict(evaluate_stage_memory(recipe_under_check.recipe, recipe_under_check.profile))


def test_recipe_kv_pool(record_verdict, recipe_under_check):
    """SGLang's KV pool at mem_fraction_static against rollout context x concurrency (kv-pool-truncation)."""
    record_verdict(evaluate_kv_pool(recipe_under_check.recipe, recipe_under_check.profile))
