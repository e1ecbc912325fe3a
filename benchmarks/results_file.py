"""Where benchmark result files go and what every one of them records about how it ran."""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def machine() -> dict[str, Any]:
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"hostname": platform.node(), "arch": platform.machine(), "cpu_model": model,
            "cpus": os.cpu_count(), "memory_gib": round(mem_gib, 1), "python": platform.python_version(),
            "load_average_1m_at_start": round(os.getloadavg()[0], 2)}


def write(name: str, results: dict[str, Any]) -> Path:
    """Write benchmarks/results/<name>.json with the command, machine and date beside the numbers."""
    doc = {"benchmark": name, "command": shlex.join([Path(sys.executable).name, *sys.orig_argv[1:]]),
           "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), "machine": machine(),
           **results}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path
