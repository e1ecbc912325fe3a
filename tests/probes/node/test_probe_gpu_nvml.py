"""The NVML reader replayed from recorded dumps (tests/nvml_replay.py), the NVML-first collector, and every clock and
PCIe judge branch; each faulty dump makes its check FAIL or WARN naming the action."""

from __future__ import annotations

import dataclasses
import json

import pytest

from rlcheck.probes.cluster import node_health as nh
from rlcheck.probes.cluster import node_health_links as nl
from rlcheck.probes.node import gpu_health as gh
from rlcheck.probes.node import gpu_nvml
from rlcheck.process import subproc
from rlcheck.verdict import Status
from tests.gpu_health_recordings import node, nvml_reading
from tests.nvml_replay import ReplayNvml, dump


def test_probe_gpu_nvml_reads_the_captured_h200_idle_and_busy():
    (idle,) = nvml_reading().gpus
    assert idle == gh.GpuHealth(bus_id="00000000:00:06.0", persistence=True, ecc_volatile_uncorrected=0,
                                ecc_aggregate_uncorrected=0, retired_pending=None, retired_pages=None,
                                remap_pending=False, remap_failed=False, throttle=("Idle",), sm_clock_mhz=345,
                                sm_clock_max_mhz=1980, mem_clock_mhz=3201, mem_clock_max_mhz=3201, pcie_gen=5,
                                pcie_gen_max=5, pcie_gen_gpu_max=5, pcie_width=16, pcie_width_max=16)
    (busy,) = nvml_reading("nvml_h200_busy.json").gpus
    assert (busy.throttle, busy.sm_clock_mhz) == (("SW Power Cap",), 1455)
    assert nvml_reading().source == "NVML (driver 580.159.04)"


def test_probe_gpu_nvml_record_makes_the_calls_of_the_recording():
    replay = ReplayNvml(dump("nvml_h200_idle.json"))
    assert gpu_nvml.record(replay) == dump("nvml_h200_idle.json")  # the reader's calls are the recording's keys
    assert replay.calls[0] == "nvmlInit" and replay.calls[-1] == "nvmlShutdown"


def test_probe_gpu_nvml_reads_nvlink_counters_of_active_links_and_older_throttle_call():
    (gpu,) = nvml_reading("nvml_nvlink_recovery.json").gpus
    assert gpu.nvlink_errors == ((1, "CRC Errors", 31), (1, "Recovery Errors", 2), (1, "Replay Errors", 5))
    old = dump("nvml_h200_busy.json")
    gpu0 = old["gpus"][0]
    gpu0["nvmlDeviceGetCurrentClocksThrottleReasons"] = gpu0.pop("nvmlDeviceGetCurrentClocksEventReasons")
    recorded = gpu_nvml.record(ReplayNvml(old))
    assert gh.GpuHealth(**gpu_nvml.gpu_fields(recorded["gpus"][0])).throttle == ("SW Power Cap",)


def test_probe_gpu_nvml_driver_not_loaded_is_said():
    assert gpu_nvml.record(ReplayNvml(dump("nvml_driver_not_loaded.json"))) == {
        "error": "nvmlInit: NVMLError_DriverNotLoaded: Driver Not Loaded"}


def _completed(out: str, rc: int | None = 0) -> subproc.Completed:
    return subproc.Completed(argv=("python",), returncode=rc, stdout=out, stderr="", timed_out=rc is None)


def test_probe_gpu_nvml_child_answer_error_and_deadline():
    line = gpu_nvml.RESULT + json.dumps(dump("nvml_h200_idle.json"))
    assert gpu_nvml.collect_nvml(5, run=lambda argv, **kw: _completed(line))[1] == ""
    no_lib = gpu_nvml.RESULT + json.dumps({"error": "pynvml (nvidia-ml-py) is not installed: No module"})
    assert gpu_nvml.collect_nvml(5, run=lambda argv, **kw: _completed(no_lib)) == (
        {}, "pynvml (nvidia-ml-py) is not installed: No module")
    dump_, why = gpu_nvml.collect_nvml(5, run=lambda argv, **kw: _completed("", None))
    assert dump_ == {} and why.startswith("the NVML reader ended with")


def test_probe_gpu_nvml_child_runs_here_and_says_why_it_gave_nothing():
    """On this CPU machine the real child answers: pynvml missing, or no NVML library (never a hang)."""
    got, why = gpu_nvml.collect_nvml(30)
    assert got == {} and ("not installed" in why or "nvmlInit" in why), why


def test_probe_gpu_nvml_collector_prefers_nvml_and_falls_back_to_nvidia_smi(monkeypatch):
    monkeypatch.setattr(gh.shutil, "which", lambda name: None)
    reading = gh.collect_gpu_health(5, nvml=lambda t: (dump("nvml_h200_idle.json"), ""))
    assert reading.source.startswith("NVML") and reading.fallback == "" and len(reading.gpus) == 1
    fell = gh.collect_gpu_health(5, nvml=lambda t: ({}, "pynvml (nvidia-ml-py) is not installed"))
    assert fell.error == "nvidia-smi is not on PATH" and fell.fallback == "NVML: pynvml (nvidia-ml-py) is not installed"


CLOCKS, PCIE = nl.evaluate_node_clocks, nl.evaluate_node_pcie
FAULTS = [
    ("nvml_ecc_uncorrectable.json", nh.evaluate_node_ecc, Status.FAIL, "action: reset"),
    ("nvml_remap_pending.json", nh.evaluate_node_ecc, Status.FAIL, "action: reset"),
    ("nvml_remap_failed.json", nh.evaluate_node_ecc, Status.FAIL, "action: isolate"),
    ("nvml_retired_pages.json", nh.evaluate_node_ecc, Status.WARN, "2 page(s) retired for ECC errors"),
    ("nvml_hw_slowdown.json", nh.evaluate_node_throttle, Status.FAIL, "action: reboot"),
    ("nvml_persistence_off.json", nh.evaluate_node_throttle, Status.WARN, "action: monitor"),
    ("nvml_clocks_stuck_low.json", CLOCKS, Status.FAIL, "action: reset"),
    ("nvml_app_clocks_held.json", CLOCKS, Status.WARN, "action: monitor"),
    ("nvml_pcie_x8.json", PCIE, Status.FAIL, "x8 of x16"),
    ("nvml_pcie_gen3_busy.json", PCIE, Status.FAIL, "Gen3 of Gen5 while not idle"),
    ("nvml_pcie_slot_gen4.json", PCIE, Status.WARN, "action: monitor"),
    ("nvml_nvlink_recovery.json", nh.evaluate_node_nvlink, Status.FAIL, "action: reset"),
    ("nvml_nvlink_crc_only.json", nh.evaluate_node_nvlink, Status.WARN, "action: monitor"),
]


@pytest.mark.parametrize(("recording", "judge", "status", "said"), FAULTS, ids=[f[0] for f in FAULTS])
def test_probe_gpu_nvml_each_faulty_dump_fails_its_check_naming_the_action(recording, judge, status, said):
    verdict = judge(*node(nvml_reading(recording)), None)
    assert verdict.status is status and said in verdict.summary, verdict.summary
    assert verdict.remedy
    healthy = judge(*node(nvml_reading()), None)
    assert healthy.status is Status.PASS, healthy.summary


@pytest.mark.parametrize("recording", ["nvml_h200_idle.json", "nvml_h200_busy.json"])
def test_probe_gpu_nvml_captured_h200_passes_every_judge(recording):
    from rlcheck.preflight.gpu import HEALTH_JUDGES

    facts, obs = node(nvml_reading(recording))
    assert [j(facts, obs, None).status for j in HEALTH_JUDGES] == [Status.PASS] * len(HEALTH_JUDGES)


def test_probe_gpu_nvml_clock_and_link_boundaries():
    base = nvml_reading("nvml_h200_busy.json").gpus[0]


    def clocks(**changes):
        return nl._clock_faults(dataclasses.replace(base, **changes))

    assert clocks(mem_clock_mhz=2881) == ([], []) and clocks(mem_clock_mhz=2880)[0]  # 0.9 x 3201 = 2880.9
    assert clocks(throttle=(), sm_clock_mhz=990) == ([], []) and clocks(throttle=(), sm_clock_mhz=989)[0]
    assert clocks(throttle=("Idle",), sm_clock_mhz=345) == ([], [])  # idle: a low SM clock is expected
    assert clocks(throttle=("Applications Clocks Setting",), sm_clock_mhz=1980) == ([], [])

    def link(**changes):
        return nl._link_faults(dataclasses.replace(base, **changes))

    assert link() == ([], []) and link(pcie_width=15)[0]
    assert link(throttle=("Idle",), pcie_gen=1) == ([], [])  # idle links drop their generation
    assert link(pcie_gen=4)[0]


def test_probe_gpu_nvml_unread_clocks_and_links_are_unknown():
    facts, obs = node(nvml_reading())


    blank = dataclasses.replace(obs.health.gpus[0], sm_clock_max_mhz=None, mem_clock_max_mhz=None,
                                pcie_width_max=None, pcie_gen_max=None)
    obs = dataclasses.replace(obs, health=dataclasses.replace(obs.health, gpus=(blank,)))
    assert CLOCKS(facts, obs, None).status is Status.UNKNOWN and PCIE(facts, obs, None).status is Status.UNKNOWN


def test_probe_gpu_nvml_nvidia_smi_fallback_reads_clocks_and_links():
    from tests.gpu_health_recordings import reading

    (gpu,) = reading().gpus
    assert (gpu.sm_clock_mhz, gpu.sm_clock_max_mhz, gpu.mem_clock_mhz, gpu.mem_clock_max_mhz) == (450, 1980, 3201, 3201)
    assert (gpu.pcie_gen, gpu.pcie_gen_max, gpu.pcie_gen_gpu_max, gpu.pcie_width, gpu.pcie_width_max) == \
        (5, 5, 5, 16, 16)
