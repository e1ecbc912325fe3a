"""cuda-device-max-connections: TP or CP > 1 on Hopper needs CUDA_DEVICE_MAX_CONNECTIONS=1 in the job env.

Proves, with the real megatron.training.arguments in a GPU-less child (as SLIME's Ray driver): once
the driver guard answers the workers' Hopper capability (H200, 9.0), the seed's Qwen3-30B-A3B
recipe at TP2 / CP2 / EP2 fails validate_args with Megatron's assertion when
CUDA_DEVICE_MAX_CONNECTIONS is unset (the 30B recipe's runtime env lacked it), and completes with
CUDA_DEVICE_MAX_CONNECTIONS=1, the remedy.
"""

from __future__ import annotations

from rlcheck.hardware import get_profile
from rlcheck.process import subproc
from rlcheck.repro import megatron_args
from rlcheck.repro.reproduce import Reproduction, versions_for

FAILURE_ID = "cuda-device-max-connections"


def test_repro_cuda_device_max_connections(record_reproduction):
    argv = megatron_args.qwen3_30b_a3b_argv()
    world_size = megatron_args.SEED_30B_WORLD_SIZE
    hopper = get_profile("h200").compute_capability
    unset, fixed = subproc.concurrently(
        lambda: megatron_args.run_validate_args(argv, world_size=world_size, guard_capability=hopper),
        lambda: megatron_args.run_validate_args(argv, world_size=world_size, guard_capability=hopper,
                                                env={"CUDA_DEVICE_MAX_CONNECTIONS": "1"}))
    evidence = (f"validate_args, Qwen3-30B-A3B TP2/CP2/EP2 on capability {hopper}: CUDA_DEVICE_MAX_CONNECTIONS "
                f"unset: {unset.outcome()}; =1: {fixed.outcome()}")
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID),
                          reproduced=unset.matches(FAILURE_ID), fix_verified=fixed.ok, evidence=evidence,
                          details=f"{unset.output.tail()}\n--- CUDA_DEVICE_MAX_CONNECTIONS=1 ---\n"
                                  f"{fixed.output.tail(4)}")
    record_reproduction(result)
