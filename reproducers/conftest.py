"""What the reproducers share in a session: one warm interpreter per package set (rlcheck.process.warm).

Once collection has picked the tests and the session's Ray is up (rlcheck.plugin.resources after_early_ray), the warm
interpreters of the package sets they use start importing in the background (Megatron's arguments in the GPU-less
driver environment, SGLang's server_args), so the first reproducer that needs one mostly finds it ready (under
xdist, where every worker collects every test, each starts on first use instead). Every run is still its own forked
child process. The Ray head whose /bin/sh is the other shell (ray-argv-loss) is a session fixture started on first
use: started at collection it competed with the session's own Ray head for the two cores and, on a loaded machine,
made that one miss its start deadline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from rlcheck.cluster.local_ray import EmbeddedRay, RayEndpoints
from rlcheck.plugin.resources import EarlyRay, after_early_ray
from rlcheck.probes.recipe import sglang_flags
from rlcheck.process import warm
from rlcheck.repro import megatron_args
from tests import argv_probe

# The reproducer modules that run children of each package set.
MEGATRON_DRIVER = {"test_repro_driver_gpu_probe", "test_repro_cuda_device_max_connections",
                   "test_repro_megatron_training_missing", "test_repro_model_args_glob", "test_repro_mbridge_missing"}
SGLANG = {"test_repro_uvicorn_log_level", "test_repro_sglang_dead_flag"}


class StartedEarly:
    """An embedded Ray whose /bin/sh is the other shell, started in a background thread (rlcheck.plugin.resources
    EarlyRay); shell None: not possible here."""

    def __init__(self) -> None:
        wrapper = argv_probe.other_shell_wrapper()
        self.shell = wrapper[1] if wrapper else None
        self.early = EarlyRay(EmbeddedRay(wrapper=wrapper[0])).begin() if wrapper else None

    def endpoints(self, timeout_s: float = 420.0) -> RayEndpoints:
        """Wait for the head (EmbeddedRay.start bounds each of its own waits; this bounds them all)."""
        assert self.early is not None
        return self.early.take(timeout_s)

    def stop(self) -> None:
        if self.early is not None:
            self.early.end(420.0)


@pytest.fixture(scope="session")
def other_sh_ray() -> Iterator[StartedEarly]:
    """The Ray head with the other /bin/sh, started now (in a thread; the test waits for it, bounded)."""
    early = StartedEarly()
    try:
        yield early
    finally:
        early.stop()


def pytest_collection_finish(session: pytest.Session) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects every test: start on first use instead
        return
    quick = session.config.getoption("quick")
    # A reproducer whose kept verdict stands in for it (rlcheck.plugin.cache) is no Function: it runs nothing.
    items = [item for item in session.items
             if isinstance(item, pytest.Function) and not (quick and item.get_closest_marker("slow"))]
    modules = {item.path.stem for item in items}
    # once the session's Ray is up: beside its start they made it miss Ray's own deadline on a loaded host
    if modules & MEGATRON_DRIVER:
        after_early_ray(session.config, lambda: warm.prewarm(megatron_args.PRELOAD, megatron_args.driver_env(),
                                                             megatron_args.RUNTIME))
    if modules & SGLANG:
        after_early_ray(session.config, lambda: warm.prewarm(sglang_flags.SGLANG_PRELOAD, sglang_flags.sglang_env()))


started_ahead_key = pytest.StashKey[bool]()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The first reproducer to run starts the children that reproducer modules start ahead (their start_ahead,
    rlcheck.repro.ahead): by then the session's Ray is up (started at collection they competed with it), and they
    fill the cores that the reproducers before theirs leave idle while they wait on a warm interpreter or a Ray job."""
    session = item.session
    if session.stash.get(started_ahead_key, False) or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    session.stash[started_ahead_key] = True
    modules = {id(x.module): x.module for x in session.items if isinstance(x, pytest.Function)}
    for module in modules.values():
        if callable(start := getattr(module, "start_ahead", None)):
            start(session)


def pytest_unconfigure(config: pytest.Config) -> None:
    warm.stop_all()
