"""Regenerate the recipe x profile table in docs/memory-checks.md: rlcheck's KV pool next to SGLang's own.

    PYTHONPATH=$PWD .venv/bin/python scripts/memory_table.py --write   # rewrite the table
    PYTHONPATH=$PWD .venv/bin/python scripts/memory_table.py           # exit 1 when the page is stale

SGLang's column runs the installed SGLang's DefaultPoolConfigurator and
ModelRunnerKVCacheMixin._profile_available_bytes on a stand-in model runner whose free memory is
rlcheck's pre-load figure before loading and that less rlcheck's weights after. So the error column
measures rlcheck's transcription of SGLang's arithmetic (cell size, the (1 - f) slice, page rounding),
not the HBM or weight inputs both sides share. Needs SGLang importable (~25 s to import).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from rlcheck import recipes
from rlcheck.hardware import get_profile, load_profiles
from rlcheck.probes.recipe.memory import estimate_stage_memory
from rlcheck.probes.recipe.memory_kv import KvPool, estimate_kv_pool
from rlcheck.recipes.deltas import NotForHardware
from rlcheck.recipes.models import GQA, MLA
from rlcheck.recipes.recipe import Recipe

PAGE = Path(__file__).resolve().parents[1] / "docs" / "memory-checks.md"
BEGIN, END = "<!-- memory-table: scripts/memory_table.py -->", "<!-- /memory-table -->"
HEADER = ("| recipe | hardware | mem_fraction_static | engine GPUs / pools | weights GiB per GPU | KV B per token "
          "| pool tokens (rlcheck) | pool tokens (SGLang's code) | error | stage GiB: static + activations + "
          "buffers = total / budget |")


def fitting_pairs() -> list[tuple[str, str]]:
    """Every (recipe, profile) the recipes render for; the rest are refused with NotForHardware."""
    pairs = []
    for rid in recipes.RECIPE_IDS:
        for hw in load_profiles():
            try:
                recipes.get(rid, hw)
            except NotForHardware:
                continue
            pairs.append((rid, hw))
    return pairs


def _model_config(recipe: Recipe) -> SimpleNamespace:
    model = recipe.model
    if isinstance(model.attention, MLA):
        mla = model.attention
        arch = "GlmMoeDsaForCausalLM" if mla.indexer else "DeepseekV2ForCausalLM"
        hf = SimpleNamespace(architectures=[arch], index_topk=2048,
                             index_head_dim=mla.indexer.head_dim if mla.indexer else None)
        return SimpleNamespace(kv_lora_rank=mla.kv_lora_rank, qk_rope_head_dim=mla.qk_pos_emb_head_dim, hf_config=hf)
    assert isinstance(model.attention, GQA)
    return SimpleNamespace(hf_config=SimpleNamespace(architectures=["Qwen3ForCausalLM"]), head_dim=model.head_dim,
                           v_head_dim=model.head_dim, get_num_kv_heads=lambda tp: max(1, model.kv_heads // tp))


def sglang_pool(recipe: Recipe, pool: KvPool) -> SimpleNamespace:
    """SGLang's own cell size, pool tokens and MLA allocation dim for rlcheck's inputs (stand-in runner)."""
    import torch
    from sglang.srt.model_executor import model_runner_kv_cache_mixin as kv_mixin
    from sglang.srt.model_executor import pool_configurator

    dtype = {"fp8_e4m3": torch.float8_e4m3fn}.get(recipe.sglang_value("kv-cache-dtype") or "auto", torch.bfloat16)
    server_args = SimpleNamespace(nsa_prefill_backend=recipe.sglang_value("nsa-prefill-backend"),
                                  nsa_decode_backend=recipe.sglang_value("nsa-decode-backend"))
    runner = SimpleNamespace(model_config=_model_config(recipe), kv_cache_dtype=dtype, server_args=server_args,
                             use_mla_backend=isinstance(recipe.model.attention, MLA), mambaish_config=None,
                             num_effective_layers=recipe.model.num_layers, mem_fraction_static=pool.mem_fraction_static,
                             device="cuda", gpu_id=0, is_draft_worker=False,
                             spec_algorithm=SimpleNamespace(is_dflash=lambda: False))
    attention_tp = max(1, pool.engine_gpus // pool.pools_per_engine)
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(pool_configurator, "get_attention_tp_size", lambda: attention_tp))
        stack.enter_context(mock.patch.object(kv_mixin, "get_available_gpu_memory",
                                              lambda *a, **k: pool.pre_load_free_gib - pool.weights_gib))
        stack.enter_context(mock.patch.object(kv_mixin, "get_world_group",
                                              lambda: SimpleNamespace(world_size=1, cpu_group=None)))
        configurator = pool_configurator.DefaultPoolConfigurator(runner)
        available = kv_mixin.ModelRunnerKVCacheMixin._profile_available_bytes(runner, pool.pre_load_free_gib)
        tokens = configurator.calculate_pool_sizes(available, pool.page_size).max_total_num_tokens
        mla_dim = (kv_mixin.ModelRunnerKVCacheMixin.calculate_mla_kv_cache_dim(runner)
                   if isinstance(recipe.model.attention, MLA) else None)
    return SimpleNamespace(cell_size=configurator._cell_size, tokens=tokens, mla_dim=mla_dim,
                           element_size=dtype.itemsize)


def table_rows() -> list[str]:
    rows = [HEADER, "| " + " | ".join(["---"] * HEADER.count(" | ") + ["---"]) + " |"]
    for rid, hw in fitting_pairs():
        recipe, profile = recipes.get(rid, hw), get_profile(hw)
        pool, memory = estimate_kv_pool(recipe, profile), estimate_stage_memory(recipe, profile)
        theirs = sglang_pool(recipe, pool).tokens
        error = (pool.pool_tokens - theirs) / theirs if theirs else 0.0
        i = memory.peak_index
        stage = (f"{memory.stages[i].total_gib:.1f} + {memory.activations[i].total_gib:.1f} + "
                 f"{memory.buffers[i].total_gib:.1f} = {memory.total_gib(i):.1f} / {memory.budget_gib:.1f}")
        rows.append(f"| {rid} | {hw} | {pool.mem_fraction_static:g} | {pool.engine_gpus} / {pool.pools_per_engine} "
                    f"| {pool.weights_gib:.1f} | {pool.kv_bytes_per_token:,} | {pool.pool_tokens:,} | {theirs:,} "
                    f"| {error:+.2%} | {stage} |")
    return rows


def render(page: str) -> str:
    """The page with the table between the markers replaced by a fresh one."""
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + "\n".join(table_rows()) + "\n" + END + tail


def main(argv: list[str]) -> int:
    fresh = render(PAGE.read_text())
    if "--write" in argv:
        PAGE.write_text(fresh)
        return 0
    if fresh != PAGE.read_text():
        print(f"{PAGE} is stale: run scripts/memory_table.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
