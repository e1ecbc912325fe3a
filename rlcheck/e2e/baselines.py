"""Per-hardware baseline bands for e2e phase times (data: rlcheck/data/baselines/<hardware>.toml)."""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

DATA_DIR = Path(__file__).parents[1] / "data" / "baselines"


@functools.cache
def load(hardware: str) -> dict[str, dict[str, tuple[float, float]]]:
    """{case: {phase: (low_s, high_s)}}; an empty dict where no band is recorded yet."""
    path = DATA_DIR / f"{hardware}.toml"
    if not path.exists():
        return {}
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    bands: dict[str, dict[str, tuple[float, float]]] = {}
    for case, phases in raw.items():
        if not phases.get("source"):
            raise ValueError(f"{path.name} [{case}]: a band needs a source line")
        bands[case] = {}
        for phase, band in phases.items():
            if phase == "source":
                continue
            if not (isinstance(band, list) and len(band) == 2 and 0 <= band[0] <= band[1]):
                raise ValueError(f"{path.name} [{case}] {phase}={band!r}: [low_s, high_s] with low <= high")
            bands[case][phase] = (float(band[0]), float(band[1]))
    return bands


def outside(case: str, hardware: str, phase_times: list[dict[str, float]]) -> list[str]:
    """Phases slower than their band's upper bound, as readable lines."""
    bands = load(hardware).get(case, {})
    slow = []
    for loop, phases in enumerate(phase_times):
        for phase, seconds in phases.items():
            if phase in bands and seconds > bands[phase][1]:
                slow.append(f"loop {loop} {phase} {seconds:.1f} s > {bands[phase][1]:.1f} s (band {bands[phase]})")
    return slow
