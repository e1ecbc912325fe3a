"""reproducers/conftest.py's start of the runs modules begin ahead: after the warm interpreters' imports (bounded),
each module's start_ahead once, whatever number of its tests run."""

from __future__ import annotations

import threading
import types
from pathlib import Path

import pytest

from rlcheck.plugin import resources
from tests import reproducer_file


@pytest.fixture(scope="module")
def conftest() -> types.ModuleType:
    return reproducer_file.load('conftest.py', 'rlcheck_reproducers_conftest')


class Server:
    def __init__(self, log: list[str], name: str, ready: bool) -> None:
        self.log, self.name, self.ready = log, name, ready

    def wait_ready(self, timeout_s: float) -> bool:
        self.log.append(f"wait {self.name} {timeout_s:g}")
        return self.ready


def test_modules_start_ahead_after_every_warm_import_each_once(conftest):
    log: list[str] = []
    session = object()

    def module(name: str, with_start: bool = True) -> types.SimpleNamespace:
        found = types.SimpleNamespace(name=name)
        if with_start:
            found.start_ahead = lambda s: log.append(f"start {name} {s is session}")
        return found

    a, b, plain = module("a"), module("b"), module("plain", with_start=False)
    items = [types.SimpleNamespace(module=m) for m in (a, a, plain, b, a)]
    servers = [Server(log, "megatron", ready=True), Server(log, "sglang", ready=False)]  # one never imported
    conftest.start_modules_ahead(session, items, servers)
    bound = f"{conftest.AFTER_WARM_S:g}"
    assert log == [f"wait megatron {bound}", f"wait sglang {bound}", "start a True", "start b True"]
    assert 0 < conftest.AFTER_WARM_S <= 300  # bounded: a server that never imports delays the runs, never stops them


def test_modules_start_ahead_with_no_warm_interpreter_at_once(conftest):
    log: list[str] = []
    mod = types.SimpleNamespace(start_ahead=lambda s: log.append("started"))
    conftest.start_modules_ahead(object(), [types.SimpleNamespace(module=mod)], [])
    assert log == ["started"]


def fake_session(early: bool) -> types.SimpleNamespace:
    config = types.SimpleNamespace(stash=pytest.Stash())
    if early:
        config.stash[resources.early_key] = object()
    return types.SimpleNamespace(config=config, stash=pytest.Stash())


def test_main_job_starts_the_runs_now_a_run_with_self_tests_at_its_first_reproducer(conftest, monkeypatch):
    started: list[tuple[object, ...]] = []
    done = threading.Event()

    def record(*args: object) -> None:
        started.append(args)
        done.set()

    monkeypatch.setattr(conftest, "start_modules_ahead", record)
    main_job = fake_session(early=True)
    conftest.plan_ahead(main_job, ["items"], ["servers"])
    assert done.wait(10) and started == [(main_job, ["items"], ["servers"])]

    started.clear()
    done.clear()
    with_tests = fake_session(early=False)
    conftest.plan_ahead(with_tests, ["items"], ["servers"])
    assert started == []  # nothing beside the self-tests
    conftest.pytest_runtest_setup(types.SimpleNamespace(session=with_tests))
    assert done.wait(10) and started == [(with_tests, ["items"], ["servers"])]
    done.clear()
    conftest.pytest_runtest_setup(types.SimpleNamespace(session=with_tests))  # the second reproducer: once only
    assert not done.wait(0.2) and len(started) == 1


@pytest.mark.parametrize("idle", [True, False])
def test_a_warm_interpreter_starts_at_once_on_an_idle_machine_else_once_the_sessions_ray_is_up(conftest, monkeypatch,
                                                                                               idle):
    log: list[str] = []
    monkeypatch.setattr(conftest.ahead, "cores_idle", lambda: idle)
    monkeypatch.setattr(conftest, "after_early_ray", lambda config, call: log.append(f"after Ray {config}"))
    conftest.prewarm("config", lambda: log.append("started"))
    assert log == (["started"] if idle else ["after Ray config"])


@pytest.mark.parametrize(("stems", "preloads"), [
    ({"test_repro_driver_gpu_probe"}, [("megatron.training.arguments",), ("numpy", "torch", "torch.distributed")]),
    ({"test_repro_numpy2_megatron"}, [("numpy", "torch", "torch.distributed")]),
    ({"test_repro_megatron_training_missing", "test_repro_uvicorn_log_level"},
     [("megatron.training.arguments",), ("numpy", "torch", "torch.distributed"), ("sglang.srt.server_args",)]),
    ({"test_repro_mbridge_missing"}, [("megatron.training.arguments",)]),
    ({"test_repro_sglang_dead_flag"}, [("sglang.srt.server_args",)]),
    ({"test_repro_ray_argv_loss"}, [("ray.scripts.scripts",)]),
    ({"test_repro_ray_argv_loss_other_sh", "test_repro_model_args_glob"}, [("megatron.training.arguments",)]),
    (set(), []),
])
def test_the_warm_interpreters_started_at_collection_are_those_the_runs_fork_from(conftest, monkeypatch, stems,
                                                                                 preloads):
    """Each package set starts when a module that forks from it runs, keyed as its runs key it (the driver
    environment and Megatron's runtime names), so a run finds it rather than starting another."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    started: list[tuple] = []
    monkeypatch.setattr(conftest.warm, "prewarm", lambda preload, env, runtime=(): started.append(
        (tuple(preload), env, tuple(runtime))) or preload)
    monkeypatch.setattr(conftest, "prewarm", lambda config, start: start())
    planned: list = []
    monkeypatch.setattr(conftest, "after_early_ray", lambda config, call: planned.append(call))
    monkeypatch.setattr(conftest.ahead, "running", lambda session: [
        types.SimpleNamespace(path=Path(f"/r/{stem}.py")) for stem in sorted(stems)])
    conftest.pytest_collection_finish(types.SimpleNamespace(config="config"))
    assert [s[0] for s in started] == preloads and len(planned) == 1
    driver, sglang = conftest.megatron_args.driver_env(), conftest.sglang_flags.sglang_env()
    for preload, env, runtime in started:
        if preload == ("sglang.srt.server_args",):
            assert (env, runtime) == (sglang, ())
        elif preload == ("ray.scripts.scripts",):
            assert (env, runtime) == (conftest.subproc.child_env(), ())
        else:
            assert (env, runtime) == (driver, conftest.megatron_args.RUNTIME)
