"""The embedded Ray's dashboard loads only the Jobs API's modules unless told otherwise (rlcheck.cluster.embedded_ray).

That the trimmed dashboard still runs jobs is proven by every test that submits one to the embedded Ray
(tests/test_launch.py, tests/test_e2e_harness.py, reproducers/test_repro_ray_argv_loss.py)."""

from __future__ import annotations

import pytest

from rlcheck.cluster import embedded_ray


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
