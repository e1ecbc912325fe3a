"""Per-node fan-out on a real multi-node Ray on loopback: pinned tasks, a faulty node, a silent one, one that dies.

The cluster (EmbeddedRay with per-node specs) has five real nodes on 127.0.0.1:
- head: as started by the suite (0 GPUs);
- good: advertises 8 GPUs and has an nvidia-smi on its PATH that lists 8 x H200 on driver 580;
- faulty: advertises 7 GPUs, its nvidia-smi lists 7 x H200 on driver 550 (a GPU fell off, an old driver);
- silent: its raylet is SIGSTOPped during the check, so its task never starts;
- dying: its nvidia-smi hangs; during the check the node is SIGKILLed (raylet and all under it) while the
  task runs.
The nvidia-smi programs are shell scripts on the node's PATH (set through the node's raylet environment): the
collector runs for real on every node and reads them as it reads the real tool.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from rlcheck import hardware
from rlcheck.cluster.fanout import fan_out
from rlcheck.cluster.fanout_result import Outcome, node_deadline_s
from rlcheck.cluster.local_ray import EmbeddedRay, NodeSpec
from rlcheck.probes.cluster import node_evaluate as judge
from rlcheck.probes.cluster.cluster_reach import judge_nodes
from rlcheck.process.wait import free_loopback_port
from rlcheck.verdict import Status

H200 = hardware.get_profile("h200")
ROLES = ("head", "good", "faulty", "silent", "dying")
SMI_LINE = "NVIDIA H200, 9.0, 143771, {driver}"
BOUND_S = 45.0
"""Generous: the fan-out ends within its deadlines plus this (child start-up, Ray import, a loaded machine)."""


def _fake_smi(folder: Path, body: str) -> dict[str, str]:
    """An nvidia-smi that answers the collector's --query-gpu with body, and anything else with nothing.

    Ray's dashboard agent runs a bare `nvidia-smi` (no timeout) at start: a hung one there keeps the node from
    starting at all, so only the collector's query misbehaves.
    """
    folder.mkdir(parents=True)
    smi = folder / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\ncase "$1" in --query-gpu=*) ;; *) exit 0 ;; esac\n{body}')
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def _lines(count: int, driver: str) -> str:
    return "".join(f"echo '{SMI_LINE.format(driver=driver)}'\n" for _ in range(count))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("nodes")
    marker = root / "dying-probe-started"
    specs = [
        NodeSpec(num_gpus=8, env=_fake_smi(root / "good", _lines(8, "580.65.06"))),
        NodeSpec(num_gpus=7, env=_fake_smi(root / "faulty", _lines(7, "550.54.15"))),
        NodeSpec(),
        NodeSpec(num_gpus=8, env=_fake_smi(root / "dying", f"touch '{marker}'\nexec sleep 120\n")),
    ]
    with EmbeddedRay(num_cpus=1, node_specs=specs) as endpoints:
        yield endpoints, dict(zip(ROLES, endpoints.node_ids, strict=True)), marker


def _by_role(result, node_ids):
    role_of = {node_id: role for role, node_id in node_ids.items()}
    return {role_of[a.node.node_id]: a for a in result.nodes}


def test_fanout_through_jobs_api_pins_a_task_to_every_node(cluster):
    """http:// address: the driver runs as a Ray job on the head; every node answers from itself."""
    endpoints, node_ids, _ = cluster
    start = time.monotonic()
    result = fan_out(endpoints.dashboard_url, kwargs={"tool_timeout_s": 2}, node_timeout_s=30, connect_timeout_s=10,
                     job_python=sys.executable)
    assert time.monotonic() - start < 10 + 30 + BOUND_S + 60  # + the job's own start-up slack
    assert result.connected, result.error
    answers = _by_role(result, node_ids)
    assert set(answers) == set(ROLES)
    assert all(a.outcome is Outcome.ANSWERED for a in answers.values()), [a.detail for a in answers.values()]
    verdicts = {role: v for role, v in zip(ROLES, [judge.evaluate_node_gpus(a.node, _obs(a), H200)
                                                   for a in (answers[r] for r in ROLES)], strict=True)}
    assert verdicts["good"].status is Status.PASS
    assert verdicts["dying"].status is Status.UNKNOWN and "nvidia-smi did not answer within 2 s" in verdicts[
        "dying"].summary
    assert answers["head"].node.is_head and not answers["good"].node.is_head


def _obs(answer):
    from rlcheck.probes.node.collect import NodeObservation

    return NodeObservation.from_dict(answer.observation)


def _kill_node_when_started(marker: Path, raylet_pid: int, timeout_s: float, seen: list[bool]) -> None:
    """Once the node's probe is running, SIGKILL the node: its raylet and every process under it (the workers,
    the probe's own child), as a node that loses power would. Killing only the raylet leaves a running worker
    free to finish and answer. seen gets whether the probe had started (else the kill came at timeout_s)."""
    deadline = time.monotonic() + timeout_s
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    seen.append(marker.exists())
    raylet = psutil.Process(raylet_pid)
    for process in [raylet, *raylet.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()


def test_fanout_faulty_silent_and_dying_nodes(cluster):
    """One fan-out: correct verdicts for the answering nodes, UNKNOWN for the silent and the dead one, in bound."""
    endpoints, node_ids, marker = cluster
    silent_pid, dying_pid = (endpoints.raylet_pids[node_ids[r]] for r in ("silent", "dying"))
    marker.unlink(missing_ok=True)
    os.kill(silent_pid, signal.SIGSTOP)
    seen: list[bool] = []
    killer = threading.Thread(target=_kill_node_when_started, args=(marker, dying_pid, 30.0, seen), daemon=True)
    try:
        killer.start()
        start = time.monotonic()
        result = fan_out(endpoints.gcs_address, kwargs={"tool_timeout_s": 12}, node_timeout_s=15, connect_timeout_s=10)
        elapsed_s = time.monotonic() - start
    finally:
        killer.join(35)
        os.kill(silent_pid, signal.SIGKILL)
    wait_s = node_deadline_s(15, len(node_ids))  # the node timeout grows with the nodes listed
    assert elapsed_s < 10 + wait_s + BOUND_S
    answers = _by_role(result, node_ids)
    assert {r: answers[r].outcome for r in ("head", "good", "faulty", "silent")} == {
        "head": Outcome.ANSWERED, "good": Outcome.ANSWERED, "faulty": Outcome.ANSWERED, "silent": Outcome.TIMEOUT}
    # Killed while its probe ran: DIED. (Only if the probe had not even started by the deadline on a very loaded
    # machine is it a TIMEOUT: UNKNOWN all the same.)
    assert answers["dying"].outcome is (Outcome.DIED if seen == [True] else Outcome.TIMEOUT), answers["dying"]
    gpus = {_ray_id(v): v for v in judge_nodes(result, judge.evaluate_node_gpus, H200)}
    assert gpus[node_ids["good"]].status is Status.PASS
    # loopback nodes share this host's name: each is named by it and the start of its node id, never merged
    assert gpus[node_ids["good"]].node == f"{socket.gethostname()}#{node_ids['good'][:8]}"
    assert len({v.node for v in gpus.values()}) == len(gpus)
    assert gpus[node_ids["faulty"]].status is Status.FAIL and "7 GPUs; expected 8" in gpus[node_ids["faulty"]].summary
    assert gpus[node_ids["silent"]].status is Status.UNKNOWN
    assert f"did not answer (no answer within {wait_s:.0f} s)" in gpus[node_ids["silent"]].summary
    assert gpus[node_ids["dying"]].status is Status.UNKNOWN
    if seen == [True]:
        assert "died during the check" in gpus[node_ids["dying"]].summary, gpus[node_ids["dying"]].summary
    driver = {_ray_id(v): v for v in judge_nodes(result, judge.evaluate_node_driver, H200)}
    assert driver[node_ids["faulty"]].status is Status.FAIL and "550.54.15" in driver[node_ids["faulty"]].summary
    assert driver[node_ids["good"]].status is Status.PASS


def _ray_id(verdict) -> str:
    """The Ray node id a per-node verdict carries in its details (its node is the host name)."""
    return verdict.details.rsplit("ray node id: ", 1)[1].split()[0]


@pytest.mark.parametrize("scheme", ["", "ray://", "http://"])
def test_fanout_unreachable_address_is_not_connected_within_bound(scheme):
    address = f"{scheme}127.0.0.1:{free_loopback_port()}"
    start = time.monotonic()
    result = fan_out(address, connect_timeout_s=3, node_timeout_s=5)
    assert time.monotonic() - start < 3 + 5 + BOUND_S
    assert not result.connected and result.error and result.nodes == ()
    assert address in result.tried or address.removeprefix("http://") in result.tried


CHECKS = Path(__file__).resolve().parents[1] / "checks" / "test_cluster.py"


def test_fanout_unreachable_ray_address_makes_cluster_checks_unknown(pytester):
    """The real cluster checks, given an address nothing answers on: UNKNOWN with what was tried, then NO-GO."""
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("checks")
    source = CHECKS.read_text().replace("CONNECT_TIMEOUT_S = 30.0", "CONNECT_TIMEOUT_S = 3.0")
    (pytester.path / "checks" / "test_cluster.py").write_text(source)
    address = f"http://127.0.0.1:{free_loopback_port()}"
    result = pytester.runpytest_subprocess("checks", f"--ray-address={address}", "--hardware=h200", timeout=300)
    result.stdout.fnmatch_lines([
        f"UNKNOWN cluster_reachable: Ray at {address} not reached: *",
        f"UNKNOWN cluster_gpus: Ray at {address} not reached: *",
        "rlcheck NO-GO: * cluster_reachable UNKNOWN*",
    ])
