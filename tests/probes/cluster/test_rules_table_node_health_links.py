"""Rule table for one node's GPU clocks and PCIe links (rlcheck.probes.cluster.node_health_links): the whole verdict
on both sides of each line (memory clock at 90% of its maximum, a busy SM clock at half of it, a link below its
lanes or generation, a slot below the GPU's generation), what idle excuses and what it does not, the reasons NVML
gives for a low clock, several GPUs, and GPUs that report nothing."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.probes.cluster import node_health_links as nl
from rlcheck.probes.cluster.node_health import ACTION_TEXT
from rlcheck.probes.node.gpu_health import GpuHealth, HealthReading
from rlcheck.verdict import Status
from tests.gpu_health_recordings import node

A, B = "00000000:18:00.0", "00000000:2A:00.0"
HELD = "Applications Clocks Setting"
# a busy GPU at its clocks and its full link
OK = GpuHealth(bus_id=A, sm_clock_mhz=1980, sm_clock_max_mhz=2000, mem_clock_mhz=1000, mem_clock_max_mhz=1000,
               pcie_gen=5, pcie_gen_max=5, pcie_gen_gpu_max=5, pcie_width=16, pcie_width_max=16)
FACTS, _ = node(None)
WHERE = FACTS.where


def _judge(judge, *gpus: GpuHealth):
    facts, obs = node(HealthReading(source="nvml", gpus=gpus))
    verdict = judge(facts, obs, None)
    assert verdict.node == facts.label
    return verdict


def _gpu(bus_id: str = A, **changes) -> GpuHealth:
    return dataclasses.replace(OK, bus_id=bus_id, **changes)


CLOCK_ROWS = [
    # memory clock: 90% of 1000 MHz is the line, idle or busy
    ((_gpu(mem_clock_mhz=900),), Status.PASS,
     f"{WHERE}: 1 GPU(s) at their clocks: memory 900 of 1000 MHz, SM 1980 of 2000 MHz"),
    ((_gpu(mem_clock_mhz=899, throttle=("Idle",)),), Status.FAIL,
     f"{WHERE}: clocks stuck low: GPU {A}: memory clock 899 of 1000 MHz (action: reset)"),
    # a busy SM clock: half of 2000 MHz is the line
    ((_gpu(sm_clock_mhz=1000),), Status.PASS,
     f"{WHERE}: 1 GPU(s) at their clocks: memory 1000 of 1000 MHz, SM 1000 of 2000 MHz"),
    ((_gpu(sm_clock_mhz=999),), Status.FAIL,
     f"{WHERE}: clocks stuck low: GPU {A}: SM clock 999 of 2000 MHz while not idle (action: reset)"),
    ((_gpu(sm_clock_mhz=999, throttle=(HELD,)),), Status.FAIL,
     f"{WHERE}: clocks stuck low: GPU {A}: SM clock 999 of 2000 MHz while not idle, held by the {HELD} "
     "(action: reset)"),
    # a reason NVML gives accounts for a low clock; held below the maximum is a WARN
    ((_gpu(sm_clock_mhz=500, throttle=("SW Power Cap",)),), Status.PASS,
     f"{WHERE}: 1 GPU(s) at their clocks: memory 1000 of 1000 MHz, SM 500 of 2000 MHz"),
    ((_gpu(sm_clock_mhz=500, throttle=("Sync Boost", HELD)),), Status.WARN,
     f"{WHERE}: GPU {A}: SM clock 500 of 2000 MHz, held by the {HELD} (action: monitor; reset the clock settings)"),
    ((_gpu(sm_clock_mhz=1999, throttle=(HELD,)),), Status.WARN,
     f"{WHERE}: GPU {A}: SM clock 1999 of 2000 MHz, held by the {HELD} (action: monitor; reset the clock settings)"),
    ((_gpu(sm_clock_mhz=2000, throttle=(HELD,)),), Status.PASS,
     f"{WHERE}: 1 GPU(s) at their clocks: memory 1000 of 1000 MHz, SM 2000 of 2000 MHz"),
    # idle: a low SM clock is expected, held or not
    ((_gpu(sm_clock_mhz=450, throttle=("Idle", HELD)),), Status.PASS,
     f"{WHERE}: 1 GPU(s) at their clocks: memory 1000 of 1000 MHz, SM 450 of 2000 MHz (idle)"),
    # no memory clock read: judged on the SM clock alone; the first GPU is the one shown
    ((_gpu(mem_clock_mhz=None, mem_clock_max_mhz=None), _gpu(B, sm_clock_mhz=300, throttle=("Idle",))), Status.PASS,
     f"{WHERE}: 2 GPU(s) at their clocks: SM 1980 of 2000 MHz on the first"),
    # maxima read, current clocks not: nothing to judge, and no 'None' shown
    ((_gpu(mem_clock_mhz=None, sm_clock_mhz=None), _gpu(B, mem_clock_max_mhz=0, sm_clock_max_mhz=None,
                                                        sm_clock_mhz=1)), Status.PASS,
     f"{WHERE}: 1 GPU(s) at their clocks: current clocks not read"),
    ((_gpu(sm_clock_mhz=None, throttle=("Idle",)), _gpu(B)), Status.PASS,
     f"{WHERE}: 2 GPU(s) at their clocks: memory 1000 of 1000 MHz (idle) on the first"),
    ((_gpu(sm_clock_mhz=100), _gpu(B, mem_clock_mhz=10, sm_clock_mhz=10)), Status.FAIL,
     f"{WHERE}: clocks stuck low: GPU {A}: SM clock 100 of 2000 MHz while not idle; GPU {B}: memory clock 10 of "
     "1000 MHz, SM clock 10 of 2000 MHz while not idle (action: reset)"),
    ((_gpu(sm_clock_mhz=1500, throttle=(HELD,)), _gpu(B, mem_clock_mhz=10)), Status.FAIL,
     f"{WHERE}: clocks stuck low: GPU {B}: memory clock 10 of 1000 MHz (action: reset)"),
    ((_gpu(sm_clock_mhz=1500, throttle=(HELD,)), _gpu(B, sm_clock_mhz=1900, throttle=(HELD,))), Status.WARN,
     f"{WHERE}: GPU {A}: SM clock 1500 of 2000 MHz, held by the {HELD}; GPU {B}: SM clock 1900 of 2000 MHz, held by "
     f"the {HELD} (action: monitor; reset the clock settings)"),
    ((_gpu(sm_clock_max_mhz=None, mem_clock_max_mhz=None),), Status.UNKNOWN, f"{WHERE}: no GPU reports its clocks"),
]


@pytest.mark.parametrize(("gpus", "status", "summary"), CLOCK_ROWS)
def test_clocks(gpus, status, summary):
    verdict = _judge(nl.evaluate_node_clocks, *gpus)
    assert (verdict.status, verdict.summary) == (status, summary)
    assert verdict.remedy == (nl.CLOCK_REMEDY if status in (Status.FAIL, Status.WARN) else "")
    assert verdict.details == "read with nvml; clock-event reasons: " + "; ".join(
        ", ".join(g.throttle) or "none" for g in gpus)


DOWN = "(action: reboot, then isolate if it recurs)"
PCIE_ROWS = [
    ((_gpu(),), Status.PASS, f"{WHERE}: 1 GPU(s) at full PCIe width: x16 of x16, Gen5 of Gen5"),
    ((_gpu(pcie_width=8, throttle=("Idle",)),), Status.FAIL,
     f"{WHERE}: PCIe link downtrained: GPU {A}: link width x8 of x16 {DOWN}"),
    ((_gpu(pcie_gen=4),), Status.FAIL,
     f"{WHERE}: PCIe link downtrained: GPU {A}: PCIe Gen4 of Gen5 while not idle {DOWN}"),
    ((_gpu(pcie_gen=1, throttle=("Idle",)), _gpu(B)), Status.PASS,
     f"{WHERE}: 2 GPU(s) at full PCIe width: x16 of x16, Gen1 of Gen5 (idle: the link may drop its generation to "
     "save power) on the first"),
    ((_gpu(pcie_gen_max=4),), Status.WARN,
     f"{WHERE}: GPU {A}: the slot limits it to Gen4 (the GPU supports Gen5) (action: monitor)"),
    ((_gpu(), _gpu(B, pcie_gen=3, pcie_gen_max=4, pcie_width=4)), Status.FAIL,
     f"{WHERE}: PCIe link downtrained: GPU {B}: link width x4 of x16, PCIe Gen3 of Gen4 while not idle {DOWN}"),
    ((_gpu(pcie_gen_max=4), _gpu(B, pcie_gen_max=3, pcie_gen=3)), Status.WARN,
     f"{WHERE}: GPU {A}: the slot limits it to Gen4 (the GPU supports Gen5); GPU {B}: the slot limits it to Gen3 "
     "(the GPU supports Gen5) (action: monitor)"),
    # unread values are no fault; a GPU with neither maximum is not counted
    ((_gpu(pcie_width=None, pcie_gen=None, pcie_gen_gpu_max=None), _gpu(B, pcie_width_max=None, pcie_gen_max=None)),
     Status.PASS, f"{WHERE}: 1 GPU(s) at full PCIe width: the current link not read"),
    ((_gpu(pcie_width=None, pcie_gen=2, throttle=("Idle",)),), Status.PASS,
     f"{WHERE}: 1 GPU(s) at full PCIe width: Gen2 of Gen5 (idle: the link may drop its generation to save power)"),
    ((_gpu(pcie_width=8), _gpu(B, pcie_width=4)), Status.FAIL,
     f"{WHERE}: PCIe link downtrained: GPU {A}: link width x8 of x16; GPU {B}: link width x4 of x16 {DOWN}"),
    # a GPU that reports its generation only is judged by it
    ((_gpu(), _gpu(B, pcie_width_max=None, pcie_width=None)), Status.PASS,
     f"{WHERE}: 2 GPU(s) at full PCIe width: x16 of x16, Gen5 of Gen5 on the first"),
    ((_gpu(B, pcie_width_max=None, pcie_width=None, pcie_gen=3),), Status.FAIL,
     f"{WHERE}: PCIe link downtrained: GPU {B}: PCIe Gen3 of Gen5 while not idle {DOWN}"),
    ((_gpu(pcie_width_max=None, pcie_gen_max=None),), Status.UNKNOWN, f"{WHERE}: no GPU reports its PCIe link"),
]


@pytest.mark.parametrize(("gpus", "status", "summary"), PCIE_ROWS)
def test_pcie(gpus, status, summary):
    verdict = _judge(nl.evaluate_node_pcie, *gpus)
    assert (verdict.status, verdict.summary) == (status, summary)
    remedy = {Status.FAIL: nl.PCIE_REMEDY, Status.WARN: ACTION_TEXT["monitor"]}.get(status, "")
    assert verdict.remedy == remedy
    assert verdict.details == "read with nvml; current/max: " + "; ".join(
        f"GPU {g.bus_id}: Gen{g.pcie_gen}/{g.pcie_gen_max} x{g.pcie_width}/{g.pcie_width_max}" for g in gpus)


@pytest.mark.parametrize("judge", [nl.evaluate_node_clocks, nl.evaluate_node_pcie])
def test_a_node_whose_gpus_were_not_read_is_unknown(judge):
    facts, obs = node(HealthReading(source="nvidia-smi -q", error="nvidia-smi -q ended with exit 9"))
    verdict = judge(facts, obs, None)
    assert (verdict.status, verdict.summary) == (Status.UNKNOWN,
                                                 f"{WHERE}: could not read GPU health: nvidia-smi -q ended with exit 9")
