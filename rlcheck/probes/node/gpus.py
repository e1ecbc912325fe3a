"""This machine's GPUs: read with nvidia-smi (or torch in a child process), and the profile they map to.

The per-node fan-out reads GPUs with the same function (read_gpus), so it imports only the standard library
and rlcheck's standard-library helpers.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys

from rlcheck.hardware import HardwareProfile, load_profiles
from rlcheck.process import subproc

SMI_FIELDS = "name,compute_cap,memory.total,driver_version"
TORCH_PROBE = (
    "import torch\n"
    "for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):\n"
    "    p = torch.cuda.get_device_properties(i)\n"
    "    print(f'{p.name}, {p.major}.{p.minor}, {p.total_memory // 2**20}')\n"
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GpuInfo:
    name: str
    compute_capability: str
    """MAJOR.MINOR, '' when the source does not say."""
    memory_mib: int


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Detection:
    gpus: tuple[GpuInfo, ...]
    profile: HardwareProfile | None
    evidence: str
    """How it was decided, for the report: which tool answered and what it said."""
    error: str = ""
    """Why the GPUs could not be read (nvidia-smi hung or failed); '' when detection ran. Not a 'no GPU'."""


def parse_nvidia_smi(csv_text: str) -> tuple[GpuInfo, ...]:
    """Parse `nvidia-smi --query-gpu=name,compute_cap,memory.total --format=csv,noheader,nounits`."""
    gpus = []
    for line in csv_text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0]:
            continue
        memory = int(parts[2]) if parts[2].isdigit() else 0
        cc = parts[1] if re.fullmatch(r"\d+\.\d+", parts[1]) else ""
        gpus.append(GpuInfo(name=parts[0], compute_capability=cc, memory_mib=memory))
    return tuple(gpus)


def match_profile(gpus: tuple[GpuInfo, ...]) -> HardwareProfile | None:
    if not gpus:
        return None
    for profile in load_profiles().values():
        if profile.matches_gpu_name(gpus[0].name):
            return profile
    return None


DETECT_TIMEOUT_S = 30.0
_detected: list[Detection] = []


def detect(timeout_s: float | None = None) -> Detection:
    """This machine's GPUs and the profile they map to (None when no GPU or no profile fits).

    Read once per process: the first call's reading (with its timeout) serves every later one, so a
    hanging nvidia-smi costs one timeout, not one per caller.
    """
    if not _detected:
        _detected.append(_detect(DETECT_TIMEOUT_S if timeout_s is None else timeout_s))
    return _detected[0]


def _detect(timeout_s: float) -> Detection:
    reading = read_gpus(timeout_s)
    gpus, how = reading.gpus, reading.error or reading.source
    profile = match_profile(gpus)
    if reading.error:
        evidence = f"auto: detection could not run ({how})"
    elif not gpus:
        evidence = f"auto: no GPU found ({how})"
    else:
        names = sorted({g.name for g in gpus})
        fit = f"-> {profile.name}" if profile else "-> no profile matches"
        evidence = f"auto: {len(gpus)} x {', '.join(names)} via {how} {fit}"
    return Detection(gpus=gpus, profile=profile, evidence=evidence, error=reading.error)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GpuReading:
    gpus: tuple[GpuInfo, ...]
    driver_version: str
    source: str
    error: str = ""


def _smi_reading(smi: str, timeout_s: float) -> GpuReading:
    done = subproc.run([smi, f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"], timeout_s=timeout_s)
    if done.timed_out:
        return GpuReading(gpus=(), driver_version="", source=smi,
                          error=f"nvidia-smi did not answer within {timeout_s:.0f} s")
    if done.returncode != 0:
        return GpuReading(gpus=(), driver_version="", source=smi,
                          error=f"nvidia-smi ended with {done.why()}: {' | '.join(done.tail(2).splitlines())}")
    rows = [line.rsplit(",", 1) for line in done.stdout.splitlines() if line.count(",") == 3]
    drivers = sorted({driver.strip() for _, driver in rows})
    gpus = parse_nvidia_smi("\n".join(first for first, _ in rows))
    return GpuReading(gpus=gpus, driver_version=",".join(drivers), source=f"nvidia-smi ({smi})")


def _torch_reading(timeout_s: float) -> GpuReading:
    # Ray hides the GPUs from a task that asked for none (CUDA_VISIBLE_DEVICES=""): the node's GPUs are wanted.
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    done = subproc.run([sys.executable, "-c", TORCH_PROBE], timeout_s=timeout_s, env=env)
    if done.returncode != 0:
        return GpuReading(gpus=(), driver_version="", source="torch.cuda in a child process",
                          error=f"torch GPU probe ended with {done.why()}: {done.tail(1)}")
    return GpuReading(gpus=parse_nvidia_smi(done.stdout), driver_version="", source="torch.cuda in a child process")


def read_gpus(timeout_s: float) -> GpuReading:
    smi = shutil.which("nvidia-smi")
    if smi:
        return _smi_reading(smi, timeout_s)
    if not os.path.exists("/dev/nvidiactl"):
        return GpuReading(gpus=(), driver_version="",
                          source="no nvidia-smi on PATH and no /dev/nvidiactl: no NVIDIA driver here, so no GPU")
    return _torch_reading(timeout_s)
