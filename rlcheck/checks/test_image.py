"""Image checks: what is installed in the training image, judged before a GPU is allocated."""

from __future__ import annotations

import pytest

from rlcheck.plugin.resources import check_params


@pytest.mark.parametrize("check", check_params("image"))
def test_image(check, check_inputs, record_verdict):
    record_verdict(*check.run(check_inputs))
