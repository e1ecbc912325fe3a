"""GPU node health: parsers on recorded nvidia-smi / kernel-log text, the bounded collector, and every judge branch."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlcheck.cluster.fanout_result import Outcome
from rlcheck.probes.cluster import node_health as nh
from rlcheck.probes.cluster.node_versions import evaluate_versions_uniform
from rlcheck.probes.node import gpu_health as gh
from rlcheck.probes.node import gpu_kernel_log
from rlcheck.process import subproc
from rlcheck.verdict import Status
from tests.gpu_health_recordings import fanout, node, reading, renamed, text
from tests.probes.node.test_probe_node import load

XID, ECC, THROTTLE = nh.evaluate_node_xid, nh.evaluate_node_ecc, nh.evaluate_node_throttle
NVLINK, BUS = nh.evaluate_node_nvlink, nh.evaluate_node_bus
FAULTY = "h200_2gpu_dbe_remap_pending_hw_slowdown_q.txt"


def NO_NVML(timeout_s: float) -> tuple[dict, str]:
    return {}, "not asked (these tests read the nvidia-smi path)"


def test_probe_gpu_health_parses_the_captured_h200():
    (gpu,) = reading().gpus
    assert gpu == gh.GpuHealth(bus_id="00000000:00:06.0", persistence=True, ecc_volatile_uncorrected=0,
                               ecc_aggregate_uncorrected=0, retired_pending=None, remap_pending=False,
                               remap_failed=False, throttle=("Idle",), sm_clock_mhz=450, sm_clock_max_mhz=1980,
                               mem_clock_mhz=3201, mem_clock_max_mhz=3201, pcie_gen=5, pcie_gen_max=5,
                               pcie_gen_gpu_max=5, pcie_width=16, pcie_width_max=16)


def test_probe_gpu_health_parses_faults_per_gpu():
    healthy, faulty = reading(FAULTY).gpus
    assert healthy.bus_id == "00000000:18:00.0" and healthy.ecc_volatile_uncorrected == 0 and not healthy.remap_pending
    assert (faulty.bus_id, faulty.persistence, faulty.ecc_volatile_uncorrected, faulty.ecc_aggregate_uncorrected,
            faulty.remap_pending) == ("00000000:2A:00.0", False, 2, 2, True)
    assert {"HW Slowdown", "HW Thermal Slowdown"} <= set(faulty.throttle)


def test_probe_gpu_health_parses_the_older_layout_without_double_counting():
    (gpu,) = reading("v100_nvidia_smi_q_excerpt.txt").gpus
    assert (gpu.ecc_volatile_uncorrected, gpu.ecc_aggregate_uncorrected, gpu.retired_pending, gpu.remap_pending) == \
        (1, 1, True, None)
    assert set(gpu.throttle) == {"SW Power Cap", "HW Power Brake Slowdown"}


def test_probe_gpu_health_parses_nvlink_counters_in_both_layouts():
    assert gh.parse_nvlink_errors(text("nvlink_e_errors.txt")) == {
        0: ((1, "Replay Errors", 4), (1, "CRC Errors", 17)), 1: ((0, "Recovery Errors", 2),)}
    assert gh.parse_nvlink_errors("") == {}


def test_probe_gpu_health_finds_xids_and_off_bus_lines_not_sxids():
    xids, off_bus = gh.parse_kernel_log(text("dmesg_xid.txt"))
    assert [(x.code, x.bus_id) for x in xids] == [(63, "0000:10:1c"), (13, "0000:3b:00"), (13, "0000:3b:00"),
                                                  (45, "0000:3b:00"), (79, "0000:18:00")]
    assert len(off_bus) == 2 and "GPU 0000:18:00.0" in off_bus[1]
    assert [x.code for x in gh.parse_kernel_log(text("journal_xid.txt"))[0]] == [94, 154, 999]
    assert gh.parse_kernel_log(text("h200_dmesg_tail_clean.txt")) == ((), ())


def test_probe_gpu_health_reads_the_wrapped_upstream_off_bus_message():
    xids, off_bus = gh.parse_kernel_log(text("upstream_nvsentinel_155_dmesg.txt"))
    assert [(x.code, x.bus_id) for x in xids] == [(79, "0000:44:00")]
    assert off_bus[0].startswith("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0 NVRM: (PCI ID: 10de:26b5)")
    verdict = BUS(*node(reading(log="upstream_nvsentinel_155_dmesg.txt")), None)
    assert verdict.status is Status.FAIL and "GPU 0000:b3:00.0" in verdict.summary


def test_probe_gpu_health_keeps_only_the_newest_xids():
    most = gpu_kernel_log.MAX_XID_EVENTS
    storm = "\n".join(f"NVRM: Xid (PCI:0000:18:00): 31, pid={i}, fault" for i in range(most + 5))
    xids, _ = gh.parse_kernel_log(storm)
    assert len(xids) == most and xids[-1].line.endswith(f"pid={most + 4}, fault")


def _fake_tools(monkeypatch, answers: dict[str, subproc.Completed]) -> None:
    monkeypatch.setattr(gh.shutil, "which", lambda name: f"/usr/bin/{name}" if name in answers else None)
    monkeypatch.setattr(gh.subproc, "run", lambda argv, timeout_s: answers[argv[0].rsplit("/", 1)[-1]])


def _done(argv: str, rc: int | None, out: str = "", err: str = "") -> subproc.Completed:
    return subproc.Completed(argv=(argv,), returncode=rc, stdout=out, stderr=err, timed_out=rc is None)


def test_probe_gpu_health_kernel_log_falls_back_to_journalctl_then_names_both(monkeypatch):
    denied = _done("dmesg", 1, err="dmesg: read kernel buffer failed: Operation not permitted")
    _fake_tools(monkeypatch, {"dmesg": denied, "journalctl": _done("journalctl", 0, out=text("journal_xid.txt"))})
    log, tool, error = gh.read_kernel_log(5)
    assert tool.startswith("journalctl -k") and "Xid" in log and error == ""
    _fake_tools(monkeypatch, {"dmesg": denied})
    log, tool, error = gh.read_kernel_log(5)
    assert (log, tool) == ("", "")
    assert "Operation not permitted" in error and "journalctl: not on PATH" in error


def test_probe_gpu_health_collector_is_bounded_and_says_why(monkeypatch):
    _fake_tools(monkeypatch, {"dmesg": _done("dmesg", 0, out="[0.1] boot\n"), "nvidia-smi": _done("nvidia-smi", None)})
    hung = gh.collect_gpu_health(3, nvml=NO_NVML)
    assert "killed at its deadline" in hung.error and hung.kernel_log == "dmesg" and hung.gpus == ()
    _fake_tools(monkeypatch, {"dmesg": _done("dmesg", 0, out="[0.1] boot\n")})
    assert gh.collect_gpu_health(3, nvml=NO_NVML).error == "nvidia-smi is not on PATH"


def test_probe_gpu_health_child_processes_share_one_budget(monkeypatch):
    clock, given = [0.0], []

    def run(argv, timeout_s):
        given.append(timeout_s)
        clock[0] += 3.0
        return _done(argv[0], 0, out=text("h200_nvidia_smi_q.txt") if argv[1:] == ["-q"] else "[0.1] boot\n")

    monkeypatch.setattr(gh.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(gh.subproc, "run", run)
    monkeypatch.setattr(gpu_kernel_log.time, "monotonic", lambda: clock[0])
    nvml_given = []

    def nvml(timeout_s):
        nvml_given.append(timeout_s)
        clock[0] += 1.0
        return {}, "pynvml (nvidia-ml-py) is not installed"

    assert len(gh.collect_gpu_health(10, nvml=nvml).gpus) == 1
    # dmesg gets half; NVML half of the rest; nvidia-smi -q and nvlink -e what is left of 10 s
    assert (given, nvml_given) == ([5.0, 6.0, 3.0], [3.5])


def test_probe_gpu_health_counts_gpus_on_the_pci_bus(tmp_path: Path):
    for name, vendor, klass in [("0000:18:00.0", "0x10de", "0x030200"), ("0000:05:00.0", "0x10de", "0x068000"),
                                ("0000:18:00.1", "0x10de", "0x040300"), ("0000:00:1f.0", "0x8086", "0x030000")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "vendor").write_text(vendor + "\n")
        (tmp_path / name / "class").write_text(klass + "\n")
    assert gh.count_pci_gpus(tmp_path) == 1
    assert gh.count_pci_gpus(tmp_path / "absent") is None


def test_probe_gpu_health_counts_the_captured_h200_sysfs(tmp_path: Path):
    for row in text("h200_sysfs_pci.txt").splitlines():
        path, vendor, klass = row.split()
        device = tmp_path / path.rsplit("/", 1)[-1]
        device.mkdir()
        (device / "vendor").write_text(vendor + "\n")
        (device / "class").write_text(klass + "\n")
    assert gh.count_pci_gpus(tmp_path) == len(reading().gpus) == 1


def test_probe_gpu_health_round_trips_and_old_recordings_load():
    facts, obs = node(reading(FAULTY, nvlink="nvlink_e_errors.txt", log="dmesg_xid.txt"))
    assert type(obs).from_dict(obs.to_dict()) == obs
    assert load("h200_node_healthy.json")[1].health is None


JUDGED = [
    (XID, reading(), Status.PASS, "no Xid error in the kernel log"),
    (XID, reading(log="dmesg_xid.txt"), Status.FAIL, "Xid 79 x1 on PCI 0000:18:00 (GPU has fallen off the bus)"),
    (XID, reading(log="dmesg_xid_app_only.txt"), Status.WARN, "Xid 31 x1 on PCI 0000:3b:00"),
    (XID, reading(log="journal_xid.txt"), Status.FAIL, "Xid 999 x1 on PCI 0000:bb:00 (not in rlcheck's Xid table)"),
    (XID, reading(log="", log_error="dmesg: exit code 1"), Status.UNKNOWN, "could not read the kernel log"),
    (ECC, reading(), Status.PASS, "no uncorrectable ECC error"),
    (ECC, reading(FAULTY), Status.FAIL, "GPU 00000000:2A:00.0: 2 uncorrectable ECC error(s) since the driver loaded, "
                                        "a row remap waits for a GPU reset"),
    (ECC, reading("h200_past_uncorrectable_sw_thermal_q.txt"), Status.WARN, "3 uncorrectable ECC error(s) over its"),
    (ECC, reading("h200_remap_failed_q.txt"), Status.FAIL, "row remapping failed"),
    (ECC, reading("v100_nvidia_smi_q_excerpt.txt"), Status.FAIL, "a page retirement waits for a GPU reset"),
    (ECC, reading(""), Status.UNKNOWN, "no GPU reports ECC"),
    (THROTTLE, reading(), Status.PASS, "no thermal or power slowdown"),
    (THROTTLE, reading(FAULTY), Status.FAIL, "GPU 00000000:2A:00.0: HW Slowdown, HW Thermal Slowdown"),
    (THROTTLE, reading("v100_nvidia_smi_q_excerpt.txt"), Status.FAIL, "HW Power Brake Slowdown"),
    (THROTTLE, reading("h200_past_uncorrectable_sw_thermal_q.txt"), Status.WARN, "SW Thermal Slowdown"),
    (NVLINK, reading(), Status.PASS, "no NVLink error counted on 1 GPU(s)"),
    (NVLINK, reading(nvlink="nvlink_e_crc_only.txt"), Status.WARN, "link 1: 4 Replay Errors; GPU 00000000:00:06.0 "
                                                                   "link 1: 17 CRC Errors"),
    (NVLINK, reading(FAULTY, nvlink="nvlink_e_errors.txt"), Status.FAIL, "GPU 00000000:2A:00.0 link 0: 2 Recovery"),
    (BUS, reading(), Status.PASS, "all 1 GPU(s) on the PCI bus answer"),
    (BUS, reading(pci=2), Status.FAIL, "2 NVIDIA GPUs on the PCI bus, the driver answers for 1"),
    (BUS, reading(pci=0), Status.UNKNOWN, "a VM or container hides PCI devices"),
    (BUS, reading(pci=None), Status.UNKNOWN, "sysfs PCI devices unreadable"),
    (BUS, reading(log="dmesg_xid.txt"), Status.FAIL, "GPU 0000:18:00.0: GPU has fallen off the bus"),
]


@pytest.mark.parametrize(("judge", "health", "status", "says"), JUDGED,
                         ids=[f"{j.__name__}-{i}" for i, (j, *_) in enumerate(JUDGED)])
def test_probe_gpu_health_judges(judge, health, status, says):
    verdict = judge(*node(health), None)
    assert verdict.status is status and says in verdict.summary, verdict.render()
    assert verdict.status is not Status.FAIL or verdict.remedy


def _health(**fields) -> gh.HealthReading:
    return dataclasses.replace(reading(), gpus=(gh.GpuHealth(bus_id="00000000:18:00.0", **fields),))


@pytest.mark.parametrize(("fields", "status"), [
    ({"ecc_volatile_uncorrected": 0, "ecc_aggregate_uncorrected": 0}, Status.PASS),
    ({"ecc_volatile_uncorrected": 1, "ecc_aggregate_uncorrected": 1}, Status.FAIL),
    ({"ecc_volatile_uncorrected": 0, "ecc_aggregate_uncorrected": 1}, Status.WARN),
    ({"remap_pending": False, "remap_failed": False}, Status.PASS),
    ({"remap_pending": True}, Status.FAIL)])
def test_probe_gpu_health_ecc_boundaries(fields, status):
    assert ECC(*node(_health(**fields)), None).status is status


def test_probe_gpu_health_persistence_off_alone_warns():
    verdict = THROTTLE(*node(_health(persistence=False)), None)
    assert verdict.status is Status.WARN and "persistence mode off" in verdict.summary
    assert THROTTLE(*node(_health(persistence=True, throttle=("SW Power Cap", "Idle"))), None).status is Status.PASS


def test_probe_gpu_health_xid_action_is_the_strongest_and_154_says_its_own():
    verdict = XID(*node(reading(log="dmesg_xid.txt")), None)
    assert verdict.summary.endswith(": reboot") and verdict.remedy == nh.ACTION_TEXT["reboot"]
    assert XID(*node(reading(log="journal_xid.txt")), None).summary.endswith(": reboot")  # 154 Node Reboot Required
    reset = gh.XidEvent(bus_id="0000:9b:00", code=154, line="NVRM: Xid (PCI:0000:9b:00): 154, GPU recovery action "
                                                            "changed from 0x0 (None) to 0x1 (GPU Reset Required)")
    assert nh.xid_action(reset, nh.xid_table()) == "reset"
    unknown_only = dataclasses.replace(reading(), xids=(gh.XidEvent(bus_id="0000:bb:00", code=999, line="x"),))
    assert XID(*node(unknown_only), None).status is Status.WARN


def test_probe_gpu_health_skips_cpu_nodes_and_names_old_or_unread_nodes():
    assert XID(*node(dataclasses.replace(reading(), pci_gpus=0), "cpu_worker.json"), None).status is Status.SKIP
    old = ECC(*node(None), None)
    assert old.status is Status.UNKNOWN and "older rlcheck" in old.summary
    unread = dataclasses.replace(reading(), error="nvidia-smi -q ended with killed at its deadline: ")
    assert all(j(*node(unread), None).status is Status.UNKNOWN for j in (ECC, THROTTLE, NVLINK, BUS))


def test_probe_gpu_health_xid_table_rejects_bad_rows(tmp_path: Path):
    assert {13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 154} <= set(nh.xid_table())
    bad = tmp_path / "xid.toml"
    bad.write_text('[xid.48]\nname = "DBE"\nseverity = "critical"\naction = "reset"\n')
    with pytest.raises(ValueError, match="allowed: fail|warn"):
        nh.xid_table(bad)


HEALTHY = node(reading())


def test_probe_gpu_health_versions_uniform_names_the_odd_node():
    odd = node(reading(), torch_version="2.9.1+cu128", torch_cuda="12.8")
    result = fanout(renamed(node(reading(), "head_gpuless.json"), "head", is_head=True), renamed(HEALTHY, "w1"),
                    renamed(HEALTHY, "w2"), renamed(odd, "w3"))
    verdicts = evaluate_versions_uniform(result)
    assert [v.status for v in verdicts] == [Status.PASS, Status.PASS, Status.PASS, Status.FAIL]
    assert "w3" in verdicts[3].summary and "torch 2.9.1+cu128 (most nodes run 2.11.0+cu130)" in verdicts[3].summary
    assert "CUDA runtime 12.8 (most nodes run 13.0)" in verdicts[3].summary
    assert "not read here: driver" in verdicts[0].details


def test_probe_gpu_health_versions_tie_goes_to_the_head_and_lone_node_skips():
    other = node(reading(), driver_version="570.124.06")
    result = fanout(renamed(other, "head", is_head=True), renamed(HEALTHY, "w1"))
    assert [v.status for v in evaluate_versions_uniform(result)] == [Status.PASS, Status.FAIL]
    assert evaluate_versions_uniform(fanout(HEALTHY))[0].status is Status.SKIP
    late = dataclasses.replace(result, nodes=(*result.nodes, dataclasses.replace(result.nodes[1],
                                                                                 outcome=Outcome.TIMEOUT)))
    assert evaluate_versions_uniform(late)[-1].status is Status.UNKNOWN
