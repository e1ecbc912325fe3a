"""Typed recipes for the end-to-end test cases (filled in by the recipes work).

The ids are what --recipe accepts; the default is the Qwen3-4B colocated case.
"""

from __future__ import annotations

RECIPE_IDS = (
    "qwen3-4b-colocated",
    "qwen3-30b-a3b-disaggregated",
    "qwen3-4b-remote-rm",
    "glm5.2-gb300",
)
DEFAULT_RECIPE = "qwen3-4b-colocated"
