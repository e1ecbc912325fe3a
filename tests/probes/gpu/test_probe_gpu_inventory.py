"""gpu_node_inventory: a declared profile is a claim about this machine; every rule on both sides of its boundary."""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest

from rlcheck.hardware import get_profile
from rlcheck.probes.gpu.gpu_inventory import Inventory, collect_inventory, evaluate_inventory
from rlcheck.probes.node import gpus
from rlcheck.verdict import Status
from tests.registry_cases_inventory import inventory

H200 = get_profile("h200")
HEALTHY = inventory("h200_8gpu_healthy.json")
DEAD = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"


def _with(n: int, **changes: object) -> Inventory:
    return dataclasses.replace(HEALTHY, gpus=HEALTHY.gpus[:1] * n, **changes)  # type: ignore[arg-type]


# (reading, profile, declared, status, fragment of the summary)
RULES = [
    ("h200_8gpu_healthy.json", H200, True, Status.PASS, "8 x NVIDIA H200, as --hardware=h200 declares"),
    ("h200_8gpu_healthy.json", H200, False, Status.PASS, "detected as h200"),
    ("h200_8gpu_healthy.json", None, False, Status.SKIP, "no hardware profile to hold them to"),
    ("dead_driver_smi_exit9.json", H200, True, Status.FAIL, DEAD),
    ("dead_driver_smi_exit9.json", H200, True, Status.FAIL, "declares 8 x NVIDIA H200 141GB HBM3e (SXM) per node"),
    ("dead_driver_smi_exit9.json", None, False, Status.UNKNOWN, DEAD),
    ("dead_driver_smi_exit9.json", H200, False, Status.UNKNOWN, "could not be read"),
    ("no_devices_found_exit6.json", H200, True, Status.FAIL, "No devices were found"),
    ("driver_hung.json", H200, True, Status.FAIL, "did not answer within 30 s"),
    ("driver_hung.json", None, False, Status.UNKNOWN, "did not answer within 30 s"),
    ("pod_without_gpus.json", H200, True, Status.UNKNOWN, "cannot see the node's GPUs: 8 NVIDIA GPU(s)"),
    ("pod_without_gpus.json", None, False, Status.UNKNOWN, "cannot see the node's GPUs"),
    ("driver_lists_none.json", H200, True, Status.FAIL, "8 NVIDIA GPU(s) on the PCI bus, the driver lists none"),
    ("driver_lists_none.json", None, False, Status.UNKNOWN, "the driver lists none"),
    ("cpu_machine.json", H200, True, Status.FAIL, "shows no GPU and no NVIDIA device"),
    ("cpu_machine.json", None, False, Status.SKIP, "not a GPU node"),
    ("h200_7_of_8.json", H200, True, Status.FAIL, "8 NVIDIA GPUs on the PCI bus, the driver lists 7"),
    ("h200_7_of_8.json", H200, False, Status.FAIL, "the driver lists 7"),
    ("h100_node.json", H200, True, Status.FAIL, "NVIDIA H100 80GB HBM3 is not NVIDIA H200"),
    ("h100_node.json", H200, False, Status.FAIL, "is not NVIDIA H200"),
    ("h200_1gpu_device.json", H200, True, Status.FAIL, "this machine shows 1 of them"),
    ("h200_1gpu_device.json", H200, False, Status.PASS, "not held to its 8 GPUs per node"),
]


@pytest.mark.parametrize(("name", "profile", "declared", "status", "fragment"), RULES,
                         ids=[f"{r[0].removesuffix('.json')}-{'declared' if r[2] else 'auto'}-{r[3].value}"
                              for r in RULES])
def test_inventory_rule(name, profile, declared, status, fragment):
    verdict = evaluate_inventory(inventory(name), profile, declared=declared)
    assert verdict.status is status, verdict.render()
    assert fragment in verdict.summary, verdict.render()
    if status in (Status.FAIL, Status.UNKNOWN):
        assert verdict.remedy, "a FAIL or UNKNOWN of this machine's GPUs says what to do"


def test_inventory_dead_driver_names_the_xid_in_details():
    verdict = evaluate_inventory(inventory("dead_driver_smi_exit9.json"), H200, declared=True)
    assert "Xid (PCI:0000:18:00): 79" in verdict.details and "reboot" in verdict.remedy


@pytest.mark.parametrize(("count", "status"), [(7, Status.FAIL), (8, Status.PASS), (9, Status.WARN)])
def test_inventory_gpu_count_boundary_of_a_declared_profile(count, status):
    reading = _with(count, pci_gpus=count, in_container=True)
    assert evaluate_inventory(reading, H200, declared=True).status is status


@pytest.mark.parametrize(("pci", "in_container", "status"), [
    (8, False, Status.PASS), (9, False, Status.FAIL), (9, True, Status.PASS), (None, False, Status.PASS)])
def test_inventory_pci_bus_against_the_driver(pci, in_container, status):
    """More GPUs on the bus than the driver lists is a lost GPU on a host; a container may be given a part of them."""
    reading = _with(8, pci_gpus=pci, in_container=in_container)
    assert evaluate_inventory(reading, H200, declared=True).status is status


@pytest.mark.parametrize(("pci", "nodes", "in_container", "declared", "status"), [
    (0, (), True, True, Status.UNKNOWN),     # a container with no GPU given to it: cannot see
    (0, (), False, True, Status.FAIL),       # a host with no NVIDIA device, declared as a GPU node
    (None, (), False, True, Status.FAIL),    # sysfs unread, no driver: nothing of the claim is seen
    (0, ("/dev/nvidiactl",), True, True, Status.FAIL),  # the driver is reachable and lists nothing
    (0, (), True, False, Status.SKIP),       # auto in a container without GPUs and none on the bus
    (1, (), False, False, Status.UNKNOWN),   # auto: a GPU on the bus the driver does not reach
])
def test_inventory_no_gpu_listed(pci, nodes, in_container, declared, status):
    reading = Inventory(gpus=(), source="none", pci_gpus=pci, driver_nodes=nodes, in_container=in_container)
    profile = H200 if declared else None
    assert evaluate_inventory(reading, profile, declared=declared).status is status


def test_inventory_recording_with_an_unknown_key_is_refused():
    with pytest.raises(ValueError, match="'gpu_count'"):
        Inventory.from_dict({"gpus": [], "source": "x", "gpu_count": 3})


def _fake_smi(folder: Path, body: str) -> None:
    tool = folder / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)


def _pci(folder: Path, count: int) -> Path:
    for i in range(count + 1):  # one more device that is not a GPU (an NVSwitch)
        dev = folder / "pci" / f"0000:{i:02x}:00.0"
        dev.mkdir(parents=True)
        (dev / "vendor").write_text("0x10de\n")
        (dev / "class").write_text("0x030200\n" if i < count else "0x068000\n")
    return folder / "pci"


def test_collect_inventory_reads_the_dead_driver_in_its_own_words(tmp_path, monkeypatch):
    """The collector on a machine whose nvidia-smi fails as a dead driver's does (exit 9, its two lines)."""
    (tmp_path / "said.txt").write_text(f"{DEAD}.\nMake sure that the latest NVIDIA driver is installed and running.\n")
    _fake_smi(tmp_path, f"cat '{tmp_path}/said.txt'; exit 9")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    reading = collect_inventory(5.0, pci_dir=_pci(tmp_path, 8), driver_nodes=(tmp_path / "absent",),
                                container_markers=(tmp_path / "absent",))
    assert reading.error.startswith("nvidia-smi ended with exit code 9") and DEAD in reading.error
    assert "\n" not in reading.error and reading.pci_gpus == 8 and reading.gpus == ()
    verdict = evaluate_inventory(reading, H200, declared=True)
    assert verdict.status is Status.FAIL and DEAD in verdict.summary


def test_collect_inventory_reads_gpus_through_nvidia_smi(tmp_path, monkeypatch):
    rows = "\\n".join(["NVIDIA H200, 9.0, 143771, 580.95.05"] * 8)
    _fake_smi(tmp_path, f"printf '{rows}\\n'")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    reading = collect_inventory(5.0, pci_dir=_pci(tmp_path, 8), driver_nodes=(tmp_path,),
                                container_markers=())
    assert len(reading.gpus) == 8 and reading.error == "" and reading.driver_nodes == (str(tmp_path),)
    assert evaluate_inventory(reading, H200, declared=True).status is Status.PASS


def test_gpus_error_is_one_line(tmp_path, monkeypatch):
    """nvidia-smi's two lines become one: a verdict summary is one line."""
    _fake_smi(tmp_path, "echo first; echo second; exit 9")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert gpus.read_gpus(5.0).error == "nvidia-smi ended with exit code 9: first | second"
