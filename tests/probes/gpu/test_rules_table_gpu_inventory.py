"""gpu_node_inventory's judge as a table of whole verdicts (status, summary, details, remedy) on both sides of each
rule: driver error, GPUs unseen by this process, a driver that lists none, no GPU at all, no profile, another model,
GPUs missing from the driver's list, a detected profile, fewer / more / as many GPUs as declared
(rlcheck.probes.gpu.gpu_inventory.evaluate_inventory, pure; the reading's JSON round trip)."""

from __future__ import annotations

import json

import pytest

from rlcheck.hardware import get_profile
from rlcheck.probes.gpu import gpu_inventory as inv_mod
from rlcheck.probes.gpu.gpu_inventory import Inventory, evaluate_inventory
from rlcheck.probes.node.gpus import GpuInfo, GpuReading
from rlcheck.verdict import Status

H200_PROFILE = get_profile("h200")
H200 = GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=143771)
H100 = GpuInfo(name="NVIDIA H100 80GB HBM3", compute_capability="9.0", memory_mib=81559)
A100 = GpuInfo(name="NVIDIA A100-SXM4-80GB", compute_capability="8.0", memory_mib=81920)
SMI = "nvidia-smi (/usr/bin/nvidia-smi)"
NODES = ("/dev/nvidiactl", "/proc/driver/nvidia/version")
XIDS = tuple(f"NVRM: Xid (PCI:0000:{b}:00): 79, pid=0, name=python3, GPU has fallen off the bus." for b in
             ("18", "2a", "3a", "5d"))
CLAIM = "--hardware=h200 declares 8 x NVIDIA H200 141GB HBM3e (SXM) per node"
DEAD = "nvidia-smi ended with exit code 9: NVIDIA-SMI has failed"
BUS_8 = f"read with {SMI}; NVIDIA GPUs on the PCI bus: 8; driver device nodes: none"
XID_TAIL = f"; kernel log: {XIDS[1]} | {XIDS[2]} | {XIDS[3]}"


def inv(gpus=(), *, error="", pci=8, nodes=NODES, container=False, xids=(), source=SMI) -> Inventory:
    return Inventory(gpus=tuple(gpus), source=source, error=error, pci_gpus=pci, driver_nodes=nodes,
                     in_container=container, xids=xids)


ROWS = [
    # (id, reading, declared, profile, status, summary, details, remedy)
    ("dead-driver-declared", inv(error=DEAD, nodes=(), xids=XIDS), True, H200_PROFILE, Status.FAIL,
     f"{CLAIM}; the NVIDIA driver does not answer: {DEAD}", BUS_8 + XID_TAIL, inv_mod.REBOOT),
    ("dead-driver-auto", inv(error=DEAD, nodes=(), xids=XIDS[:1]), False, H200_PROFILE, Status.UNKNOWN,
     f"the NVIDIA driver does not answer: {DEAD}: this machine's GPUs could not be read, so nothing about them is "
     "known", f"{BUS_8}; kernel log: {XIDS[0]}", inv_mod.REBOOT),
    ("dead-driver-declared-without-profile", inv(error=DEAD, nodes=()), True, None, Status.UNKNOWN,
     f"the NVIDIA driver does not answer: {DEAD}: this machine's GPUs could not be read, so nothing about them is "
     "known", BUS_8, inv_mod.REBOOT),
    ("bare-metal-driver-not-loaded", inv(nodes=(), source="no nvidia-smi"), True, H200_PROFILE, Status.FAIL,
     "8 NVIDIA GPU(s) on the PCI bus, no NVIDIA driver is loaded (no nvidia-smi)",
     "read with no nvidia-smi; NVIDIA GPUs on the PCI bus: 8; driver device nodes: none", inv_mod.REBOOT),
    ("bare-metal-driver-not-loaded-auto", inv(nodes=(), source="no nvidia-smi"), False, None, Status.UNKNOWN,
     "8 NVIDIA GPU(s) on the PCI bus, no NVIDIA driver is loaded (no nvidia-smi)",
     "read with no nvidia-smi; NVIDIA GPUs on the PCI bus: 8; driver device nodes: none", inv_mod.REBOOT),
    ("pod-not-given-gpus", inv(nodes=(), source="no nvidia-smi", container=True), True, H200_PROFILE, Status.UNKNOWN,
     "this process cannot see the node's GPUs: 8 NVIDIA GPU(s) on the PCI bus, but no NVIDIA driver is reachable "
     "here (no nvidia-smi)", "read with no nvidia-smi; NVIDIA GPUs on the PCI bus: 8; driver device nodes: none",
     inv_mod.UNSEEN),
    ("container-sysfs-hidden", inv(nodes=(), pci=0, container=True, source="no nvidia-smi"), True, H200_PROFILE,
     Status.UNKNOWN, "this process cannot see the node's GPUs: a container, but no NVIDIA driver is reachable here "
     "(no nvidia-smi)", "read with no nvidia-smi; NVIDIA GPUs on the PCI bus: 0; driver device nodes: none",
     inv_mod.UNSEEN),
    ("driver-lists-none-declared", inv(), True, H200_PROFILE, Status.FAIL,
     f"8 NVIDIA GPU(s) on the PCI bus, the driver lists none ({SMI})",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 8; driver device nodes: {NODES[0]}, {NODES[1]}", inv_mod.REBOOT),
    ("driver-lists-none-auto", inv(nodes=NODES[:1]), False, None, Status.UNKNOWN,
     f"8 NVIDIA GPU(s) on the PCI bus, the driver lists none ({SMI})",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 8; driver device nodes: {NODES[0]}", inv_mod.REBOOT),
    ("no-gpu-declared", inv(nodes=(), pci=0), True, H200_PROFILE, Status.FAIL,
     f"{CLAIM}; this machine shows no GPU and no NVIDIA device ({SMI})",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 0; driver device nodes: none", inv_mod.CLIENT),
    ("no-gpu-sysfs-unread-declared", inv(nodes=(), pci=None), True, H200_PROFILE, Status.FAIL,
     f"{CLAIM}; this machine shows no GPU and no NVIDIA device ({SMI})",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: unread; driver device nodes: none", inv_mod.CLIENT),
    ("no-gpu-detected-profile", inv(nodes=(), pci=0), False, H200_PROFILE, Status.SKIP,
     f"no NVIDIA device on this machine and no GPU profile declared: not a GPU node ({SMI})",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 0; driver device nodes: none", ""),
    ("no-gpu-declared-without-profile", inv(nodes=(), pci=0), True, None, Status.SKIP,
     f"no NVIDIA device on this machine and no GPU profile declared: not a GPU node ({SMI})",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 0; driver device nodes: none", ""),
    ("gpus-without-profile", inv([H200, H100], pci=2), False, None, Status.SKIP,
     "2 GPU(s) (NVIDIA H200) and no hardware profile to hold them to",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 2; driver device nodes: {NODES[0]}, {NODES[1]}", ""),
    ("other-models", inv([H100, A100, H200], pci=3), True, H200_PROFILE, Status.FAIL,
     f"{CLAIM}; this machine shows 3 x NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3, NVIDIA H200: "
     "NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3 is not NVIDIA H200 141GB HBM3e (SXM)",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 3; driver device nodes: {NODES[0]}, {NODES[1]}", inv_mod.WRONG),
    ("one-off-the-driver-list", inv([H200] * 7), True, H200_PROFILE, Status.FAIL,
     "8 NVIDIA GPUs on the PCI bus, the driver lists 7 (7 x NVIDIA H200)",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 8; driver device nodes: {NODES[0]}, {NODES[1]}", inv_mod.MISSING),
    ("off-the-list-in-a-container", inv([H200] * 8, pci=9, container=True), True, H200_PROFILE, Status.PASS,
     f"8 x NVIDIA H200, as {CLAIM}",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 9; driver device nodes: {NODES[0]}, {NODES[1]}", ""),
    ("detected", inv([H200] * 2, pci=2), False, H200_PROFILE, Status.PASS,
     "2 x NVIDIA H200 answer the driver (detected as h200; a detected profile is not held to its 8 GPUs per node)",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 2; driver device nodes: {NODES[0]}, {NODES[1]}", ""),
    ("fewer-than-declared", inv([H200] * 7, pci=7), True, H200_PROFILE, Status.FAIL,
     f"{CLAIM}; this machine shows 7 of them (7 x NVIDIA H200)",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 7; driver device nodes: {NODES[0]}, {NODES[1]}", inv_mod.MISSING),
    ("more-than-declared", inv([H200] * 9, pci=9), True, H200_PROFILE, Status.WARN,
     f"{CLAIM}; this machine shows more: 9 x NVIDIA H200 (a profile of this shape judges its floors better)",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 9; driver device nodes: {NODES[0]}, {NODES[1]}", ""),
    ("as-declared", inv([H200] * 8), True, H200_PROFILE, Status.PASS, f"8 x NVIDIA H200, as {CLAIM}",
     f"read with {SMI}; NVIDIA GPUs on the PCI bus: 8; driver device nodes: {NODES[0]}, {NODES[1]}", ""),
]


@pytest.mark.parametrize(("reading", "declared", "profile", "status", "summary", "details", "remedy"),
                         [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_rules_table_gpu_inventory_verdict(reading, declared, profile, status, summary, details, remedy):
    verdict = evaluate_inventory(reading, profile, declared=declared)
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (status, summary, details, remedy)


def test_rules_table_gpu_inventory_reading_round_trip_and_defaults():
    reading = inv([H200], xids=XIDS[:1], container=True)
    data = json.loads(json.dumps(reading.to_dict()))  # as a recording holds it
    assert data == {"gpus": [{"name": "NVIDIA H200", "compute_capability": "9.0", "memory_mib": 143771}],
                    "source": SMI, "error": "", "pci_gpus": 8, "driver_nodes": list(NODES), "in_container": True,
                    "xids": [XIDS[0]]}
    assert Inventory.from_dict(data) == reading
    assert Inventory.from_dict({"source": "none"}) == Inventory(gpus=(), source="none")
    with pytest.raises(ValueError, match=r"inventory keys \['gpu_count'\] are not known to this rlcheck"):
        Inventory.from_dict({"source": "none", "gpu_count": 8})


# collect_inventory: what it asks of the driver and the kernel log, and what it keeps (read_gpus and read_kernel_log
# answered by recordings; the PCI bus, device nodes and container markers are files under tmp_path)
SMI_DEAD = ("nvidia-smi ended with exit code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
            "driver. | Make sure that the latest NVIDIA driver is installed and running.")
KERNEL_LOG = (f"[  812.113402] {XIDS[0]}\n"
              "[  812.113519] NVRM: GPU 0000:2a:00.0: GPU has fallen off the bus.\n"
              f"[  815.201007] {XIDS[1]}\n")
KERNEL_XIDS = (f"[  812.113402] {XIDS[0]}", f"[  815.201007] {XIDS[1]}")


def _machine(tmp_path, monkeypatch, reading: GpuReading, *, marker: bool = False, k8s: bool = False):
    """A machine whose driver answers `reading` and whose kernel log holds KERNEL_LOG; the calls, as (tool, timeout)."""
    calls: list[tuple[str, float]] = []

    def read_gpus(timeout_s):
        calls.append(("gpus", timeout_s))
        return reading

    def read_kernel_log(timeout_s):
        calls.append(("kernel log", timeout_s))
        return KERNEL_LOG, "dmesg", ""

    monkeypatch.setattr(inv_mod, "read_gpus", read_gpus)
    monkeypatch.setattr(inv_mod, "read_kernel_log", read_kernel_log)
    if k8s:
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    else:
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for i in range(2):  # two H200s on the bus
        dev = tmp_path / "pci" / f"0000:{0x18 + i:02x}:00.0"
        dev.mkdir(parents=True)
        (dev / "vendor").write_text("0x10de\n")
        (dev / "class").write_text("0x030200\n")
    (tmp_path / "nvidiactl").write_text("")
    if marker:
        (tmp_path / ".dockerenv").write_text("")
    kwargs = {"pci_dir": tmp_path / "pci", "driver_nodes": (tmp_path / "nvidiactl", tmp_path / "absent-version"),
              "container_markers": (tmp_path / "absent-containerenv", tmp_path / ".dockerenv")}
    return calls, kwargs


@pytest.mark.parametrize(("reading", "xids", "read_log"), [
    (GpuReading(gpus=(), driver_version="", source=SMI, error=SMI_DEAD), KERNEL_XIDS, True),
    (GpuReading(gpus=(), driver_version="580.95.05", source=SMI), KERNEL_XIDS, True),
    (GpuReading(gpus=(H200, H200), driver_version="580.95.05", source=SMI), (), False),
], ids=["driver-error", "driver-lists-none", "driver-lists-gpus"])
def test_rules_table_gpu_inventory_collect_reads_the_kernel_log_only_when_the_driver_falls_short(
        tmp_path, monkeypatch, reading, xids, read_log):
    calls, kwargs = _machine(tmp_path, monkeypatch, reading)
    got = inv_mod.collect_inventory(**kwargs)
    assert got == Inventory(gpus=reading.gpus, source=SMI, error=reading.error, pci_gpus=2,
                            driver_nodes=(str(tmp_path / "nvidiactl"),), in_container=False, xids=xids)
    # the preflight's default: 20 s for the driver, the kernel log within 5 s of it (only the Xid events, not the
    # fallen-off-the-bus lines the log also holds)
    assert calls == [("gpus", 20.0)] + ([("kernel log", 5.0)] * read_log)


@pytest.mark.parametrize(("timeout_s", "log_s"), [(5.0, 5.0), (4.0, 4.0), (6.0, 5.0)])
def test_rules_table_gpu_inventory_collect_timeouts(tmp_path, monkeypatch, timeout_s, log_s):
    calls, kwargs = _machine(tmp_path, monkeypatch, GpuReading(gpus=(), driver_version="", source=SMI, error=SMI_DEAD))
    inv_mod.collect_inventory(timeout_s, **kwargs)
    assert calls == [("gpus", timeout_s), ("kernel log", log_s)]


@pytest.mark.parametrize(("marker", "k8s", "in_container"), [
    (False, False, False), (True, False, True), (False, True, True), (True, True, True)])
def test_rules_table_gpu_inventory_collect_in_container(tmp_path, monkeypatch, marker, k8s, in_container):
    """A container marker file or a Kubernetes pod's service variable: a runtime may deny this process the GPUs."""
    reading = GpuReading(gpus=(H200,), driver_version="580.95.05", source=SMI)
    _, kwargs = _machine(tmp_path, monkeypatch, reading, marker=marker, k8s=k8s)
    assert inv_mod.collect_inventory(**kwargs).in_container is in_container
