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
    """The whole architecture (parameter count, attention shape): a known model the argv's dims match."""
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
