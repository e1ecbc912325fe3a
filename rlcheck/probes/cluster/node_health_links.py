"""Judge one node's GPU clocks and PCIe links (rlcheck.probes.node.gpu_health readings): pure functions.

Both read current against maximum, and both know what idle does: an idle GPU drops its SM clock (the captured
H200: 450 of 1980 MHz with the Idle reason active) and many boards drop the PCIe generation at idle to save power,
so a low SM clock or generation counts only while the GPU is not idle. HBM runs at its maximum clock idle or busy
(the captured H200: 3201 of 3201 MHz at idle), and the link width does not change with load: a memory clock or
a lane count below its maximum is a fault at any time.
"""

from __future__ import annotations

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.cluster.node_health import ACTION_TEXT, preamble
from rlcheck.probes.node.collect import NodeObservation
from rlcheck.probes.node.gpu_health import GpuHealth
from rlcheck.verdict import Status, Verdict

SM_LOW_FRACTION = 0.5
"""A busy GPU's SM clock below half its maximum with no reason NVML gives: held low (a lock, a stuck P-state).
Power capping under a full bf16 GEMM kept the captured H200 at 1455 of 1980 MHz (73%, SW Power Cap), above this."""
MEM_LOW_FRACTION = 0.9
EXPLAINED = frozenset({"Idle", "SW Power Cap", "HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown",
                       "SW Thermal Slowdown", "Sync Boost"})
"""Clock-event reasons that account for a low SM clock (the throttle check judges the thermal and HW ones)."""
HELD = "Applications Clocks Setting"
CLOCK_REMEDY = ("Reset the clock settings (nvidia-smi -rgc; nvidia-smi -rmc; nvidia-smi -rac); if the clock stays low, "
                "drain the node and reset the GPU (nvidia-smi -r) or reboot it")
PCIE_REMEDY = ("Drain the node: a link that trained below its lanes or generation halves host-device copies and "
               "GPUDirect traffic; reboot to retrain it, and have the GPU or riser reseated or serviced if it recurs")


def _idle(gpu: GpuHealth) -> bool:
    return "Idle" in gpu.throttle


def _clock_faults(gpu: GpuHealth) -> tuple[list[str], list[str]]:
    """(FAIL reasons, WARN reasons) for one GPU's clocks."""
    fail, warn = [], []
    if gpu.mem_clock_mhz is not None and gpu.mem_clock_max_mhz and \
            gpu.mem_clock_mhz < MEM_LOW_FRACTION * gpu.mem_clock_max_mhz:
        fail.append(f"memory clock {gpu.mem_clock_mhz} of {gpu.mem_clock_max_mhz} MHz")
    if gpu.sm_clock_mhz is not None and gpu.sm_clock_max_mhz and not _idle(gpu):
        held = f", held by the {HELD}" if HELD in gpu.throttle else ""
        if gpu.sm_clock_mhz < SM_LOW_FRACTION * gpu.sm_clock_max_mhz and not set(gpu.throttle) & EXPLAINED:
            fail.append(f"SM clock {gpu.sm_clock_mhz} of {gpu.sm_clock_max_mhz} MHz while not idle{held}")
        elif held and gpu.sm_clock_mhz < gpu.sm_clock_max_mhz:
            warn.append(f"SM clock {gpu.sm_clock_mhz} of {gpu.sm_clock_max_mhz} MHz{held}")
    return fail, warn


def _of(text: str, now: int | None, top: int | None) -> str:
    """text filled with the current value and its maximum when both were read, else '' (never 'None')."""
    return text.format(now, top) if top and now is not None else ""


def _clocks_seen(gpus: tuple[GpuHealth, ...]) -> str:
    first = gpus[0]
    seen = [_of("memory {} of {} MHz", first.mem_clock_mhz, first.mem_clock_max_mhz),
            _of("SM {} of {} MHz", first.sm_clock_mhz, first.sm_clock_max_mhz)]
    return (", ".join(x for x in seen if x) or "current clocks not read") + (" (idle)" if _idle(first) else "") + \
        (" on the first" if len(gpus) > 1 else "")


def evaluate_node_clocks(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    health = preamble(node, obs, gpus=True)
    if isinstance(health, Verdict):
        return health
    base = {"node": node.label, "details": f"read with {health.source}; clock-event reasons: "
                                           f"{'; '.join(', '.join(g.throttle) or 'none' for g in health.gpus)}"}
    read = [g for g in health.gpus if g.sm_clock_max_mhz or g.mem_clock_max_mhz]
    if not read:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: no GPU reports its clocks")
    fails = [f"GPU {g.bus_id}: {', '.join(p)}" for g in read if (p := _clock_faults(g)[0])]
    if fails:
        return Verdict(**base, status=Status.FAIL, remedy=CLOCK_REMEDY,
                       summary=f"{node.where}: clocks stuck low: {'; '.join(fails)} (action: reset)")
    warns = [f"GPU {g.bus_id}: {', '.join(p)}" for g in read if (p := _clock_faults(g)[1])]
    if warns:
        return Verdict(**base, status=Status.WARN, remedy=CLOCK_REMEDY,
                       summary=f"{node.where}: {'; '.join(warns)} (action: monitor; reset the clock settings)")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: {len(read)} GPU(s) at their clocks: "
                                                       f"{_clocks_seen(tuple(read))}")


def _link_faults(gpu: GpuHealth) -> tuple[list[str], list[str]]:
    """(FAIL reasons, WARN reasons) for one GPU's PCIe link."""
    fail, warn = [], []
    if gpu.pcie_width is not None and gpu.pcie_width_max and gpu.pcie_width < gpu.pcie_width_max:
        fail.append(f"link width x{gpu.pcie_width} of x{gpu.pcie_width_max}")
    if gpu.pcie_gen is not None and gpu.pcie_gen_max and gpu.pcie_gen < gpu.pcie_gen_max and not _idle(gpu):
        fail.append(f"PCIe Gen{gpu.pcie_gen} of Gen{gpu.pcie_gen_max} while not idle")
    if gpu.pcie_gen_max and gpu.pcie_gen_gpu_max and gpu.pcie_gen_max < gpu.pcie_gen_gpu_max:
        warn.append(f"the slot limits it to Gen{gpu.pcie_gen_max} (the GPU supports Gen{gpu.pcie_gen_gpu_max})")
    return fail, warn


def evaluate_node_pcie(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    health = preamble(node, obs, gpus=True)
    if isinstance(health, Verdict):
        return health
    links = "; ".join(f"GPU {g.bus_id}: Gen{g.pcie_gen}/{g.pcie_gen_max} x{g.pcie_width}/{g.pcie_width_max}"
                      for g in health.gpus)
    base = {"node": node.label, "details": f"read with {health.source}; current/max: {links}"}
    read = [g for g in health.gpus if g.pcie_width_max or g.pcie_gen_max]
    if not read:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: no GPU reports its PCIe link")
    fails = [f"GPU {g.bus_id}: {', '.join(p)}" for g in read if (p := _link_faults(g)[0])]
    if fails:
        return Verdict(**base, status=Status.FAIL, remedy=PCIE_REMEDY,
                       summary=f"{node.where}: PCIe link downtrained: {'; '.join(fails)} (action: reboot, then "
                               "isolate if it recurs)")
    warns = [f"GPU {g.bus_id}: {', '.join(p)}" for g in read if (p := _link_faults(g)[1])]
    if warns:
        return Verdict(**base, status=Status.WARN, remedy=ACTION_TEXT["monitor"],
                       summary=f"{node.where}: {'; '.join(warns)} (action: monitor)")
    first = read[0]
    seen = [_of("x{} of x{}", first.pcie_width, first.pcie_width_max),
            _of("Gen{} of Gen{}", first.pcie_gen, first.pcie_gen_max)]
    idle = " (idle: the link may drop its generation to save power)" \
        if first.pcie_gen is not None and first.pcie_gen != first.pcie_gen_max else ""
    return Verdict(**base, status=Status.PASS,
                   summary=f"{node.where}: {len(read)} GPU(s) at full PCIe width: "
                           f"{', '.join(x for x in seen if x) or 'the current link not read'}{idle}"
                           f"{' on the first' if len(read) > 1 else ''}")
