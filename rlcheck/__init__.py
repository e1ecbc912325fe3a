"""rlcheck: catch the known failures of RL post-training stacks before a GPU is allocated."""

from __future__ import annotations

__version__ = "0.1.0"
