"""Preflight memory checks of a recipe on a hardware profile (catalogue: pp-stage-oom, kv-pool-truncation).

Training, per GPU of pipeline stage s (parameter counts: rlcheck.probes.memory_params):
  params = sum over its layers (expert / (EP x ETP) + other / TP) + embedding / TP (first stage)
           + output layer / TP (last stage)
  bytes  = 2 x params (bf16 weights) + 4 x params (fp32 main grads: Megatron's default under bf16)
           + 12 x (expert / EDP + other / (DP x CP))  (fp32 master + Adam m, v; SLIME forces Megatron's
           distributed optimizer; EDP = world / (EP x ETP x PP)); the 12 B stay on the CPU with
           --optimizer-cpu-offload.
  Budget = TORCH_BUDGET_FRACTION x HBM. Activations are not modelled: above 90% of the budget WARNs.
  Calibration, seed 004 (Miles GB300 bring-up, radixark/miles#1571): GLM-5.2 counts 743.9B (744B: -0.01%);
  TP8 x PP8 x EP8, 14/8x6/16: last stage 19.87B per rank (reported 20.1B: -1.1%), Adam moments 148.1 GiB
  (20.1B x 8 B = 149.8 GiB, reported ~150: -1.1%), 333 GiB in all > 242 GiB (step 1 ran out of memory);
  TP8 x PP4 x EP16, 18/20/20/20: 209.8 GiB static against 228 GiB measured steady with activations.

The SGLang KV pool (kv-pool-truncation) is in rlcheck.probes.memory_kv.
"""
from __future__ import annotations

import dataclasses
import functools

from rlcheck import catalog
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.memory_params import GIB, StageLoad, count_params, stage_loads
from rlcheck.recipes.models import GLM5_2
from rlcheck.recipes.recipe import Parallelism, Recipe
from rlcheck.verdict import Status, Verdict

GB300_HBM_GIB = 257.0
"""The gb300 profile's HBM (276 GB), against which seed 004 measured."""
TORCH_BUDGET_FRACTION = 242.0 / GB300_HBM_GIB
"""Seed 004: 'GPU 228/242 GB' steady on GB300. Its GB are torch's GiB (its ~150 GB of Adam moments is
20.1e9 x 8 B = 149.8 GiB), so 242 of 257 GiB: the rest is CUDA context, NCCL buffers, SGLang's residue."""
WARN_FRACTION = 0.9
"""Activations are not modelled: an estimate above 90% of the budget WARNs."""
SEED_LAST_STAGE_PARAMS = 20.1e9
"""Seed 004: parameters per rank on the last stage of TP8 x PP8 x EP8 (step 1 ran out of memory)."""
SEED_STEADY_GIB = 228.0
"""Seed 004: steady GPU memory of TP8 x PP4 x EP16, 18/20/20/20 on GB300, activations included."""
@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageMemory:
    stages: tuple[StageLoad, ...]
    model_params: int
    dp_cp: int
    """Data-parallel x context-parallel ranks: the distributed optimizer shards dense state over them."""
    expert_dp: int
    """Expert-data-parallel ranks, world / (EP x ETP x PP): they shard the experts' optimizer state."""
    optimizer_offload: bool
    budget_gib: float

    @property
    def peak(self) -> StageLoad:
        return max(self.stages, key=lambda s: s.total_gib)


def estimate_stage_memory(recipe: Recipe, profile: HardwareProfile) -> StageMemory:
    """Static training memory per GPU of every pipeline stage; ValueError when the layout cannot exist."""
    par, world = recipe.parallel, recipe.world_size
    for name, size in (("TP x PP", par.tp * par.pp), ("EP x ETP x PP", par.ep * par.etp * par.pp)):
        if world % size:
            raise ValueError(f"{world} training GPUs do not divide by {name} = {size}")
    params = count_params(recipe.model)
    return StageMemory(stages=stage_loads(params, par, world, recipe.optimizer.cpu_offload),
                       model_params=params.total, dp_cp=world // (par.tp * par.pp),
                       expert_dp=world // (par.ep * par.etp * par.pp), optimizer_offload=recipe.optimizer.cpu_offload,
                       budget_gib=TORCH_BUDGET_FRACTION * profile.hbm_gib)


@functools.cache
def stage_calibration() -> str:
    """The seed 004 numbers against this module's formula, for the verdict details."""
    params = count_params(GLM5_2)
    old = stage_loads(params, Parallelism(tp=8, pp=8, ep=8, pp_first_layers=14, pp_last_layers=16), 64, False)[-1]
    new = max(stage_loads(params, Parallelism(tp=8, pp=4, ep=16, pp_first_layers=18, pp_last_layers=20), 64,
                           False), key=lambda s: s.total_gib)
    moments, seed_moments = 8 * old.params / GIB, 8 * SEED_LAST_STAGE_PARAMS / GIB
    return (f"calibration (seed 004, GLM-5.2 on GB300): total {params.total / 1e9:.1f}B vs 744B "
            f"({_err(params.total, 744e9)}); TP8xPP8xEP8 last stage {old.params / 1e9:.2f}B per rank vs 20.1B "
            f"({_err(old.params, SEED_LAST_STAGE_PARAMS)}), Adam moments {moments:.1f} GiB vs "
            f"{seed_moments:.1f} (~150 reported; {_err(moments, seed_moments)}), {old.total_gib:.0f} GiB in all "
            f"vs the 242 GiB budget (step 1 OOM); "
            f"TP8xPP4xEP16 {new.total_gib:.1f} GiB static vs {SEED_STEADY_GIB:.0f} GiB measured with activations")


def _err(value: float, reference: float) -> str:
    return f"{(value - reference) / reference:+.1%}"


def evaluate_stage_memory(recipe: Recipe, profile: HardwareProfile | None) -> Verdict:
    base = {"failure_id": "pp-stage-oom"}
    if profile is None:
        return Verdict(**base, status=Status.SKIP, summary="needs a hardware profile (--hardware): found none")
    try:
        memory = estimate_stage_memory(recipe, profile)
    except ValueError as exc:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"cannot lay {recipe.id} out in stages: {exc}")
    peak, budget, pp = memory.peak, memory.budget_gib, recipe.parallel.pp
    where = f"stage {peak.stage} of {pp} ({peak.layers} layers): {peak.total_gib:.1f} GiB per GPU " \
            f"({peak.params / 1e9:.2f}B params per rank)"
    limit = f"{budget:.1f} GiB torch budget ({TORCH_BUDGET_FRACTION:.2f} x {profile.hbm_gib:.1f} GiB {profile.name})"
    details = _stage_details(recipe, memory)
    if peak.total_gib > budget:
        return Verdict(**base, status=Status.FAIL, details=details, remedy=catalog.get("pp-stage-oom").remedy,
                       summary=f"{where} of weights, grads and optimizer state > {limit}")
    if peak.total_gib > WARN_FRACTION * budget:
        return Verdict(**base, status=Status.WARN, details=details,
                       remedy="leave room for activations: lower --max-tokens-per-gpu, raise EP or PP, or "
                              "offload the optimizer (--optimizer-cpu-offload)",
                       summary=f"{where} is within {1 - WARN_FRACTION:.0%} of the {limit}; activations not modelled")
    return Verdict(**base, status=Status.PASS, details=details,
                   summary=f"most loaded {where} <= {limit}; activations not modelled")


def _stage_details(recipe: Recipe, memory: StageMemory) -> str:
    p = recipe.parallel
    lines = [f"{recipe.model.name}: {memory.model_params / 1e9:.2f}B params; TP{p.tp} PP{p.pp} CP{p.cp} EP{p.ep} "
             f"ETP{p.etp} on {recipe.world_size} GPUs; DPxCP {memory.dp_cp}, expert DP {memory.expert_dp}; "
             f"optimizer {'offloaded to CPU' if memory.optimizer_offload else 'on GPU (distributed)'}"]
    lines += [f"stage {s.stage}: {s.layers} layers, {s.expert_params / 1e9:.2f}B expert + {s.dense_params / 1e9:.2f}B "
              f"other per rank; weights {s.weights_gib:.1f} + grads {s.grads_gib:.1f} + optimizer "
              f"{s.optimizer_gib:.1f} = {s.total_gib:.1f} GiB" for s in memory.stages]
    lines += ["formula: per rank expert/(EP x ETP) + other/TP (+ embedding first, output last); bytes 2 (bf16) "
              "+ 4 (fp32 grads) + 12 (fp32 master, Adam m, v) sharded over expert DP or DP x CP; "
              "activations not modelled", stage_calibration()]
    return "\n".join(lines)
