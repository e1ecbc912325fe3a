"""Hardware deltas: small functions applied to a base recipe, never per-hardware copies."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from rlcheck.hardware import HardwareProfile
from rlcheck.recipes.recipe import Placement, Recipe, with_env

Delta = Callable[[Recipe, HardwareProfile], Recipe]


class NotForHardware(ValueError):
    """The recipe does not make sense on this hardware; the message says why."""


def node_shape(recipe: Recipe, hw: HardwareProfile) -> Recipe:
    """Lay the recipe's training GPUs out on this hardware's nodes (same GPU count), engines within a node."""
    pl = recipe.placement
    nodes, per_node = pl.actor_num_nodes, pl.actor_gpus_per_node
    if per_node > hw.gpus_per_node:
        if pl.actor_gpus % hw.gpus_per_node:
            raise NotForHardware(f"{recipe.id}: {pl.actor_gpus} training GPUs do not fill whole {hw.name} nodes "
                                 f"of {hw.gpus_per_node} GPUs")
        nodes, per_node = pl.actor_gpus // hw.gpus_per_node, hw.gpus_per_node
    shaped = Placement(actor_num_nodes=nodes, actor_gpus_per_node=per_node, colocate=pl.colocate,
                       rollout_num_gpus=pl.rollout_num_gpus,
                       rollout_gpus_per_engine=pl.rollout_gpus_per_engine,
                       num_gpus_per_node=hw.gpus_per_node)
    return recipe.replace(placement=shaped)


def hopper_connections(recipe: Recipe, hw: HardwareProfile) -> Recipe:
    """Megatron asserts CUDA_DEVICE_MAX_CONNECTIONS=1 for TP or CP > 1 below compute capability 10."""
    if hw.sm < 100 and (recipe.parallel.tp > 1 or recipe.parallel.cp > 1):
        return with_env(recipe, {"CUDA_DEVICE_MAX_CONNECTIONS": "1"})
    return recipe


def worker_capability(recipe: Recipe, hw: HardwareProfile) -> Recipe:
    """What the image's driver guard answers Megatron's GPU probes with on the GPU-less driver."""
    from rlcheck.fixes.driver_guard import ENV_NAME

    return with_env(recipe, {ENV_NAME: hw.compute_capability})


def efa_env(recipe: Recipe, hw: HardwareProfile) -> Recipe:
    """NCCL over EFA, as the reference test case sets it (reference/adt-slime.md 2.5)."""
    if hw.efa_interfaces_per_node:
        return with_env(recipe, {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"})
    return recipe


def gb300_only(recipe: Recipe, hw: HardwareProfile) -> Recipe:
    """The GLM-5.2 GB300 recipe is shaped for GB300 racks; Megatron's DeepEP is rejected there."""
    if not recipe.id.startswith("glm5.2"):
        return recipe
    if hw.name != "gb300":
        raise NotForHardware(f"{recipe.id}: shaped for GB300 nodes (4 GPUs per node, NVL72, "
                             f"{recipe.placement.actor_num_nodes} nodes); {hw.name} nodes have "
                             f"{hw.gpus_per_node} GPUs")
    if "--moe-enable-deepep" in recipe.extra_args:
        raise ValueError("megatron_use_deepep=True: Megatron DeepEP is not supported on GB300; "
                         "set it False (--no-megatron-use-deepep)")
    return recipe


SMALL_HBM_GIB = 100.0
"""Below this (H100's 80 GB) the 30B MoE's 12-GPU layout needs more expert parallelism and a CPU optimizer."""


def moe_on_small_hbm(recipe: Recipe, hw: HardwareProfile) -> Recipe:
    """Qwen3-30B-A3B on 12 H100s: EP 2 holds 15.3B params per rank (~120 GiB with fp32 grads and Adam), over
    the 75 GiB torch budget. EP 4 (the largest that divides both 12 GPUs and 128 experts) plus Adam on the CPU
    brings it to ~51 GiB; SLIME's own H100 example for this model offloads the optimizer the same way."""
    if not recipe.id.startswith("qwen3-30b-a3b") or hw.hbm_gib >= SMALL_HBM_GIB:
        return recipe
    return recipe.replace(parallel=dataclasses.replace(recipe.parallel, ep=4),
                          optimizer=dataclasses.replace(recipe.optimizer, cpu_offload=True))


DELTAS: tuple[Delta, ...] = (gb300_only, moe_on_small_hbm, node_shape, hopper_connections, worker_capability, efa_env)


def for_hardware(recipe: Recipe, hw: HardwareProfile) -> Recipe:
    for delta in DELTAS:
        recipe = delta(recipe, hw)
    return recipe.replace(hardware=hw.name)
