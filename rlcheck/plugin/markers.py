"""Markers for what a test needs; gating.py turns an unmet need into a skip that says why."""

from __future__ import annotations

import pytest

MARKERS = {
    "gpu": "gpu(min_sm=90, count=1): needs a CUDA GPU on this machine",
    "cluster": "cluster: needs a real Ray cluster given with --ray-address",
    "e2e": "e2e: an end-to-end GRPO run: needs a GPU Ray cluster (--ray-address) and a hardware profile",
    "slow": "slow: takes more than about 30 s; skipped by --quick",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
