"""The main job's hostile cases: a hanging nvidia-smi, an unwritable report, bad or refused Ray addresses,
and the exit status that tells "judged NO-GO" (1) from "could not judge" (2)."""

from __future__ import annotations

import fnmatch
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck.cluster import fanout
from rlcheck.process import reach

CHECK_PASS = """
from rlcheck.verdict import Status, Verdict
def test_image_ok(record_verdict):
    record_verdict(Verdict(check_id="x", status=Status.PASS, summary="numpy 1.26.4 as needed"))
"""
CHECK_FAIL = """
from rlcheck.verdict import Status, Verdict
def test_recipe_batch(record_verdict):
    record_verdict(Verdict(check_id="x", status=Status.FAIL, summary="128 != 96"))
"""
CHECK_SKIP = """
from rlcheck.verdict import Status, Verdict
def test_gpu_smoke(record_verdict):
    record_verdict(Verdict(check_id="x", status=Status.SKIP, summary="needs a CUDA GPU (sm_90+): found none"))
"""
CHECK_UNKNOWN = """
from rlcheck.verdict import Status, Verdict
def test_cluster_gpus(record_verdict):
    record_verdict(Verdict(check_id="x", status=Status.UNKNOWN, summary="ray did not answer"))
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("checks")
    return pytester


def _fake_nvidia_smi(folder: Path, body: str) -> None:
    folder.mkdir()
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\n{body}\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize(("body", "ret", "line"), [
    ("exec sleep 60", 2, "rlcheck NO-GO: 1 of 2 judged blocking check(s) for recipe * on hardware none: "
                         "hardware_detection UNKNOWN"),
    ('echo "NVIDIA H200, 9.0, 143771, 580.65.06"', 0,
     "rlcheck GO: 1 blocking check(s) judged and passed * on hardware h200"),
])
def test_plugin_hardware_auto_with_hanging_nvidia_smi_is_no_go(project, monkeypatch, body, ret, line):
    # Hostile input: an nvidia-smi on PATH that never answers (a wedged driver); the other side of the
    # boundary is one that answers with an H200.
    _fake_nvidia_smi(project.path / "bin", body)
    monkeypatch.setenv("PATH", f"{project.path / 'bin'}:/usr/bin:/bin")
    project.makepyfile(**{"checks/test_image": CHECK_PASS})
    result = project.runpytest_subprocess("--hardware=auto", "--hardware-timeout-s=1", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([line])
    assert result.ret == ret
    doc = json.loads((project.path / "rlcheck-report" / "report.json").read_text())
    statuses = {v["check_id"]: v["status"] for v in doc["verdicts"]}
    if ret:
        assert statuses["hardware_detection"] == "UNKNOWN"
        assert "nvidia-smi did not answer within 1 s" in doc["hardware"]["evidence"]
    else:
        assert "hardware_detection" not in statuses


@pytest.mark.parametrize(("files", "ret", "outcome"), [
    ({"checks/test_image": CHECK_PASS}, 0, "rlcheck GO:*"),
    ({"checks/test_recipe": CHECK_FAIL}, 1, "rlcheck NO-GO: 1 of 1 *recipe_batch FAIL"),
    ({"checks/test_cluster": CHECK_UNKNOWN}, 2, "rlcheck NO-GO: 1 of 1 *cluster_gpus UNKNOWN"),
    ({"checks/test_recipe": CHECK_FAIL, "checks/test_cluster": CHECK_UNKNOWN}, 2, "rlcheck NO-GO: 2 of 2 *"),
    # a SKIP is not applicable, never passed: counted apart, and a run of SKIPs alone judged nothing
    ({"checks/test_image": CHECK_PASS, "checks/test_gpu": CHECK_SKIP}, 0,
     "rlcheck GO: 1 blocking check(s) judged and passed; 1 not applicable (SKIP) for *"),
    ({"checks/test_gpu": CHECK_SKIP}, 2, "rlcheck NO-GO: nothing judged: all 1 blocking check(s) for * were not "
                                        "applicable (SKIP)*"),
    ({"checks/test_recipe": CHECK_FAIL, "checks/test_gpu": CHECK_SKIP}, 1,
     "rlcheck NO-GO: 1 of 1 judged blocking check(s); 1 not applicable (SKIP) for *: recipe_batch FAIL"),
])
def test_plugin_exit_status_tells_judged_from_unjudged(project, files, ret, outcome):
    project.makepyfile(**files)
    result = project.runpytest("--hardware=none")
    result.stdout.fnmatch_lines([outcome])
    assert result.ret == ret


def test_plugin_report_dir_unwritable_is_usage_error(project):
    # Hostile input: --report-dir under a regular file (no user, root included, can create it).
    (project.path / "afile").write_text("")
    project.makepyfile(**{"checks/test_image": CHECK_PASS})
    result = project.runpytest("--hardware=none", "--report-dir=afile/out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--report-dir='afile/out' cannot be written: afile is not a folder" in result.stderr.str()


def test_plugin_report_write_failure_fails_the_run(project):
    # Hostile input: the folder is fine but report.json cannot be written (a directory sits in its place).
    (project.path / "out" / "report.json").mkdir(parents=True)
    project.makepyfile(**{"checks/test_image": CHECK_PASS})
    result = project.runpytest("--hardware=none", "--report-dir=out")
    result.stdout.fnmatch_lines(["rlcheck NO-GO: could not write the report to out: Is a directory "
                                 "(the checks said: GO: 1 blocking check(s) judged and passed*)"])
    assert result.ret == 2


@pytest.mark.parametrize(("address", "message"), [
    ("ray://127.0.0.1:notaport", "--ray-address='ray://127.0.0.1:notaport': port 'notaport' is not a number from 1 "
                                 "to 65535: use ray://HOST:10001"),
    ("http://127.0.0.1:70000", "port '70000' is not a number from 1 to 65535"),
    ("ray://127.0.0.1:0", "port '0' is not a number from 1 to 65535"),
    ("ray://127.0.0.1:", "--ray-address='ray://127.0.0.1:': port '' is not a number from 1 to 65535"),
    ("ray://:10001", "--ray-address='ray://:10001' is malformed"),
])
def test_plugin_ray_address_port_validated(project, address, message):
    result = project.runpytest(f"--ray-address={address}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


@pytest.mark.parametrize(("address", "port"), [("ray://127.0.0.1", 10001), ("http://127.0.0.1:8265/", 8265),
                                               ("127.0.0.1:6379", 6379), ("ray://[::1]:10001", 10001)])
def test_reach_host_port_accepts_valid_addresses(address, port):
    assert reach.host_port(address)[1] == port


def test_reach_refused_said_at_once_and_listening_port_passes():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        open_port = listening.getsockname()[1]
        assert reach.refused(f"ray://127.0.0.1:{open_port}") == ""
    assert reach.refused(f"ray://127.0.0.1:{open_port}") == f"127.0.0.1:{open_port}: connection refused " \
                                                              f"(nothing listens there)"


def test_fanout_to_refused_port_says_connection_refused():
    # Hostile input: ray://127.0.0.1:1, where nothing listens (it used to wait out 30 s, "did not return").
    result = fanout.fan_out("ray://127.0.0.1:1", connect_timeout_s=30, node_timeout_s=30)
    assert not result.connected and result.error == "127.0.0.1:1: connection refused (nothing listens there)"


DEAD_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
               "latest NVIDIA driver is installed and running.")


@pytest.fixture(scope="module")
def dead_driver_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int, str]]:
    """`pytest checks/test_gpu.py` on a node whose nvidia-smi says the driver is dead, with --hardware=h200 and with
    --hardware=auto: two independent children, run side by side. By hardware: (their folder, exit code, stdout)."""
    root = Path(__file__).resolve().parents[1]
    children = {}
    for hardware in ("h200", "auto"):
        folder = tmp_path_factory.mktemp(f"dead-driver-{hardware}")
        (folder / "said.txt").write_text(DEAD_DRIVER + "\n")
        _fake_nvidia_smi(folder / "bin", f"cat {folder}/said.txt\nexit 9")
        env = {**os.environ, "PATH": f"{folder / 'bin'}:{os.environ['PATH']}"}
        with (folder / "stdout").open("w") as out:  # a file: no pipe fills and waits
            children[hardware] = (folder, subprocess.Popen(
                [sys.executable, "-m", "pytest", "checks/test_gpu.py", f"--hardware={hardware}",
                 f"--report-dir={folder / 'out'}", "-p", "no:cacheprovider"], cwd=root, env=env, stdout=out,
                stderr=subprocess.DEVNULL, text=True))
    return {hardware: (folder, child.wait(timeout=600), (folder / "stdout").read_text())
            for hardware, (folder, child) in children.items()}


@pytest.mark.parametrize(("hardware", "ret", "line"), [
    ("h200", 1, "rlcheck NO-GO: 1 of 1 judged blocking check(s); 3 not applicable (SKIP) for recipe * on hardware "
                "h200: gpu_node_inventory * FAIL"),
    ("auto", 2, "rlcheck NO-GO: 2 of 2 judged blocking check(s); 3 not applicable (SKIP) for recipe * on hardware "
                "none: hardware_detection UNKNOWN; gpu_node_inventory * UNKNOWN"),
])
def test_plugin_dead_driver_node_is_never_go(dead_driver_runs, hardware, ret, line):
    """The node of the field report: nvidia-smi exits 9 with the driver's words and shows no device. The GPU checks
    that need a GPU skip, and the declared profile (or the driver that is there but does not answer) is NO-GO."""
    folder, returncode, stdout = dead_driver_runs[hardware]
    assert returncode == ret, stdout[-3000:]
    assert any(fnmatch.fnmatch(x, line) for x in stdout.splitlines()), stdout[-3000:]
    doc = json.loads((folder / "out" / "report.json").read_text())
    inventory = next(v for v in doc["verdicts"] if v["check_id"] == "gpu_node_inventory")
    assert "couldn't communicate with the NVIDIA driver" in inventory["summary"]
    assert doc["go"] is False
