"""The preflight gate of an e2e case: the blocking checks that guard this recipe on this hardware.

A case runs only when none of them is FAIL or UNKNOWN; otherwise it is skipped with their ids and
reasons, and no GPU is requested. Results are kept per (recipe, hardware) for the pytest session.
"""

from __future__ import annotations

from rlcheck import recipes
from rlcheck.hardware import HardwareProfile
from rlcheck.probes import image, memory, recipe_rules, slime_source
from rlcheck.probes.numpy_megatron import collect_numpy_megatron, evaluate_numpy_megatron
from rlcheck.probes.sglang_flags import collect_sglang_options, evaluate_sglang_flags
from rlcheck.recipes.recipe import Recipe
from rlcheck.verdict import Status, Verdict


def recipe_verdicts(recipe: Recipe, profile: HardwareProfile) -> list[Verdict]:
    return [recipe_rules.evaluate_batch(recipe), recipe_rules.evaluate_layout(recipe),
            recipe_rules.evaluate_engines(recipe, profile), recipe_rules.evaluate_log_levels(recipe),
            recipe_rules.evaluate_connections(recipe, profile), recipe_rules.evaluate_pp_split(recipe),
            memory.evaluate_stage_memory(recipe, profile), memory.evaluate_kv_pool(recipe, profile)]


def image_verdicts(recipe: Recipe, profile: HardwareProfile) -> list[Verdict]:
    return [evaluate_numpy_megatron(collect_numpy_megatron()),
            image.evaluate_megatron_training(image.collect_megatron()),
            image.evaluate_mbridge(recipe.model.moe is not None, recipe.id, image.collect_mbridge()),
            image.evaluate_arch(image.collect_arch(), profile),
            slime_source.evaluate_guard(slime_source.collect_guard(), recipe_rules.reaches_gpu_probes(recipe),
                                        recipe.id),
            slime_source.evaluate_kernel(slime_source.collect_kernel()),
            evaluate_sglang_flags(recipe.argv(), collect_sglang_options())]


_DONE: dict[tuple[str, str], tuple[Verdict, ...]] = {}


def preflight(recipe_id: str, profile: HardwareProfile) -> tuple[Verdict, ...]:
    """Every blocking verdict for the recipe on this hardware (kept for the rest of the session)."""
    key = (recipe_id, profile.name)
    if key not in _DONE:
        _DONE[key] = _preflight(recipe_id, profile)
    return _DONE[key]


def _preflight(recipe_id: str, profile: HardwareProfile) -> tuple[Verdict, ...]:
    try:
        recipe = recipes.get(recipe_id, profile)
    except ValueError as exc:
        return (Verdict(check_id="recipe_fits_hardware", status=Status.FAIL, summary=str(exc)),)
    return (*recipe_verdicts(recipe, profile), *image_verdicts(recipe, profile))


def blockers(verdicts: tuple[Verdict, ...]) -> list[Verdict]:
    return [v for v in verdicts if v.status.blocks]


def skip_reason(verdicts: tuple[Verdict, ...]) -> str | None:
    bad = blockers(verdicts)
    if not bad:
        return None
    return "preflight NO-GO, no GPU requested: " + "; ".join(f"{v.check_id} {v.status.value}: {v.summary}"
                                                             for v in bad)
