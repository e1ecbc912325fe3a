"""The embedded Ray's dashboard loads only the Jobs API's modules unless told otherwise (rlcheck.cluster.embedded_ray).

That the trimmed dashboard still runs jobs is proven by every test that submits one to the embedded Ray
(tests/test_launch.py, tests/test_e2e_harness.py, reproducers/test_repro_ray_argv_loss.py). A head started without its
dashboard runs none, and a stop leaves no process of its Ray behind (a real Ray)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rlcheck.cluster import embedded_ray
from rlcheck.cluster.local_ray import EmbeddedRay


@pytest.mark.parametrize(("value", "expected"), [
    (None, "JobHead,NodeHead"),  # the default: the job head and the node head it finds agents through
    ("all", None), ("", None), ("  all ", None),  # Ray's default: every module
    ("JobHead,NodeHead,StateHead", "JobHead,NodeHead,StateHead"),
])
def test_dashboard_modules_from_the_environment(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("RLCHECK_RAY_DASHBOARD_MODULES", raising=False)
    else:
        monkeypatch.setenv("RLCHECK_RAY_DASHBOARD_MODULES", value)
    assert embedded_ray.dashboard_modules() == expected


def test_trim_adds_the_modules_to_the_dashboard_command_only(monkeypatch):
    from ray._private import ray_constants, services

    started = []
    monkeypatch.setattr(services, "start_ray_process", lambda command, process_type, *a, **k: started.append(
        (process_type, command)))
    embedded_ray._trim_dashboard("JobHead,NodeHead")
    services.start_ray_process(["dashboard.py", "--port=1"], ray_constants.PROCESS_TYPE_DASHBOARD)
    services.start_ray_process(["dashboard.py", "--modules-to-load=UsageStatsHead"],
                               ray_constants.PROCESS_TYPE_DASHBOARD)
    services.start_ray_process(["raylet"], "raylet")
    assert started == [(ray_constants.PROCESS_TYPE_DASHBOARD, ["dashboard.py", "--port=1",
                                                               "--modules-to-load=JobHead,NodeHead"]),
                       (ray_constants.PROCESS_TYPE_DASHBOARD, ["dashboard.py", "--modules-to-load=UsageStatsHead"]),
                       ("raylet", ["raylet"])]


def test_trim_with_no_modules_leaves_ray_alone(monkeypatch):
    from ray._private import services

    before = services.start_ray_process
    embedded_ray._trim_dashboard(None)
    assert services.start_ray_process is before


def _processes_under(folder: str) -> list[str]:
    """The command lines of the running processes that name the folder (a Ray's temp dir: each of its processes)."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if folder in args:
            out.append(args)
    return out


def test_a_real_head_without_its_dashboard_loads_no_jobs_api_and_its_stop_leaves_no_process():
    """dashboard=False: Ray's GCS answers (the holder's loopback check is a driver of it); Ray still starts its
    dashboard process, but with its own usage-stats module alone (no Jobs API, no frontend); neither the autoscaler's
    monitor nor a log monitor runs; the holder's stop (no graceful drain) leaves no process of that Ray behind, its
    raylet's agents (renamed ray::DashboardAgent and ray::RuntimeEnvAgent: their command lines name no folder) too."""
    ray = EmbeddedRay(dashboard=False)
    try:
        endpoints = ray.start(jobs=False)
        assert ray.proc is not None
        temp_dir = ray.proc.args[ray.proc.args.index("--temp-dir") + 1]
        running = _processes_under(temp_dir)
        assert endpoints.dashboard_url == "" and endpoints.nodes == 1 and endpoints.gcs_address.startswith("127.0.0.1:")
        assert any("gcs_server" in args for args in running) and any("raylet" in args for args in running)
        dashboards = [args for args in running if "dashboard/dashboard.py" in args]
        assert len(dashboards) == 1 and "--modules-to-load=UsageStatsHead" in dashboards[0], running
        assert "--disable-frontend" in dashboards[0] and "JobHead" not in dashboards[0]
        assert not any("autoscaler/_private/monitor.py" in args or "log_monitor.py" in args for args in running)
        group = embedded_ray.group_members(ray.proc.pid)
        assert len(group) >= 5  # the holder, GCS, raylet, dashboard, and the raylet's agents
    finally:
        ray.stop()
    assert ray.proc.returncode == 0
    for _ in range(50):  # a process that was killed may still be reaped by its parent for a moment
        left = _processes_under(temp_dir) + [pid for pid in group if Path(f"/proc/{pid}").exists()]
        if not left:
            break
        time.sleep(0.1)
    assert left == []
