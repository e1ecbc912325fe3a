"""The per-node probe's stand-in for the scale benchmark: a fixed wait, then a real node observation read from a file.

The fan-out runs it on every node instead of rlcheck.probes.node.collect:collect_node (the swap is the benchmark's:
`fan_out(collector=...)`), so the fan-out's own cost is what grows with the node count, while each answer still
carries the bytes of a real observation (taken once on this machine by the benchmark) through Ray and the reports.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

COLLECTOR = "benchmarks.fanout_scale.standin:collect"


def collect(*, hold_s: float, observation_path: str) -> dict[str, Any]:
    time.sleep(hold_s)
    data: dict[str, Any] = json.loads(Path(observation_path).read_text(encoding="utf-8"))
    return data
