"""Rule table for the training activation memory per pipeline stage (rlcheck.probes.recipe.memory_activations), on
a toy GQA model whose numbers are written out: how many micro-batches a data-parallel rank runs (DP by floor
division, the prompt budget, CP), what --recompute-* means when left out, each stage's number, its 1F1B in-flight
count and the terms it multiplies, the full-recompute checkpoints with and without sequence parallelism, and the
block method's working chunk."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.probes.recipe import memory_activations as ma
from rlcheck.probes.recipe.memory_params import GIB
from rlcheck.recipes.models import GQA, ModelArch
from rlcheck.recipes.recipe import Parallelism, Recipe

# toy: 4 layers, hidden 64, 4 heads of 16 (2 KV heads), SwiGLU ffn 128, vocab 1000, 1000 tokens per GPU
H, HEADS, Q, KV, FFN, VOCAB, T = 64, 4, 4 * 16, 2 * 16, 128, 1000, 1000
UNSHARDED = 8 * H
SHARDED = 2 * (Q + 2 * KV) + 2 * Q + 2 * KV + 2 * Q + 4 * HEADS + 6 * FFN  # no qk norm
LAYER = T * (UNSHARDED + SHARDED)  # one layer at TP1


def _toy(*, gpus: int = 8, args: tuple[str, ...] = (), rollout: dict | None = None, **parallel) -> Recipe:
    base = recipes.get("qwen3-4b-colocated", "h100")
    model = ModelArch(name="toy", num_layers=4, hidden_size=H, ffn_hidden_size=FFN, num_attention_heads=HEADS,
                      vocab_size=VOCAB, rotary_base=10000, attention=GQA(num_query_groups=2, kv_channels=16))
    return base.replace(model=model, parallel=Parallelism(**parallel), extra_args=args,
                        placement=dataclasses.replace(base.placement, actor_num_nodes=1, actor_gpus_per_node=gpus),
                        rollout=dataclasses.replace(base.rollout, max_tokens_per_gpu=T, **(rollout or {})))


@pytest.mark.parametrize(("recipe", "tokens", "count"), [
    # DP = 8 // (2 x 2 x 2) = 1: 8 samples of 1024 + 1024 tokens, halved by CP 2, in micro-batches of 2048
    (_toy(tp=2, pp=2, cp=2, rollout={"global_batch_size": 8, "max_response_len": 1024}), 2048, 4),
    # DP = 6 // 4 = 1 (floor): 8 samples x 2048 / 2048
    (_toy(gpus=6, tp=4, rollout={"global_batch_size": 8, "max_response_len": 1024}), 2048, 8),
    # DP 2: ceil(9 / 2) = 5 samples x (3072 + 1024) / 4096
    (_toy(gpus=2, args=("--rollout-max-prompt-len", "3072"),
          rollout={"global_batch_size": 9, "max_response_len": 1024}), 4096, 5),
    # one short sample: a fraction of a micro-batch is one
    (_toy(gpus=1, rollout={"global_batch_size": 1, "max_response_len": 1024}), 8192, 1),
])
def test_micro_batches_per_data_parallel_rank(recipe, tokens, count):
    assert ma.micro_batches(recipe, tokens) == count


@pytest.mark.parametrize(("args", "recompute"), [
    ((), ma.Recompute(granularity="none", method="uniform", num_layers=1)),
    (("--recompute-granularity", "full"), ma.Recompute(granularity="full", method="uniform", num_layers=1)),
    (("--recompute-granularity", "full", "--recompute-method", "block", "--recompute-num-layers", "3"),
     ma.Recompute(granularity="full", method="block", num_layers=3)),
    (("--recompute-granularity", "selective"), ma.Recompute(granularity="selective", method="uniform", num_layers=1)),
])
def test_recompute_defaults_are_megatrons(args, recompute):
    assert ma.recompute_of(_toy(args=args)) == recompute


def _rows(recipe: Recipe) -> list[tuple[float, ...]]:
    return [(a.stage, a.in_flight, a.layers_gib * GIB, a.recompute_gib * GIB, a.embedding_gib * GIB,
             a.logits_gib * GIB) for a in ma.stage_activations(recipe)]


EMBEDDING = 8 * T + T * H
LOGITS = T * VOCAB * 8


@pytest.mark.parametrize(("recipe", "rows"), [
    # PP4 of one layer each, many micro-batches: 1F1B holds 4, 3, 2, 1; the embedding is on the first stage for
    # each of its micro-batches, the logits on the last
    (_toy(pp=4), [(1, 4, 4 * LAYER, 0.0, 4 * EMBEDDING, 0.0), (2, 3, 3 * LAYER, 0.0, 0.0, 0.0),
                  (3, 2, 2 * LAYER, 0.0, 0.0, 0.0), (4, 1, LAYER, 0.0, 0.0, LOGITS)]),
    # full recompute, chunks of 1 layer (the default), TP2 without sequence parallelism: each chunk input whole,
    # 2 B x tokens x hidden; one layer's activations while it is recomputed (sharded part / TP)
    (_toy(gpus=2, tp=2, args=("--recompute-granularity", "full")),
     [(1, 1, 4 * 2 * T * H, T * (UNSHARDED + SHARDED / 2), EMBEDDING / 2, LOGITS / 2)]),
    # the same with sequence parallelism: the chunk inputs and everything else / TP
    (_toy(gpus=2, tp=2, sequence_parallel=True, args=("--recompute-granularity", "full")),
     [(1, 1, 4 * 2 * T * H / 2, LAYER / 2, EMBEDDING / 2, LOGITS / 2)]),
    # block of 2: the first two layers keep their inputs, the other two everything; two layers recomputed at once
    (_toy(gpus=1, args=("--recompute-granularity", "full", "--recompute-method", "block", "--recompute-num-layers",
                        "2")), [(1, 1, 2 * 2 * T * H + 2 * LAYER, 2 * LAYER, EMBEDDING, LOGITS)]),
    # block of 0: nothing recomputed, every layer stored
    (_toy(gpus=1, args=("--recompute-granularity", "full", "--recompute-method", "block", "--recompute-num-layers",
                        "0")), [(1, 1, 4 * LAYER, 0.0, EMBEDDING, LOGITS)]),
])
def test_stage_activations_rows(recipe, rows):
    assert _rows(recipe) == [pytest.approx(row) for row in rows]
