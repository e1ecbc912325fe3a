"""Judge one node's GPU hardware health (rlcheck.probes.node.gpu_health) as a cluster-health tool would: pure functions.

Each evaluate_node_* has the per-node judge shape (NodeFacts, NodeObservation, profile) -> Verdict. A node whose
rlcheck predates the health reading, or whose GPUs or kernel log could not be read, is UNKNOWN naming why.
"""

from __future__ import annotations

import functools
import tomllib
from collections import Counter
from pathlib import Path

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.cluster.node_evaluate import is_gpu_node
from rlcheck.probes.node.collect import NodeObservation
from rlcheck.probes.node.gpu_health import GpuHealth, HealthReading, XidEvent
from rlcheck.verdict import Status, Verdict

XID_TABLE = Path(__file__).resolve().parents[2] / "data" / "xid.toml"
ACTION_ORDER = ("monitor", "restart-app", "reset", "isolate", "reboot")
"""Weakest to strongest: a node with several Xids needs the strongest of their actions."""
ACTION_TEXT = {"monitor": "watch the node; no action needed yet",
               "restart-app": "restart the job (usually the application's own fault; repeated on one GPU: "
                              "treat as hardware)",
               "reset": "drain the node and reset the GPU (nvidia-smi -r, or reboot the node)",
               "isolate": "drain the node and have it serviced (the GPU has no spare memory rows left, or the "
                          "fault persists after a reset)",
               "reboot": "drain the node and reboot it; if it recurs, have it serviced"}
RECOVERY_ACTIONS = {"node reboot required": "reboot", "drain p2p": "isolate", "gpu reset required": "reset"}
"""What an Xid 154 line asks for, by the words the driver prints."""
HW_THROTTLE = ("HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown")
SW_THROTTLE = ("SW Thermal Slowdown",)
NVLINK_FAIL_COUNTERS = ("Recovery Errors",)
"""A link that went through recovery retrained under load; CRC and replay errors are retried by the link itself."""
NOT_IN_TABLE = "not in rlcheck's Xid table"
OLD_NODE = "this node's rlcheck does not report GPU health (an older rlcheck in its image)"


@functools.cache
def xid_table(path: Path = XID_TABLE) -> dict[int, dict[str, str]]:
    """Xid code -> {name, severity, action, nvidia_action} from rlcheck/data/xid.toml."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))["xid"]
    table = {int(code): entry for code, entry in raw.items()}
    for code, entry in table.items():
        if entry.get("severity") not in ("fail", "warn") or entry.get("action") not in ACTION_ORDER:
            raise ValueError(f"{path}: Xid {code} has severity {entry.get('severity')!r} and action "
                             f"{entry.get('action')!r}; allowed: fail|warn and {'|'.join(ACTION_ORDER)}")
    return table


def preamble(node: NodeFacts, obs: NodeObservation, *, gpus: bool) -> Verdict | HealthReading:
    """The health reading to judge, or the verdict that ends judging (CPU node, older rlcheck, unread GPUs)."""
    if not is_gpu_node(node, obs):
        return Verdict(node=node.label, status=Status.SKIP, summary=f"{node.where}: CPU-only node: no GPU to judge")
    if obs.health is None:
        return Verdict(node=node.label, status=Status.UNKNOWN, summary=f"{node.where}: {OLD_NODE}")
    if gpus and obs.health.error:
        return Verdict(node=node.label, status=Status.UNKNOWN, details=f"read with {obs.health.source}",
                       summary=f"{node.where}: could not read GPU health: {obs.health.error}")
    return obs.health


def xid_action(event: XidEvent, table: dict[int, dict[str, str]]) -> str:
    if event.code == 154:
        lowered = event.line.lower()
        return next((a for words, a in RECOVERY_ACTIONS.items() if words in lowered), table[154]["action"])
    return table[event.code]["action"]


def evaluate_node_xid(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    health = preamble(node, obs, gpus=False)
    if isinstance(health, Verdict):
        return health
    base = {"node": node.label, "details": f"kernel log read with {health.kernel_log or 'nothing'}"}
    if health.kernel_log_error:
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"{node.where}: could not read the kernel log for Xid errors: {health.kernel_log_error}",
                       remedy="Run rlcheck where the kernel log is readable (CAP_SYSLOG, or kernel.dmesg_restrict=0), "
                              "or read `dmesg | grep Xid` on the host")
    if not health.xids:
        return Verdict(**base, status=Status.PASS, summary=f"{node.where}: no Xid error in the kernel log")
    table = xid_table()
    counts = Counter((e.code, e.bus_id) for e in health.xids)
    known = [e for e in health.xids if e.code in table]
    failing = [e for e in known if table[e.code]["severity"] == "fail"]
    listed = "; ".join(f"Xid {code} x{n} on PCI {bus} ({table.get(code, {}).get('name', NOT_IN_TABLE)})"
                       for (code, bus), n in sorted(counts.items()))
    details = f"{base['details']}; newest: {health.xids[-1].line}"
    if failing:
        action = max((xid_action(e, table) for e in failing), key=ACTION_ORDER.index)
        return Verdict(node=node.label, details=details, status=Status.FAIL, remedy=ACTION_TEXT[action],
                       summary=f"{node.where}: {listed}: {action}")
    actions = {xid_action(e, table) for e in known} or {"monitor"}
    action = max(actions, key=ACTION_ORDER.index)
    return Verdict(node=node.label, details=details, status=Status.WARN, remedy=ACTION_TEXT[action],
                   summary=f"{node.where}: {listed}: {action}")


def _ecc_problems(gpu: GpuHealth) -> tuple[list[str], list[str]]:
    """(FAIL reasons, WARN reasons) for one GPU."""
    fail, warn = [], []
    if gpu.ecc_volatile_uncorrected:
        fail.append(f"{gpu.ecc_volatile_uncorrected} uncorrectable ECC error(s) since the driver loaded")
    if gpu.remap_failed:
        fail.append("row remapping failed (no spare row left)")
    if gpu.remap_pending:
        fail.append("a row remap waits for a GPU reset")
    if gpu.retired_pending:
        fail.append("a page retirement waits for a GPU reset")
    if gpu.ecc_aggregate_uncorrected and not fail:
        warn.append(f"{gpu.ecc_aggregate_uncorrected} uncorrectable ECC error(s) over its life")
    if gpu.retired_pages and not fail:
        warn.append(f"{gpu.retired_pages} page(s) retired for ECC errors")
    return fail, warn


def evaluate_node_ecc(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    health = preamble(node, obs, gpus=True)
    if isinstance(health, Verdict):
        return health
    base = {"node": node.label, "details": f"read with {health.source}"}
    unread = [g.bus_id for g in health.gpus if g.ecc_volatile_uncorrected is None and g.remap_pending is None
              and g.retired_pending is None]
    if not health.gpus or len(unread) == len(health.gpus):
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"{node.where}: no GPU reports ECC or row-remap state (ECC disabled, or N/A)")
    fails = [f"GPU {g.bus_id}: {', '.join(p)}" for g in health.gpus if (p := _ecc_problems(g)[0])]
    if fails:
        isolate = any(g.remap_failed for g in health.gpus)
        action = "isolate" if isolate else "reset"
        return Verdict(**base, status=Status.FAIL, remedy=ACTION_TEXT[action],
                       summary=f"{node.where}: {'; '.join(fails)} (action: {action})")
    warns = [f"GPU {g.bus_id}: {', '.join(p)}" for g in health.gpus if (p := _ecc_problems(g)[1])]
    if warns:
        return Verdict(**base, status=Status.WARN, remedy=ACTION_TEXT["monitor"],
                       summary=f"{node.where}: {'; '.join(warns)} (none pending now; action: monitor)")
    return Verdict(**base, status=Status.PASS,
                   summary=f"{node.where}: {len(health.gpus)} GPU(s): no uncorrectable ECC error, no pending or "
                           "failed row remap or page retirement")


def evaluate_node_throttle(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    health = preamble(node, obs, gpus=True)
    if isinstance(health, Verdict):
        return health
    base = {"node": node.label, "details": f"read with {health.source}"}
    hw = [f"GPU {g.bus_id}: {', '.join(r for r in g.throttle if r in HW_THROTTLE)}" for g in health.gpus
          if set(g.throttle) & set(HW_THROTTLE)]
    if hw:
        return Verdict(**base, status=Status.FAIL, summary=f"{node.where}: hardware clock slowdown active: "
                                                           f"{'; '.join(hw)} (action: reboot)",
                       remedy="Drain the node: check its cooling and power supply (HW slowdown means the board "
                              "asked the GPU to slow down); reboot, and have it serviced if it persists")
    warn = [f"GPU {g.bus_id}: SW Thermal Slowdown" for g in health.gpus if set(g.throttle) & set(SW_THROTTLE)]
    warn += [f"GPU {g.bus_id}: persistence mode off" for g in health.gpus if g.persistence is False]
    if warn:
        return Verdict(**base, status=Status.WARN, summary=f"{node.where}: {'; '.join(warn)} (action: monitor)",
                       remedy="Check the node's cooling (SW thermal slowdown); enable persistence mode "
                              "(nvidia-persistenced, or nvidia-smi -pm 1) so the driver stays loaded between jobs")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: {len(health.gpus)} GPU(s): no thermal or "
                                                       "power slowdown; persistence mode on")


def evaluate_node_nvlink(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    health = preamble(node, obs, gpus=True)
    if isinstance(health, Verdict):
        return health
    base = {"node": node.label, "details": "nvidia-smi nvlink -e, counters since the driver loaded"}
    bad = [(g.bus_id, link, name, n) for g in health.gpus for link, name, n in g.nvlink_errors]
    text = "; ".join(f"GPU {bus} link {link}: {n} {name}" for bus, link, name, n in bad)
    if any(name in NVLINK_FAIL_COUNTERS for _, _, name, _ in bad):
        return Verdict(**base, status=Status.FAIL, summary=f"{node.where}: {text} (action: reset)",
                       remedy="Drain the node and reset its GPUs; recurring link recovery needs the NVLink "
                              "hardware serviced (a collective over this link can hang or slow the whole job)")
    if bad:
        return Verdict(**base, status=Status.WARN, summary=f"{node.where}: {text} (action: monitor)",
                       remedy="Watch the counters; if they grow during a job, drain the node and have it serviced")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: no NVLink error counted on "
                                                       f"{len(health.gpus)} GPU(s)")


def evaluate_node_bus(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    health = preamble(node, obs, gpus=False)
    if isinstance(health, Verdict):
        return health
    base = {"node": node.label, "details": f"PCI: /sys/bus/pci/devices; GPUs read with {health.source}"}
    remedy = ACTION_TEXT["reboot"]
    if health.off_bus:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{node.where}: the kernel log says a GPU has fallen off the bus: "
                               f"{' | '.join(health.off_bus[-3:])} (action: reboot)")
    if health.pci_gpus is None or health.error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: cannot compare the GPUs on the PCI "
                       f"bus with those the driver answers for: {health.error or 'sysfs PCI devices unreadable'}")
    answering = len(health.gpus)
    if health.pci_gpus > answering:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{node.where}: {health.pci_gpus} NVIDIA GPUs on the PCI bus, the driver answers for "
                               f"{answering} (action: reboot)")
    if health.pci_gpus < answering:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: sysfs shows {health.pci_gpus} NVIDIA "
                       f"GPUs, the driver answers for {answering} (a VM or container hides PCI devices)")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: all {answering} GPU(s) on the PCI bus answer")
