"""The configurations memory_truth trains, the SLIME argv each one stands for, and rlcheck's estimate of that argv.

Pure Python (no torch): the estimate is computed here, on the GPU machine and on a laptop alike, through the same
path `rlcheck preflight --job JOB --hardware h200` takes: a Job holding the argv, read back as a Recipe by
rlcheck.job.to_recipe.read, judged by evaluate_stage_memory on the h200 profile.

Qwen3-0.6B and Qwen3-1.7B are not among rlcheck's known architectures (rlcheck.recipes.models.MODELS), so `--job`
reads their argv with a stand-in model and the memory check is UNKNOWN for them (need: model). For those two the
estimate swaps the Recipe's model for the ModelArch below (the same flags SLIME's scripts/models/qwen3-*.sh pass);
every other field still comes from the argv. Qwen3-4B is known, and its estimate is exactly what `--job` computes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rlcheck.hardware import get_profile
from rlcheck.job.job import Job
from rlcheck.job.to_recipe import read
from rlcheck.probes.recipe.memory import estimate_stage_memory, evaluate_stage_memory
from rlcheck.recipes.models import GQA, QWEN3_4B, ModelArch

# SLIME (THUDM/slime 624b824) scripts/models/qwen3-0.6B.sh and qwen3-1.7B.sh; tied embeddings (no
# --untie-embeddings-and-output-weights), as in Qwen3-4B.
QWEN3_0_6B = ModelArch(
    name="Qwen3-0.6B", num_layers=28, hidden_size=1024, ffn_hidden_size=3072, num_attention_heads=16,
    vocab_size=151936, rotary_base=1_000_000, params_b=0.6, norm_epsilon="1e-6",
    attention=GQA(num_query_groups=8, kv_channels=128, qk_layernorm=True),
)
QWEN3_1_7B = ModelArch(
    name="Qwen3-1.7B", num_layers=28, hidden_size=2048, ffn_hidden_size=6144, num_attention_heads=16,
    vocab_size=151936, rotary_base=1_000_000, params_b=1.7, norm_epsilon="1e-6",
    attention=GQA(num_query_groups=8, kv_channels=128, qk_layernorm=True),
)
SHAPES = {"0.6b": QWEN3_0_6B, "1.7b": QWEN3_1_7B, "4b": QWEN3_4B}
RECIPE_TOKENS = 8192
"""The Qwen3-4B recipes' --max-tokens-per-gpu (rlcheck.recipes.cases: qwen3-4b-colocated, qwen3-4b-remote-rm)."""
FULL_RECOMPUTE = ("--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    name: str
    shape: str
    """A key of SHAPES."""
    tokens: int
    """--max-tokens-per-gpu: the one packed micro-batch's tokens."""
    recompute: bool
    """Full recompute (uniform, 1 layer per chunk), else none."""
    temperature: float = 1.0
    """--rollout-temperature: SLIME divides the fp32 logits by it (a copy) when it is not 1."""

    @property
    def model(self) -> ModelArch:
        return SHAPES[self.shape]

    def argv(self) -> tuple[str, ...]:
        """The SLIME train.py argv this run stands for: one GPU, TP 1, bf16, Adam, distributed optimizer."""
        return ("python3", "train.py", "--actor-num-nodes", "1", "--actor-num-gpus-per-node", "1",
                "--num-gpus-per-node", "1", "--rollout-num-gpus", "1", *self.model.argv(),
                "--tensor-model-parallel-size", "1", "--pipeline-model-parallel-size", "1", "--bf16",
                "--optimizer", "adam", "--lr", "1e-6", "--use-distributed-optimizer",
                "--rollout-batch-size", "8", "--n-samples-per-prompt", "1", "--global-batch-size", "8",
                "--rollout-max-response-len", str(self.tokens), "--rollout-temperature", str(self.temperature),
                "--use-dynamic-batch-size", "--max-tokens-per-gpu", str(self.tokens),
                *(FULL_RECOMPUTE if self.recompute else ()))


def _configs() -> tuple[Config, ...]:
    out = [Config(name=f"qwen3-{shape}-{'full' if recompute else 'none'}-{RECIPE_TOKENS}", shape=shape,
                  tokens=RECIPE_TOKENS, recompute=recompute)
           for shape in SHAPES for recompute in (False, True)]
    # Longer packed micro-batches with full recompute (the activations grow, the weights do not), and one run at
    # SLIME's non-unit sampling temperature (its loss divides the fp32 logits by it, one more copy).
    out += [Config(name="qwen3-4b-full-16384", shape="4b", tokens=16384, recompute=True),
            Config(name="qwen3-1.7b-none-16384", shape="1.7b", tokens=16384, recompute=False),
            Config(name="qwen3-1.7b-none-8192-t0.8", shape="1.7b", tokens=RECIPE_TOKENS, recompute=False,
                   temperature=0.8)]
    return tuple(out)


CONFIGS = _configs()
SMOKE = Config(name="smoke-0.6b-none-512", shape="0.6b", tokens=512, recompute=False)
"""A quick run that checks the machinery before the real ones (not recorded as a configuration)."""


def by_name(name: str) -> Config:
    for config in (*CONFIGS, SMOKE):
        if config.name == name:
            return config
    raise ValueError(f"unknown configuration {name!r}; known: {', '.join(c.name for c in (*CONFIGS, SMOKE))}")


def estimate(config: Config) -> dict[str, Any]:
    """rlcheck's stage-memory estimate of the config's argv on the h200 profile, term by term (GiB)."""
    job = Job(argv=config.argv(), intended_argv=config.argv(), entrypoint="", nodes=1, gpus_per_node=1,
              framework="slime", source=config.name, source_format="argv-json")
    reading = read(job)
    recipe = reading.recipe
    via = "rlcheck --job (the argv's model is known)"
    if reading.missing:  # the model is not among the known ones: the same Recipe with the model the argv names
        if recipe.model.name != "unknown" or set(reading.missing) != {next(iter(reading.missing))}:
            raise ValueError(f"{config.name}: the argv misses {dict(reading.missing)}")
        recipe = recipe.replace(model=config.model)
        via = f"rlcheck --job's Recipe with the model set to {config.model.name} (not among rlcheck's known models)"
    profile = get_profile("h200")
    memory = estimate_stage_memory(recipe, profile)
    stage, act, buf = memory.stages[0], memory.activations[0], memory.buffers[0]
    verdict = evaluate_stage_memory(recipe, profile)
    return {"via": via, "model_params": memory.model_params, "weights_gib": stage.weights_gib,
            "grads_gib": stage.grads_gib, "optimizer_gib": stage.optimizer_gib, "static_gib": stage.total_gib,
            "activations": {"layers_gib": act.layers_gib, "recompute_gib": act.recompute_gib,
                            "embedding_gib": act.embedding_gib, "logits_gib": act.logits_gib,
                            "total_gib": act.total_gib},
            "buffers": {"context_gib": buf.context_gib, "nccl_gib": buf.nccl_gib, "padding_gib": buf.padding_gib,
                        "dispatcher_gib": buf.dispatcher_gib, "colocated_gib": buf.colocated_gib,
                        "total_gib": buf.total_gib},
            "allocated_gib": stage.total_gib + act.total_gib,
            "total_gib": memory.total_gib(0), "budget_gib": memory.budget_gib,
            "verdict": {"status": verdict.status.value, "summary": verdict.summary}}
