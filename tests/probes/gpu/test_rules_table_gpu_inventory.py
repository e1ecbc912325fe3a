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
from rlcheck.probes.node.gpus import GpuInfo
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
