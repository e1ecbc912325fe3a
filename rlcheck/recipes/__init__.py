"""Typed recipes for the end-to-end test cases: a base recipe each plus hardware deltas.

get(recipe_id, hardware) is what --recipe, `rlcheck render` and the test cases use.
"""

from __future__ import annotations

from rlcheck.hardware import HardwareProfile, get_profile
from rlcheck.recipes import deltas  # noqa: F401  (recipes.deltas.for_hardware)

RECIPE_IDS = (
    "qwen3-4b-colocated",
    "qwen3-30b-a3b-disaggregated",
    "qwen3-4b-remote-rm",
    "glm5.2-gb300",
)
DEFAULT_RECIPE = "qwen3-4b-colocated"


def get(recipe_id: str, hardware: str | HardwareProfile | None = None):  # -> Recipe
    """The recipe for this hardware (deltas applied); KeyError lists valid ids, NotForHardware says why not."""
    from rlcheck.recipes.cases import BASES
    from rlcheck.recipes.deltas import for_hardware

    if recipe_id not in BASES:
        raise KeyError(f"unknown recipe {recipe_id!r}: valid are {', '.join(RECIPE_IDS)}")
    recipe = BASES[recipe_id]()
    if hardware is None:
        return recipe
    profile = get_profile(hardware) if isinstance(hardware, str) else hardware
    return for_hardware(recipe, profile)
