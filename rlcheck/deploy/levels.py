"""Run levels for the per-node tier, as DCGM diagnostics users know them (quick, medium, long): what each runs and
the time budget it is held to. A check not judged within the budget is UNKNOWN (never a pass, never a drain).

    quick     25 s   the counters tier (image checks, gpu_node_inventory, gpu_node_health): reads only, safe beside
                     a running job; what the Slurm prolog and the node-status DaemonSet run
    standard  120 s  + gpu_bf16_gemm (the slowest GPU's bf16 GEMM rate against the profile's floor)
    long      420 s  + gpu_nccl_allreduce (NCCL all-reduce bus bandwidth across the node's GPUs)

standard and long put work on the GPUs: run them on an idle (drained or cordoned) node, as DCGM's level 2 and 3
diagnostics are, never beside a training job.
"""

from __future__ import annotations

import dataclasses

from rlcheck.hardware import HardwareProfile
from rlcheck.preflight import all_checks, gate, slurm
from rlcheck.preflight.registry import Check
from rlcheck.verdict import Verdict

GPU_WORK = {"standard": ("gpu_bf16_gemm",), "long": ("gpu_bf16_gemm", "gpu_nccl_allreduce")}
BUDGET_S = {"quick": 25.0, "standard": 120.0, "long": 420.0}
"""Each level's default budget: the quick tier's 25 s; the GEMM check's own bound is 300 s, but a healthy H200 or
B200 node answers in well under a minute, so 120 s; long adds the all-reduce (its own bound also 300 s)."""
LEVELS = tuple(BUDGET_S)


def _budget_s(level: str, budget_s: float | None) -> float:
    """budget_s, or the level's own when None; ValueError for an unknown level (given a budget or not)."""
    if level not in BUDGET_S:
        raise ValueError(f"level={level!r}: one of {', '.join(LEVELS)}")
    return BUDGET_S[level] if budget_s is None else budget_s


def level_checks(level: str) -> tuple[Check, ...]:
    """The checks of a level, in the order they run: the quick tier first, then the GPU work."""
    _budget_s(level, None)
    extra = GPU_WORK.get(level, ())
    by_id = {c.id: c for c in all_checks()}
    return (*slurm.quick_checks(), *(by_id[i] for i in extra))


def judge_node(level: str, profile: HardwareProfile | None, recipe_id: str, budget_s: float | None = None, *,
               declared: bool = False) -> list[Verdict]:
    """The level's checks on this machine within budget_s (the level's default when None)."""
    checks = level_checks(level)
    inputs = dataclasses.replace(gate.inputs_for(recipe_id, profile), declared=declared)
    return slurm.run_tier(checks, inputs, _budget_s(level, budget_s))


def judge_here(level: str, hardware_name: str, recipe_id: str, budget_s: float | None = None) -> list[Verdict]:
    """As rlcheck.preflight.slurm.judge_here (the same --hardware NAME|auto|none), at a run level."""
    from rlcheck import hardware
    from rlcheck.probes.node import gpus

    budget = _budget_s(level, budget_s)  # ValueError for an unknown level before any probe runs
    if level == "quick":
        return slurm.judge_here(hardware_name, recipe_id, budget)
    profiles = hardware.load_profiles()
    if hardware_name not in (*profiles, "auto", "none"):
        raise ValueError(f"--hardware={hardware_name!r}: one of {', '.join(profiles)}, auto, none")
    profile = (gpus.detect(timeout_s=min(10.0, budget / 3)).profile if hardware_name == "auto"
               else profiles.get(hardware_name))
    return judge_node(level, profile, recipe_id, budget, declared=hardware_name not in ("auto", "none"))
