"""rlcheck's KV pool against SGLang's own functions (installed SGLang, a fake model runner and device).

SGLang's DefaultPoolConfigurator, ModelRunnerKVCacheMixin._profile_available_bytes and
calculate_mla_kv_cache_dim run on a stand-in model runner whose free memory is rlcheck's pre-load
figure before loading and that less the weights after; their pool must equal rlcheck's to the page.
Skipped where SGLang is not importable (its import takes ~25 s on a 2-core machine).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.memory_kv import estimate_kv_pool
from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.models import GQA, MLA
from rlcheck.recipes.recipe import Recipe, with_sglang

pool_configurator = pytest.importorskip("sglang.srt.model_executor.pool_configurator")
kv_mixin = pytest.importorskip("sglang.srt.model_executor.model_runner_kv_cache_mixin")
torch = pytest.importorskip("torch")


def _model_config(recipe: Recipe) -> SimpleNamespace:
    model = recipe.model
    if isinstance(model.attention, MLA):
        mla = model.attention
        hf = SimpleNamespace(architectures=["GlmMoeDsaForCausalLM"], index_topk=2048,
                             index_head_dim=mla.indexer.head_dim if mla.indexer else None)
        if mla.indexer is None:
            hf.architectures = ["DeepseekV2ForCausalLM"]
        return SimpleNamespace(kv_lora_rank=mla.kv_lora_rank, qk_rope_head_dim=mla.qk_pos_emb_head_dim, hf_config=hf)
    assert isinstance(model.attention, GQA)
    return SimpleNamespace(hf_config=SimpleNamespace(architectures=["Qwen3ForCausalLM"]), head_dim=model.head_dim,
                           v_head_dim=model.head_dim, get_num_kv_heads=lambda tp: max(1, model.kv_heads // tp))


def _runner(recipe: Recipe, pool, monkeypatch) -> SimpleNamespace:
    """A stand-in ModelRunner: free memory pre-load, then pre-load less rlcheck's weights."""
    dtype = {"fp8_e4m3": torch.float8_e4m3fn}.get(recipe.sglang_value("kv-cache-dtype") or "auto", torch.bfloat16)
    attention_tp = max(1, pool.engine_gpus // pool.pools_per_engine)
    monkeypatch.setattr(pool_configurator, "get_attention_tp_size", lambda: attention_tp)
    monkeypatch.setattr(kv_mixin, "get_available_gpu_memory",
                        lambda *a, **k: pool.pre_load_free_gib - pool.weights_gib)
    monkeypatch.setattr(kv_mixin, "get_world_group", lambda: SimpleNamespace(world_size=1, cpu_group=None))
    server_args = SimpleNamespace(nsa_prefill_backend=recipe.sglang_value("nsa-prefill-backend"),
                                  nsa_decode_backend=recipe.sglang_value("nsa-decode-backend"))
    return SimpleNamespace(model_config=_model_config(recipe), kv_cache_dtype=dtype, server_args=server_args,
                           use_mla_backend=isinstance(recipe.model.attention, MLA), mambaish_config=None,
                           num_effective_layers=recipe.model.num_layers, mem_fraction_static=pool.mem_fraction_static,
                           device="cuda", gpu_id=0, is_draft_worker=False,
                           spec_algorithm=SimpleNamespace(is_dflash=lambda: False))


def _glm_fp8() -> Recipe:
    return glm_recipe(GlmOptions(enable_pd=False)).replace(hf_checkpoint="/root/models/GLM-5.2_fp8")


CASES = [
    ("qwen3-4b-h200", lambda: recipes.get("qwen3-4b-colocated", "h200"), "h200"),
    ("qwen3-4b-tp16-fp8", lambda: with_sglang(recipes.get("qwen3-4b-colocated", "h100"),
                                              {"kv-cache-dtype": "fp8_e4m3"}), "h100"),
    ("qwen3-30b-a3b-h100", lambda: recipes.get("qwen3-30b-a3b-disaggregated", "h100"), "h100"),
    ("glm5.2-gb300-pd", lambda: recipes.get("glm5.2-gb300", "gb300"), "gb300"),
    ("glm5.2-fp8-4-gpu", _glm_fp8, "gb300"),
    ("glm5.2-trtllm", lambda: with_sglang(_glm_fp8(), {"nsa-decode-backend": "trtllm"}), "gb300"),
    ("glm5.2-bf16-cache", lambda: with_sglang(_glm_fp8(), {}, remove=("kv-cache-dtype",)), "gb300"),
]


@pytest.mark.parametrize(("build", "hw"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_probe_memory_sglang_agrees_with_its_own_functions(build, hw, monkeypatch):
    recipe = build()
    pool = estimate_kv_pool(recipe, get_profile(hw))
    runner = _runner(recipe, pool, monkeypatch)
    configurator = pool_configurator.DefaultPoolConfigurator(runner)
    assert configurator._cell_size == pool.kv_bytes_per_token
    available = kv_mixin.ModelRunnerKVCacheMixin._profile_available_bytes(runner, pool.pre_load_free_gib)
    tokens = configurator.calculate_pool_sizes(available, pool.page_size).max_total_num_tokens
    assert abs(tokens - pool.pool_tokens) <= pool.page_size  # float GiB vs int bytes: at most one page apart
    if isinstance(recipe.model.attention, MLA):
        dim = kv_mixin.ModelRunnerKVCacheMixin.calculate_mla_kv_cache_dim(runner)
        mla, layers, size = recipe.model.attention, recipe.model.num_layers, runner.kv_cache_dtype.itemsize
        indexer = pool.kv_bytes_per_token - (mla.kv_lora_rank + mla.qk_pos_emb_head_dim) * size * layers
        assert dim * size * layers + indexer == pool.allocated_bytes_per_token


def test_probe_memory_sglang_case_list_covers_a_real_excess():
    pools = [estimate_kv_pool(build(), get_profile(hw)) for _, build, hw in CASES]
    assert any(p.allocated_bytes_per_token > p.kv_bytes_per_token for p in pools)
    assert any(p.allocated_bytes_per_token == p.kv_bytes_per_token for p in pools[-2:])  # trtllm, bf16 cache
