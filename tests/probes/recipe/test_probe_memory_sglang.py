"""rlcheck's KV pool against SGLang's own functions (installed SGLang, a fake model runner and device).

SGLang's DefaultPoolConfigurator, ModelRunnerKVCacheMixin._profile_available_bytes and
calculate_mla_kv_cache_dim run on a stand-in model runner whose free memory is rlcheck's pre-load
figure before loading and that less the weights after; their pool must equal rlcheck's to the page.
Every recipe x profile pair the recipes render for is a case, and the table in docs/memory-checks.md
(scripts/memory_table.py) must be what the script regenerates now. Skipped where SGLang is not
importable (its import takes ~25 s on a 2-core machine).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe.memory_kv import estimate_kv_pool
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


def _memory_table():
    path = Path(__file__).resolve().parents[3] / "scripts" / "memory_table.py"
    spec = importlib.util.spec_from_file_location("memory_table", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MEMORY_TABLE = _memory_table()
SHIPPED = [(f"{rid}-{hw}", lambda rid=rid, hw=hw: recipes.get(rid, hw), hw) for rid, hw in MEMORY_TABLE.fitting_pairs()]


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
    *SHIPPED,
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


def test_probe_memory_sglang_every_fitting_pair_is_a_case():
    pairs = MEMORY_TABLE.fitting_pairs()
    assert len(pairs) == 19 and ("glm5.2-gb300", "gb300") in pairs and ("glm5.2-gb300", "h100") not in pairs
    assert all(label in {c[0] for c in CASES} for label, _, _ in SHIPPED)


def test_probe_memory_sglang_table_in_the_docs_is_regenerated():
    page = MEMORY_TABLE.PAGE.read_text()
    assert MEMORY_TABLE.render(page) == page, "docs/memory-checks.md is stale: run scripts/memory_table.py --write"
    table = page.split(MEMORY_TABLE.BEGIN)[1].split(MEMORY_TABLE.END)[0].splitlines()
    rows = [r for r in table if r.startswith("| ") and not r.startswith(("| recipe", "| ---"))]
    assert len(rows) == 19
    for row in rows:
        cells = [c.strip() for c in row.split("|")[1:-1]]
        ours, theirs = (int(c.replace(",", "")) for c in cells[6:8])
        assert abs(ours - theirs) <= 0.05 * theirs, row  # the bar; today they agree to the page


def test_probe_memory_sglang_table_stale_page_is_caught(tmp_path, monkeypatch):
    page = MEMORY_TABLE.PAGE.read_text()
    stale = tmp_path / "memory-checks.md"
    stale.write_text(page.replace("| 3,125,248 |", "| 3,125,249 |", 1))
    monkeypatch.setattr(MEMORY_TABLE, "PAGE", stale)
    assert MEMORY_TABLE.main([]) == 1
    assert MEMORY_TABLE.main(["--write"]) == 0 and stale.read_text() == page
