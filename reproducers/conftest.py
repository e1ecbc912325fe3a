"""What the reproducers share in a session: one warm interpreter per package set (rlcheck.process.warm).

Once collection has picked the tests, the warm interpreters of the package sets they use start importing in the
background (Megatron's arguments in the GPU-less driver environment, SGLang's server_args), so the first
reproducer that needs one mostly finds it ready. Every run is still its own forked child process.
"""

from __future__ import annotations

import pytest

from rlcheck.probes import sglang_flags
from rlcheck.process import warm
from rlcheck.repro import megatron_args

# The reproducer modules that run children of each package set.
MEGATRON_DRIVER = {"test_repro_driver_gpu_probe", "test_repro_cuda_device_max_connections",
                   "test_repro_megatron_training_missing", "test_repro_model_args_glob", "test_repro_mbridge_missing"}
SGLANG = {"test_repro_uvicorn_log_level", "test_repro_sglang_dead_flag"}


def pytest_collection_finish(session: pytest.Session) -> None:
    modules = {item.path.stem for item in session.items}
    if modules & MEGATRON_DRIVER:
        warm.prewarm(megatron_args.PRELOAD, megatron_args.driver_env(), megatron_args.RUNTIME)
    if modules & SGLANG:
        warm.prewarm(sglang_flags.SGLANG_PRELOAD, sglang_flags.sglang_env())


def pytest_unconfigure(config: pytest.Config) -> None:
    warm.stop_all()
