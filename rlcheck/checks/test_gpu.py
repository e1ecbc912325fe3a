"""GPU smoke on this machine: bf16 GEMM rate and NCCL all-reduce bus bandwidth against the profile's floors."""

from __future__ import annotations

import pytest

from rlcheck.plugin.resources import check_params


@pytest.mark.parametrize("check", check_params("gpu"))
def test_gpu(check, check_inputs, record_verdict):
    record_verdict(*check.run(check_inputs))
