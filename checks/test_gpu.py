"""The gpu checks, as shipped in the package (rlcheck/checks/test_gpu.py): one source for a checkout and a wheel."""

from __future__ import annotations

from rlcheck.checks.test_gpu import test_gpu

__all__ = ["test_gpu"]
