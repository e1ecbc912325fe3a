"""This machine's GPU health as rlcheck reads and judges it: NVML idle and under a bf16 GEMM load, the nvidia-smi
fallback beside it, and the node-health verdicts; writes benchmarks/results/gpu_health_<name>.json.

Run on a GPU machine (nvidia-ml-py installed): python -m benchmarks.gpu_health.run --name h200
The NVML dumps it writes are the ones tests/data/gpu_health/nvml_*.json record (SOURCES.md there says which).
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import time
from importlib import metadata
from typing import Any

from benchmarks import results_file
from rlcheck.preflight.gpu import collect_this_node, judge_this_node
from rlcheck.probes.node import gpu_health, gpu_nvml
from rlcheck.probes.node.collect import TMS_RULE

LOAD = """
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
a @ b
torch.cuda.synchronize()
print("LOADED", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
"""


def record_under_load(seconds: float, settle_s: float) -> dict[str, Any]:
    """The NVML dump while a bf16 GEMM loop runs on GPU 0 (recorded settle_s after its first GEMM)."""
    load = subprocess.Popen([sys.executable, "-c", LOAD, str(seconds)], stdout=subprocess.PIPE, text=True)
    try:
        assert load.stdout is not None
        first = load.stdout.readline()
        if "LOADED" not in first:
            return {"error": f"the load did not start: {first!r}"}
        time.sleep(settle_s)
        return gpu_nvml.record(gpu_nvml.Pynvml())
    finally:
        load.kill()
        load.wait(timeout=30)


def verdicts(health: gpu_health.HealthReading) -> list[dict[str, Any]]:
    facts, obs = collect_this_node(TMS_RULE)
    return [v.to_dict() for v in judge_this_node((facts, dataclasses.replace(obs, health=health)), None)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="h200", help="result file: benchmarks/results/gpu_health_<name>.json")
    parser.add_argument("--load-s", type=float, default=20.0)
    parser.add_argument("--settle-s", type=float, default=8.0)
    args = parser.parse_args()
    idle = gpu_nvml.record(gpu_nvml.Pynvml())
    busy = record_under_load(args.load_s, args.settle_s)
    collected = gpu_health.collect_gpu_health()  # the node task's path: NVML child, kernel log, PCI bus
    smi = gpu_health.collect_gpu_health(nvml=lambda timeout_s: ({}, "not asked: the nvidia-smi reading, to compare"))
    kernel = {"kernel_log": "", "kernel_tool": collected.kernel_log, "kernel_log_error": collected.kernel_log_error,
              "pci_gpus": collected.pci_gpus}
    busy_health = gpu_health.health_from_nvml(busy, **kernel) if "gpus" in busy else None
    path = results_file.write(f"gpu_health_{args.name}", {
        "pynvml": metadata.version("nvidia-ml-py"),
        "nvml_dump_idle": idle, "nvml_dump_busy": busy,
        "reading": dataclasses.asdict(collected), "reading_nvidia_smi": dataclasses.asdict(smi),
        "verdicts_idle": verdicts(collected), "verdicts_busy": verdicts(busy_health) if busy_health else [],
        "verdicts_nvidia_smi": verdicts(smi),
    })
    print(path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
