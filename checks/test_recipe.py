"""The recipe checks, as shipped in the package (rlcheck/checks/test_recipe.py): one source for checkout and wheel."""

from __future__ import annotations

from rlcheck.checks.test_recipe import test_recipe

__all__ = ["test_recipe"]
