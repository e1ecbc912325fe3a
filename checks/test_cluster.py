"""The cluster checks, as shipped in the package (rlcheck/checks/test_cluster.py): one source for a checkout and a
wheel. The module-scoped fan-out fixture comes along, so one fan-out still feeds every cluster check."""

from __future__ import annotations

from rlcheck.checks.test_cluster import cluster_inputs, test_cluster

__all__ = ["cluster_inputs", "test_cluster"]
