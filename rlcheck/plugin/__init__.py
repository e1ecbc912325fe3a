"""rlcheck's pytest plugin, split by role: options, markers, gating, report, JUnit, shared resources and
progress lines."""

from __future__ import annotations

pytest_plugins = [
    "rlcheck.plugin.options",
    "rlcheck.plugin.markers",
    "rlcheck.plugin.gating",
    "rlcheck.plugin.report",
    "rlcheck.plugin.junit",
    "rlcheck.plugin.resources",
    "rlcheck.plugin.progress",
]
