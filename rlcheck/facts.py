"""The facts a preflight check judges (ground floor: the job reader and the registry both name them)."""

from __future__ import annotations

import enum


class Need(enum.StrEnum):
    """The facts a check judges. A job, a recipe or a cluster gives each, or the reason it cannot
    (Inputs.missing); the registry makes a check whose fact is missing UNKNOWN, naming it, before it judges."""

    LAUNCH = "launch"
    """What the trainer receives as launched: argv, runtime env, entrypoint, stated cluster shape."""
    RECIPE = "recipe"
    """The launch read as SLIME's parser reads it: parallelism, placement, rollout engines, flags, env."""
    MODEL = "model"
    """The whole architecture (parameter count, attention shape): a known model the argv's identity flags match,
    else the model the argv's Megatron flags describe in full (rlcheck.job.argv_model)."""
    TRAIN_MEMORY = "training memory"
    """Every term of training memory the launch asks for is one the stage estimate counts (no MTP, LoRA, fp8
    training, virtual pipeline ... it leaves out)."""
    ROLLOUT_MEMORY = "rollout memory"
    """Every term of an engine's memory the launch asks for is one the KV pool estimate counts (no draft model,
    LoRA pool, disaggregated prefill ... it leaves out)."""
    BATCH = "batch"
    """The rollout batch the launch states (--rollout-batch-size)."""
    PROFILE = "profile"
    """A hardware profile (--hardware); without one the judge decides (usually SKIP naming it)."""
    CLUSTER = "cluster"
    """The per-node fan-out over the Ray under check."""
    GPU = "gpu"
    """CUDA GPUs on this machine."""
    NODE = "node"
    """This machine as a GPU node: its driver, PCI bus and GPU list, read also when it shows none (never skipped
    for a missing GPU: that is what it judges)."""
