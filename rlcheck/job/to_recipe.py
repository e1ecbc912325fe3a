"""The Recipe a Job's argv describes, read the way SLIME's parser would, so the registry's checks judge it.

Only what the argv states is used; SLIME's own defaults fill the rest (TP/PP/CP/EP = 1, one step per rollout,
8 GPUs per node, one GPU per engine, the global batch from SLIME's rule). A fact that neither gives (the model
among the known architectures, the rollout batch) makes the checks that need it UNKNOWN, naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from rlcheck.facts import Need
from rlcheck.framework.detect import FRAMEWORKS
from rlcheck.job import argv_model
from rlcheck.job.argv_flags import Flags, is_option
from rlcheck.job.job import Job
from rlcheck.probes.recipe.inline_secrets import secret_name
from rlcheck.probes.recipe.memory_activations import recompute_of
from rlcheck.recipes.models import GQA, MLA, MODELS, ModelArch, MoE
from rlcheck.recipes.recipe import RM_TYPES, Optimizer, Parallelism, Placement, Recipe, Reward, Rollout

_DIMS = ("--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Reading:
    """A Job read as a Recipe."""

    recipe: Recipe
    missing: Mapping[Need, str]
    """fact -> why the argv does not give it; the registry makes the checks that need it UNKNOWN with it."""


def _identity(model: ModelArch) -> dict[str, int | None]:
    """The flags that tell the known architectures apart, with the value each renders (None: it renders none).
    A flag the argv leaves out reads as None: Megatron's defaults (rotary base 10000, top-2, one query group) are no
    known model's."""
    att, moe = model.attention, model.moe
    return {**dict(zip(_DIMS, (model.num_layers, model.hidden_size, model.ffn_hidden_size, model.num_attention_heads),
                       strict=True)),
            "--num-experts": moe.num_experts if moe else None, "--vocab-size": model.vocab_size,
            "--rotary-base": model.rotary_base, "--moe-router-topk": moe.router_topk if moe else None,
            "--moe-ffn-hidden-size": moe.ffn_hidden_size if moe else None,
            "--num-query-groups": att.num_query_groups if isinstance(att, GQA) else None,
            "--kv-lora-rank": att.kv_lora_rank if isinstance(att, MLA) else None}


def model_of(flags: Flags, names: Sequence[str] = ()) -> tuple[ModelArch, str]:
    """The known architecture the argv's identity flags all match, else the model its Megatron flags describe in
    full (rlcheck.job.argv_model; names: the argv's options in order), else an argv-only stand-in and the missing
    fact (why the argv's model cannot be counted, and the flags that differ from a known model of the same dims)."""
    dims = tuple(flags.int(f) for f in _DIMS)
    experts = flags.int("--num-experts")
    near: list[str] = []  # known models of the same dims and experts, by the flags they differ in
    for model in MODELS.values():
        if (model.spec != ()) != flags.has("--spec"):
            continue
        differ = [(f, v) for f, v in _identity(model).items() if flags.int(f) != v]
        if not differ:
            return model, ""
        if all(f not in (*_DIMS, "--num-experts") for f, _ in differ):
            near.append(", ".join(f"{f} {flags.str(f) or '(not given)'} ({model.name}: {v})" for f, v in differ))
    built, unbuilt = argv_model.from_argv(flags, list(names))
    if built is not None:
        return built, ""
    given = ", ".join(f"{f} {v}" for f, v in zip(_DIMS, dims, strict=True) if v is not None) or "no model dims"
    why = (f"the model ({given}) is not among the known architectures ({', '.join(MODELS)}) and cannot be counted "
           f"from the argv: {unbuilt}"
           + (f"; its dims are a known model's, but it has {'; '.join(near)}" if near else ""))
    # Stand-in: only the layer count and expert count are read by the checks that still run (layout). An argv that
    # states no model at all (its model args were not seen: a launcher helper the stub does not model) does not say
    # the model is dense: with EP > 1 the stand-in takes EP's experts, so the layout judges what the argv states.
    ep = flags.int("--expert-model-parallel-size", 1) or 1
    if not experts and not any(dims) and ep > 1:
        experts = ep
    moe = MoE(num_experts=experts, router_topk=1, ffn_hidden_size=1, layer_freq="1") if experts else None
    return ModelArch(name="unknown", num_layers=dims[0] or 1, hidden_size=1, ffn_hidden_size=1,
                     num_attention_heads=1, vocab_size=1, rotary_base=1, attention=GQA(), moe=moe), why


def _rollout(flags: Flags) -> tuple[Rollout, str]:
    batch, n = flags.int("--rollout-batch-size"), flags.int("--n-samples-per-prompt", 1)
    stated = flags.int("--num-steps-per-rollout")
    missing = "" if batch else "--rollout-batch-size is not in the argv"
    batch = batch or 1
    # SLIME derives the global batch when it is not given: prompts x samples / steps.
    global_batch = flags.int("--global-batch-size") or max(1, batch * (n or 1) // (stated or 1))
    # Steps unset: SLIME asserts nothing and trains the whole global batches a rollout holds.
    steps = stated or max(1, batch * (n or 1) // global_batch)
    dynamic = flags.has("--use-dynamic-batch-size")
    return Rollout(num_rollout=flags.int("--num-rollout", 1) or 1, rollout_batch_size=batch,
                   n_samples_per_prompt=n or 1, global_batch_size=global_batch, num_steps_per_rollout=steps,
                   steps_stated=stated is not None,
                   max_response_len=flags.int("--rollout-max-response-len", 8192) or 8192,
                   temperature=flags.float("--rollout-temperature", 1.0),  # SLIME's default
                   max_tokens_per_gpu=flags.int("--max-tokens-per-gpu", 8192) if dynamic else None,
                   micro_batch_size=flags.int("--micro-batch-size", 1) or 1), missing


def _parallel(flags: Flags) -> Parallelism:
    tp = flags.int("--tensor-model-parallel-size", 1) or 1
    return Parallelism(tp=tp, pp=flags.int("--pipeline-model-parallel-size", 1) or 1,
                       cp=flags.int("--context-parallel-size", 1) or 1,
                       ep=flags.int("--expert-model-parallel-size", 1) or 1,
                       etp=flags.int("--expert-tensor-parallel-size", 1) or 1,
                       sequence_parallel=flags.has("--sequence-parallel") and tp > 1,
                       pp_first_layers=flags.int("--decoder-first-pipeline-num-layers"),
                       pp_last_layers=flags.int("--decoder-last-pipeline-num-layers"))


def _mode(flags: Flags) -> str:
    """SLIME's and Miles' debug modes: --load-debug-rollout-data sets debug_train_only (no engines start either)."""
    train = flags.has("--debug-train-only") or flags.has("--load-debug-rollout-data")
    if train and flags.has("--debug-rollout-only"):
        given = "--debug-train-only" if flags.has("--debug-train-only") else "--load-debug-rollout-data"
        raise ValueError(f"{given} with --debug-rollout-only: SLIME and Miles assert that debug_rollout_only and "
                         "debug_train_only are not both set")
    return "train-only" if train else "rollout-only" if flags.has("--debug-rollout-only") else "rl"


def _placement(flags: Flags, job: Job) -> Placement:
    per_node = flags.int("--num-gpus-per-node") or job.gpus_per_node or 8
    return Placement(actor_num_nodes=flags.int("--actor-num-nodes", 1) or 1,
                     actor_gpus_per_node=flags.int("--actor-num-gpus-per-node", 8) or 8,
                     colocate=flags.has("--colocate"), rollout_num_gpus=flags.int("--rollout-num-gpus"),
                     rollout_gpus_per_engine=flags.int("--rollout-num-gpus-per-engine", 1) or 1,
                     num_gpus_per_node=per_node, mode=_mode(flags))


def sglang_flags(argv: Sequence[str]) -> tuple[tuple[str, str | None], ...]:
    out: dict[str, str | None] = {}
    for i, token in enumerate(argv):
        if token.startswith("--sglang-") and is_option(token):
            name, eq, value = token[len("--sglang-"):].partition("=")
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            out[name] = value if eq else (nxt if nxt is not None and not is_option(nxt) else None)
    return tuple(out.items())


def train_args(argv: Sequence[str], rendered: Recipe) -> tuple[str, ...]:
    """The argv's flags (with all their values) that the Recipe's typed fields do not render: --recompute-*,
    --rollout-max-prompt-len, --moe-enable-deepep ... The memory and layout judges read them from extra_args, so
    they see what the trainer gets. `--flag=value` is split in two, as argparse reads it."""
    own = {token for token in rendered.argv() if token.startswith("--")}
    out: list[str] = []
    keep = False
    for token in argv:
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            keep = name not in own
            out += ([name, value] if eq else [name]) if keep else []
        elif keep:  # a value of the flag before it (nargs='+' flags keep all of theirs)
            out.append(token)
    return tuple(out)


def read(job: Job) -> Reading:
    """The Recipe of a Job; ValueError names a flag whose value SLIME would refuse."""
    flags = Flags(job.argv)
    names = [token.partition("=")[0] for token in job.argv if is_option(token)]
    model, model_missing = model_of(flags, names)
    rollout, batch_missing = _rollout(flags)
    rm_type = flags.str("--rm-type", "deepscaler")
    recipe = Recipe(id=f"job:{job.source}", model=model, rollout=rollout, parallel=_parallel(flags),
                    placement=_placement(flags, job),
                    reward=Reward(rm_type=rm_type, rm_url=flags.str("--rm-url")) if rm_type in RM_TYPES else Reward(),
                    hf_checkpoint=flags.str("--hf-checkpoint", "") or "", sglang=sglang_flags(job.argv),
                    # Secrets are judged on the Job itself (recipe_no_inline_secrets); the Recipe refuses them.
                    env=tuple((k, v) for k, v in job.env if not secret_name(k)),
                    train_script=job.argv[1] if len(job.argv) > 1 else job.argv[0],
                    # Whose parser the argv is written for; a job naming neither is judged as SLIME's.
                    framework=job.framework if job.framework in FRAMEWORKS else "slime",
                    optimizer=Optimizer(cpu_offload=flags.has("--optimizer-cpu-offload")))
    recipe = recipe.replace(extra_args=train_args(job.argv, recipe))
    recompute_of(recipe)  # ValueError names a --recompute-* value SLIME's parser refuses
    flags.int("--rollout-max-prompt-len")
    train_terms = argv_model.asked(flags, names, argv_model.TRAIN_TERMS)
    engine_terms = argv_model.asked(flags, names, argv_model.ROLLOUT_TERMS)
    facts = ((Need.MODEL, model_missing), (Need.BATCH, batch_missing),
             (Need.TRAIN_MEMORY, train_terms and f"the launch asks for {train_terms}"),
             (Need.ROLLOUT_MEMORY, engine_terms and f"the launch asks for {engine_terms}"))
    return Reading(recipe=recipe, missing={need: why for need, why in facts if why})
