"""What the reproducers share in a session: one warm interpreter per package set (rlcheck.process.warm), the runs
their modules start ahead (rlcheck.repro.ahead).

Once collection has picked the tests, the warm interpreters of the package sets they use (WARM_SETS: Megatron's
arguments in the GPU-less driver environment, torch without Megatron in that environment, SGLang's server_args, Ray's
CLI) start importing in the background: at once, beside the session's Ray start, on a machine not loaded by others
(rlcheck.repro.ahead cores_idle), else once that Ray is up (rlcheck.plugin.resources after_early_ray); so the first
reproducer that needs one mostly finds it ready. Once they have imported, each module's start_ahead begins the runs
of its tests that this session runs (the Megatron and torch children, the numpy-2 side directories, the Ray jobs,
SLIME's replayed health wait), so they share the cores while the tests before theirs run, and each test takes its
own result; in a run with self-tests they start with its first reproducer instead. Not beside the session's own Ray
start on a loaded machine: there they made it miss Ray's start deadline. Under xdist, where every worker collects
every test, each test runs its own when it runs. Every run is still its own child process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import pytest

from rlcheck.cluster import launch
from rlcheck.plugin.resources import after_early_ray, has_early_ray
from rlcheck.probes.recipe import sglang_flags
from rlcheck.process import subproc, warm
from rlcheck.repro import ahead, megatron_args
from rlcheck.repro.reproduce import Reproduction
from rlcheck.verdict import Verdict

# The reproducer modules that run children of each package set.
MEGATRON_DRIVER = {"test_repro_driver_gpu_probe", "test_repro_cuda_device_max_connections",
                   "test_repro_megatron_training_missing", "test_repro_model_args_glob", "test_repro_mbridge_missing"}
SGLANG = {"test_repro_uvicorn_log_level", "test_repro_sglang_dead_flag"}
TORCH_DRIVER = {"test_repro_driver_gpu_probe", "test_repro_megatron_training_missing", "test_repro_numpy2_megatron"}
"""The modules whose children import Megatron themselves in the driver environment (megatron_args.TORCH_PRELOAD)."""
RAY_CLI = {"test_repro_ray_argv_loss"}
"""The modules that run Ray's own CLI (rlcheck.cluster.launch ray_cli)."""
WARM_SETS: tuple[tuple[set[str], tuple[str, ...], Callable[[], dict[str, str]], tuple[str, ...]], ...] = (
    (MEGATRON_DRIVER, megatron_args.PRELOAD, megatron_args.driver_env, megatron_args.RUNTIME),
    (TORCH_DRIVER, megatron_args.TORCH_PRELOAD, megatron_args.driver_env, megatron_args.RUNTIME),
    (SGLANG, sglang_flags.SGLANG_PRELOAD, sglang_flags.sglang_env, ()),
    (RAY_CLI, launch.RAY_CLI_PRELOAD, subproc.child_env, ()),
)
"""(modules, preload, environment, runtime names) of each warm interpreter, keyed as those modules' runs key theirs."""


def pytest_collection_finish(session: pytest.Session) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects every test: start on first use instead
        return
    config = session.config
    items = ahead.running(session)  # a kept verdict's stand-in (rlcheck.plugin.cache) runs nothing: not in it
    modules = {item.path.stem for item in items}
    servers: list[warm.Server] = []
    for wanted, preload, env, runtime in WARM_SETS:
        if modules & wanted:
            prewarm(config, lambda p=preload, e=env, r=runtime: servers.append(warm.prewarm(p, e(), r)))
    after_early_ray(config, lambda: plan_ahead(session, items, servers))


def prewarm(config: pytest.Config, start: Callable[[], object]) -> None:
    """Start a warm interpreter now where the machine is not loaded (its import overlaps the session's Ray start),
    else once that Ray is up: beside its start they made it miss Ray's own deadline on a loaded host."""
    if ahead.cores_idle():
        start()
    else:
        after_early_ray(config, start)


deferred_key = pytest.StashKey[tuple[list[pytest.Function], list[warm.Server]]]()


def plan_ahead(session: pytest.Session, items: list[pytest.Function], servers: list[warm.Server]) -> None:
    """In the main job (its Ray started at collection: a run of checks and reproducers only) the runs start ahead
    now, in a thread, once the warm interpreters have imported; in a run with self-tests they start with its first
    reproducer (pytest_runtest_setup), not beside the self-tests before it."""
    if has_early_ray(session.config):
        threading.Thread(target=start_modules_ahead, args=(session, items, servers), name="rlcheck-start-ahead",
                         daemon=True).start()
    else:
        session.stash[deferred_key] = (items, servers)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The first reproducer of a run with self-tests starts the runs planned ahead (plan_ahead); this conftest's
    hook runs only for the tests under reproducers/."""
    deferred = item.session.stash.get(deferred_key, None)
    if deferred is not None:
        del item.session.stash[deferred_key]
        threading.Thread(target=start_modules_ahead, args=(item.session, *deferred), name="rlcheck-start-ahead",
                         daemon=True).start()


AFTER_WARM_S = 120.0
"""How long the runs started ahead wait for the warm interpreters' imports before they start all the same."""


def start_modules_ahead(session: pytest.Session, items: list[pytest.Function], servers: list[warm.Server]) -> None:
    """The runs that reproducer modules start ahead (their start_ahead, rlcheck.repro.ahead), once the warm
    interpreters have imported (bounded): the checks and the first reproducers wait on those imports, so they get
    the cores first; then the runs fill the cores those tests leave idle while they wait on a forked child or a Ray
    job, and their own waits (a Ray head, a health wait) overlap those tests instead of adding to them."""
    for server in servers:
        server.wait_ready(AFTER_WARM_S)
    modules = {id(item.module): item.module for item in items}
    for module in modules.values():
        if callable(start := getattr(module, "start_ahead", None)):
            start(session)


@pytest.fixture
def ahead_result(request: pytest.FixtureRequest) -> object:
    """What this test's run started ahead returned (its module's start_ahead), begun now when it was not."""
    return request.module.start_ahead(request.session).take(request.node.name)


@pytest.fixture
def record_result(record_verdict, record_reproduction):
    """Record what a reproducer's run returned: its Reproduction, or the Verdict it gave instead (UNKNOWN: it could
    not run here)."""
    def record(result: Reproduction | Verdict) -> None:
        if isinstance(result, Verdict):
            record_verdict(result)
        else:
            record_reproduction(result)

    return record


def pytest_unconfigure(config: pytest.Config) -> None:
    warm.stop_all()
