"""What one Ray node holds, read on that node: GPUs, driver, CUDA runtime, torch_memory_saver, /dev/shm, EFA.

collect_node() runs inside a Ray task pinned to each node (rlcheck.cluster.fanout), so this module imports only the
standard library and rlcheck's standard-library helpers: nothing heavy loads on every node, and no GPU code
runs in the Ray worker. GPUs are read with nvidia-smi when it is on PATH; without it, torch answers in a child
process, and only where /dev/nvidiactl exists (without the driver's control device no CUDA GPU is usable).

EFA: a device under /sys/class/infiniband counts when its driver is `efa`; where the driver link cannot be
read, when its name starts with `rdmap` or `efa`. mlx5 devices (`ibp*`, `mlx5_*`) never count: counting them
as EFA is a known mistake (aws/sagemaker-hyperpod-cli#282).
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
from importlib import util
from pathlib import Path
from typing import Any

from rlcheck.data_types import refuse_unknown_keys
from rlcheck.probes.node import elf, tms
from rlcheck.probes.node.gpu_health import HealthReading, collect_gpu_health
from rlcheck.probes.node.gpus import GpuInfo, read_gpus
from rlcheck.probes.node.node_stack import read_stack

TMS_RULE = "slime-v0.2.4"
"""The preload rule when no framework is detected or declared: the reference image's SLIME (THUDM/slime#2186).
The preflight passes the detected one (rlcheck.probes.node.tms.rule_for) as the collector's tms_rule."""
EFA_NAME_PREFIXES = ("rdmap", "efa")
INFINIBAND_DIR = Path("/sys/class/infiniband")
SHM_DIR = Path("/dev/shm")
DRIVER_VERSION_FILE = Path("/proc/driver/nvidia/version")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class TmsReading:
    package_dir: str
    """Where the torch_memory_saver hook libraries lie ('' when the package is not installed)."""
    rule: str
    """SLIME's selection rule applied (a key of rlcheck.probes.node.tms.SELECTION_RULES)."""
    library: str = ""
    """File name the rule picks ('' when it picks none)."""
    cudart_major: int | None = None
    """libcudart major the picked library names as NEEDED."""
    cudart_found_at: str = ""
    """Where the loader finds that libcudart ('' when it does not)."""
    error: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeObservation:
    hostname: str
    gpus: tuple[GpuInfo, ...]
    gpu_source: str
    """Which tool answered, or why none was asked."""
    gpu_error: str
    """Why the GPUs could not be read ('' when they were): the GPU verdicts are UNKNOWN then."""
    driver_version: str
    """NVIDIA driver version, e.g. '580.65.06' ('' when unread)."""
    torch_version: str
    torch_cuda: str
    """CUDA runtime torch was built for (torch.version.cuda, read from its file); '' for none."""
    tms: TmsReading
    shm_bytes: int | None
    """Size of /dev/shm in bytes; None when it does not exist."""
    efa_devices: tuple[str, ...] = ()
    ld_library_path: str = ""
    """LD_LIBRARY_PATH of a Ray worker on this node."""
    health: HealthReading | None = None
    """GPU hardware health (Xid, ECC, throttling, NVLink); None from a node whose rlcheck predates it."""
    sglang_version: str = ""
    megatron_version: str = ""
    """megatron-core's version ('' when unread: not installed, or a checkout without package metadata)."""
    framework: str = ""
    """'slime 0.2.4', 'miles 0.1.0', 'slime (source checkout)' or '' (rlcheck.probes.node.node_stack)."""
    nccl_version: str = ""
    """From the nvidia-nccl-cu* wheel, else the system nccl.h ('' when neither is found)."""
    # A fact added later gets a default here: recordings (and nodes running an older rlcheck) that lack it load.

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NodeObservation:
        refuse_unknown_keys(data, dataclasses.fields(cls), "node observation")
        gpus = tuple(GpuInfo(**g) for g in data["gpus"])
        return cls(**{**data, "gpus": gpus, "tms": TmsReading(**data["tms"]),
                      "efa_devices": tuple(data.get("efa_devices", ())),
                      "health": HealthReading.from_dict(data["health"]) if data.get("health") else None})


def read_driver_file(path: Path = DRIVER_VERSION_FILE) -> str:
    """The kernel module's version from /proc/driver/nvidia/version ('' when absent)."""
    try:
        match = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)", path.read_text())
    except OSError:
        return ""
    return match.group(1) if match else ""


def read_torch() -> tuple[str, str]:
    """torch's version and CUDA runtime from torch/version.py, without importing torch."""
    spec = util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return "", ""
    try:
        text = (Path(next(iter(spec.submodule_search_locations))) / "version.py").read_text()
    except OSError:
        return "", ""
    version = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", text, re.MULTILINE)
    cuda = re.search(r"^cuda\s*(?::[^=]+)?=\s*['\"]([^'\"]+)", text, re.MULTILINE)
    return (version.group(1) if version else ""), (cuda.group(1) if cuda else "")


def read_tms(rule: str, ld_library_path: str) -> TmsReading:
    folder = tms.package_dir()
    if folder is None:
        return TmsReading(package_dir="", rule=rule)
    if rule == tms.PACKAGE_RULE:
        resolved = tms.resolve_with_package()
        if resolved.path is None:
            return TmsReading(package_dir=str(folder), rule=rule, error=resolved.error)
        chosen: Path | None = resolved.path
    else:
        chosen = tms.choose(rule, folder)
    if chosen is None:
        return TmsReading(package_dir=str(folder), rule=rule)
    try:
        major = tms.cudart_major(chosen)
    except (OSError, elf.ElfError) as exc:
        return TmsReading(package_dir=str(folder), rule=rule, library=chosen.name, error=str(exc))
    found = tms.find_on_loader_path(f"libcudart.so.{major}", ld_library_path, tms.ldconfig_dirs()) if major else None
    return TmsReading(package_dir=str(folder), rule=rule, library=chosen.name, cudart_major=major,
                      cudart_found_at=found or "")


def read_shm_bytes(path: Path = SHM_DIR) -> int | None:
    try:
        stat = os.statvfs(path)
    except OSError:
        return None
    return stat.f_blocks * stat.f_frsize


def _driver_name(device: Path) -> str:
    try:
        return (device / "device" / "driver").resolve(strict=True).name
    except OSError:
        return ""


def read_efa_devices(class_dir: Path = INFINIBAND_DIR) -> tuple[str, ...]:
    """EFA devices: driver `efa`, or (driver unreadable) a name starting with rdmap or efa."""
    try:
        devices = sorted(class_dir.iterdir())
    except OSError:
        return ()
    found = []
    for device in devices:
        driver = _driver_name(device)
        if driver == "efa" or (not driver and device.name.startswith(EFA_NAME_PREFIXES)):
            found.append(device.name)
    return tuple(found)


def collect_node(*, tool_timeout_s: float = 20.0, tms_rule: str = TMS_RULE) -> NodeObservation:
    """Read this node. Every subprocess is bounded by tool_timeout_s."""
    if tms_rule not in (*tms.SELECTION_RULES, tms.PACKAGE_RULE):
        raise ValueError(f"tms_rule={tms_rule!r}: one of {', '.join((*tms.SELECTION_RULES, tms.PACKAGE_RULE))}")
    reading = read_gpus(tool_timeout_s)
    torch_version, torch_cuda = read_torch()
    ld_path = os.environ.get("LD_LIBRARY_PATH", "")
    stack = read_stack()
    return NodeObservation(
        hostname=socket.gethostname(), gpus=reading.gpus, gpu_source=reading.source, gpu_error=reading.error,
        driver_version=reading.driver_version or read_driver_file(), torch_version=torch_version,
        torch_cuda=torch_cuda, tms=read_tms(tms_rule, ld_path), shm_bytes=read_shm_bytes(),
        efa_devices=read_efa_devices(), ld_library_path=ld_path, health=collect_gpu_health(tool_timeout_s),
        sglang_version=stack.sglang, megatron_version=stack.megatron, framework=stack.framework,
        nccl_version=stack.nccl,
    )
