"""GPU health through NVML (nvidia-ml-py, imported as pynvml): the first source of rlcheck.probes.node.gpu_health.

NVML answers in numbers (ECC counts, remapped-row flags, the clock-event bitmask, clocks, PCIe generation and
width, NVLink error counters), so nothing here parses text. An NVML call runs in this process and cannot be
interrupted, so the reading runs in a child (`python -m rlcheck.probes.node.gpu_nvml`) under the health budget's
deadline; a GPU whose NVML call hangs ends in the nvidia-smi fallback, never a stuck node task.

record(lib) makes every call through an NvmlLib and keeps each answer (or its error) under a key naming the call:
that dump is what the child prints, what tests/data/gpu_health/nvml_*.json record, and what gpu_fields() reads
the GPUs' health from. Tests replay a dump through the same record() (tests/nvml_replay.py); no GPU is needed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from rlcheck.process import subproc

RESULT = "RLCHECK_NVML "
MAX_NVLINKS = 18
"""NVLink links per GPU on Hopper and Blackwell (NVML_NVLINK_MAX_LINKS was 18 until drivers for larger parts)."""
CLOCK_SM, CLOCK_MEM = 1, 2  # NVML_CLOCK_SM, NVML_CLOCK_MEM
UNCORRECTED, VOLATILE, AGGREGATE = 1, 0, 1  # NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC
SBE_PAGES, DBE_PAGES = 0, 1  # NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, _DOUBLE_BIT_ECC_ERROR
READS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("nvmlDeviceGetName", ()), ("nvmlDeviceGetPciInfo", ()), ("nvmlDeviceGetPersistenceMode", ()),
    ("nvmlDeviceGetTotalEccErrors", (UNCORRECTED, VOLATILE)), ("nvmlDeviceGetTotalEccErrors", (UNCORRECTED, AGGREGATE)),
    ("nvmlDeviceGetRemappedRows", ()), ("nvmlDeviceGetRetiredPagesPendingStatus", ()),
    ("nvmlDeviceGetRetiredPages", (SBE_PAGES,)), ("nvmlDeviceGetRetiredPages", (DBE_PAGES,)),
    ("nvmlDeviceGetCurrentClocksEventReasons", ()),
    ("nvmlDeviceGetClockInfo", (CLOCK_SM,)), ("nvmlDeviceGetMaxClockInfo", (CLOCK_SM,)),
    ("nvmlDeviceGetClockInfo", (CLOCK_MEM,)), ("nvmlDeviceGetMaxClockInfo", (CLOCK_MEM,)),
    ("nvmlDeviceGetCurrPcieLinkGeneration", ()), ("nvmlDeviceGetMaxPcieLinkGeneration", ()),
    ("nvmlDeviceGetGpuMaxPcieLinkGeneration", ()),
    ("nvmlDeviceGetCurrPcieLinkWidth", ()), ("nvmlDeviceGetMaxPcieLinkWidth", ()),
)
"""Every per-GPU call, with its arguments after the device handle."""
EVENT_REASONS = {0x1: "Idle", 0x2: "Applications Clocks Setting", 0x4: "SW Power Cap", 0x8: "HW Slowdown",
                 0x10: "Sync Boost", 0x20: "SW Thermal Slowdown", 0x40: "HW Thermal Slowdown",
                 0x80: "HW Power Brake Slowdown", 0x100: "Display Clock Setting"}
"""nvmlClocksEventReason* bits, named as `nvidia-smi -q` names them (the judges read those names)."""
NVLINK_COUNTERS = {0: "Replay Errors", 1: "Recovery Errors", 2: "CRC Errors", 3: "CRC Data Errors"}
"""NVML_NVLINK_ERROR_DL_REPLAY / _RECOVERY / _CRC_FLIT / _CRC_DATA, named as `nvidia-smi nvlink -e` does."""


class NvmlCallError(Exception):
    """An NVML call answered with an error (NVMLError_NotSupported, ...): kept in the dump, not raised further."""


class NvmlLib(Protocol):
    def call(self, function: str, *args: Any) -> Any:
        """pynvml.<function>(*args); raises NvmlCallError for an NVML error or a function this pynvml lacks."""
        ...


class Pynvml:
    """The real library: nvidia-ml-py's pynvml module."""

    def __init__(self) -> None:
        import pynvml  # type: ignore[import-not-found,unused-ignore]

        self.module = pynvml

    def call(self, function: str, *args: Any) -> Any:
        try:
            return getattr(self.module, function)(*args)
        except AttributeError as exc:
            raise NvmlCallError(f"{function} is not in this pynvml") from exc
        except self.module.NVMLError as exc:
            raise NvmlCallError(f"{type(exc).__name__}: {exc}") from exc


def call_key(function: str, args: tuple[int, ...]) -> str:
    """The dump's key for one call: 'nvmlDeviceGetClockInfo 1' (the device handle left out)."""
    return " ".join([function, *map(str, args)])


def _plain(value: Any) -> Any:
    """An NVML answer as JSON: bytes decoded, a PCI info struct as its bus id, tuples as lists."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if hasattr(value, "busId"):
        return _plain(value.busId)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _answer(lib: NvmlLib, function: str, *args: Any) -> Any:
    try:
        return _plain(lib.call(function, *args))
    except NvmlCallError as exc:
        return {"error": str(exc)}


def record_gpu(lib: NvmlLib, handle: Any) -> dict[str, Any]:
    gpu = {call_key(f, a): _answer(lib, f, handle, *a) for f, a in READS}
    reasons = call_key("nvmlDeviceGetCurrentClocksEventReasons", ())
    if isinstance(gpu[reasons], dict):  # drivers before 535 name it 'throttle reasons'
        gpu[call_key("nvmlDeviceGetCurrentClocksThrottleReasons", ())] = _answer(
            lib, "nvmlDeviceGetCurrentClocksThrottleReasons", handle)
    for link in range(MAX_NVLINKS):
        state = gpu[call_key("nvmlDeviceGetNvLinkState", (link,))] = _answer(lib, "nvmlDeviceGetNvLinkState",
                                                                               handle, link)
        if isinstance(state, dict):  # no NVLink (NotSupported), or past the GPU's last link
            break
        if state == 1:
            for counter in NVLINK_COUNTERS:
                gpu[call_key("nvmlDeviceGetNvLinkErrorCounter", (link, counter))] = _answer(
                    lib, "nvmlDeviceGetNvLinkErrorCounter", handle, link, counter)
    return gpu


def record(lib: NvmlLib) -> dict[str, Any]:
    """Every GPU's answers, or {'error': ...} when NVML does not start (no driver, no device node)."""
    try:
        lib.call("nvmlInit")
    except NvmlCallError as exc:
        return {"error": f"nvmlInit: {exc}"}
    try:
        count = lib.call("nvmlDeviceGetCount")
        gpus = [record_gpu(lib, lib.call("nvmlDeviceGetHandleByIndex", i)) for i in range(count)]
        return {"driver": _answer(lib, "nvmlSystemGetDriverVersion"), "gpus": gpus}
    except NvmlCallError as exc:
        return {"error": str(exc)}
    finally:
        try:
            lib.call("nvmlShutdown")
        except NvmlCallError:
            pass


def _int(gpu: dict[str, Any], function: str, *args: int) -> int | None:
    value = gpu.get(call_key(function, args))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _pages(gpu: dict[str, Any]) -> int | None:
    lists = [gpu.get(call_key("nvmlDeviceGetRetiredPages", (c,))) for c in (SBE_PAGES, DBE_PAGES)]
    found = [len(v) for v in lists if isinstance(v, list)]
    return sum(found) if found else None


def _reasons(gpu: dict[str, Any]) -> tuple[str, ...]:
    mask = _int(gpu, "nvmlDeviceGetCurrentClocksEventReasons")
    mask = mask if mask is not None else _int(gpu, "nvmlDeviceGetCurrentClocksThrottleReasons")
    return tuple(name for bit, name in EVENT_REASONS.items() if mask and mask & bit)


def _nvlink(gpu: dict[str, Any]) -> tuple[tuple[int, str, int], ...]:
    found = []
    for key, value in gpu.items():
        function, *args = key.split()
        if function == "nvmlDeviceGetNvLinkErrorCounter" and isinstance(value, int) and value:
            found.append((int(args[0]), NVLINK_COUNTERS[int(args[1])], value))
    return tuple(sorted(found))


def gpu_fields(gpu: dict[str, Any]) -> dict[str, Any]:
    """One GPU's rlcheck.probes.node.gpu_health.GpuHealth fields from its recorded answers (an answer that was an error
    reads as None: not known)."""
    rows = gpu.get(call_key("nvmlDeviceGetRemappedRows", ()))
    rows = rows if isinstance(rows, list) and len(rows) == 4 else None  # (correctable, uncorrectable, pending, failed)
    pending = _int(gpu, "nvmlDeviceGetRetiredPagesPendingStatus")
    persistence = _int(gpu, "nvmlDeviceGetPersistenceMode")
    bus_id = gpu.get(call_key("nvmlDeviceGetPciInfo", ()))
    return dict(
        bus_id=bus_id if isinstance(bus_id, str) else "?",  # a failed call names no bus: never its error text
        persistence=None if persistence is None else persistence == 1,
        ecc_volatile_uncorrected=_int(gpu, "nvmlDeviceGetTotalEccErrors", UNCORRECTED, VOLATILE),
        ecc_aggregate_uncorrected=_int(gpu, "nvmlDeviceGetTotalEccErrors", UNCORRECTED, AGGREGATE),
        retired_pending=None if pending is None else bool(pending), retired_pages=_pages(gpu),
        remap_pending=None if rows is None else bool(rows[2]), remap_failed=None if rows is None else bool(rows[3]),
        throttle=_reasons(gpu), nvlink_errors=_nvlink(gpu),
        sm_clock_mhz=_int(gpu, "nvmlDeviceGetClockInfo", CLOCK_SM),
        sm_clock_max_mhz=_int(gpu, "nvmlDeviceGetMaxClockInfo", CLOCK_SM),
        mem_clock_mhz=_int(gpu, "nvmlDeviceGetClockInfo", CLOCK_MEM),
        mem_clock_max_mhz=_int(gpu, "nvmlDeviceGetMaxClockInfo", CLOCK_MEM),
        pcie_gen=_int(gpu, "nvmlDeviceGetCurrPcieLinkGeneration"),
        pcie_gen_max=_int(gpu, "nvmlDeviceGetMaxPcieLinkGeneration"),
        pcie_gen_gpu_max=_int(gpu, "nvmlDeviceGetGpuMaxPcieLinkGeneration"),
        pcie_width=_int(gpu, "nvmlDeviceGetCurrPcieLinkWidth"),
        pcie_width_max=_int(gpu, "nvmlDeviceGetMaxPcieLinkWidth"))


def collect_nvml(timeout_s: float, run: Callable[..., subproc.Completed] = subproc.run) -> tuple[dict[str, Any], str]:
    """(dump, why NVML gave none ('' when it did)): the child reads NVML within timeout_s."""
    root = str(Path(__file__).resolve().parents[3])  # so the child imports this rlcheck (a Ray worker's py_modules)
    done = run([sys.executable, "-m", "rlcheck.probes.node.gpu_nvml"], timeout_s=timeout_s,
               env=subproc.child_env([root]))
    line = next((x.removeprefix(RESULT) for x in done.stdout.splitlines() if x.startswith(RESULT)), None)
    if line is None:
        return {}, f"the NVML reader ended with {done.why()}: {done.tail(2)}"
    dump: dict[str, Any] = json.loads(line)
    if dump.get("error"):
        return {}, str(dump["error"])
    return dump, ""


def _main() -> int:
    try:
        lib: NvmlLib = Pynvml()
    except ImportError as exc:
        print(RESULT + json.dumps({"error": f"pynvml (nvidia-ml-py) is not installed: {exc}"}), flush=True)
        return 0
    print(RESULT + json.dumps(record(lib)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
