"""Whole-verdict rule table for the GPU-health judges (probes.cluster.node_health, reading probes.node.gpu_health):
the recorded rows of tests/probes/node/test_probe_gpu_health.py plus each branch they leave out (several GPUs,
several Xids and their strongest action, the isolate-or-reset remedy, a partly unread node, more than three off-bus
lines), recorded whole in tests/data/golden/gpu_health.json."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.probes.cluster import node_health as nh
from rlcheck.probes.node import gpu_health as gh
from rlcheck.verdict import Status
from tests import golden_verdicts
from tests.gpu_health_recordings import node, reading
from tests.probes.node.test_probe_gpu_health import JUDGED

A, B = "00000000:18:00.0", "00000000:2A:00.0"


def _gpus(*gpus: gh.GpuHealth, **changes) -> gh.HealthReading:
    return dataclasses.replace(reading(), gpus=gpus, **changes)


def _xids(*events: tuple[int, str, str]) -> gh.HealthReading:
    return dataclasses.replace(reading(), xids=tuple(gh.XidEvent(bus_id=b, code=c, line=t) for c, b, t in events))


OK = gh.GpuHealth(bus_id=A, persistence=True, ecc_volatile_uncorrected=0, ecc_aggregate_uncorrected=0,
                  remap_pending=False, remap_failed=False)
EXTRA = [
    ("xid-two-fails-strongest-action", nh.evaluate_node_xid,
     _xids((79, "0000:18:00", "NVRM: Xid (PCI:0000:18:00): 79, fallen off"), (48, "0000:2a:00", "NVRM: Xid 48"),
           (79, "0000:18:00", "NVRM: Xid (PCI:0000:18:00): 79, again")), Status.FAIL),
    ("xid-warn-strongest-known-action", nh.evaluate_node_xid,
     _xids((31, "0000:3b:00", "NVRM: Xid 31"), (13, "0000:3b:00", "NVRM: Xid 13"), (999, "0000:3b:00", "x")),
     Status.WARN),
    ("xid-154-without-words", nh.evaluate_node_xid, _xids((154, "0000:9b:00", "NVRM: Xid 154, changed")), None),
    ("xid-gpu-error-still-judged", nh.evaluate_node_xid, dataclasses.replace(reading(), error="nvidia-smi hung"),
     Status.PASS),
    ("ecc-one-of-two-fails", nh.evaluate_node_ecc,
     _gpus(OK, dataclasses.replace(OK, bus_id=B, ecc_volatile_uncorrected=3)), Status.FAIL),
    ("ecc-two-gpus-fail", nh.evaluate_node_ecc,
     _gpus(dataclasses.replace(OK, remap_pending=True), dataclasses.replace(OK, bus_id=B, ecc_volatile_uncorrected=2)),
     Status.FAIL),
    ("ecc-unread", nh.evaluate_node_ecc, _gpus(error="nvidia-smi -q ended with exit 9"), Status.UNKNOWN),
    ("throttle-unread", nh.evaluate_node_throttle, _gpus(error="nvidia-smi -q ended with exit 9"), Status.UNKNOWN),
    ("nvlink-unread", nh.evaluate_node_nvlink, _gpus(error="nvidia-smi -q ended with exit 9"), Status.UNKNOWN),
    ("throttle-hw-on-two", nh.evaluate_node_throttle,
     _gpus(dataclasses.replace(OK, throttle=("HW Slowdown",)), dataclasses.replace(OK, bus_id=B, throttle=(
         "HW Thermal Slowdown", "HW Power Brake Slowdown"))), Status.FAIL),
    ("ecc-remap-failed-isolates", nh.evaluate_node_ecc, _gpus(OK, dataclasses.replace(OK, bus_id=B, remap_failed=True)),
     Status.FAIL),
    ("ecc-every-fail-reason", nh.evaluate_node_ecc,
     _gpus(dataclasses.replace(OK, ecc_volatile_uncorrected=1, remap_failed=True, remap_pending=True,
                               retired_pending=True, ecc_aggregate_uncorrected=9)), Status.FAIL),
    ("ecc-past-on-two", nh.evaluate_node_ecc,
     _gpus(dataclasses.replace(OK, ecc_aggregate_uncorrected=2), dataclasses.replace(OK, bus_id=B,
                                                                                     ecc_aggregate_uncorrected=5)),
     Status.WARN),
    ("ecc-one-unread-one-clean", nh.evaluate_node_ecc, _gpus(gh.GpuHealth(bus_id=B), OK), Status.PASS),
    ("ecc-only-remap-read", nh.evaluate_node_ecc, _gpus(gh.GpuHealth(bus_id=B, remap_pending=False)), Status.PASS),
    ("ecc-only-retired-read", nh.evaluate_node_ecc, _gpus(gh.GpuHealth(bus_id=B, retired_pending=False)), Status.PASS),
    ("ecc-all-unread", nh.evaluate_node_ecc, _gpus(gh.GpuHealth(bus_id=A), gh.GpuHealth(bus_id=B)), Status.UNKNOWN),
    ("ecc-no-gpu", nh.evaluate_node_ecc, _gpus(), Status.UNKNOWN),
    ("throttle-hw-on-one-sw-on-other", nh.evaluate_node_throttle,
     _gpus(dataclasses.replace(OK, throttle=("HW Power Brake Slowdown", "Idle")),
           dataclasses.replace(OK, bus_id=B, throttle=("SW Thermal Slowdown",))), Status.FAIL),
    ("throttle-sw-and-persistence-off", nh.evaluate_node_throttle,
     _gpus(dataclasses.replace(OK, throttle=("SW Thermal Slowdown",)), dataclasses.replace(OK, bus_id=B,
                                                                                          persistence=False)),
     Status.WARN),
    ("throttle-persistence-unread", nh.evaluate_node_throttle, _gpus(dataclasses.replace(OK, persistence=None)),
     Status.PASS),
    ("nvlink-two-gpus", nh.evaluate_node_nvlink,
     _gpus(dataclasses.replace(OK, nvlink_errors=((0, "CRC Errors", 2),)),
           dataclasses.replace(OK, bus_id=B, nvlink_errors=((3, "Recovery Errors", 1), (4, "Replay Errors", 7)))),
     Status.FAIL),
    ("nvlink-no-gpu", nh.evaluate_node_nvlink, _gpus(), Status.PASS),
    ("bus-four-off-bus-lines", nh.evaluate_node_bus,
     dataclasses.replace(reading(), off_bus=tuple(f"{n} fallen off" for n in ("one", "two", "three", "four"))),
     Status.FAIL),
    ("bus-gpu-error", nh.evaluate_node_bus, dataclasses.replace(reading(), error="nvidia-smi -q ended with exit 9"),
     Status.UNKNOWN),
    ("bus-two-of-two", nh.evaluate_node_bus, _gpus(OK, dataclasses.replace(OK, bus_id=B), pci_gpus=2), Status.PASS),
    ("bus-three-for-two", nh.evaluate_node_bus, _gpus(OK, dataclasses.replace(OK, bus_id=B), pci_gpus=3), Status.FAIL),
    ("bus-one-for-two", nh.evaluate_node_bus, _gpus(OK, dataclasses.replace(OK, bus_id=B), pci_gpus=1),
     Status.UNKNOWN),
]
ROWS = [(f"recorded-{i}", j, h, s) for i, (j, h, s, _) in enumerate(JUDGED)] + EXTRA


@pytest.mark.parametrize(("row", "judge", "health", "status"), ROWS, ids=[r[0] for r in ROWS])
def test_rules_table_gpu_health_whole_verdict(row, judge, health, status):
    verdict = judge(*node(health), None)
    assert status is None or verdict.status is status, verdict.render()
    golden_verdicts.check("gpu_health", row, verdict)


@pytest.mark.parametrize("judge", [nh.evaluate_node_xid, nh.evaluate_node_ecc, nh.evaluate_node_throttle,
                                   nh.evaluate_node_nvlink, nh.evaluate_node_bus],
                         ids=["xid", "ecc", "throttle", "nvlink", "bus"])
def test_rules_table_gpu_health_preamble_each_judge(judge, request):
    cpu = judge(*node(dataclasses.replace(reading(), pci_gpus=0), "cpu_worker.json"), None)
    assert cpu.status is Status.SKIP and cpu.summary.endswith(": CPU-only node: no GPU to judge") and cpu.node
    # a node whose driver died lists no GPU and advertises none to Ray, but its GPUs are on the bus: judged
    dead = judge(*node(dataclasses.replace(reading(), pci_gpus=8, gpus=()), "cpu_worker.json"), None)
    assert dead.status is not Status.SKIP, dead.render()
    old = judge(*node(None), None)
    assert old.status is Status.UNKNOWN and old.summary.endswith(f": {nh.OLD_NODE}") and old.node
    name = request.node.callspec.id
    golden_verdicts.check("gpu_health", f"cpu-node-{name}", cpu)
    golden_verdicts.check("gpu_health", f"old-node-{name}", old)


@pytest.mark.parametrize(("line", "action"), [
    ("NVRM: Xid (PCI:0000:9b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
     "reboot"),
    ("NVRM: Xid (PCI:0000:9b:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain P2P)", "isolate"),
    ("NVRM: Xid (PCI:0000:9b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
     "reset"),
])
def test_rules_table_xid_154_reads_its_recovery_action(line, action):
    assert nh.xid_action(gh.XidEvent(bus_id="0000:9b:00", code=154, line=line), nh.xid_table()) == action
    assert nh.xid_action(gh.XidEvent(bus_id="0000:9b:00", code=154, line="154"), nh.xid_table()) == \
        nh.xid_table()[154]["action"]


def test_rules_table_xid_table_rejects_a_bad_action(tmp_path):
    bad = tmp_path / "xid.toml"
    bad.write_text('[xid.48]\nname = "DBE"\nseverity = "fail"\naction = "pray"\n')
    with pytest.raises(ValueError, match="Xid 48 has severity 'fail' and action 'pray'; allowed: fail|warn and "
                                         "monitor|restart-app|reset|isolate|reboot"):
        nh.xid_table(bad)
    good = tmp_path / "good.toml"
    good.write_text('[xid.48]\nname = "DBE"\nseverity = "warn"\naction = "monitor"\n')
    assert nh.xid_table(good) == {48: {"name": "DBE", "severity": "warn", "action": "monitor"}}


@pytest.mark.parametrize(("gpu", "status", "reasons"), [
    # retired pages alone are past damage: WARN, with their count
    (dataclasses.replace(OK, retired_pages=2), Status.WARN, "2 page(s) retired for ECC errors"),
    # two WARN reasons on one GPU, joined by ", " in _ecc_problems' order (life-time errors, then pages)
    (dataclasses.replace(OK, ecc_aggregate_uncorrected=3, retired_pages=2), Status.WARN,
     "3 uncorrectable ECC error(s) over its life, 2 page(s) retired for ECC errors"),
    # a FAIL reason on the GPU: the retired pages are not listed beside it
    (dataclasses.replace(OK, retired_pages=2, remap_pending=True), Status.FAIL, "a row remap waits for a GPU reset"),
], ids=["retired-only", "past-errors-and-retired", "retired-under-a-fail"])
def test_rules_table_ecc_retired_pages_warn_only_without_a_fail(gpu, status, reasons):
    verdict = nh.evaluate_node_ecc(*node(_gpus(gpu)), None)
    assert verdict.status is status
    tail = " (none pending now; action: monitor)" if status is Status.WARN else " (action: reset)"
    assert verdict.summary.endswith(f": GPU {A}: {reasons}{tail}"), verdict.summary
