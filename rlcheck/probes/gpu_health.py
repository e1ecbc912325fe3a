"""GPU hardware health on one node: Xid events in the kernel log, ECC and row remapping, throttling, NVLink errors.

Runs inside the per-node fan-out task (rlcheck.probes.node.collect_node), so it imports only the standard library
at module level. The GPUs are read from `nvidia-smi -q` (one call, every field this module needs, and the same text
on every driver branch that rlcheck supports); every child process is bounded by a deadline. The kernel log is read
with `dmesg`, then `journalctl -k -b` when dmesg is not permitted (kernel.dmesg_restrict=1 in most containers):
when neither answers, the Xid verdict is UNKNOWN naming both errors, never a pass.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlcheck.process import subproc

PCI_DEVICES = Path("/sys/bus/pci/devices")
NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")
"""PCI classes of a display (0x0300) and a 3D controller (0x0302): NVSwitches (0x0680) and audio do not count."""
MIN_CALL_S = 2.0
MAX_XID_EVENTS = 64
"""Keep the newest events only: a GPU in an Xid storm would otherwise fill the node's answer."""
XID_LINE = re.compile(r"NVRM: Xid \(PCI:(?P<bus>[0-9A-Fa-f:.]+)[^)]*\): (?P<code>\d+),?\s*(?P<rest>.*)")
GPU_HEADER = re.compile(r"GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-7])")
OFF_BUS = re.compile(r"fallen off the bus", re.IGNORECASE)
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


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class XidEvent:
    bus_id: str
    """PCI address in the kernel line, e.g. 0000:18:00."""
    code: int
    line: str
    """The kernel log line, for the report."""


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


def gpu_health(fields: dict[tuple[str, ...], str]) -> GpuHealth:
    throttle = tuple(path[-1] for path, v in fields.items()
                     if path[0] in ("Clocks Event Reasons", "Clocks Throttle Reasons") and v == "Active")
    return GpuHealth(
        bus_id=fields[("Bus Id",)], persistence=_yes(fields.get(("Persistence Mode",))),
        ecc_volatile_uncorrected=_count(fields, "Volatile"), ecc_aggregate_uncorrected=_count(fields, "Aggregate"),
        retired_pending=_yes(fields.get(("Retired Pages", "Pending Page Blacklist"))),
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


def _joined(text: str) -> list[str]:
    """dmesg lines with their indented continuation lines joined: the driver wraps some messages (the
    fallen-off-the-bus one names the GPU on the first line and says it fell off on the third)."""
    lines: list[str] = []
    for line in text.splitlines():
        if line[:1].isspace() and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def parse_kernel_log(text: str) -> tuple[tuple[XidEvent, ...], tuple[str, ...]]:
    """Xid events (newest MAX_XID_EVENTS) and fallen-off-the-bus lines in dmesg / journalctl -k text."""
    events, off_bus = [], []
    for line in _joined(text):
        if m := XID_LINE.search(line):
            events.append(XidEvent(bus_id=m.group("bus"), code=int(m.group("code")), line=line.strip()))
        if OFF_BUS.search(line):
            off_bus.append(line.strip())
    return tuple(events[-MAX_XID_EVENTS:]), tuple(off_bus[-MAX_XID_EVENTS:])


def read_kernel_log(timeout_s: float) -> tuple[str, str, str]:
    """(text, tool that answered, error): dmesg first, then journalctl -k for this boot; both within timeout_s."""
    left = _budget(timeout_s)
    errors = []
    for argv in (["dmesg"], ["journalctl", "-k", "-b", "--no-pager", "-q"]):
        if shutil.which(argv[0]) is None:
            errors.append(f"{argv[0]}: not on PATH")
            continue
        done = subproc.run(argv, timeout_s=left())
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout, " ".join(argv), ""
        errors.append(f"{argv[0]}: {done.why()} {done.tail(1)}".strip())
    return "", "", "; ".join(errors)


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


def _budget(total_s: float) -> Callable[[], float]:
    """Seconds left of total_s for the next child process (at least MIN_CALL_S, so a late call still answers)."""
    end = time.monotonic() + total_s
    return lambda: max(MIN_CALL_S, end - time.monotonic())


def collect_gpu_health(timeout_s: float = 20.0) -> HealthReading:
    """Read this node's GPU health; all child processes together take about timeout_s at most.

    One budget, not one per call: the node's whole answer must fit the fan-out's node deadline.
    """
    left = _budget(timeout_s)
    log, tool, log_error = read_kernel_log(left() / 2)
    read = functools.partial(health_from_texts, kernel_log=log, kernel_tool=tool, kernel_log_error=log_error,
                             pci_gpus=count_pci_gpus())
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return dataclasses.replace(read(source="none", smi_q=""),
                                   error="nvidia-smi is not on PATH")
    done = subproc.run([smi, "-q"], timeout_s=left())
    if done.returncode != 0:
        return dataclasses.replace(read(source=smi, smi_q=""),
                                   error=f"nvidia-smi -q ended with {done.why()}: {done.tail(2)}")
    links = subproc.run([smi, "nvlink", "-e"], timeout_s=left())
    return read(source=f"nvidia-smi -q ({smi})", smi_q=done.stdout,
                nvlink_e=links.stdout if links.returncode == 0 else "")
