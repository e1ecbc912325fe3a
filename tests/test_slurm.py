"""`rlcheck slurm prolog|epilog`: the quick tier within its budget, exit codes as Slurm expects, and the drain
with the reason on FAIL, judged from recorded H200 readings and run against a fake scontrol on PATH."""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import time

import pytest

from rlcheck import preflight, report
from rlcheck.cli import main
from rlcheck.hardware import get_profile
from rlcheck.preflight import gate, slurm
from rlcheck.preflight.registry import Check, Need
from rlcheck.process.subproc import Completed
from rlcheck.verdict import Status, Verdict
from tests.gpu_health_recordings import node, reading

INPUTS = gate.inputs_for("qwen3-4b-colocated", get_profile("h200"))
HEALTH = preflight.get("gpu_node_health")


def _here(obs):
    """A recording read as the tier reads the machine it runs on: named by this machine's host name."""
    facts, observation = obs
    return dataclasses.replace(facts, node_id="this-machine", hostname=socket.gethostname(), name=""), observation


FAULTY = _here(node(reading("h200_2gpu_dbe_remap_pending_hw_slowdown_q.txt", log="dmesg_xid.txt")))


def _recorded(obs) -> list[Verdict]:
    return HEALTH.run(INPUTS, observation=obs)


class FakeScontrol:
    def __init__(self, returncode: int | None = 0) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.returncode = returncode

    def __call__(self, argv, *, timeout_s):
        self.calls.append(tuple(argv))
        return Completed(argv=tuple(argv), returncode=self.returncode, stdout="",
                         stderr="slurm_update error: Invalid node name specified", timed_out=self.returncode is None)


def test_quick_tier_is_image_checks_and_local_gpu_health_only():
    ids = {c.id for c in slurm.quick_checks()}
    assert ids == {c.id for c in preflight.by_area("image")} | {"gpu_node_health", "gpu_node_inventory"}
    assert not any(preflight.get(i).needs & {Need.CLUSTER} for i in ids)


@pytest.mark.parametrize("phase", ["prolog", "epilog"])
def test_healthy_h200_reading_keeps_the_node_up(phase):
    fake = FakeScontrol()
    out = slurm.act(_recorded(node(reading())), phase, "gpu-a01", runner=fake)
    assert out.exit_code == 0 and fake.calls == []
    assert out.lines[-1] == f"rlcheck slurm {phase}: no FAIL (7 of 7 verdict(s) judged): node stays up"


@pytest.mark.parametrize(("phase", "code"), [("prolog", 1), ("epilog", 0)])
def test_xid79_reading_drains_with_the_reason(phase, code):
    fake = FakeScontrol()
    out = slurm.act(_recorded(FAULTY), phase, "gpu-a01", runner=fake)
    assert out.exit_code == code
    (argv,) = fake.calls
    assert argv[:4] == ("scontrol", "update", "nodename=gpu-a01", "state=drain")
    assert argv[4].startswith("reason=rlcheck: gpu_node_health FAIL: ")
    assert len(argv[4]) <= len("reason=") + slurm.REASON_MAX and "\n" not in argv[4]
    assert out.lines[-1].startswith(f"rlcheck slurm {phase}: drained gpu-a01: rlcheck: gpu_node_health FAIL")


@pytest.mark.parametrize("returncode", [1, None], ids=["scontrol-fails", "scontrol-hangs"])
def test_drain_that_did_not_happen_exits_1_so_slurm_drains(returncode):
    out = slurm.act(_recorded(FAULTY), "epilog", "gpu-a01", runner=FakeScontrol(returncode))
    assert out.exit_code == 1
    assert "exiting 1 so Slurm drains" in out.lines[-1]


def test_no_nodename_exits_1_without_calling_scontrol():
    fake = FakeScontrol()
    out = slurm.act(_recorded(FAULTY), "epilog", None, runner=fake)
    assert out.exit_code == 1 and fake.calls == [] and "SLURMD_NODENAME is not set" in out.lines[-1]


def test_unknown_is_said_but_never_drains():
    unread = Verdict(check_id="gpu_node_health", status=Status.UNKNOWN, summary="nvidia-smi -q timed out after 10 s")
    fake = FakeScontrol()
    out = slurm.act([unread], "prolog", "gpu-a01", runner=fake)
    assert out.exit_code == 0 and fake.calls == []
    assert out.lines[0] == "UNKNOWN gpu_node_health: nvidia-smi -q timed out after 10 s"
    assert "(0 of 1 verdict(s) judged)" in out.lines[-1]


def test_unknown_phase_is_refused():
    with pytest.raises(ValueError, match="phase='setup': one of prolog, epilog"):
        slurm.act([], "setup", "n")


def test_reason_is_one_bounded_line_without_quotes():
    long = Verdict(check_id="image_x", status=Status.FAIL, summary='a "quoted"  ' + "y" * 400)
    reason = slurm.drain_reason([long, long.with_id("image_y")])
    assert reason.startswith("rlcheck: image_x, image_y FAIL: a 'quoted' y")
    assert len(reason) == slurm.REASON_MAX and reason.endswith("...")


def _check(check_id: str, sleep_s: float) -> Check:
    def collect(inputs):
        time.sleep(sleep_s)
        return sleep_s

    return Check(id=check_id, guards=(), judges="test", needs=frozenset({Need.RECIPE}), collect=collect,
                 judge=lambda obs, i: Verdict(status=Status.PASS, summary=f"took {obs} s"))


def test_tier_past_its_budget_is_unknown_for_what_was_not_judged():
    checks = [_check("image_fast", 0.0), _check("image_hangs", 5.0), _check("image_after", 0.0)]
    start = time.monotonic()
    verdicts = slurm.run_tier(checks, INPUTS, budget_s=0.5)
    assert time.monotonic() - start < 3.0
    # the checks run at once: the one after the hang is judged, in its place in the order
    assert [(v.check_id, v.status) for v in verdicts] == [
        ("image_fast", Status.PASS), ("image_hangs", Status.UNKNOWN), ("image_after", Status.PASS)]
    assert verdicts[1].summary == "not judged within the 0.5 s budget of the Slurm tier"


def _write_report(tmp_path, verdicts: list[Verdict], ran_on: str | None = None):
    rows = [report.Recorded(verdict=v, kind="check", test_id=f"checks/test_gpu.py::test_gpu[{v.check_id}]")
            for v in verdicts]
    doc = report.build_document(rows, report.decide(rows, "qwen3-4b-colocated", "h200"), {"hardware": "h200"})
    if ran_on is not None:
        doc["machine"]["hostname"] = ran_on
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def fake_scontrol_on_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "scontrol.argv"
    script = bin_dir / "scontrol"
    script.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > {log}\n', encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("SLURMD_NODENAME", "gpu-a01")
    return log


def test_cli_prolog_on_a_recorded_faulty_report_drains_through_scontrol(tmp_path, fake_scontrol_on_path, capsys):
    path = _write_report(tmp_path, _recorded(FAULTY))
    assert main(["slurm", "prolog", "--report", str(path)]) == 1
    argv = fake_scontrol_on_path.read_text().splitlines()
    assert argv[:3] == ["update", "nodename=gpu-a01", "state=drain"]
    assert argv[3].startswith("reason=rlcheck: gpu_node_health FAIL: ")
    assert "drained gpu-a01" in capsys.readouterr().err


def test_cli_epilog_on_a_recorded_healthy_report_leaves_the_node(tmp_path, fake_scontrol_on_path, capsys):
    path = _write_report(tmp_path, _recorded(node(reading())))
    assert main(["slurm", "epilog", "--report", str(path)]) == 0
    assert not fake_scontrol_on_path.exists()


def test_cli_unreadable_report_keeps_the_node_up_and_says_why(tmp_path, fake_scontrol_on_path, capsys):
    bad = tmp_path / "notes.json"
    bad.write_text('{"go": true}', encoding="utf-8")
    assert main(["slurm", "prolog", "--report", str(bad)]) == 0
    err = capsys.readouterr().err
    assert "could not judge this node, node stays up:" in err and "is not an rlcheck report.json" in err


NODE_FAIL = Verdict(check_id="cluster_node_xid", status=Status.FAIL, node="gpu-a02",
                    summary="worker gpu-a02 10.0.0.2 (1a2b3c4d): Xid 79 on PCI 0000:18:00 (action: reboot)")
CLUSTER_FAIL = Verdict(check_id="cluster_gpus", status=Status.FAIL,
                       summary="Ray advertises 8 GPUs; the recipe's placement group needs 16")
RECIPE_FAIL = Verdict(check_id="recipe_batch", status=Status.FAIL, summary="rollout 256 x 8 != 128 x 1")
IMAGE_FAIL = Verdict(check_id="image_numpy_major", status=Status.FAIL, summary="numpy 2.1.0 beside megatron-core")


@pytest.mark.parametrize(("verdicts", "ran_on", "drains"), [
    ([NODE_FAIL], None, False),                                       # another node's FAIL
    ([dataclasses.replace(NODE_FAIL, node="gpu-a01")], "login-1", True),  # this node's own, by scheduler name
    ([dataclasses.replace(NODE_FAIL, node="gpu-a01.cluster.local")], "login-1", True),  # fully qualified
    ([dataclasses.replace(NODE_FAIL, node="gpu-a01#1a2b3c4d")], "login-1", True),  # two raylets on one host
    ([dataclasses.replace(NODE_FAIL, node="gpu-a011")], None, False),  # a name that only starts the same
    ([CLUSTER_FAIL], None, False),                                    # cluster-wide: never one node's
    ([RECIPE_FAIL], None, False),                                     # the job's, not the node's
    ([IMAGE_FAIL], None, True),                                       # this machine's image
    ([IMAGE_FAIL], "login-1", False),                                 # another machine's image
])
def test_cli_report_drains_only_for_this_nodes_own_fail(tmp_path, fake_scontrol_on_path, verdicts, ran_on, drains):
    path = _write_report(tmp_path, verdicts, ran_on)
    assert main(["slurm", "prolog", "--report", str(path)]) == (1 if drains else 0)
    assert fake_scontrol_on_path.exists() is drains


def test_cli_prolog_on_a_dead_driver_drains_the_declared_node(tmp_path, fake_scontrol_on_path, capsys):
    """nvidia-smi says what a dead driver says (exit 9): --hardware h200 is a claim the node does not meet."""
    smi = tmp_path / "bin" / "nvidia-smi"
    said = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    (tmp_path / "said.txt").write_text(said + ". Make sure that the latest NVIDIA driver is installed and running.\n")
    smi.write_text(f"#!/bin/sh\ncat {tmp_path}/said.txt\nexit 9\n", encoding="utf-8")
    smi.chmod(0o755)
    assert main(["slurm", "prolog", "--hardware", "h200", "--budget-s", "120"]) == 1
    argv = fake_scontrol_on_path.read_text().splitlines()
    assert argv[:3] == ["update", "nodename=gpu-a01", "state=drain"] and "gpu_node_inventory" in argv[3]
    assert said in capsys.readouterr().err


def test_cli_level_standard_adds_the_gemm_and_never_drains_for_what_it_could_not_run(fake_scontrol_on_path, capsys):
    """--level standard runs the quick tier plus the bf16 GEMM; on a machine without a GPU the GEMM is not judged
    (UNKNOWN or SKIP, said on stderr) and the node stays up."""
    def verdicts(level: str) -> int:
        assert main(["slurm", "epilog", "--level", level, "--hardware", "none", "--budget-s", "200"]) == 0
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert "node stays up" in last and not fake_scontrol_on_path.exists()
        return int(re.search(r"of (\d+) verdict", last).group(1))

    assert verdicts("standard") == verdicts("quick") + 1


def test_cli_level_refuses_an_unknown_level(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["slurm", "prolog", "--level", "extended"])
    assert stop.value.code == 2 and "invalid choice: 'extended'" in capsys.readouterr().err
