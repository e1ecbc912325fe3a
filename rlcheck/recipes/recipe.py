"""The typed Recipe: everything SLIME's train.py receives, validated on construction, rendered as argv.

Impossible values (a zero batch, a negative learning rate, a secret in the env) are refused here.
Combinations that are possible but wrong for a cluster (a batch equation that does not hold, more
GPUs than there are) stay constructible: the preflight checks judge them, with the catalogue id.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from rlcheck import secret_guard
from rlcheck.recipes.models import ModelArch

MODES = ("rl", "train-only", "rollout-only")
RM_TYPES = ("remote_rm", "deepscaler", "dapo", "math", "f1", "gpqa", "ifbench", "random")
_FLAG = re.compile(r"[a-z0-9][a-z0-9-]*")


def _positive(obj: object, *fields: str) -> None:
    for field in fields:
        value = getattr(obj, field)
        if value is not None and value <= 0:
            raise ValueError(f"{field}={value}: must be > 0")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Rollout:
    num_rollout: int
    rollout_batch_size: int
    """Prompts per rollout."""
    n_samples_per_prompt: int
    global_batch_size: int
    """Samples per optimizer step."""
    num_steps_per_rollout: int = 1
    steps_stated: bool = True
    """--num-steps-per-rollout was given. SLIME then derives the global batch from it and asserts any given one
    equals it; unset (its default None), nothing is asserted: it trains rollout samples // global batch steps and
    drops the trailing samples."""
    max_response_len: int = 8192
    temperature: float = 1.0
    max_tokens_per_gpu: int | None = 8192
    """Dynamic batching budget; None means fixed micro batches of micro_batch_size."""
    micro_batch_size: int = 1

    def __post_init__(self) -> None:
        _positive(self, "num_rollout", "rollout_batch_size", "n_samples_per_prompt", "global_batch_size",
                  "num_steps_per_rollout", "max_response_len", "temperature", "max_tokens_per_gpu", "micro_batch_size")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Parallelism:
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int = 1
    """Expert tensor parallel size."""
    sequence_parallel: bool = False
    pp_first_layers: int | None = None
    """Layers on the first pipeline stage (--decoder-first-pipeline-num-layers); None = even split."""
    pp_last_layers: int | None = None

    def __post_init__(self) -> None:
        _positive(self, "tp", "pp", "cp", "ep", "etp", "pp_first_layers", "pp_last_layers")
        if self.sequence_parallel and self.tp == 1:
            raise ValueError("sequence_parallel=True: needs tp > 1")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Placement:
    actor_num_nodes: int
    actor_gpus_per_node: int
    colocate: bool
    rollout_num_gpus: int | None = None
    """Disaggregated rollout GPUs; None with colocate (SLIME uses the actor's GPUs)."""
    rollout_gpus_per_engine: int = 1
    num_gpus_per_node: int = 8
    mode: str = "rl"
    """What the job runs (SLIME and Miles alike, v0.2.4 to main): 'rl' both sides; 'train-only'
    (--debug-train-only, which --load-debug-rollout-data also sets): the placement group holds the actor GPUs only,
    no SGLang engine starts, colocated or not, and no rollout GPUs are needed; 'rollout-only' (--debug-rollout-only):
    the engines on the rollout GPUs (the actor GPUs where colocated without --rollout-num-gpus), the train actors
    return before Megatron builds the model."""

    def __post_init__(self) -> None:
        _positive(self, "actor_num_nodes", "actor_gpus_per_node", "rollout_gpus_per_engine", "num_gpus_per_node")
        if self.mode not in MODES:
            raise ValueError(f"mode={self.mode!r}: one of {', '.join(MODES)}")
        if self.mode == "rollout-only" and not self.colocate and not self.rollout_num_gpus:
            # SLIME and Miles size the actors from it: min(8, None) is a TypeError, 0 // 0 a ZeroDivisionError
            raise ValueError(f"rollout_num_gpus={self.rollout_num_gpus}: --debug-rollout-only without --colocate "
                             f"needs rollout GPUs")
        if self.mode == "rl" and not self.colocate and not self.rollout_num_gpus:
            raise ValueError(f"rollout_num_gpus={self.rollout_num_gpus}: a disaggregated recipe needs rollout GPUs")

    @property
    def engines(self) -> bool:
        """SGLang engines start (all but train-only)."""
        return self.mode != "train-only"

    @property
    def trains(self) -> bool:
        """Megatron builds and trains the model (all but rollout-only)."""
        return self.mode != "rollout-only"

    @property
    def actor_gpus(self) -> int:
        return self.actor_num_nodes * self.actor_gpus_per_node

    @property
    def rollout_gpus(self) -> int:
        """GPUs the engines run on (0 when none start)."""
        if not self.engines:
            return 0
        if self.mode == "rollout-only":
            return int(self.rollout_num_gpus or self.actor_gpus)
        return self.actor_gpus if self.colocate else int(self.rollout_num_gpus or 0)

    @property
    def placement_group_gpus(self) -> int:
        """What SLIME's placement group asks Ray for (train-only: the actors'; rollout-only: the engines';
        colocated: the larger; else the sum)."""
        if not self.engines:
            return self.actor_gpus
        if not self.trains:
            return self.rollout_gpus
        if self.colocate:
            return max(self.actor_gpus, self.rollout_gpus)
        return self.actor_gpus + self.rollout_gpus

    @property
    def mode_flag(self) -> str:
        """The train.py flag of the mode ('' for rl)."""
        return "" if self.mode == "rl" else f"--debug-{self.mode}"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Optimizer:
    lr: float = 1e-6
    lr_decay_style: str = "constant"
    weight_decay: float = 0.1
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    cpu_offload: bool = False

    def __post_init__(self) -> None:
        _positive(self, "lr")
        if not 0 <= self.adam_beta1 < 1 or not 0 <= self.adam_beta2 < 1:
            raise ValueError(f"adam_beta1={self.adam_beta1}, adam_beta2={self.adam_beta2}: each in [0, 1)")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Reward:
    rm_type: str = "deepscaler"
    rm_url: str | None = None
    """remote_rm only: the URL SLIME posts to, verbatim."""
    reward_key: str | None = None

    def __post_init__(self) -> None:
        if self.rm_type not in RM_TYPES:
            raise ValueError(f"rm_type={self.rm_type!r}: one of {', '.join(RM_TYPES)}")
        if self.rm_type == "remote_rm" and not self.rm_url:
            raise ValueError("rm_url=None: rm_type=remote_rm needs the reward service URL")
        if self.rm_url and not self.rm_url.startswith(("http://", "https://")):
            raise ValueError(f"rm_url={self.rm_url!r}: an http:// or https:// URL")


def _flag_pairs(pairs: tuple[tuple[str, str | None], ...], field: str) -> None:
    names = [name for name, _ in pairs]
    for name in names:
        if not _FLAG.fullmatch(name) or name.startswith("sglang-"):
            raise ValueError(f"{field}: {name!r}: a flag name without dashes or prefix, e.g. 'mem-fraction-static'")
    if len(set(names)) != len(names):
        raise ValueError(f"{field}: duplicate flags {sorted(n for n in set(names) if names.count(n) > 1)}")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Recipe:
    id: str
    """Recipe id (what --recipe and `rlcheck render` take)."""
    model: ModelArch
    rollout: Rollout
    parallel: Parallelism
    placement: Placement
    optimizer: Optimizer = Optimizer()
    reward: Reward = Reward()
    hf_checkpoint: str = "/fsx/models/model"
    ref_load: str = "/fsx/models/model_torch_dist"
    save: str = "/fsx/checkpoints/run"
    save_interval: int = 20
    prompt_data: str = "/fsx/data/dapo-math-17k.jsonl"
    sglang: tuple[tuple[str, str | None], ...] = ()
    """SGLang server flags without the --sglang- prefix: ('mem-fraction-static', '0.8'), ('log-level', 'warning')."""
    env: tuple[tuple[str, str], ...] = ()
    """Runtime env vars for the job. Secrets never go here: see secret_env."""
    secret_env: tuple[str, ...] = ("HF_TOKEN",)
    """Names the workers read from their own environment (a Kubernetes secret); never rendered with values."""
    grpo: tuple[str, ...] = ("--advantage-estimator", "grpo", "--use-kl-loss", "--kl-loss-coef", "0.00",
                             "--kl-loss-type", "low_var_kl", "--entropy-coef", "0.00", "--eps-clip", "0.2",
                             "--eps-clip-high", "0.28")
    dropout: float = 0.0
    """Megatron's --attention-dropout and --hidden-dropout: its default is 0.1; every upstream SLIME and Miles RL
    script sets 0.0."""
    extra_args: tuple[str, ...] = ()
    """Other train.py flags, one argv token per element."""
    train_script: str = "train.py"
    framework: str = "slime"
    """'slime' or 'miles': whose parser the argv is written for (judged by that one where neither is installed)."""
    hardware: str | None = None
    """The profile the hardware deltas were applied for (None: the base recipe)."""

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("id='': required")
        _positive(self, "save_interval")
        if self.framework not in ("slime", "miles"):
            raise ValueError(f"framework={self.framework!r}: 'slime' or 'miles'")
        _flag_pairs(self.sglang, "sglang")
        for name, _ in self.env:
            if secret_guard.is_secret_name(name):
                raise ValueError(f"env {name}: looks like a secret; list its name in secret_env so the workers "
                                 f"read it from their own environment (never argv or runtime-env JSON)")

    @property
    def world_size(self) -> int:
        return self.placement.actor_gpus

    @property
    def data_parallel(self) -> int:
        """Megatron's DP (0 when TP x PP x CP does not divide the world size)."""
        model_parallel = self.parallel.tp * self.parallel.pp * self.parallel.cp
        return self.world_size // model_parallel if self.world_size % model_parallel == 0 else 0

    def env_dict(self) -> dict[str, str]:
        return dict(self.env)

    def sglang_value(self, flag: str) -> str | None:
        return dict(self.sglang).get(flag)

    def argv(self) -> list[str]:
        """train.py's argv, one token per element: what rlcheck.cluster.launch submits intact."""
        p, r, pl, o = self.parallel, self.rollout, self.placement, self.optimizer
        out = ["python3", self.train_script, *self.model.argv(),
               "--hf-checkpoint", self.hf_checkpoint, "--ref-load", self.ref_load, "--load", self.save,
               "--save", self.save, "--save-interval", str(self.save_interval),
               "--prompt-data", self.prompt_data, "--input-key", "prompt", "--label-key", "label",
               "--apply-chat-template", "--rollout-shuffle",
               "--num-rollout", str(r.num_rollout), "--rollout-batch-size", str(r.rollout_batch_size),
               "--n-samples-per-prompt", str(r.n_samples_per_prompt), "--global-batch-size", str(r.global_batch_size),
               "--num-steps-per-rollout", str(r.num_steps_per_rollout),
               "--rollout-max-response-len", str(r.max_response_len), "--rollout-temperature", str(r.temperature),
               "--tensor-model-parallel-size", str(p.tp), "--pipeline-model-parallel-size", str(p.pp),
               "--context-parallel-size", str(p.cp), "--expert-model-parallel-size", str(p.ep),
               "--expert-tensor-parallel-size", str(p.etp)]
        out += ["--sequence-parallel"] if p.sequence_parallel else []
        out += ["--decoder-first-pipeline-num-layers", str(p.pp_first_layers)] if p.pp_first_layers else []
        out += ["--decoder-last-pipeline-num-layers", str(p.pp_last_layers)] if p.pp_last_layers else []
        if r.max_tokens_per_gpu:
            out += ["--use-dynamic-batch-size", "--max-tokens-per-gpu", str(r.max_tokens_per_gpu)]
        else:
            out += ["--micro-batch-size", str(r.micro_batch_size)]
        out += [*self.grpo, "--optimizer", "adam", "--lr", str(o.lr), "--lr-decay-style", o.lr_decay_style,
                "--weight-decay", str(o.weight_decay), "--adam-beta1", str(o.adam_beta1),
                "--adam-beta2", str(o.adam_beta2)]
        # Megatron's validate_args refuses the CPU offload without the precision-aware optimizer (its hybrid
        # optimizer reuses that path); SLIME's own offloading examples also overlap the D2H/H2D copies.
        out += (["--optimizer-cpu-offload", "--overlap-cpu-optimizer-d2h-h2d", "--use-precision-aware-optimizer"]
                if o.cpu_offload else [])
        out += ["--attention-dropout", str(self.dropout), "--hidden-dropout", str(self.dropout)]
        out += ["--actor-num-nodes", str(pl.actor_num_nodes), "--actor-num-gpus-per-node", str(pl.actor_gpus_per_node),
                "--num-gpus-per-node", str(pl.num_gpus_per_node),
                "--rollout-num-gpus-per-engine", str(pl.rollout_gpus_per_engine)]
        out += ["--colocate"] if pl.colocate else []
        # Colocated RL takes the actor GPUs for its engines (the field's doc); rollout-only reads the count itself.
        out += (["--rollout-num-gpus", str(pl.rollout_num_gpus)]
                if pl.rollout_num_gpus and (not pl.colocate or not pl.trains) else [])
        out += [pl.mode_flag] if pl.mode_flag else []
        out += ["--rm-type", self.reward.rm_type]
        out += ["--rm-url", self.reward.rm_url] if self.reward.rm_url else []
        out += ["--reward-key", self.reward.reward_key] if self.reward.reward_key else []
        for name, value in self.sglang:
            out += [f"--sglang-{name}"] + ([value] if value is not None else [])
        return [*out, *self.extra_args]

    def runtime_env(self) -> dict[str, Any]:
        """The Ray runtime env: env vars only, never a secret's value."""
        return {"env_vars": self.env_dict()}

    def replace(self, **changes: Any) -> Recipe:
        return dataclasses.replace(self, **changes)


def with_env(recipe: Recipe, updates: Mapping[str, str | None]) -> Recipe:
    """A copy with env vars set (or removed where the value is None)."""
    env = recipe.env_dict()
    for name, value in updates.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return recipe.replace(env=tuple(env.items()))


def with_sglang(recipe: Recipe, updates: Mapping[str, str | None], *, remove: tuple[str, ...] = ()) -> Recipe:
    flags = {k: v for k, v in recipe.sglang if k not in remove}
    flags.update(updates)
    return recipe.replace(sglang=tuple(flags.items()))
