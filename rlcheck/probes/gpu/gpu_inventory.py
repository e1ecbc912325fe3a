"""Does this machine show the GPUs it is judged as? A declared hardware profile is a claim, verified here.

`--hardware=h200` says "this is an H200 node with 8 GPUs". A node whose driver does not answer, that shows no GPU,
fewer GPUs than the profile or another model is not that node: FAIL, naming what was seen (the driver's own words,
the Xid lines of the kernel log) and what to do. With `--hardware=auto` nothing was claimed: a driver that is present
but does not answer is UNKNOWN (never "no GPU here"). Only a machine with no NVIDIA device and no declared profile
skips the GPU checks.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from rlcheck.data_types import refuse_unknown_keys
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.node.gpu_health import PCI_DEVICES, count_pci_gpus
from rlcheck.probes.node.gpu_kernel_log import parse_kernel_log, read_kernel_log
from rlcheck.probes.node.gpus import GpuInfo, read_gpus
from rlcheck.verdict import Status, Verdict

DRIVER_NODES = (Path("/dev/nvidiactl"), Path("/proc/driver/nvidia/version"))
"""Where a loaded NVIDIA kernel driver shows itself to a process (a container given GPUs sees both)."""
CONTAINER_MARKERS = (Path("/.dockerenv"), Path("/run/.containerenv"))
XID_SHOWN = 3
REBOOT = ("Drain the node and reboot it; if the driver still does not answer, reinstall the NVIDIA driver (and its "
          "kernel module for the running kernel), then run the preflight again before returning the node")
MISSING = ("Drain the node: a GPU the driver does not list has failed or fallen off the bus (reboot; if it stays "
           "missing, replace it), or the job's GPUs are hidden (CUDA_VISIBLE_DEVICES, the pod's nvidia.com/gpu limit)")
WRONG = ("Judge the node with the profile of the GPUs it has (--hardware=NAME, or auto), or move the job to nodes of "
         "the declared hardware")
UNSEEN = ("Give the pod the node's GPUs (nvidia.com/gpu limits, or the NVIDIA runtime class so that "
          "NVIDIA_VISIBLE_DEVICES is honoured), or run rlcheck on the node itself")
CLIENT = ("If this machine is only a Ray client or login node (the GPU nodes are judged through --ray-address), say "
          "so with --no-local-gpus; otherwise fix or drain it")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Inventory:
    """What this machine shows of its NVIDIA GPUs."""

    gpus: tuple[GpuInfo, ...]
    source: str
    """Which tool answered, or why none was asked."""
    error: str = ""
    """The driver's own words when it did not answer (nvidia-smi's exit and output, a timeout); '' when it did."""
    pci_gpus: int | None = None
    """NVIDIA GPUs on the PCI bus (sysfs); None when sysfs could not be read."""
    driver_nodes: tuple[str, ...] = ()
    """Which of DRIVER_NODES exist (a loaded driver this process can reach)."""
    in_container: bool = False
    """A container marker exists: a process here may be denied the node's GPUs by its runtime."""
    xids: tuple[str, ...] = ()
    """Xid lines of the kernel log, newest last (what the driver said before it stopped answering)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Inventory:
        """A recorded reading; ValueError naming a key this rlcheck does not know."""
        refuse_unknown_keys(data, dataclasses.fields(cls), "inventory")
        return cls(**{**data, "gpus": tuple(GpuInfo(**g) for g in data.get("gpus", ())),
                      "driver_nodes": tuple(data.get("driver_nodes", ())), "xids": tuple(data.get("xids", ()))})


def collect_inventory(timeout_s: float = 20.0, *, pci_dir: Path = PCI_DEVICES,
                      driver_nodes: tuple[Path, ...] = DRIVER_NODES,
                      container_markers: tuple[Path, ...] = CONTAINER_MARKERS) -> Inventory:
    """Read this machine: nvidia-smi (or torch), the PCI bus, the driver's device nodes, the kernel log's Xids."""
    reading = read_gpus(timeout_s)
    xids: tuple[str, ...] = ()
    if reading.error or not reading.gpus:  # the kernel log only matters when the driver did not answer in full
        log, _, _ = read_kernel_log(min(5.0, timeout_s))
        xids = tuple(e.line for e in parse_kernel_log(log)[0])
    return Inventory(gpus=reading.gpus, source=reading.source, error=" ".join(reading.error.split()),
                     pci_gpus=count_pci_gpus(pci_dir), driver_nodes=tuple(str(p) for p in driver_nodes if p.exists()),
                     xids=xids, in_container=any(p.exists() for p in container_markers)
                     or "KUBERNETES_SERVICE_HOST" in os.environ)


def _seen(inv: Inventory) -> str:
    bus = "unread" if inv.pci_gpus is None else str(inv.pci_gpus)
    driver = ", ".join(inv.driver_nodes) or "none"
    xid = f"; kernel log: {' | '.join(inv.xids[-XID_SHOWN:])}" if inv.xids else ""
    return f"NVIDIA GPUs on the PCI bus: {bus}; driver device nodes: {driver}{xid}"


def _details(inv: Inventory) -> str:
    return f"read with {inv.source}; {_seen(inv)}"


def _claim(profile: HardwareProfile) -> str:
    return f"--hardware={profile.name} declares {profile.gpus_per_node} x {profile.gpu_model} per node"


def _no_gpu(inv: Inventory, profile: HardwareProfile | None, declared: bool) -> Verdict:
    """No GPU listed and no driver error: a machine without NVIDIA devices, or one whose GPUs this process cannot
    reach."""
    base = {"details": _details(inv)}
    unseen = not inv.driver_nodes and inv.in_container and (bool(inv.pci_gpus) or declared)
    if unseen:  # no driver interface in this container: a runtime that did not give it the GPUs, not a dead node
        bus = f"{inv.pci_gpus} NVIDIA GPU(s) on the PCI bus" if inv.pci_gpus else "a container"
        return Verdict(**base, status=Status.UNKNOWN, remedy=UNSEEN,
                       summary=f"this process cannot see the node's GPUs: {bus}, but no NVIDIA driver is reachable "
                               f"here ({inv.source})")
    if inv.pci_gpus:  # on the host itself: the driver is not loaded, or is loaded and lists none of them
        lists = "the driver lists none" if inv.driver_nodes else "no NVIDIA driver is loaded"
        return Verdict(**base, status=Status.FAIL if declared else Status.UNKNOWN, remedy=REBOOT,
                       summary=f"{inv.pci_gpus} NVIDIA GPU(s) on the PCI bus, {lists} ({inv.source})")
    if declared and profile is not None:
        return Verdict(**base, status=Status.FAIL, remedy=CLIENT,
                       summary=f"{_claim(profile)}; this machine shows no GPU and no NVIDIA device ({inv.source})")
    return Verdict(**base, status=Status.SKIP, summary="no NVIDIA device on this machine and no GPU profile "
                                                       f"declared: not a GPU node ({inv.source})")


def evaluate_inventory(inv: Inventory, profile: HardwareProfile | None, *, declared: bool) -> Verdict:
    """declared: the profile was named by the user (--hardware NAME), a claim to verify; False for auto / none."""
    base = {"details": _details(inv)}
    if inv.error:
        words = f"the NVIDIA driver does not answer: {inv.error}"
        if declared and profile is not None:
            return Verdict(**base, status=Status.FAIL, remedy=REBOOT, summary=f"{_claim(profile)}; {words}")
        return Verdict(**base, status=Status.UNKNOWN, remedy=REBOOT,
                       summary=f"{words}: this machine's GPUs could not be read, so nothing about them is known")
    if not inv.gpus:
        return _no_gpu(inv, profile, declared)
    if profile is None:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"{len(inv.gpus)} GPU(s) ({inv.gpus[0].name}) and no hardware profile to hold them to")
    return _against_profile(inv, profile, declared)


def _against_profile(inv: Inventory, profile: HardwareProfile, declared: bool) -> Verdict:
    base = {"details": _details(inv)}
    seen = f"{len(inv.gpus)} x {', '.join(sorted({g.name for g in inv.gpus}))}"
    if other := sorted({g.name for g in inv.gpus if not profile.matches_gpu_name(g.name)}):
        return Verdict(**base, status=Status.FAIL, remedy=WRONG,
                       summary=f"{_claim(profile)}; this machine shows {seen}: {', '.join(other)} is not "
                               f"{profile.gpu_model}")
    if inv.pci_gpus is not None and inv.pci_gpus > len(inv.gpus) and not inv.in_container:
        return Verdict(**base, status=Status.FAIL, remedy=MISSING,
                       summary=f"{inv.pci_gpus} NVIDIA GPUs on the PCI bus, the driver lists {len(inv.gpus)} ({seen})")
    if not declared:
        return Verdict(**base, status=Status.PASS,
                       summary=f"{seen} answer the driver (detected as {profile.name}; a detected profile is not held "
                               f"to its {profile.gpus_per_node} GPUs per node)")
    if len(inv.gpus) < profile.gpus_per_node:
        return Verdict(**base, status=Status.FAIL, remedy=MISSING,
                       summary=f"{_claim(profile)}; this machine shows {len(inv.gpus)} of them ({seen})")
    if len(inv.gpus) > profile.gpus_per_node:
        return Verdict(**base, status=Status.WARN,
                       summary=f"{_claim(profile)}; this machine shows more: {seen} (a profile of this shape judges "
                               "its floors better)")
    return Verdict(**base, status=Status.PASS, summary=f"{seen}, as {_claim(profile)}")
