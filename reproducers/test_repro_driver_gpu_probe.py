"""driver-gpu-probe: Megatron's validate_args probes the GPU in SLIME's GPU-less Ray driver.

Proves, with the real megatron.training.arguments in a child process that sees no GPU
(CUDA_VISIBLE_DEVICES=""; on a CPU machine no driver at all, like the head node): the
Qwen3-30B-A3B MoE recipe at the seed's TP2 / CP2 / EP2 (WORLD_SIZE 16, RANK 0) dies in
validate_args with the device-probe error (`--moe-grouped-gemm` calls
torch.cuda.get_device_capability()); with rlcheck's driver guard (rlcheck.fixes.driver_guard),
which answers the two probes only where torch.cuda.is_available() is False, the same
validate_args completes. The guard answers B300's capability (10.3), where Megatron asserts
nothing about CUDA_DEVICE_MAX_CONNECTIONS; the Hopper case is the cuda-device-max-connections
reproducer.
"""

from __future__ import annotations

import pytest

from rlcheck.hardware import get_profile
from rlcheck.process import subproc
from rlcheck.repro import megatron_args
from rlcheck.repro.ahead import Ahead, begin_one
from rlcheck.repro.reproduce import Reproduction, versions_for

FAILURE_ID = "driver-gpu-probe"


def reproduce() -> Reproduction:
    argv = megatron_args.qwen3_30b_a3b_argv()
    world_size = megatron_args.SEED_30B_WORLD_SIZE
    capability = get_profile("b300").compute_capability
    bare, guarded = subproc.concurrently(
        lambda: megatron_args.run_validate_args(argv, world_size=world_size,  # it must reach CUDA
                                                preload=megatron_args.TORCH_PRELOAD),
        lambda: megatron_args.run_validate_args(argv, world_size=world_size, guard_capability=capability))
    evidence = (f"validate_args, Qwen3-30B-A3B TP2/CP2/EP2 --moe-grouped-gemm, WORLD_SIZE {world_size}, no GPU: "
                f"{bare.outcome()}; with the driver guard answering {capability}: {guarded.outcome()}")
    return Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID),
                        reproduced=bare.matches(FAILURE_ID), fix_verified=guarded.ok, evidence=evidence,
                        details=f"{bare.output.tail()}\n--- guarded ---\n{guarded.output.tail(4)}")


def start_ahead(session: pytest.Session) -> Ahead[Reproduction]:
    """Begun ahead of the test (rlcheck.repro.ahead, reproducers/conftest.py), in a CPU slot: forked children."""
    return begin_one(session, __file__, lambda _folder: reproduce(), heavy=True)


def test_repro_driver_gpu_probe(record_reproduction, ahead_result):
    record_reproduction(ahead_result)
