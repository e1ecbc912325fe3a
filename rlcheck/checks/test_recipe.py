"""Recipe checks: the typed recipe (or a user's job) on the hardware profile, judged before any GPU is asked for."""

from __future__ import annotations

import pytest

from rlcheck.plugin.resources import check_params


@pytest.mark.parametrize("check", check_params("recipe"))
def test_recipe(check, check_inputs, record_verdict):
    record_verdict(*check.run(check_inputs))
