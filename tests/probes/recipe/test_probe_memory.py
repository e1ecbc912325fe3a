"""Memory preflight: per-stage training memory (pp-stage-oom) and the SGLang KV pool (kv-pool-truncation).

Calibrated on seed 004 (GLM-5.2 on 64 x GB300): TP8 x PP8 x EP8 ran out of memory at step 1, TP8 x PP4 x
EP16 fitted; mem_fraction_static 0.75 left a 26,304-token pool (84% truncated), 0.85 gave 553,728 tokens.
"""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.hardware import HardwareProfile, get_profile
from rlcheck.probes.recipe.memory import (
    GB300_HBM_GIB,
    SEED_LAST_STAGE_PARAMS,
    TORCH_BUDGET_FRACTION,
    estimate_stage_memory,
    evaluate_stage_memory,
)
from rlcheck.probes.recipe.memory_params import count_params, moe_layer_flags
from rlcheck.recipes import models
from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.models import GLM5_2, GLM5_2_5LAYER, QWEN3_4B, QWEN3_30B_A3B
from rlcheck.recipes.recipe import Parallelism, Recipe
from rlcheck.verdict import Status

# Where each shipped recipe fits with room (training and rollout memory both PASS); Qwen3-30B-A3B on H200
# fits, within 10% of the budget (WARN, its own row).
FITS = {
    "qwen3-4b-colocated": ("h200", "b200", "b300", "gb200", "gb300"),
    "qwen3-4b-remote-rm": ("h200", "b200", "b300", "gb200", "gb300"),
    "qwen3-30b-a3b-disaggregated": ("b200", "b300", "gb200", "gb300"),
}


def _hw(name: str, hbm_gib: float | None = None) -> HardwareProfile:
    profile = get_profile(name)
    return dataclasses.replace(profile, hbm_gib=hbm_gib) if hbm_gib else profile


def _shipped(recipe_id: str, hardware: str):
    return lambda: recipes.get(recipe_id, hardware)


def _h200_layout_on(hardware: str):
    return lambda: recipes.get("qwen3-30b-a3b-disaggregated", "h200").replace(hardware=hardware)


def _h100_delta_part(ep: int = 4, offload: bool = True):
    def build() -> Recipe:
        base = recipes.get("qwen3-30b-a3b-disaggregated", "h100")
        return base.replace(parallel=dataclasses.replace(base.parallel, ep=ep),
                            optimizer=dataclasses.replace(base.optimizer, cpu_offload=offload))
    return build


def _ep_pp(ep: int, pp: int) -> Recipe:
    base = recipes.get("qwen3-30b-a3b-disaggregated", "h200")
    return base.replace(parallel=dataclasses.replace(base.parallel, ep=ep, pp=pp))


def _glm_parallel(**changes) -> Recipe:
    base = glm_recipe(GlmOptions())
    return base.replace(parallel=dataclasses.replace(base.parallel, **changes))


def _glm_tp8_pp8_ep8() -> Recipe:
    # Seed 004's earlier topology on 64 GB300 GPUs, with the 8-GPU-node branch's 14/../16 split.
    return _glm_parallel(pp=8, ep=8, pp_first_layers=14, pp_last_layers=16)


def _glm_tp8_pp8_ep8_offloaded() -> Recipe:
    recipe = _glm_tp8_pp8_ep8()
    return recipe.replace(optimizer=dataclasses.replace(recipe.optimizer, cpu_offload=True))


def _qwen3_4b() -> Recipe:
    return recipes.get("qwen3-4b-colocated", "h100")


def _uneven_world() -> Recipe:
    return _qwen3_4b().replace(parallel=Parallelism(tp=3))


STAGE_TABLE = [
    ("glm5.2-tp8-pp8-ep8-gb300", _glm_tp8_pp8_ep8, _hw("gb300"), Status.FAIL,
     "stage 8 of 8 (16 layers): 338.4 GiB per GPU = 333.2 static (19.87B params per rank) + 1.5 activations "
     "+ 3.7 buffers > 242.0 GiB torch budget"),
    ("glm5.2-tp8-pp8-ep8-optimizer-offload-gb300", _glm_tp8_pp8_ep8_offloaded, _hw("gb300"), Status.PASS,
     "stage 8 of 8 (16 layers): 116.3 GiB per GPU = 111.1 static"),
    ("glm5.2-gb300-shipped", _shipped("glm5.2-gb300", "gb300"), _hw("gb300"), Status.WARN,
     "stage 4 of 4 (20 layers): 215.3 GiB per GPU = 209.8 static (12.73B params per rank) + 1.6 "
     "activations + 3.9 buffers; ~228.0 GiB with the 5.9% the estimate fell short of seed 004's measured run, "
     "within 10% of the 242.0 GiB torch budget"),
    ("glm5.2-8-gpu-nodes-tp4-pp8-cp8-ep32-h200", lambda: glm_recipe(GlmOptions(num_nodes=32, gpus_per_node=8)),
     _hw("h200"), Status.PASS, "most loaded stage 8 of 8 (16 layers): 96.2 GiB per GPU = 88.6 static"),
    ("glm5.2-5layer-offload-h200", lambda: glm_recipe(GlmOptions(num_nodes=1)), _hw("h200"), Status.PASS,
     "stage 1 of 1 (5 layers): 38.3 GiB per GPU = 31.9 static"),
    # The H200 layout (EP 2, Adam on the GPU) on H100s; each half of the H100 delta alone is not enough.
    ("qwen3-30b-a3b-h200-layout-on-h100", _h200_layout_on("h100"), _hw("h100"), Status.FAIL,
     "stage 1 of 1 (48 layers): 119.6 GiB per GPU = 113.7 static (15.27B params per rank) + 2.9 activations "
     "+ 3.0 buffers > 75.0 GiB torch budget"),
    ("qwen3-30b-a3b-ep4-without-offload-on-h100", _h100_delta_part(offload=False), _hw("h100"), Status.FAIL,
     "79.1 GiB per GPU = 73.2 static (8.02B params per rank)"),
    ("qwen3-30b-a3b-offload-at-ep2-on-h100", _h100_delta_part(ep=2), _hw("h100"), Status.FAIL,
     "91.2 GiB per GPU = 85.3 static (15.27B params per rank)"),
    ("qwen3-30b-a3b-on-h100", _shipped("qwen3-30b-a3b-disaggregated", "h100"), _hw("h100"), Status.PASS,
     "most loaded stage 1 of 1 (48 layers): 50.7 GiB per GPU = 44.8 static (8.02B params per rank)"),
    ("qwen3-30b-a3b-on-h200", _shipped("qwen3-30b-a3b-disaggregated", "h200"), _hw("h200"), Status.WARN,
     "119.6 GiB per GPU = 113.7 static (15.27B params per rank) + 2.9 activations + 3.0 buffers; ~126.6 GiB with "
     "the 5.9% the estimate fell short of seed 004's measured run, within 10% of the 131.6 GiB torch budget"),
    # 41.7 GiB of activations: 8,192 tokens x 36 layers x 117,896 B (the GQA count measured on an H200,
    # benchmarks/results/memory_truth_h200.json) + 9.3 GiB of fp32 logits.
    ("qwen3-4b-on-28-gib", _qwen3_4b, _hw("h100", 28.0), Status.FAIL,
     "69.2 GiB per GPU = 25.3 static (4.02B params per rank) + 41.7 activations + 2.2 buffers > 26.4 GiB"),
    # 69.18 GiB against 0.9416 x HBM: FAIL below 73.47 GiB of HBM; WARN while 69.18 x 1.0588 (the measured
    # shortfall) passes 0.9 x the budget, i.e. to 86.43 GiB; PASS above. The H100's 79.6 GiB WARNs.
    ("qwen3-4b-on-73.4-gib", _qwen3_4b, _hw("h100", 73.4), Status.FAIL, "> 69.1 GiB torch budget"),
    ("qwen3-4b-on-73.5-gib", _qwen3_4b, _hw("h100", 73.5), Status.WARN,
     "~73.2 GiB with the 5.9% the estimate fell short of seed 004's measured run, within 10% of the 69.2 GiB"),
    ("qwen3-4b-colocated-h100", _shipped("qwen3-4b-colocated", "h100"), _hw("h100"), Status.WARN,
     "within 10% of the 75.0 GiB torch budget"),
    ("qwen3-4b-remote-rm-h100", _shipped("qwen3-4b-remote-rm", "h100"), _hw("h100"), Status.WARN,
     "within 10% of the 75.0 GiB torch budget"),
    ("qwen3-4b-on-86.4-gib", _qwen3_4b, _hw("h100", 86.4), Status.WARN, "within 10% of the 81.4 GiB torch budget"),
    ("qwen3-4b-on-86.5-gib", _qwen3_4b, _hw("h100", 86.5), Status.PASS, "<= 81.5 GiB torch budget"),
    ("no-hardware", _qwen3_4b, None, Status.SKIP, "needs a hardware profile (--hardware): found none"),
    # EP 4 divides 12 GPUs, but the expert grid is EP x ETP x PP = 8 per data-parallel replica: no such layout
    ("ep4-pp2-on-12-gpus", lambda: _ep_pp(ep=4, pp=2), _hw("h200"),
     Status.UNKNOWN, "12 training GPUs do not divide by EP x ETP x PP = 8"),
    ("ep2-pp2-on-12-gpus", lambda: _ep_pp(ep=2, pp=2), _hw("h200"), Status.PASS, "most loaded stage"),
    ("tp3-on-16-gpus", _uneven_world, _hw("h100"), Status.UNKNOWN,
     "cannot estimate the stage memory of qwen3-4b-colocated: 16 training GPUs do not divide by TP x PP = 3"),
    *[(f"{rid}-{hw}", _shipped(rid, hw), _hw(hw), Status.PASS, "most loaded stage 1 of 1")
      for rid, fits in FITS.items() for hw in fits],
]

@pytest.mark.parametrize(("build", "profile", "status", "fragment"), [t[1:] for t in STAGE_TABLE],
                         ids=[t[0] for t in STAGE_TABLE])
def test_probe_memory_stage(build, profile, status, fragment):
    verdict = evaluate_stage_memory(build(), profile)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
    assert verdict.failure_id == "pp-stage-oom"
    assert status is Status.PASS or verdict.remedy or status in (Status.SKIP, Status.UNKNOWN)


@pytest.mark.parametrize(("model", "billions", "tolerance"), [
    (QWEN3_4B, 4.0, 0.02), (QWEN3_30B_A3B, 30.5, 0.01), (GLM5_2, 744.0, 0.01)])
def test_probe_memory_param_counts(model, billions, tolerance):
    total = count_params(model).total / 1e9
    assert total == pytest.approx(billions, rel=tolerance)
    assert total == pytest.approx(model.params_b, rel=tolerance)


def test_probe_memory_glm_layers_and_experts():
    params = count_params(GLM5_2)
    assert [la.expert > 0 for la in params.layers[:4]] == [False, False, False, True]
    assert params.expert / 1e9 == pytest.approx(724.8, rel=1e-3)  # 75 layers x 256 x 3 x 6144 x 2048
    assert not params.tied and count_params(QWEN3_4B).tied
    assert len(count_params(GLM5_2_5LAYER).layers) == 5


def test_probe_memory_calibration_last_stage_of_tp8_pp8_ep8():
    memory = estimate_stage_memory(_glm_tp8_pp8_ep8(), _hw("gb300"))
    last = memory.stages[-1]
    assert (last.layers, memory.dp_cp, memory.expert_dp) == (16, 1, 1)
    assert last.params == pytest.approx(SEED_LAST_STAGE_PARAMS, rel=0.02)
    assert memory.peak is last and last.total_gib > memory.budget_gib


def test_probe_memory_budget_is_the_seed_torch_budget():
    assert GB300_HBM_GIB == get_profile("gb300").hbm_gib
    assert TORCH_BUDGET_FRACTION == pytest.approx(0.94, abs=0.005)
    assert estimate_stage_memory(_qwen3_4b(), _hw("gb300")).budget_gib == pytest.approx(242.0)


@pytest.mark.parametrize(("pattern", "layers", "moe"), [("[1]*48", 48, 48), ("[0]*3+[1]*75", 78, 75),
                                                         ("2", 6, 3), ("[0,1]*2", 4, 2)])
def test_probe_memory_moe_layer_freq(pattern, layers, moe):
    assert sum(moe_layer_flags(pattern, layers)) == moe


@pytest.mark.parametrize("pattern", ["[1]*47", "all", "[2]*48"])
def test_probe_memory_moe_layer_freq_rejects(pattern):
    with pytest.raises(ValueError, match="layer_freq"):
        moe_layer_flags(pattern, 48)


def test_probe_memory_stage_details_state_formula_and_calibration():
    stage = evaluate_stage_memory(_glm_tp8_pp8_ep8(), _hw("gb300"))
    assert "formula:" in stage.details and "vs 20.1B (-1.1%)" in stage.details


_GLM_MOE, _GLM_MLA = GLM5_2.moe, GLM5_2.attention
assert isinstance(_GLM_MOE, models.MoE) and isinstance(_GLM_MLA, models.MLA)


@pytest.mark.parametrize(("model", "changes", "delta"), [
    (QWEN3_4B, {"activation": "gelu"}, -36 * 2560 * 9728),
    (QWEN3_4B, {"attention": models.GQA(num_query_groups=8, kv_channels=128)}, -36 * 2 * 128),
    (QWEN3_4B, {"untie_embeddings": True}, 151936 * 2560),
    (GLM5_2, {"moe": dataclasses.replace(_GLM_MOE, shared_expert_ffn=0)}, -75 * 3 * 6144 * 2048),
    (GLM5_2, {"moe": dataclasses.replace(_GLM_MOE, expert_bias=False)}, -75 * 256),
    (GLM5_2, {"attention": dataclasses.replace(_GLM_MLA, indexer=None)},
     -78 * (2048 * 32 * 128 + 6144 * 128 + 2 * 128 + 6144 * 32)),
])
def test_probe_memory_param_count_reads_each_typed_field(model, changes, delta):
    assert count_params(dataclasses.replace(model, **changes)).total - count_params(model).total == delta
