"""GPU health as one node reads it (rlcheck.probes.node.gpu_health) as a rule table: `nvidia-smi -q` text into
per-GPU fields (sections nested by indentation, uncorrectable ECC in both layouts, yes/no words, numbers with their
units, retired pages, throttle reasons in both section names), `nvidia-smi nvlink -e` in both layouts, NVIDIA GPUs
on the PCI bus, readings built from recorded texts and NVML dumps, recordings loaded back, and the collector's one
budget: NVML first, nvidia-smi when NVML gives nothing, and a reading that could not be taken carrying its error
(never an empty pass). The judges of these readings are tests/probes/cluster/test_rules_table_gpu_health.py."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import pytest

from rlcheck.probes.node import gpu_health as gh
from rlcheck.probes.node import gpu_kernel_log
from rlcheck.probes.node.gpu_health import GpuHealth, HealthReading
from rlcheck.probes.node.gpu_kernel_log import XidEvent
from rlcheck.process import subproc
from tests.gpu_health_recordings import nvml_reading, text
from tests.nvml_replay import dump

HEADER = "==============NVSMI LOG==============\n\nDriver Version    : 580.65.06\nAttached GPUs     : {n}\n"


def q(*gpus: str) -> str:
    """`nvidia-smi -q` text: the log's header, then each GPU's block ('GPU <bus>' and its indented lines)."""
    return HEADER.format(n=len(gpus)) + "".join(gpus)


def block(bus: str, body: str) -> str:
    return f"GPU {bus}\n" + "".join(f"    {line}\n" if line.strip() else "\n" for line in body.splitlines())


def test_rules_table_gpu_health_smi_sections_nest_by_indentation():
    body = ("Product Name : NVIDIA H200\nPersistence Mode : Enabled\nECC Errors\n    Volatile\n"
            "        DRAM Uncorrectable : 2\n    Aggregate\n        DRAM Uncorrectable : 5\n"
            "Remapped Rows\n    Pending : Yes\n\nEmpty Value :\nTrailing : x : y")
    assert gh.parse_smi_q("Attached GPUs : 1\nAfter : header\n" + block("00000000:18:00.0", body)) == [{
        ("Bus Id",): "00000000:18:00.0", ("Product Name",): "NVIDIA H200", ("Persistence Mode",): "Enabled",
        ("ECC Errors", "Volatile", "DRAM Uncorrectable"): "2", ("ECC Errors", "Aggregate", "DRAM Uncorrectable"): "5",
        ("Remapped Rows", "Pending"): "Yes", ("Trailing",): "x : y"}]
    # 'Empty Value :' has no value: it opens a section, like 'ECC Errors'


@pytest.mark.parametrize(("line", "bus"), [
    ("GPU 00000000:18:00.0", "00000000:18:00.0"), ("GPU 0000:2a:00.7   ", "0000:2a:00.7"),
    ("GPU 00000000:18:00.8", None),  # a PCI function is 0-7
    ("GPU 00000000:18:00", None), ("  GPU 00000000:18:00.0", None), ("GPU 00000000:18:00.0 x", None),
    ("GPU 0: NVIDIA H200", None),
])
def test_rules_table_gpu_health_smi_gpu_header(line, bus):
    found = gh.parse_smi_q(f"{line}\n    Persistence Mode : Enabled\n")
    assert [g[("Bus Id",)] for g in found] == ([bus] if bus else [])


def test_rules_table_gpu_health_smi_each_gpu_its_own_fields():
    text_ = q(block("00000000:18:00.0", "Persistence Mode : Enabled\nClocks\n    SM : 450 MHz"),
              block("00000000:2A:00.0", "Persistence Mode : Disabled"))
    first, second = gh.parse_smi_q(text_)
    assert first == {("Bus Id",): "00000000:18:00.0", ("Persistence Mode",): "Enabled", ("Clocks", "SM"): "450 MHz"}
    assert second == {("Bus Id",): "00000000:2A:00.0", ("Persistence Mode",): "Disabled"}  # the stack restarts


ECC_NEW = ("ECC Errors\n    Volatile\n        SRAM Correctable : 9\n        SRAM Uncorrectable Parity : {a}\n"
           "        SRAM Uncorrectable SEC-DED : {b}\n        DRAM Correctable : 7\n        DRAM Uncorrectable : {c}\n"
           "    Aggregate\n        SRAM Uncorrectable Parity : {d}\n        DRAM Uncorrectable : {e}\n"
           "        SRAM Threshold Exceeded : No\n    Aggregate Uncorrectable SRAM Sources\n        SRAM L2 : 40")
ECC_OLD = ("ECC Errors\n    Volatile\n        Single Bit\n            Device Memory : 8\n            Total : 8\n"
           "        Double Bit\n            Device Memory : {a}\n            Total : {b}\n    Aggregate\n"
           "        Double Bit\n            Total : {c}")


@pytest.mark.parametrize(("body", "volatile", "aggregate"), [
    (ECC_NEW.format(a=1, b=2, c=3, d=4, e=5), 6, 9),  # every Uncorrectable line of the section, nothing else
    (ECC_NEW.format(a=0, b=0, c=0, d=0, e=0), 0, 0),
    (ECC_NEW.format(a="N/A", b="N/A", c="N/A", d="N/A", e="N/A"), None, None),  # ECC off: not known, not 0
    (ECC_NEW.format(a="N/A", b=2, c="N/A", d=1, e="N/A"), 2, 1),
    (ECC_OLD.format(a=3, b=3, c=11), 3, 11),  # the older layout: Double Bit's Total only, not its parts too
    ("ECC Errors\n    Volatile\n        Device Memory\n            Double Bit\n                Total : 4",
     4, None),  # a Double Bit Total one section deeper still counts
    ("Persistence Mode : Enabled", None, None),
])
def test_rules_table_gpu_health_smi_uncorrectable_ecc(body, volatile, aggregate):
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", body))
    health = gh.gpu_health(gpu)
    assert (health.ecc_volatile_uncorrected, health.ecc_aggregate_uncorrected) == (volatile, aggregate)


@pytest.mark.parametrize(("value", "read"), [
    ("Yes", True), ("yes", True), ("YES", True), ("Enabled", True), ("No", False), ("Disabled", False),
    ("DISABLED", False), ("N/A", None), ("", None), ("Enabled (forced)", None),
])
def test_rules_table_gpu_health_smi_yes_no_words(value, read):
    body = (f"Persistence Mode : {value}\nRetired Pages\n    Pending Page Blacklist : {value}\n"
            f"Remapped Rows\n    Pending : {value}\n    Remapping Failure Occurred : {value}")
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", body))
    health = gh.gpu_health(gpu)
    assert (health.persistence, health.retired_pending, health.remap_pending, health.remap_failed) == (read,) * 4


def test_rules_table_gpu_health_smi_yes_no_absent_is_unknown():
    assert gh._yes(None) is None


LINK = ("GPU Link Info\n    PCIe Generation\n        Max : {gm}\n        Current : {gc}\n        Device Current : 1\n"
        "        Device Max : {gd}\n        Host Max : N/A\n    Link Width\n        Max : {wm}\n"
        "        Current : {wc}\n"
        "Clocks\n    Graphics : 11 MHz\n    SM : {sm}\n    Memory : {mem}\nApplications Clocks\n    SM : 12 MHz\n"
        "    Memory : 13 MHz\nMax Clocks\n    Graphics : 14 MHz\n    SM : {smx}\n    Memory : {memx}")


@pytest.mark.parametrize(("values", "fields"), [
    (dict(gm=5, gc=4, gd=6, wm="16x", wc="8x", sm="450 MHz", mem="3201 MHz", smx="1980 MHz", memx="3202 MHz"),
     dict(pcie_gen=4, pcie_gen_max=5, pcie_gen_gpu_max=6, pcie_width=8, pcie_width_max=16, sm_clock_mhz=450,
          sm_clock_max_mhz=1980, mem_clock_mhz=3201, mem_clock_max_mhz=3202)),
    (dict(gm="N/A", gc="N/A", gd="N/A", wm="N/A", wc="x16", sm="N/A", mem="", smx="MHz 5", memx="0 MHz"),
     dict(pcie_gen=None, pcie_gen_max=None, pcie_gen_gpu_max=None, pcie_width=None, pcie_width_max=None,
          sm_clock_mhz=None, sm_clock_max_mhz=None, mem_clock_mhz=None, mem_clock_max_mhz=0)),
])
def test_rules_table_gpu_health_smi_clocks_and_link(values, fields):
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", LINK.format(**values)))
    assert gh.clocks_and_link(gpu) == fields
    assert {k: getattr(gh.gpu_health(gpu), k) for k in fields} == fields


def test_rules_table_gpu_health_smi_clocks_and_link_from_their_own_sections_in_any_order():
    body = ("Applications Clocks\n    SM : 12 MHz\nMax Clocks\n    SM : 1980 MHz\nClocks\n    SM : 450 MHz\n"
            "Other Link\n    Max : 1\n    Device Max : 2\nGPU Link Info\n    Link Width\n        Max : 16x\n"
            "    PCIe Generation\n        Max : 5\n        Device Max : 6\n        Current : 4")
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", body))
    fields = gh.clocks_and_link(gpu)
    assert (fields["sm_clock_mhz"], fields["sm_clock_max_mhz"]) == (450, 1980)
    assert (fields["pcie_gen"], fields["pcie_gen_max"], fields["pcie_gen_gpu_max"], fields["pcie_width_max"]) == (
        4, 5, 6, 16)


def test_rules_table_gpu_health_smi_clocks_and_link_absent():
    assert set(gh.clocks_and_link({("Bus Id",): "x"}).values()) == {None}


@pytest.mark.parametrize(("single", "double", "pages"), [
    ("2", "1", 3), ("0", "0", 0), ("N/A", "4", 4), ("N/A", "N/A", None),
])
def test_rules_table_gpu_health_smi_retired_pages(single, double, pages):
    body = (f"Retired Pages\n    Single Bit ECC : {single}\n    Double Bit ECC : {double}\n"
            "    Pending Page Blacklist : No\nRetired Pagesx\n    Single Bit ECC : 50\nECC Errors\n    Volatile\n"
            "        Double Bit ECC : 70")
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", body))
    assert gh.gpu_health(gpu).retired_pages == pages


def test_rules_table_gpu_health_smi_retired_pages_grouped_deeper():
    body = "Retired Pages\n    By Cause\n        Single Bit ECC : 2\n        Double Bit ECC : 5"
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", body))
    assert gh.gpu_health(gpu).retired_pages == 7  # the counter's own name decides, however deep


def test_rules_table_gpu_health_smi_throttle_reason_under_a_subsection_keeps_its_name():
    body = "Clocks Event Reasons\n    HW Slowdown\n        HW Thermal Slowdown : Active\n        Other : Not Active"
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", body))
    assert gh.gpu_health(gpu).throttle == ("HW Thermal Slowdown",)


@pytest.mark.parametrize("section", ["Clocks Event Reasons", "Clocks Throttle Reasons"])
def test_rules_table_gpu_health_smi_throttle_reasons_active_only(section):
    body = (f"{section}\n    Idle : Not Active\n    SW Power Cap : Active\n    HW Slowdown : Active\n"
            "        HW Thermal Slowdown : Active\n        HW Power Brake Slowdown : Not Active\n"
            f"{section} Counters\n    SW Thermal Slowdown : Active\nOther\n    Sync Boost : Active")
    (gpu,) = gh.parse_smi_q(block("00000000:18:00.0", body))
    assert gh.gpu_health(gpu).throttle == ("SW Power Cap", "HW Slowdown", "HW Thermal Slowdown")


def test_rules_table_gpu_health_smi_recorded_h200_whole():
    (gpu,) = gh.parse_smi_q(text("h200_nvidia_smi_q.txt"))
    assert gh.gpu_health(gpu) == GpuHealth(
        bus_id="00000000:00:06.0", persistence=True, ecc_volatile_uncorrected=0, ecc_aggregate_uncorrected=0,
        retired_pending=None, remap_pending=False, remap_failed=False, throttle=("Idle",), retired_pages=None,
        sm_clock_mhz=450, sm_clock_max_mhz=1980, mem_clock_mhz=3201,
        mem_clock_max_mhz=3201, pcie_gen=5, pcie_gen_max=5, pcie_gen_gpu_max=5,
        pcie_width=16, pcie_width_max=16)


@pytest.mark.parametrize(("text_", "errors"), [
    ("GPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: Replay Errors: 0\n\t Link 1: CRC Errors: 17\n"
     "\t Link 1: Recovery Errors: 2\nGPU 1: NVIDIA H200 (UUID: GPU-2)\n\t Link 3: CRC Data Errors: 5\n",
     {0: ((1, "CRC Errors", 17), (1, "Recovery Errors", 2)), 1: ((3, "CRC Data Errors", 5),)}),
    ("GPU 0: NVIDIA H200\n\t Link 0: \n\t\t Replay Errors: 0\n\t\t Recovery Errors: 2\n\t Link 2: \n"
     "\t\t CRC Errors: 9\n", {0: ((0, "Recovery Errors", 2), (2, "CRC Errors", 9))}),
    ("GPU 4: NVIDIA H200\n\t Link 0: Replay Errors: 0\n", {4: ()}),  # a GPU without errors is still listed
    ("\t Link 0: CRC Errors: 3\nGPU 0: NVIDIA H200\n\t\t Replay Errors: 4\n", {0: ()}),  # no GPU, then no link yet
    ("GPU 0: x\n\t Link 0: 3 errors: 4\n\t Link 1: CRC Errors (flit): 6\n\t Link 1: Data: 7\n",
     {0: ((1, "CRC Errors", 6),)}),  # the name ends before what follows it; a counter that says no Error
    ("", {}),
])
def test_rules_table_gpu_health_nvlink_errors(text_, errors):
    assert gh.parse_nvlink_errors(text_) == errors


def test_rules_table_gpu_health_nvlink_errors_recorded():
    assert gh.parse_nvlink_errors(text("nvlink_e_crc_only.txt")) == {0: ((1, "Replay Errors", 4),
                                                                         (1, "CRC Errors", 17))}


def _pci(root: Path, devices: dict[str, tuple[str | None, str | None]]) -> Path:
    root.mkdir()
    for name, (vendor, klass) in devices.items():
        (root / name).mkdir()
        for field, value in (("vendor", vendor), ("class", klass)):
            if value is not None:
                (root / name / field).write_text(value + "\n")
    return root


@pytest.mark.parametrize(("devices", "count"), [
    ({"a": ("0x10de", "0x030200"), "b": ("0x10de", "0x030000"), "c": ("0x10de", "0x068000"),
      "d": ("0x10de", "0x040300"), "e": ("0x8086", "0x030000"), "f": ("0x10DE", "0x030200")}, 2),
    ({"a": ("0x10de", "0x030200"), "b": (None, "0x030200"), "c": ("0x10de", None)}, 1),  # unreadable: skipped
    ({"a": ("0x10de", "0x030100")}, 0), ({"a": ("0x10de", "0x0302")}, 1),
    ({}, 0),
])
def test_rules_table_gpu_health_pci_gpus(tmp_path, devices, count):
    assert gh.count_pci_gpus(_pci(tmp_path / "pci", devices)) == count


def test_rules_table_gpu_health_pci_unreadable_is_unknown(tmp_path):
    assert gh.count_pci_gpus(tmp_path / "absent") is None
    assert gh.PCI_DEVICES == Path("/sys/bus/pci/devices")


XID_LINE = "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."


def test_rules_table_gpu_health_reading_from_texts():
    smi = q(block("00000000:18:00.0", "Persistence Mode : Enabled"),
            block("00000000:2A:00.0", "Persistence Mode : Disabled"))
    got = gh.health_from_texts(source="nvidia-smi -q (/x)", smi_q=smi,
                               nvlink_e="GPU 1: x\n\t Link 2: CRC Errors: 3\nGPU 0: y\n", kernel_log=XID_LINE,
                               kernel_tool="dmesg", kernel_log_error="", pci_gpus=2)
    assert got == HealthReading(
        source="nvidia-smi -q (/x)", gpus=(GpuHealth(bus_id="00000000:18:00.0", persistence=True),
                                           GpuHealth(bus_id="00000000:2A:00.0", persistence=False,
                                                     nvlink_errors=((2, "CRC Errors", 3),))),
        kernel_log="dmesg", xids=(XidEvent(bus_id="0000:18:00", code=79, line=XID_LINE),), off_bus=(XID_LINE,),
        pci_gpus=2)
    assert gh.health_from_texts(source="none", smi_q="") == HealthReading(source="none")
    assert gh.health_from_texts(source="s", smi_q="", kernel_log_error="dmesg: exit code 1").kernel_log_error == (
        "dmesg: exit code 1")


def test_rules_table_gpu_health_reading_from_nvml():
    got = gh.health_from_nvml({"driver": "580.65.06", "gpus": [dump("nvml_h200_idle.json")["gpus"][0]]},
                              kernel_log=XID_LINE, kernel_tool="journalctl", kernel_log_error="e", pci_gpus=3)
    assert got == dataclasses.replace(nvml_reading(log=""), source="NVML (driver 580.65.06)", kernel_log="journalctl",
                                      kernel_log_error="e", pci_gpus=3,
                                      xids=(XidEvent(bus_id="0000:18:00", code=79, line=XID_LINE),),
                                      off_bus=(XID_LINE,))
    assert gh.health_from_nvml({}) == HealthReading(source="NVML (driver ?)")


def test_rules_table_gpu_health_reading_loads_back():
    reading = HealthReading(source="s", gpus=(GpuHealth(bus_id="b", throttle=("Idle",),
                                                        nvlink_errors=((1, "CRC Errors", 3),)),),
                            xids=(XidEvent(bus_id="0000:18:00", code=79, line="l"),), off_bus=("l",), pci_gpus=1,
                            fallback="NVML: x", error="", kernel_log="dmesg")
    as_json = {"source": "s", "gpus": [{"bus_id": "b", "throttle": ["Idle"], "nvlink_errors": [[1, "CRC Errors", 3]]}],
               "xids": [{"bus_id": "0000:18:00", "code": 79, "line": "l"}], "off_bus": ["l"], "pci_gpus": 1,
               "fallback": "NVML: x", "kernel_log": "dmesg"}
    assert HealthReading.from_dict(as_json) == reading
    assert HealthReading.from_dict({"source": "s", "gpus": [{"bus_id": "b"}]}) == HealthReading(
        source="s", gpus=(GpuHealth(bus_id="b"),))  # an older node's reading without the later fields
    assert HealthReading.from_dict({"source": "none", "error": "nvidia-smi is not on PATH"}) == HealthReading(
        source="none", error="nvidia-smi is not on PATH")  # no GPU read: no list at all


def _done(rc: int | None, out: str = "", err: str = "") -> subproc.Completed:
    return subproc.Completed(argv=("x",), returncode=rc, stdout=out, stderr=err, timed_out=rc is None)


SMI_Q = q(block("00000000:18:00.0", "Persistence Mode : Enabled"))


@pytest.fixture
def node(monkeypatch):
    """The collector's tools scripted: the kernel log, sysfs, nvidia-smi's path and answers; a clock that each
    child process moves by 3 s; every call kept with the seconds it was given."""
    now, calls = [0.0], []
    script: dict[str, object] = {"smi": "/usr/bin/nvidia-smi", "-q": _done(0, SMI_Q),
                                 "nvlink": _done(0, "GPU 0: x\n\t Link 0: CRC Errors: 2\n")}

    def kernel_log(timeout_s):
        calls.append(("kernel log", timeout_s))
        now[0] += 3.0
        return "[1.0] boot\n" + XID_LINE, "dmesg", ""

    def run(argv, *, timeout_s):
        calls.append((" ".join(argv), timeout_s))
        now[0] += 3.0
        return script[argv[1]]

    monkeypatch.setattr(gpu_kernel_log, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(gh, "read_kernel_log", kernel_log)
    monkeypatch.setattr(gh, "count_pci_gpus", lambda: 1)
    monkeypatch.setattr(gh.shutil, "which", lambda name: script["smi"] if name == "nvidia-smi" else None)
    monkeypatch.setattr(gh.subproc, "run", run)

    def nvml(answer):
        def read(timeout_s):
            calls.append(("nvml", timeout_s))
            now[0] += 3.0
            return answer
        return read
    return script, calls, nvml


KERNEL = dict(kernel_log="dmesg", xids=(XidEvent(bus_id="0000:18:00", code=79, line=XID_LINE),), off_bus=(XID_LINE,),
              pci_gpus=1)


def test_rules_table_gpu_health_collector_nvml_first(node):
    script, calls, nvml = node
    got = gh.collect_gpu_health(20.0, nvml=nvml(({"driver": "580", "gpus": dump("nvml_h200_idle.json")["gpus"]}, "")))
    assert got == dataclasses.replace(nvml_reading(log=""), source="NVML (driver 580)", **KERNEL)
    assert calls == [("kernel log", 10.0), ("nvml", 8.5)]  # half the budget, then half of what is left


def test_rules_table_gpu_health_collector_falls_back_to_nvidia_smi(node):
    script, calls, nvml = node
    got = gh.collect_gpu_health(20.0, nvml=nvml(({}, "pynvml (nvidia-ml-py) is not installed")))
    assert got == HealthReading(source="nvidia-smi -q (/usr/bin/nvidia-smi)",
                                gpus=(GpuHealth(bus_id="00000000:18:00.0", persistence=True,
                                                nvlink_errors=((0, "CRC Errors", 2),)),),
                                fallback="NVML: pynvml (nvidia-ml-py) is not installed", **KERNEL)
    assert calls == [("kernel log", 10.0), ("nvml", 8.5), ("/usr/bin/nvidia-smi -q", 14.0),
                     ("/usr/bin/nvidia-smi nvlink -e", 11.0)]


def test_rules_table_gpu_health_collector_late_calls_get_the_floor(node):
    script, calls, nvml = node
    gh.collect_gpu_health(4.0, nvml=nvml(({}, "x")))
    assert calls == [("kernel log", 2.0), ("nvml", 1.0), ("/usr/bin/nvidia-smi -q", 2.0),
                     ("/usr/bin/nvidia-smi nvlink -e", 2.0)]


def test_rules_table_gpu_health_collector_nvlink_failure_reads_no_counters(node):
    script, _, nvml = node
    script["nvlink"] = _done(3, "GPU 0: x\n\t Link 0: CRC Errors: 2\n", "NVLink not supported")
    (gpu,) = gh.collect_gpu_health(20.0, nvml=nvml(({}, "x"))).gpus
    assert gpu.nvlink_errors == ()


@pytest.mark.parametrize(("smi", "q_done", "source", "error"), [
    (None, None, "none", "nvidia-smi is not on PATH"),
    ("/usr/bin/nvidia-smi", _done(9, "first\nsecond\n", "third\n"), "/usr/bin/nvidia-smi",
     "nvidia-smi -q ended with exit code 9: second\nthird"),
    ("/usr/bin/nvidia-smi", _done(None, SMI_Q), "/usr/bin/nvidia-smi",
     "nvidia-smi -q ended with killed at its deadline: GPU 00000000:18:00.0\n    Persistence Mode : Enabled"),
])
def test_rules_table_gpu_health_collector_without_a_reading_says_why(node, smi, q_done, source, error):
    script, calls, nvml = node
    script.update({"smi": smi, "-q": q_done})
    got = gh.collect_gpu_health(20.0, nvml=nvml(({}, "NVMLError_DriverNotLoaded: Driver Not Loaded")))
    assert got == HealthReading(source=source, error=error, fallback="NVML: NVMLError_DriverNotLoaded: Driver Not "
                                                                     "Loaded", **KERNEL)
    assert not any("nvlink" in c[0] for c in calls)  # nothing more asked of a tool that did not answer


@pytest.mark.parametrize(("dump_", "why"), [({"driver": "580", "gpus": []}, ""), ({}, "x")])
def test_rules_table_gpu_health_collector_unread_kernel_log_is_said(node, monkeypatch, dump_, why):
    """NVML or nvidia-smi: a kernel log neither tool gave reaches the reading (the Xid verdict is UNKNOWN then)."""
    _, _, nvml = node
    monkeypatch.setattr(gh, "read_kernel_log", lambda t: ("", "", "dmesg: exit code 1; journalctl: not on PATH"))
    got = gh.collect_gpu_health(20.0, nvml=nvml((dump_, why)))
    assert (got.kernel_log, got.kernel_log_error, got.xids) == ("", "dmesg: exit code 1; journalctl: not on PATH", ())


def test_rules_table_gpu_health_collector_default_budget(node):
    _, calls, nvml = node
    gh.collect_gpu_health(nvml=nvml(({"gpus": []}, "")))
    assert calls == [("kernel log", 10.0), ("nvml", 8.5)]
