"""`rlcheck slurm`'s rules as tables, both sides of each: which report verdicts are this node's own, the drain
reason's bounds, what the prolog says when scontrol fails or times out, the tier's budget, and how --hardware
becomes the profile the node is held to (rlcheck.preflight.slurm, pure or with injected runner, clock, detection)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading

import pytest

from rlcheck.hardware import get_profile
from rlcheck.preflight import gate, slurm
from rlcheck.preflight.registry import Check
from rlcheck.probes.node import gpus
from rlcheck.process.subproc import Completed
from rlcheck.verdict import Status, Verdict

HERE = ("gpu-a01", "gpu-a01.cluster.local")


def _row(check_id: str, node: str | None, status: str = "FAIL") -> dict[str, object]:
    return {"check_id": check_id, "status": status, "summary": f"{check_id} on {node}", "node": node,
            "blocking": True}


REPORT_ROWS = [
    _row("cluster_node_xid", "gpu-a01"),  # 0: names this node
    _row("cluster_node_xid", "GPU-A01.cluster.local#6f1c0a3b"),  # 1: this node, qualified, upper case, with node id
    _row("cluster_node_xid", "gpu-a02"),  # 2: another node
    _row("cluster_node_xid", "gpu-a011"),  # 3: a longer name that starts with this node's
    _row("gpu_node_inventory", None),  # 4: the machine check of the report's own machine
    _row("gpu_node_health", "this-machine"),  # 5: the same, from a report written before host names
    _row("image_tms_preload", None),  # 6: a machine check
    _row("hardware_detection", None, "UNKNOWN"),  # 7: --hardware=auto's detection on the report's machine
    _row("recipe_log_levels", None),  # 8: the job's, never one node's
    _row("cluster_reachable", None, "UNKNOWN"),  # 9: the cluster's as a whole
    _row("cluster_node_ecc", "gpu-a01#ab#cd"),  # 10: a name with two '#': only the part before the first is the host
]
OWN_ROWS = [
    # (the report's machine host name, this node's names, indexes of REPORT_ROWS that act on this node)
    ("gpu-a01", HERE, [0, 1, 4, 5, 6, 7, 10]),
    ("GPU-A01.cluster.local", ("gpu-a01",), [0, 1, 4, 5, 6, 7, 10]),
    ("login-1", HERE, [0, 1, 10]),
    ("", HERE, [0, 1, 10]),
    (None, HERE, [0, 1, 10]),
    ("gpu-a02", ("gpu-a02",), [2, 4, 5, 6, 7]),
    ("gpu-a01", ("", "gpu-a01"), [0, 1, 4, 5, 6, 7, 10]),
    ("gpu-a01", ("",), []),
]


@pytest.mark.parametrize(("hostname", "names", "kept"), OWN_ROWS)
def test_rules_table_slurm_own_verdicts(hostname, names, kept):
    doc: dict[str, object] = {"verdicts": REPORT_ROWS}
    if hostname is not None:
        doc["machine"] = {"hostname": hostname}
    own = slurm.own_verdicts(json.dumps(doc), "report.json", names)
    assert [v.summary for v in own] == [REPORT_ROWS[i]["summary"] for i in kept]


@pytest.mark.parametrize(("name", "names", "same"), [
    ("gpu-a01", ("gpu-a01",), True), ("gpu-a01.x.y", ("GPU-A01",), True), ("gpu-a01#1#2", ("gpu-a01",), True),
    ("gpu-a01#1", ("gpu-a01#1",), True), ("gpu-a0", ("gpu-a01",), False), ("", ("",), False), ("", ("gpu-a01",), False),
    ("gpu-a01", (), False)])
def test_rules_table_slurm_same_host(name, names, same):
    assert slurm.same_host(name, names) is same


def _fail(summary: str, node: str | None = None, check_id: str = "gpu_node_health") -> Verdict:
    return Verdict(check_id=check_id, status=Status.FAIL, summary=summary, node=node)


@pytest.mark.parametrize(("failed", "reason"), [
    ([_fail("Xid 79")], "rlcheck: gpu_node_health FAIL: Xid 79"),
    ([_fail("Xid 79", "gpu-a01")], "rlcheck: gpu_node_health FAIL: Xid 79 [gpu-a01]"),
    ([_fail('a "quoted"   summary'), _fail("b", check_id="gpu_node_inventory"), _fail("c")],
     "rlcheck: gpu_node_health, gpu_node_inventory FAIL: a 'quoted' summary"),
])
def test_rules_table_slurm_drain_reason(failed, reason):
    assert slurm.drain_reason(failed) == reason


@pytest.mark.parametrize("extra", [-1, 0, 1, 50])
def test_rules_table_slurm_drain_reason_bound(extra):
    prefix = "rlcheck: gpu_node_health FAIL: "
    text = prefix + "x" * (slurm.REASON_MAX - len(prefix) + extra)
    reason = slurm.drain_reason([_fail(text.removeprefix(prefix))])
    if extra <= 0:
        assert reason == text
    else:
        assert reason == text[:slurm.REASON_MAX - 3] + "..." and len(reason) == slurm.REASON_MAX


class Scontrol:
    def __init__(self, returncode: int | None, stderr: str = "") -> None:
        self.returncode, self.stderr, self.timeouts = returncode, stderr, []

    def __call__(self, argv, *, timeout_s):
        self.timeouts.append(timeout_s)
        return Completed(argv=tuple(argv), returncode=self.returncode, stdout="", stderr=self.stderr,
                         timed_out=self.returncode is None)


ARGV = ("scontrol", "update", "nodename=gpu-a01", "state=drain", "reason=rlcheck: gpu_node_health FAIL: Xid 79")
FOUR_LINES = "line 1\nline 2\nline 3\nslurm_update error: Invalid node name specified"


@pytest.mark.parametrize(("returncode", "phase", "exit_code", "last"), [
    (0, "prolog", 1, "rlcheck slurm prolog: drained gpu-a01: rlcheck: gpu_node_health FAIL: Xid 79"),
    (0, "epilog", 0, "rlcheck slurm epilog: drained gpu-a01: rlcheck: gpu_node_health FAIL: Xid 79"),
    (None, "epilog", 1, "rlcheck slurm epilog: rlcheck: gpu_node_health FAIL: Xid 79; scontrol timed out; exiting 1 "
                        "so Slurm drains"),
    (1, "epilog", 1, "rlcheck slurm epilog: rlcheck: gpu_node_health FAIL: Xid 79; scontrol exited 1: line 2\nline 3\n"
                     "slurm_update error: Invalid node name specified; exiting 1 so Slurm drains"),
])
def test_rules_table_slurm_act_on_scontrol(returncode, phase, exit_code, last):
    runner = Scontrol(returncode, FOUR_LINES)
    out = slurm.act([_fail("Xid 79")], phase, "gpu-a01", runner=runner)
    assert (out.exit_code, out.lines[-1], out.drain_argv) == (exit_code, last, ARGV)
    assert runner.timeouts == [slurm.SCONTROL_TIMEOUT_S]


def test_rules_table_slurm_act_without_nodename_exits_1_for_slurm_to_drain():
    runner = Scontrol(0)
    out = slurm.act([_fail("Xid 79")], "prolog", "", runner=runner)
    assert out.exit_code == slurm.EXIT_DRAIN and out.drain_argv == () and runner.timeouts == []
    assert out.lines[-1] == ("rlcheck slurm prolog: rlcheck: gpu_node_health FAIL: Xid 79; cannot drain: "
                             "SLURMD_NODENAME is not set, exiting 1 so Slurm drains")


def _check(check_id: str, hang: threading.Event | None = None) -> Check:
    """A check that answers at once, or waits until hang is set (the test sets it when done)."""
    return Check(id=check_id, guards=(), judges="one line", needs=frozenset(),
                 collect=lambda i: hang.wait(60) if hang else None,
                 judge=lambda obs, i: Verdict(status=Status.PASS, summary="judged"))


@pytest.mark.parametrize(("budget_s", "hanging", "judged"), [
    (30.0, [], ["image_a", "image_b"]),
    (0.3, ["image_a"], ["image_b"]),  # the checks run at once: one that hangs costs the other nothing
    (0.3, ["image_b"], ["image_a"]),
    (0.3, ["image_a", "image_b"], []),
    (0.0, [], []),  # no budget: none starts
])
def test_rules_table_slurm_tier_budget(budget_s, hanging, judged):
    hang = threading.Event()
    inputs = gate.inputs_for("qwen3-4b-colocated", None)
    try:
        out = slurm.run_tier([_check(c, hang if c in hanging else None) for c in ("image_a", "image_b")], inputs,
                             budget_s)
    finally:
        hang.set()
    assert [v.check_id for v in out] == ["image_a", "image_b"]
    assert [v.check_id for v in out if v.status is Status.PASS] == judged
    assert all(v.summary == f"not judged within the {budget_s:g} s budget of the Slurm tier"
               for v in out if v.status is Status.UNKNOWN)


def _slow(check_id: str, seconds: float) -> Check:
    """A check that answers after `seconds`."""
    return Check(id=check_id, guards=(), judges="one line", needs=frozenset(),
                 collect=lambda i: threading.Event().wait(seconds),
                 judge=lambda obs, i: Verdict(status=Status.PASS, summary="judged"))


@pytest.mark.parametrize(("now", "status"), [
    (100.0, Status.PASS),  # the deadline (105) not reached: the tier waits for the check to answer
    (105.0, Status.UNKNOWN),  # reached, or past it: it waits no longer, for no check
    (200.0, Status.UNKNOWN),
])
def test_rules_table_slurm_tier_waits_until_its_deadline_and_no_longer(now, status):
    times = itertools.chain([100.0], itertools.repeat(now))  # the start, then every look at the clock
    out = slurm.run_tier([_slow("image_a", 0.2)], gate.inputs_for("qwen3-4b-colocated", None), 5.0,
                         clock=lambda: next(times))
    assert [(v.check_id, v.status) for v in out] == [("image_a", status)]


TIER_CHILD = """
import threading
from rlcheck.preflight import gate, slurm
from rlcheck.preflight.registry import Check
from rlcheck.verdict import Status, Verdict
hangs = Check(id="image_hangs", guards=(), judges="one line", needs=frozenset(),
              collect=lambda i: threading.Event().wait(), judge=lambda obs, i: Verdict(status=Status.PASS, summary=""))
print(*(v.status.value for v in slurm.run_tier([hangs], gate.inputs_for("qwen3-4b-colocated", None), 0.2)))
"""


def test_rules_table_slurm_tier_leaves_a_hung_check_behind_and_the_prolog_exits():
    """A check that never answers is UNKNOWN at the deadline and its thread is left behind as a daemon: the prolog's
    process exits without it (slurmd would otherwise wait on it to its own PrologTimeout)."""
    # a child process: it ends once its tier is judged, the hung check's thread still waiting
    done = subprocess.run([sys.executable, "-c", TIER_CHILD], capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stdout) == (0, "UNKNOWN\n"), done.stderr
    # and here, in-process (where the mutation run sees which tests reach run_tier): the thread left is a daemon
    hang, before = threading.Event(), set(threading.enumerate())
    try:
        out = slurm.run_tier([_check("image_hangs", hang)], gate.inputs_for("qwen3-4b-colocated", None), 0.2)
        left = [t for t in threading.enumerate() if t not in before]
        assert [v.status for v in out] == [Status.UNKNOWN]
        assert len(left) == 1 and left[0].daemon
    finally:
        hang.set()


@pytest.mark.parametrize(("hardware", "budget_s", "detect_timeout_s", "profile", "declared"), [
    ("auto", 60.0, 10.0, "h100", False),
    ("auto", 15.0, 5.0, "h100", False),
    ("h200", 60.0, None, "h200", True),
    ("none", 60.0, None, None, False),
])
def test_rules_table_slurm_judge_here_holds_the_node_to(monkeypatch, hardware, budget_s, detect_timeout_s, profile,
                                                        declared):
    asked, judged = [], []
    detection = gpus.Detection(gpus=(), profile=get_profile("h100"), evidence="recorded")
    monkeypatch.setattr(gpus, "detect", lambda timeout_s=None: asked.append(timeout_s) or detection)
    monkeypatch.setattr(slurm, "judge_node", lambda p, r, b, *, declared: judged.append((p, r, b, declared)) or [])
    assert slurm.judge_here(hardware, "qwen3-4b-colocated", budget_s) == []
    assert asked == ([] if detect_timeout_s is None else [detect_timeout_s])
    assert judged == [(get_profile(profile) if profile else None, "qwen3-4b-colocated", budget_s, declared)]


def test_rules_table_slurm_judge_here_refuses_an_unknown_profile():
    with pytest.raises(ValueError, match=r"--hardware='h300': one of .*h200.*, auto, none$"):
        slurm.judge_here("h300", "qwen3-4b-colocated", 60.0)




def test_rules_table_slurm_report_without_machine_name_is_no_host_of_this_node():
    doc = {"machine": {}, "verdicts": [_row("gpu_node_inventory", None)]}
    assert slurm.own_verdicts(json.dumps(doc), "report.json", ("xxxx", "")) == []


def test_rules_table_slurm_a_report_that_is_none_names_its_source():
    with pytest.raises(ValueError, match=r"^/var/lib/rlcheck/report\.json is not an rlcheck report\.json"):
        slurm.own_verdicts('{"verdicts": 3}', "/var/lib/rlcheck/report.json", HERE)


def test_rules_table_slurm_unknown_profile_lists_every_profile():
    from rlcheck import hardware

    names = ", ".join(hardware.load_profiles())
    with pytest.raises(ValueError) as refused:
        slurm.judge_here("h300", "qwen3-4b-colocated", 60.0)
    assert str(refused.value) == f"--hardware='h300': one of {names}, auto, none"


def test_rules_table_slurm_judge_node_holds_to_the_profile_only_when_declared(monkeypatch):
    seen = []
    monkeypatch.setattr(slurm, "run_tier", lambda checks, inputs, budget_s: seen.append(inputs.declared) or [])
    slurm.judge_node(get_profile("h200"), "qwen3-4b-colocated", 5.0)
    slurm.judge_node(get_profile("h200"), "qwen3-4b-colocated", 5.0, declared=True)
    assert seen == [False, True]
