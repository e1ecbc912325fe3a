"""GPU hardware health on one node: Xid events in the kernel log, ECC and row remapping, throttling, clocks, PCIe
links, NVLink errors.

Runs inside the per-node fan-out task (node.collect.collect_node), so it imports only the standard library
at module level. The GPUs are read through NVML first (rlcheck.probes.node.gpu_nvml: nvidia-ml-py in a bounded child
process, numbers without parsing text), and from `nvidia-smi -q` when NVML cannot answer (pynvml not installed in
the image, or the library failed): one call, every field this module needs, the same text on every driver branch
that rlcheck supports. Every child process is bounded by a deadline. The kernel log is read by
rlcheck.probes.node.gpu_kernel_log (dmesg, then journalctl -k).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlcheck.probes.node import gpu_nvml
from rlcheck.probes.node.gpu_kernel_log import XidEvent, budget, parse_kernel_log, read_kernel_log
from rlcheck.process import subproc

PCI_DEVICES = Path("/sys/bus/pci/devices")
NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")
"""PCI classes of a display (0x0300) and a 3D controller (0x0302): NVSwitches (0x0680) and audio do not count."""
GPU_HEADER = re.compile(r"GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-7])")
NVLINK_LINK = re.compile(r"\s*Link (?P<link>\d+):\s*(?P<rest>.*)")
NVLINK_COUNTER = re.compile(r"\s*(?P<name>[A-Za-z ]*Errors?)[^:]*:\s*(?P<value>\d+)")
"""Both layouts of `nvidia-smi nvlink -e`: 'Link 0: CRC Errors: 3' on one line, or 'Link 0:' then its counters."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GpuHealth:
    bus_id: str
    """PCI bus id as nvidia-smi prints it, e.g. 00000000:18:00.0."""
    persistence: bool | None = None
    """Persistence mode on; None when unread."""
    ecc_volatile_uncorrected: int | None = None
    """Uncorrectable ECC errors since the driver loaded (DRAM + SRAM, or 'Double Bit' total on older GPUs)."""
    ecc_aggregate_uncorrected: int | None = None
    """Uncorrectable ECC errors over the GPU's life."""
    retired_pending: bool | None = None
    """A page retirement waits for a GPU reset (pre-Ampere GPUs; None where the GPU remaps rows instead)."""
    remap_pending: bool | None = None
    """A row remap waits for a GPU reset (Ampere and later)."""
    remap_failed: bool | None = None
    """Row remapping failed: the GPU has no spare row left for a bad one."""
    throttle: tuple[str, ...] = ()
    """Clock event (throttle) reasons that are Active, as nvidia-smi names them."""
    nvlink_errors: tuple[tuple[int, str, int], ...] = ()
    """(link, counter, value) for every non-zero NVLink error counter."""
    retired_pages: int | None = None
    """Pages retired for ECC errors (single- plus double-bit causes); None where the GPU remaps rows instead."""
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    mem_clock_mhz: int | None = None
    mem_clock_max_mhz: int | None = None
    pcie_gen: int | None = None
    """PCIe link generation now (drops at idle on many boards to save power)."""
    pcie_gen_max: int | None = None
    """The highest generation this GPU and its slot can train to together."""
    pcie_gen_gpu_max: int | None = None
    """The highest generation the GPU itself supports (above pcie_gen_max: the slot or riser limits it)."""
    pcie_width: int | None = None
    """PCIe lanes now, e.g. 16."""
    pcie_width_max: int | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class HealthReading:
    source: str
    """Which tool read the GPUs, or why none was asked."""
    error: str = ""
    """Why the GPUs' health could not be read ('' when it was)."""
    gpus: tuple[GpuHealth, ...] = ()
    kernel_log: str = ""
    """Which tool read the kernel log."""
    kernel_log_error: str = ""
    """Why the kernel log could not be read ('' when it was): the Xid verdict is UNKNOWN then."""
    xids: tuple[XidEvent, ...] = ()
    off_bus: tuple[str, ...] = ()
    """Kernel log lines saying a GPU has fallen off the bus."""
    pci_gpus: int | None = None
    """NVIDIA GPUs on the PCI bus (sysfs); None when sysfs could not be read."""
    fallback: str = ""
    """Why NVML did not answer and nvidia-smi was read instead ('' when NVML answered, or was not tried)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HealthReading:
        gpus = tuple(GpuHealth(**{**g, "throttle": tuple(g.get("throttle", ())),
                                  "nvlink_errors": tuple(tuple(e) for e in g.get("nvlink_errors", ()))})
                     for g in data.get("gpus", ()))
        return cls(**{**data, "gpus": gpus, "xids": tuple(XidEvent(**x) for x in data.get("xids", ())),
                      "off_bus": tuple(data.get("off_bus", ()))})


def parse_smi_q(text: str) -> list[dict[tuple[str, ...], str]]:
    """`nvidia-smi -q` as one {section path: value} map per GPU (keys nest by indentation)."""
    gpus: list[dict[tuple[str, ...], str]] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        if head := GPU_HEADER.fullmatch(raw.rstrip()):
            gpus.append({("Bus Id",): head.group(1)})
            stack = []
            continue
        if not gpus or not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip())
        key, sep, value = raw.strip().partition(":")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = tuple(name for _, name in stack) + (key.strip(),)
        if sep and value.strip():
            gpus[-1][path] = value.strip()
        else:
            stack.append((indent, key.strip()))
    return gpus


def _count(fields: dict[tuple[str, ...], str], section: str) -> int | None:
    """Uncorrectable ECC count in 'ECC Errors / <section>'; None when the GPU reports none (ECC off, N/A)."""
    values = [v for path, v in fields.items() if path[:2] == ("ECC Errors", section) and
              ("Uncorrectable" in path[-1] or path[-2:] == ("Double Bit", "Total"))]
    numbers = [int(v) for v in values if v.isdigit()]
    return sum(numbers) if numbers else None


def _yes(value: str | None) -> bool | None:
    return {"yes": True, "no": False, "enabled": True, "disabled": False}.get((value or "").lower())


def _mhz(fields: dict[tuple[str, ...], str], *path: str) -> int | None:
    """A number in '450 MHz' / '16x' / '5' form at the path whose end is path; None for N/A or missing."""
    value = next((v for key, v in fields.items() if key[-len(path):] == path), "")
    digits = re.match(r"\d+", value)
    return int(digits.group()) if digits else None


def clocks_and_link(fields: dict[tuple[str, ...], str]) -> dict[str, Any]:
    """Clocks (Clocks / Max Clocks) and PCIe link (GPU Link Info) fields of one GPU's `nvidia-smi -q`."""
    return {"sm_clock_mhz": _mhz(fields, "Clocks", "SM"), "sm_clock_max_mhz": _mhz(fields, "Max Clocks", "SM"),
            "mem_clock_mhz": _mhz(fields, "Clocks", "Memory"),
            "mem_clock_max_mhz": _mhz(fields, "Max Clocks", "Memory"),
            "pcie_gen": _mhz(fields, "PCIe Generation", "Current"), "pcie_gen_max": _mhz(fields, "PCIe Generation",
                                                                                          "Max"),
            "pcie_gen_gpu_max": _mhz(fields, "PCIe Generation", "Device Max"),
            "pcie_width": _mhz(fields, "Link Width", "Current"), "pcie_width_max": _mhz(fields, "Link Width", "Max")}


def _retired(fields: dict[tuple[str, ...], str]) -> int | None:
    counts = [v for path, v in fields.items() if path[0] == "Retired Pages" and path[-1].endswith("Bit ECC")]
    numbers = [int(v) for v in counts if v.isdigit()]
    return sum(numbers) if numbers else None


def gpu_health(fields: dict[tuple[str, ...], str]) -> GpuHealth:
    throttle = tuple(path[-1] for path, v in fields.items()
                     if path[0] in ("Clocks Event Reasons", "Clocks Throttle Reasons") and v == "Active")
    return GpuHealth(**clocks_and_link(fields),
        bus_id=fields[("Bus Id",)], persistence=_yes(fields.get(("Persistence Mode",))),
        ecc_volatile_uncorrected=_count(fields, "Volatile"), ecc_aggregate_uncorrected=_count(fields, "Aggregate"),
        retired_pending=_yes(fields.get(("Retired Pages", "Pending Page Blacklist"))), retired_pages=_retired(fields),
        remap_pending=_yes(fields.get(("Remapped Rows", "Pending"))),
        remap_failed=_yes(fields.get(("Remapped Rows", "Remapping Failure Occurred"))), throttle=throttle)


def parse_nvlink_errors(text: str) -> dict[int, tuple[tuple[int, str, int], ...]]:
    """`nvidia-smi nvlink -e`: GPU index -> its non-zero (link, counter, value)."""
    found: dict[int, list[tuple[int, str, int]]] = {}
    gpu, link = -1, -1
    for line in text.splitlines():
        if head := re.match(r"GPU (\d+):", line):
            gpu, link = int(head.group(1)), -1
            found.setdefault(gpu, [])
            continue
        rest = line
        if on_link := NVLINK_LINK.match(line):
            link, rest = int(on_link.group("link")), on_link.group("rest")
        if (m := NVLINK_COUNTER.match(rest)) and gpu >= 0 and link >= 0 and int(m.group("value")):
            found[gpu].append((link, m.group("name").strip(), int(m.group("value"))))
    return {g: tuple(v) for g, v in found.items()}


def count_pci_gpus(devices: Path = PCI_DEVICES) -> int | None:
    try:
        entries = list(devices.iterdir())
    except OSError:
        return None
    count = 0
    for entry in entries:
        try:
            vendor = (entry / "vendor").read_text().strip()
            klass = (entry / "class").read_text().strip()
        except OSError:
            continue
        count += vendor == NVIDIA_VENDOR and klass.startswith(GPU_CLASSES)
    return count


def health_from_texts(*, source: str, smi_q: str, nvlink_e: str = "", kernel_log: str = "", kernel_tool: str = "",
                      kernel_log_error: str = "", pci_gpus: int | None = None) -> HealthReading:
    """A health reading from the tools' text: what the collector does after its child processes answered."""
    errors = parse_nvlink_errors(nvlink_e)
    gpus = tuple(dataclasses.replace(gpu_health(fields), nvlink_errors=errors.get(i, ()))
                 for i, fields in enumerate(parse_smi_q(smi_q)))
    xids, off_bus = parse_kernel_log(kernel_log)
    return HealthReading(source=source, gpus=gpus, kernel_log=kernel_tool, kernel_log_error=kernel_log_error,
                         xids=xids, off_bus=off_bus, pci_gpus=pci_gpus)


def health_from_nvml(dump: dict[str, Any], *, kernel_log: str = "", kernel_tool: str = "",
                     kernel_log_error: str = "", pci_gpus: int | None = None) -> HealthReading:
    """A health reading from an NVML dump (rlcheck.probes.node.gpu_nvml.record) and the kernel log's text."""
    xids, off_bus = parse_kernel_log(kernel_log)
    return HealthReading(source=f"NVML (driver {dump.get('driver', '?')})", kernel_log=kernel_tool,
                         gpus=tuple(GpuHealth(**gpu_nvml.gpu_fields(g)) for g in dump.get("gpus", ())),
                         kernel_log_error=kernel_log_error, xids=xids, off_bus=off_bus, pci_gpus=pci_gpus)


NvmlCollect = Callable[[float], tuple[dict[str, Any], str]]


def collect_gpu_health(timeout_s: float = 20.0, nvml: NvmlCollect = gpu_nvml.collect_nvml) -> HealthReading:
    """Read this node's GPU health; all child processes together take about timeout_s at most.

    One budget, not one per call: the node's whole answer must fit the fan-out's node deadline. NVML first
    (nvml: the bounded NVML reader), nvidia-smi text when NVML gives nothing; the reading says why in fallback.
    """
    left = budget(timeout_s)
    log, tool, log_error = read_kernel_log(left() / 2)
    pci_gpus = count_pci_gpus()
    dump, why = nvml(left() / 2)
    if not why:
        return health_from_nvml(dump, kernel_log=log, kernel_tool=tool, kernel_log_error=log_error,
                                pci_gpus=pci_gpus)
    read = functools.partial(health_from_texts, kernel_log=log, kernel_tool=tool, kernel_log_error=log_error,
                             pci_gpus=pci_gpus)
    fallback = f"NVML: {why}"
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return dataclasses.replace(read(source="none", smi_q=""), fallback=fallback,
                                   error="nvidia-smi is not on PATH")
    done = subproc.run([smi, "-q"], timeout_s=left())
    if done.returncode != 0:
        return dataclasses.replace(read(source=smi, smi_q=""), fallback=fallback,
                                   error=f"nvidia-smi -q ended with {done.why()}: {done.tail(2)}")
    links = subproc.run([smi, "nvlink", "-e"], timeout_s=left())
    return dataclasses.replace(read(source=f"nvidia-smi -q ({smi})", smi_q=done.stdout,
                                    nvlink_e=links.stdout if links.returncode == 0 else ""), fallback=fallback)
