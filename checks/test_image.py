"""The image checks, as shipped in the package (rlcheck/checks/test_image.py): one source for a checkout and a wheel."""

from __future__ import annotations

from rlcheck.checks.test_image import test_image

__all__ = ["test_image"]
