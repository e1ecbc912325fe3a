"""What one Ray node reports of itself (rlcheck.probes.node.collect) as a rule table: the driver version from each
layout of /proc/driver/nvidia/version, torch's version and CUDA from its version.py without importing it, the
torch_memory_saver reading for every rule and every way it can fail, /dev/shm's size, which InfiniBand devices are
EFA, the observation assembled from its readers (the driver file only when nvidia-smi gave none), the rules
accepted, and recordings that load (old ones without later facts) or are refused (a key from the future)."""

from __future__ import annotations

import dataclasses
import json
import os
import types
from pathlib import Path

import pytest

from rlcheck.probes.node import collect, elf, tms
from rlcheck.probes.node.collect import NodeObservation, TmsReading
from rlcheck.probes.node.gpu_health import GpuHealth, HealthReading
from rlcheck.probes.node.gpus import GpuInfo, GpuReading
from rlcheck.probes.node.node_stack import StackVersions

RECORDINGS = Path(__file__).parents[2] / "data" / "observations" / "node"


@pytest.mark.parametrize(("text", "version"), [
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:40 UTC 2025\n"
     "GCC version:  gcc version 13.3.0\n", "580.65.06"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16)\n",
     "570.86.15"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  550.54\n", "550.54"),  # two parts
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06.1  x\n", "580.65.06"),
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module 580  x\n", ""),  # one part is no version
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module for\n", ""), ("", ""),
])
def test_rules_table_collect_driver_file(tmp_path, text, version):
    path = tmp_path / "version"
    path.write_text(text)
    assert collect.read_driver_file(path) == version


def test_rules_table_collect_driver_file_absent(tmp_path):
    assert collect.read_driver_file(tmp_path / "absent") == ""
    assert collect.DRIVER_VERSION_FILE == Path("/proc/driver/nvidia/version")


@pytest.mark.parametrize(("text", "read"), [
    ("__version__ = '2.9.1+cu129'\ndebug = False\ncuda: Optional[str] = '12.9'\nhip: Optional[str] = None\n",
     ("2.9.1+cu129", "12.9")),
    ('__version__ = "2.10.0"\ncuda = "13.0"\n', ("2.10.0", "13.0")),
    ("from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda']\n__version__ = '2.9.1+cu129'\n"
     "cuda: Optional[str] = '12.9'\n", ("2.9.1+cu129", "12.9")),  # torch's own layout: imports first
    ("__version__ = '2.9.1+cpu'\ncuda: Optional[str] = None\n", ("2.9.1+cpu", "")),  # a CPU build: no CUDA
    ("  __version__ = '9'\ncudas = '1'\nxcuda = '12.9'\n", ("", "")),  # each name at a line's start, whole
    ("version = '2.9.1'\n", ("", "")), ("", ("", "")),
])
def test_rules_table_collect_torch_version_file(tmp_path, monkeypatch, text, read):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "version.py").write_text(text)
    spec = types.SimpleNamespace(submodule_search_locations=[str(tmp_path / "torch"), "/elsewhere"])
    find = types.SimpleNamespace(find_spec=lambda name: spec if name == "torch" else None)
    monkeypatch.setattr(collect, "util", find)
    assert collect.read_torch() == read


@pytest.mark.parametrize("spec", [None, types.SimpleNamespace(submodule_search_locations=None),
                                  types.SimpleNamespace(submodule_search_locations=[])])
def test_rules_table_collect_torch_not_a_package(monkeypatch, spec):
    monkeypatch.setattr(collect, "util", types.SimpleNamespace(find_spec=lambda name: spec))
    assert collect.read_torch() == ("", "")


def test_rules_table_collect_torch_without_version_file(tmp_path, monkeypatch):
    spec = types.SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    monkeypatch.setattr(collect, "util", types.SimpleNamespace(find_spec=lambda name: spec))
    assert collect.read_torch() == ("", "")


FOLDER = Path("/site/torch_memory_saver")
LIB = FOLDER / f"{tms.STEM}_cu12.abi3.so"


@pytest.fixture
def tms_parts(monkeypatch):
    """tms's readers answering from a script; every call kept."""
    calls: list[tuple[object, ...]] = []
    script: dict[str, object] = {"package_dir": FOLDER, "choose": LIB, "cudart_major": 12,
                                 "resolved": tms.Resolved(path=LIB, torch_cuda="12.9"), "found": "/usr/lib/x"}

    def answer(name, *args):
        calls.append((name, *args))
        value = script[name]
        if isinstance(value, Exception):
            raise value
        return value
    monkeypatch.setattr(tms, "package_dir", lambda: answer("package_dir"))
    monkeypatch.setattr(tms, "choose", lambda rule, folder: answer("choose", rule, folder))
    monkeypatch.setattr(tms, "cudart_major", lambda library: answer("cudart_major", library))
    monkeypatch.setattr(tms, "resolve_with_package", lambda: answer("resolved"))
    monkeypatch.setattr(tms, "ldconfig_dirs", lambda: {"/cache"})
    monkeypatch.setattr(tms, "find_on_loader_path", lambda *a: answer("found", *a))
    return script, calls


@pytest.mark.parametrize(("rule", "changes", "reading", "asked"), [
    ("slime-v0.3.1", {}, TmsReading(package_dir=str(FOLDER), rule="slime-v0.3.1", library=LIB.name, cudart_major=12,
                                    cudart_found_at="/usr/lib/x"),
     ["package_dir", ("choose", "slime-v0.3.1", FOLDER), ("cudart_major", LIB),
      ("found", "libcudart.so.12", "/ld:/path", {"/cache"})]),
    ("slime-main", {"found": None}, TmsReading(package_dir=str(FOLDER), rule="slime-main", library=LIB.name,
                                               cudart_major=12),  # the loader does not find it
     ["package_dir", ("choose", "slime-main", FOLDER), ("cudart_major", LIB),
      ("found", "libcudart.so.12", "/ld:/path", {"/cache"})]),
    ("slime-main", {"cudart_major": None}, TmsReading(package_dir=str(FOLDER), rule="slime-main", library=LIB.name),
     ["package_dir", ("choose", "slime-main", FOLDER), ("cudart_major", LIB)]),  # names no libcudart: none sought
    ("slime-v0.2.4", {"package_dir": None}, TmsReading(package_dir="", rule="slime-v0.2.4"), ["package_dir"]),
    ("slime-v0.2.4", {"choose": None}, TmsReading(package_dir=str(FOLDER), rule="slime-v0.2.4"),
     ["package_dir", ("choose", "slime-v0.2.4", FOLDER)]),
    ("slime-v0.2.4", {"cudart_major": OSError("permission denied")},
     TmsReading(package_dir=str(FOLDER), rule="slime-v0.2.4", library=LIB.name, error="permission denied"),
     ["package_dir", ("choose", "slime-v0.2.4", FOLDER), ("cudart_major", LIB)]),
    ("slime-v0.2.4", {"cudart_major": elf.ElfError("x.so: not a 64-bit little-endian ELF file")},
     TmsReading(package_dir=str(FOLDER), rule="slime-v0.2.4", library=LIB.name,
                error="x.so: not a 64-bit little-endian ELF file"),
     ["package_dir", ("choose", "slime-v0.2.4", FOLDER), ("cudart_major", LIB)]),
    # Miles: torch_memory_saver's own choice, never the file-name rules
    ("miles-main", {}, TmsReading(package_dir=str(FOLDER), rule="miles-main", library=LIB.name, cudart_major=12,
                                  cudart_found_at="/usr/lib/x"),
     ["package_dir", ("resolved",), ("cudart_major", LIB), ("found", "libcudart.so.12", "/ld:/path", {"/cache"})]),
    ("miles-main", {"resolved": tms.Resolved(path=None, torch_cuda=None, error="resolver did not run (exit code 1)")},
     TmsReading(package_dir=str(FOLDER), rule="miles-main", error="resolver did not run (exit code 1)"),
     ["package_dir", ("resolved",)]),
])
def test_rules_table_collect_tms(tms_parts, rule, changes, reading, asked):
    script, calls = tms_parts
    script.update(changes)
    assert collect.read_tms(rule, "/ld:/path") == reading
    assert calls == [(a,) if isinstance(a, str) else a for a in asked]


def test_rules_table_collect_shm(tmp_path, monkeypatch):
    seen = []

    def statvfs(path):
        seen.append(path)
        if path == tmp_path / "absent":
            raise FileNotFoundError(path)
        return types.SimpleNamespace(f_blocks=1000, f_frsize=4096, f_bsize=512, f_bavail=7)
    monkeypatch.setattr(collect, "os", types.SimpleNamespace(statvfs=statvfs))
    assert collect.read_shm_bytes(tmp_path) == 4_096_000  # blocks x fragment size: the whole of it, not what is free
    assert collect.read_shm_bytes(tmp_path / "absent") is None
    assert collect.read_shm_bytes() == 4_096_000 and seen[-1] == Path("/dev/shm")


def test_rules_table_collect_shm_of_a_real_folder(tmp_path):
    assert collect.read_shm_bytes(tmp_path) == os.statvfs(tmp_path).f_blocks * os.statvfs(tmp_path).f_frsize > 0


@pytest.mark.parametrize(("devices", "efa"), [
    ({"rdmap79s0": "efa", "efa_3": "efa", "ibp12s0": "mlx5_core", "mlx5_0": "mlx5_core"}, ("efa_3", "rdmap79s0")),
    ({"mlx5_1": "efa"}, ("mlx5_1",)),  # the driver decides, not the name
    ({"rdmap1": "mlx5_core", "efa0": "mlx5_core"}, ()),  # an EFA-looking name on another driver
    ({"rdmap80s0": None, "efa_9": None, "ibp13s0": None, "xrdmap": None}, ("efa_9", "rdmap80s0")),  # unreadable
    ({"rdmap2": "broken", "mlx5_2": "broken"}, ("rdmap2",)),  # a dangling driver link is unreadable
    ({"b_dev": "efa", "a_dev": "efa"}, ("a_dev", "b_dev")),  # sorted
    ({}, ()),
])
def test_rules_table_collect_efa(tmp_path, devices, efa):
    drivers = tmp_path / "drivers"
    for name in ("efa", "mlx5_core"):
        (drivers / name).mkdir(parents=True)
    ib = tmp_path / "ib"
    ib.mkdir()
    for device, driver in devices.items():
        (ib / device / "device").mkdir(parents=True)
        if driver:
            (ib / device / "device" / "driver").symlink_to(drivers / driver)
    assert collect.read_efa_devices(ib) == efa


def test_rules_table_collect_efa_unreadable_class_folder(tmp_path):
    assert collect.read_efa_devices(tmp_path / "absent") == ()
    (tmp_path / "file").write_text("")
    assert collect.read_efa_devices(tmp_path / "file") == ()
    assert collect.INFINIBAND_DIR == Path("/sys/class/infiniband") and collect.EFA_NAME_PREFIXES == ("rdmap", "efa")


H200 = GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=143771)
HEALTH = HealthReading(source="NVML (driver 580.65.06)")
TMS = TmsReading(package_dir="/site/tms", rule="slime-v0.2.4")


@pytest.fixture
def readers(monkeypatch):
    given: dict[str, object] = {}
    script = {"gpus": GpuReading(gpus=(H200,), driver_version="580.65.06", source="nvidia-smi (/x)"),
              "driver_file": "570.1"}
    monkeypatch.setattr(collect, "read_gpus", lambda t: given.setdefault("gpus", t) and script["gpus"])
    monkeypatch.setattr(collect, "read_torch", lambda: ("2.9.1+cu129", "12.9"))
    monkeypatch.setattr(collect, "read_stack", lambda: StackVersions(sglang="0.5.9", megatron="0.15.0",
                                                                     framework="slime 0.2.4", nccl="2.27.7"))
    monkeypatch.setattr(collect, "read_driver_file", lambda: script["driver_file"])
    monkeypatch.setattr(collect, "read_tms", lambda rule, ld: given.setdefault("tms", (rule, ld)) and TMS)
    monkeypatch.setattr(collect, "read_shm_bytes", lambda: 2**34)
    monkeypatch.setattr(collect, "read_efa_devices", lambda: ("rdmap0",))
    monkeypatch.setattr(collect, "collect_gpu_health", lambda t: given.setdefault("health", t) and HEALTH)
    monkeypatch.setattr(collect.socket, "gethostname", lambda: "gpu-7")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64")
    return script, given


def test_rules_table_collect_node_assembles_its_readers(readers):
    script, given = readers
    assert collect.collect_node(tool_timeout_s=7.5, tms_rule="slime-main") == NodeObservation(
        hostname="gpu-7", gpus=(H200,), gpu_source="nvidia-smi (/x)", gpu_error="", driver_version="580.65.06",
        torch_version="2.9.1+cu129", torch_cuda="12.9", tms=TMS, shm_bytes=2**34, efa_devices=("rdmap0",),
        ld_library_path="/usr/local/nvidia/lib64", health=HEALTH, sglang_version="0.5.9", megatron_version="0.15.0",
        framework="slime 0.2.4", nccl_version="2.27.7")
    assert given == {"gpus": 7.5, "tms": ("slime-main", "/usr/local/nvidia/lib64"), "health": 7.5}


def test_rules_table_collect_node_driver_file_only_without_nvidia_smis(readers, monkeypatch):
    script, given = readers
    script["gpus"] = GpuReading(gpus=(), driver_version="", source="/x", error="nvidia-smi did not answer within 20 s")
    monkeypatch.delenv("LD_LIBRARY_PATH")
    obs = collect.collect_node()
    assert (obs.driver_version, obs.gpus, obs.gpu_error, obs.ld_library_path) == (
        "570.1", (), "nvidia-smi did not answer within 20 s", "")
    assert given == {"gpus": 20.0, "tms": ("slime-v0.2.4", ""), "health": 20.0}  # the defaults
    assert collect.TMS_RULE == "slime-v0.2.4"


@pytest.mark.parametrize("rule", ["slime-v0.2.4", "slime-v0.3.1", "slime-main", "miles-main"])
def test_rules_table_collect_node_takes_every_rule(readers, rule):
    assert collect.collect_node(tms_rule=rule).tms == TMS


@pytest.mark.parametrize("rule", ["slime-v0.3.0", "", "SLIME-MAIN"])
def test_rules_table_collect_node_refuses_another_rule(readers, rule):
    _, given = readers
    with pytest.raises(ValueError) as err:
        collect.collect_node(tms_rule=rule)
    assert str(err.value) == f"tms_rule={rule!r}: one of slime-v0.2.4, slime-v0.3.1, slime-main, miles-main"
    assert given == {}  # refused before any reading


def test_rules_table_collect_observation_from_recordings():
    data = json.loads((RECORDINGS / "h200_node_healthy.json").read_text())["observation"]
    obs = NodeObservation.from_dict(data)
    assert isinstance(obs.gpus, tuple) and all(isinstance(g, GpuInfo) for g in obs.gpus)
    assert isinstance(obs.tms, TmsReading) and isinstance(obs.efa_devices, tuple)
    assert NodeObservation.from_dict(obs.to_dict()) == obs
    for health in (None, {}):  # a node whose rlcheck predates health, or sent none
        assert NodeObservation.from_dict({**data, "health": health}).health is None
    older = {k: v for k, v in data.items() if k not in ("health", "efa_devices", "nccl_version")}
    old = NodeObservation.from_dict(older)
    assert (old.health, old.efa_devices, old.nccl_version) == (None, (), "")
    with pytest.raises(ValueError, match=r"node observation keys \['from_the_future'\]"):
        NodeObservation.from_dict({**data, "from_the_future": 1})


def test_rules_table_collect_observation_with_health_and_efa_loads_back():
    data = json.loads((RECORDINGS / "h200_node_healthy.json").read_text())["observation"]
    health = HealthReading(source="NVML (driver 580.65.06)", pci_gpus=8, fallback="",
                           gpus=(GpuHealth(bus_id="00000000:18:00.0", throttle=("Idle",)),))
    obs = dataclasses.replace(NodeObservation.from_dict(data), health=health, efa_devices=("rdmap79s0", "rdmap80s0"))
    loaded = NodeObservation.from_dict(json.loads(json.dumps(obs.to_dict())))
    assert loaded == obs and loaded.health == health and loaded.efa_devices == ("rdmap79s0", "rdmap80s0")
