"""KV pool preflight (kv-pool-truncation): SGLang 0.5.12.post1's own arithmetic, every term and boundary.

The seed's calibration points (GLM-5.2 on 64 x GB300: 26,304 tokens at 0.75, 553,728 at 0.85) are
recorded here with the error SGLang's arithmetic makes on them.
"""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.hardware import HardwareProfile, get_profile
from rlcheck.probes.recipe import memory_kv
from rlcheck.probes.recipe.memory_kv import (
    CUDA_CONTEXT_GIB,
    SEED_POOL_TOKENS,
    estimate_kv_pool,
    evaluate_kv_pool,
    kv_calibration,
)
from rlcheck.probes.recipe.memory_params import GIB, count_params, kv_bytes_per_token
from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.models import GLM5_2, QWEN3_4B
from rlcheck.recipes.recipe import Recipe, with_sglang
from rlcheck.verdict import Status

FITS = {
    "qwen3-4b-colocated": ("h100", "h200", "b200", "b300", "gb200", "gb300"),
    "qwen3-4b-remote-rm": ("h100", "h200", "b200", "b300", "gb200", "gb300"),
    "qwen3-30b-a3b-disaggregated": ("h100", "h200", "b200", "b300", "gb200", "gb300"),
}


def _hw(name: str, hbm_gib: float | None = None) -> HardwareProfile:
    profile = get_profile(name)
    return dataclasses.replace(profile, hbm_gib=hbm_gib) if hbm_gib else profile


def _qwen3_4b() -> Recipe:
    return recipes.get("qwen3-4b-colocated", "h100")


def _glm_no_pd() -> Recipe:
    return glm_recipe(GlmOptions(enable_pd=False))


def _seed_engines(fraction: str) -> Recipe:
    """Seed 004's rollout as assumed: 8-GPU bf16 engines at this fraction."""
    base = _glm_no_pd()
    wide = base.replace(placement=dataclasses.replace(base.placement, rollout_gpus_per_engine=8))
    return with_sglang(wide, {"mem-fraction-static": fraction, "ep-size": "8"})


def _glm_fp8_rollout() -> Recipe:
    return _glm_no_pd().replace(hf_checkpoint="/root/models/GLM-5.2_fp8")


def _with_response(recipe: Recipe, tokens: int) -> Recipe:
    return recipe.replace(rollout=dataclasses.replace(recipe.rollout, max_response_len=tokens))


KV_TABLE = [
    ("glm5.2-seed-0.75-gb300", lambda: _seed_engines("0.75"), _hw("gb300"), Status.WARN,
     "KV pool ~363,200 tokens per engine at mem_fraction_static 0.75 on gb300: the NSA fp8 cache allocates"),
    ("glm5.2-gb300-bf16-on-4-gpu-engines", _glm_no_pd, _hw("gb300"), Status.FAIL,
     "no KV pool at mem_fraction_static 0.85 on gb300: rollout weights 346.4 GiB per GPU (4-GPU engine, 2 B"),
    ("glm5.2-gb300-shipped-pd", lambda: recipes.get("glm5.2-gb300", "gb300"), _hw("gb300"), Status.WARN,
     "tokens per DP rank at mem_fraction_static 0.85 on gb300: the NSA fp8 cache allocates 18.2 GiB more"),
    ("glm5.2-excess-beyond-the-slice", lambda: with_sglang(recipes.get("glm5.2-gb300", "gb300"),
                                                           {"mem-fraction-static": "0.95"}), _hw("gb300"),
     Status.FAIL, "more than the 12.8 GiB (1 - f) slice"),
    ("glm5.2-trtllm-no-excess", lambda: with_sglang(_glm_fp8_rollout(), {"nsa-decode-backend": "trtllm"}),
     _hw("gb300"), Status.PASS, "full-length 33,792-token requests >= 4 at once"),
    ("qwen3-4b-128k-responses-h100", lambda: _with_response(_qwen3_4b(), 131_072), _hw("h100"), Status.WARN,
     "holds 3 full-length 132,096-token request(s); 8 run at once"),
    ("qwen3-4b-fraction-0.09-h100", lambda: with_sglang(_qwen3_4b(), {"mem-fraction-static": "0.09"}),
     _hw("h100"), Status.FAIL, "no KV pool at mem_fraction_static 0.09 on h100"),
    ("qwen3-4b-fraction-0.1-h100", lambda: with_sglang(_qwen3_4b(), {"mem-fraction-static": "0.1"}), _hw("h100"),
     Status.FAIL, "< one full-length 9,216-token request"),
    ("qwen3-4b-fraction-1.5", lambda: with_sglang(_qwen3_4b(), {"mem-fraction-static": "1.5"}), _hw("h100"),
     Status.FAIL, "mem-fraction-static='1.5': a number in (0, 1]"),
    ("no-mem-fraction", lambda: with_sglang(_qwen3_4b(), {}, remove=("mem-fraction-static",)), _hw("h100"),
     Status.SKIP, "needs --sglang-mem-fraction-static in the recipe: found none"),
    ("no-hardware", _qwen3_4b, None, Status.SKIP, "needs a hardware profile (--hardware): found none"),
    *[(f"{rid}-{hw}", lambda rid=rid, hw=hw: recipes.get(rid, hw), _hw(hw), Status.PASS,
       "full-length 9,216-token requests >=") for rid, fits in FITS.items() for hw in fits],
]


@pytest.mark.parametrize(("build", "profile", "status", "fragment"), [t[1:] for t in KV_TABLE],
                         ids=[t[0] for t in KV_TABLE])
def test_probe_memory_kv_pool(build, profile, status, fragment):
    verdict = evaluate_kv_pool(build(), profile)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
    assert verdict.failure_id == "kv-pool-truncation"
    assert status in (Status.PASS, Status.SKIP) or verdict.remedy


def test_probe_memory_kv_pool_is_sglangs_arithmetic_term_by_term():
    """Qwen3-4B TP1 at 0.8 on H200: each term of f x (HBM - context) - weights, / cell_size, in pages."""
    pool = estimate_kv_pool(recipes.get("qwen3-4b-colocated", "h200"), _hw("h200"))
    weights = count_params(QWEN3_4B).total * 2
    cell = 36 * 8 * (128 + 128) * 2  # layers x KV heads x (k + v head dim) x bf16
    assert pool.kv_bytes_per_token == cell and pool.weights_gib * GIB == pytest.approx(weights)
    assert pool.pre_load_free_gib == pytest.approx(139.8 - CUDA_CONTEXT_GIB)
    assert pool.pool_tokens == int((0.8 * (139.8 - CUDA_CONTEXT_GIB) * GIB - weights) // cell) == 753_136


@pytest.mark.parametrize(("changes", "term"), [
    ({"mem-fraction-static": "0.7"}, "fraction"), ({"kv-cache-dtype": "fp8_e4m3"}, "cell"),
    ({"page-size": "4096"}, "page"), ({"quantization": "fp8"}, "weights")])
def test_probe_memory_kv_pool_each_setting_moves_the_pool(changes, term):
    base = estimate_kv_pool(_qwen3_4b(), _hw("h100"))
    changed = estimate_kv_pool(with_sglang(_qwen3_4b(), changes), _hw("h100"))
    expected = {"fraction": base.pool_tokens - int(0.1 * base.pre_load_free_gib * GIB // base.kv_bytes_per_token),
                "cell": base.pool_tokens * 2, "page": base.pool_tokens // 4096 * 4096,
                "weights": base.pool_tokens + int(base.weights_gib / 2 * GIB // base.kv_bytes_per_token)}[term]
    assert changed.pool_tokens == pytest.approx(expected, abs=2 if term != "page" else 0)


def test_probe_memory_kv_pool_context_term_is_subtracted():
    pool = estimate_kv_pool(_qwen3_4b(), _hw("h100"))
    assert pool.pre_load_free_gib == pytest.approx(_hw("h100").hbm_gib - 1.15)


def test_probe_memory_kv_pool_dp_attention_splits_pools_and_replicates_dense_weights():
    pool = estimate_kv_pool(recipes.get("glm5.2-gb300", "gb300"), _hw("gb300"))
    params = count_params(GLM5_2)
    assert (pool.engine_gpus, pool.pools_per_engine) == (64, 64)
    assert pool.weights_gib * GIB == pytest.approx(2 * (params.expert / 64 + params.total - params.expert))
    assert pool.kv_bytes_per_token == 78 * (512 + 64 + 128 + 4)
    assert pool.allocated_bytes_per_token == 78 * (512 + 16 + 128 + 128 + 4)  # fp32 scales, bf16 rope


def _pool(**changes) -> memory_kv.KvPool:
    base = dict(mem_fraction_static=0.8, engine_gpus=1, engines=1, pools_per_engine=1, weight_bytes_per_param=2,
                pre_load_free_gib=100.0, weights_gib=10.0, kv_bytes_per_token=1000, allocated_bytes_per_token=1000,
                pool_tokens=100_000, page_size=1, request_tokens=10_000, prompt_assumed=False, concurrency=10)
    return memory_kv.KvPool(**(base | changes))


@pytest.mark.parametrize(("changes", "status"), [
    ({}, Status.PASS), ({"pool_tokens": 99_999}, Status.WARN), ({"pool_tokens": 10_000}, Status.WARN),
    ({"pool_tokens": 9_999}, Status.FAIL), ({"pool_tokens": 0}, Status.FAIL),
    ({"allocated_bytes_per_token": 1001}, Status.WARN),
    ({"allocated_bytes_per_token": 1000 + int(20 * GIB / 100_000)}, Status.WARN),  # 20 GiB = the (1 - f) slice
    ({"allocated_bytes_per_token": 1000 + int(20 * GIB / 100_000) + 1}, Status.FAIL)])
def test_probe_memory_kv_pool_judge_boundaries(changes, status):
    assert memory_kv._judge(_pool(**changes), _hw("h100"))[0] is status


def test_probe_memory_kv_seed_calibration_error_is_recorded():
    """SGLang's arithmetic on the seed's engine: +1281% at 0.75 and +55% at 0.85 (the fitted reserve gave -5%)."""
    cal = kv_calibration(_hw("gb300").hbm_gib)
    assert cal.predicted_tokens == (363_200, 860_672)
    errors = [p / seen - 1 for p, (_, seen) in zip(cal.predicted_tokens, SEED_POOL_TOKENS, strict=True)]
    assert errors == [pytest.approx(12.81, abs=0.01), pytest.approx(0.554, abs=0.001)]
    # The two pools imply more free memory than the profile's 257 GiB has, and 29 GiB more loaded than counted.
    assert cal.implied_pre_load_free_gib == pytest.approx(271.3, abs=0.05)
    assert cal.implied_pre_load_free_gib > _hw("gb300").hbm_gib
    assert cal.implied_loaded_gib - cal.weights_gib == pytest.approx(28.9, abs=0.05)
    assert kv_bytes_per_token(GLM5_2, "fp8_e4m3", 8) == 55_224


def test_probe_memory_kv_details_and_remedies():
    glm = evaluate_kv_pool(_seed_engines("0.75"), _hw("gb300"))
    assert "measured 26,304 @ 0.75 and 553,728 @ 0.85; this arithmetic predicts 363,200 and 860,672" in glm.details
    assert "lower --sglang-mem-fraction-static by" in glm.remedy
    small = evaluate_kv_pool(with_sglang(_qwen3_4b(), {"mem-fraction-static": "0.1"}), _hw("h100"))
    assert "--sglang-mem-fraction-static 0.23 would hold 8" in small.remedy and "seed 004" not in small.details
    long = evaluate_kv_pool(_with_response(_qwen3_4b(), 131_072), _hw("h100"))
    assert "the rollout weights take 7.5 GiB per GPU: use wider engines" in long.remedy


def test_probe_memory_docs_table_matches_the_code():
    """Without SGLang: the generated table's rlcheck columns are what the code computes today."""
    from pathlib import Path

    from rlcheck.probes.recipe.memory import estimate_stage_memory

    page = (Path(__file__).resolve().parents[3] / "docs" / "memory-checks.md").read_text()
    table = page.split("<!-- memory-table: scripts/memory_table.py -->")[1].split("<!-- /memory-table -->")[0]
    rows = [line.split("|")[1:-1] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith(("| recipe", "| ---"))]
    assert len(rows) == 19
    for cells in rows:
        rid, hw = cells[0].strip(), cells[1].strip()
        pool = estimate_kv_pool(recipes.get(rid, hw), _hw(hw))
        memory = estimate_stage_memory(recipes.get(rid, hw), _hw(hw))
        assert cells[6].strip() == f"{pool.pool_tokens:,}", (rid, hw)
        assert cells[9].strip().split(" = ")[1].split(" /")[0] == f"{memory.total_gib(memory.peak_index):.1f}"


@pytest.mark.parametrize(("running", "concurrency"), [(None, 8), ("9", 8), ("8", 8), ("7", 7), ("1", 1)])
def test_probe_memory_kv_pool_max_running_requests_caps_the_concurrency(running, concurrency):
    # 16 prompts x 8 samples over 16 engines = 8 asked of each; --sglang-max-running-requests caps it when lower
    from rlcheck.recipes.recipe import with_sglang

    recipe = _qwen3_4b() if running is None else with_sglang(_qwen3_4b(), {"max-running-requests": running})
    assert estimate_kv_pool(recipe, _hw("h100")).concurrency == concurrency
