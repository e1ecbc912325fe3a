"""Rule table for the markers the plugin declares (rlcheck.plugin.markers): each one registered with pytest as
`NAME: TEXT`, so `pytest --markers` explains it and --strict-markers (this project's addopts) accepts it."""

from __future__ import annotations

from rlcheck.plugin import markers


class _Config:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def addinivalue_line(self, name: str, line: str) -> None:
        self.lines.append((name, line))


def test_every_marker_is_registered_as_name_colon_text():
    config = _Config()
    markers.pytest_configure(config)  # type: ignore[arg-type]
    assert config.lines == [
        ("markers", "gpu: gpu(min_sm=90, count=1): needs a CUDA GPU on this machine"),
        ("markers", "cluster: cluster: needs a real Ray cluster given with --ray-address"),
        ("markers", "e2e: e2e: an end-to-end GRPO run: needs a GPU Ray cluster (--ray-address) and a hardware "
                    "profile"),
        ("markers", "slow: slow: takes more than about 30 s; skipped by --quick"),
    ]
