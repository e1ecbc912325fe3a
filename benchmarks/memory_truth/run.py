"""rlcheck's training-memory estimate (recipe_stage_memory) against real Megatron-core training steps on one GPU.

Run on the GPU machine, megatron-core importable (the H200 device: carry the wheel, see benchmarks/README.md):

    python -m benchmarks.memory_truth.run [--only NAME ...] [--copy-to DIR]

Each configuration (benchmarks/memory_truth/configs.py) trains in a fresh process (step.py: 3 steps, memory per
phase); beside each measurement the same script writes rlcheck's estimate of the SLIME argv the run stands for
(configs.estimate, the `--job` path on the h200 profile). Writes benchmarks/results/memory_truth_<gpu>.json
(and a copy in --copy-to, for a machine whose results come back from a folder).

Compared, per configuration (steady state: the last step, Adam's moments allocated):
- allocated: rlcheck's static + activations vs the step's torch.cuda.max_memory_allocated (forward, backward and
  the optimizer step; the estimate's buffers are device-wide terms the caching allocator does not see);
- device: rlcheck's total (buffers included) vs total - free from torch.cuda.mem_get_info after the step (what
  Miles' memory line reads: context, NCCL, and the caching allocator's reserved blocks);
- per term: static (allocated after the step) and activations (the step's peak less what was allocated before it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import results_file
from benchmarks.memory_truth import configs

CONFIG_TIMEOUT_S = 180
TOTAL_BUDGET_S = 540
"""Stop starting configurations past this (the device machine's commands end at 600 s)."""


def run_one(name: str) -> tuple[dict[str, Any], str]:
    """(the step's record, its output tail) from a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "record.json"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        try:
            proc = subprocess.run([sys.executable, "-m", "benchmarks.memory_truth.step", name, str(out)],
                                  capture_output=True, text=True, timeout=CONFIG_TIMEOUT_S, env=env, check=False)
            tail = (proc.stdout + proc.stderr)[-3000:]
        except subprocess.TimeoutExpired as exc:
            error = f"timed out after {CONFIG_TIMEOUT_S} s"
            return {"name": name, "ok": False, "error": error}, str(exc.stderr)[-3000:]
        if not out.exists():
            return {"name": name, "ok": False, "error": f"exit {proc.returncode}, no record"}, tail
        record: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return record, tail


def _err(estimate: float, measured: float) -> float:
    return round((estimate - measured) / measured * 100, 1)


def compare(record: dict[str, Any], estimate: dict[str, Any]) -> dict[str, Any]:
    """Estimate vs measurement, overall and per term, on the last (steady) step; errors in percent of measured."""
    last = record["steps"][-1]
    peak = max(last["peak_fwd_bwd_gib"], last["peak_optimizer_step_gib"])
    static = last["allocated_after_step_gib"]
    activations = last["peak_fwd_bwd_gib"] - last["allocated_at_start_gib"]
    return {
        "measured": {"peak_allocated_gib": peak, "static_gib": static, "activations_gib": activations,
                     "device_used_gib": last["device_used_gib"], "max_reserved_gib": last["max_reserved_gib"]},
        "estimate": {"allocated_gib": estimate["allocated_gib"], "static_gib": estimate["static_gib"],
                     "activations_gib": estimate["activations"]["total_gib"], "total_gib": estimate["total_gib"]},
        "error_pct": {"allocated": _err(estimate["allocated_gib"], peak),
                      "static": _err(estimate["static_gib"], static),
                      "activations": _err(estimate["activations"]["total_gib"], activations),
                      "device": _err(estimate["total_gib"], last["device_used_gib"])},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="configuration names (default: all)")
    parser.add_argument("--copy-to", default=None, help="also copy the result file into this folder")
    parser.add_argument("--no-smoke", action="store_true", help="skip the quick machinery check first")
    args = parser.parse_args()
    chosen = [configs.by_name(n) for n in args.only] if args.only else list(configs.CONFIGS)
    started = time.monotonic()
    smoke: dict[str, Any] = {"skipped": True}
    if not args.no_smoke:
        record, tail = run_one(configs.SMOKE.name)
        smoke = {"ok": record.get("ok"), "error": record.get("error"), "wall_s": record.get("wall_s")}
        print(f"smoke: {smoke}\n{tail if not record.get('ok') else ''}", flush=True)
        if not record.get("ok"):
            chosen = []
    runs, gpu = [], "unknown"
    for config in chosen:
        estimate = configs.estimate(config)
        entry: dict[str, Any] = {"name": config.name, "model": config.model.name, "tokens": config.tokens,
                                 "recompute": "full (uniform, 1)" if config.recompute else "none",
                                 "temperature": config.temperature, "argv": list(config.argv()),
                                 "estimate_gib": estimate}
        if time.monotonic() - started > TOTAL_BUDGET_S:
            entry["not_run"] = f"the command's {TOTAL_BUDGET_S} s were spent"
            runs.append(entry)
            continue
        record, tail = run_one(config.name)
        entry["measured"] = record
        if record.get("ok"):
            gpu = record.get("gpu", gpu)
            entry["comparison"] = compare(record, estimate)
            print(config.name, json.dumps(entry["comparison"]["error_pct"]), flush=True)
        else:
            entry["output_tail"] = tail
            print(config.name, "FAILED", record.get("error"), tail, flush=True)
        runs.append(entry)
    name = "memory_truth_" + ("h200" if "H200" in gpu else gpu.lower().replace(" ", "_"))
    path = results_file.write(name, {
        "what": "rlcheck's recipe_stage_memory estimate of each SLIME argv (h200 profile, one GPU, via the --job "
                "reading) beside real megatron-core training steps on one GPU (benchmarks/memory_truth/step.py "
                "says what runs and what stands in for Transformer Engine)",
        "smoke": smoke, "wall_s": round(time.monotonic() - started, 1), "runs": runs})
    if args.copy_to:
        shutil.copy(path, Path(args.copy_to) / path.name)
    print(f"wrote {path}")
    return 0 if all(r.get("comparison") for r in runs) and runs else 1


if __name__ == "__main__":
    sys.exit(main())
