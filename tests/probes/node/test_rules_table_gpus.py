"""This machine's GPUs (rlcheck.probes.node.gpus) as a rule table: nvidia-smi's CSV rows (recorded ones and every odd
field), the profile the first GPU maps to, what each source answers (nvidia-smi: rows, driver, a hang, a failure;
no driver; torch in a child with the node's GPUs visible), the evidence text the report shows for each outcome, and
one reading per process. A reading that could not be taken carries its error, never 'no GPU'."""

from __future__ import annotations

import contextlib
import io
import sys
import types
from pathlib import Path

import pytest

from rlcheck.probes.node import gpus
from rlcheck.probes.node.gpus import GpuInfo, GpuReading
from rlcheck.process import subproc

SMI = Path(__file__).parents[2] / "data" / "nvidia_smi"
H200 = GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=143771)


@pytest.mark.parametrize(("recording", "first", "count", "profile"), [
    ("h200.csv", H200, 2, "h200"),
    ("h100.csv", GpuInfo(name="NVIDIA H100 80GB HBM3", compute_capability="9.0", memory_mib=81559), 1, "h100"),
    ("b200.csv", GpuInfo(name="NVIDIA B200", compute_capability="10.0", memory_mib=183359), 1, "b200"),
    ("b300.csv", GpuInfo(name="NVIDIA B300 SXM6 AC", compute_capability="10.3", memory_mib=275040), 1, "b300"),
    ("gb200.csv", GpuInfo(name="NVIDIA GB200", compute_capability="10.0", memory_mib=189471), 1, "gb200"),
    ("gb300.csv", GpuInfo(name="NVIDIA GB300", compute_capability="10.3", memory_mib=284208), 1, "gb300"),
    ("a10g_no_profile.csv", GpuInfo(name="NVIDIA A10G", compute_capability="8.6", memory_mib=23028), 1, None),
])
def test_rules_table_gpus_recorded_rows_and_profile(recording, first, count, profile):
    found = gpus.parse_nvidia_smi((SMI / recording).read_text())
    assert found == (first,) * count
    matched = gpus.match_profile(found)
    assert (matched.name if matched else None) == profile


@pytest.mark.parametrize(("line", "gpu"), [
    ("  NVIDIA H200 ,  9.0 ,  143771  ", H200),  # spaces around each field
    ("NVIDIA H200, [N/A], 143771", GpuInfo(name="NVIDIA H200", compute_capability="", memory_mib=143771)),
    ("NVIDIA H200, 9, 143771", GpuInfo(name="NVIDIA H200", compute_capability="", memory_mib=143771)),
    ("NVIDIA H200, 9.0.1, 143771", GpuInfo(name="NVIDIA H200", compute_capability="", memory_mib=143771)),
    ("NVIDIA H200, v9.0, 143771", GpuInfo(name="NVIDIA H200", compute_capability="", memory_mib=143771)),
    ("NVIDIA H200, 12.10, [N/A]", GpuInfo(name="NVIDIA H200", compute_capability="12.10", memory_mib=0)),
    ("NVIDIA H200, 9.0, 14.5", GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=0)),
    ("NVIDIA H200, 9.0, 0", GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=0)),
    # not a GPU row: no name, too few or too many fields, a header, an empty line
    (", 9.0, 143771", None), ("NVIDIA H200, 9.0", None), ("NVIDIA H200, 9.0, 143771, 580.65.06", None),
    ("", None), ("No devices were found", None),
])
def test_rules_table_gpus_csv_fields(line, gpu):
    assert gpus.parse_nvidia_smi(f"{line}\n{line}") == ((gpu, gpu) if gpu else ())


def test_rules_table_gpus_rows_after_a_line_that_is_no_row_still_count():
    text = "NVIDIA H200, 9.0, 143771\n\nWARNING: infoROM is corrupted at gpu 0000:18:00.0\nNVIDIA H200, 9.0, 143771\n"
    assert gpus.parse_nvidia_smi(text) == (H200, H200)


@pytest.mark.parametrize(("names", "profile"), [
    (["NVIDIA H200", "NVIDIA H100 80GB HBM3"], "h200"),  # the first GPU decides
    (["NVIDIA A10G", "NVIDIA H200"], None),
    (["NVIDIA GB200"], "gb200"), (["NVIDIA B200"], "b200"),
    ([], None),
])
def test_rules_table_gpus_first_gpu_picks_the_profile(names, profile):
    found = tuple(GpuInfo(name=n, compute_capability="9.0", memory_mib=1) for n in names)
    matched = gpus.match_profile(found)
    assert (matched.name if matched else None) == profile


def _done(rc: int | None, out: str = "", err: str = "") -> subproc.Completed:
    return subproc.Completed(argv=("x",), returncode=rc, stdout=out, stderr=err, timed_out=rc is None)


ROWS = "NVIDIA H200, 9.0, 143771, 580.65.06\nNVIDIA H200, 9.0, 143771, 580.65.06 \n"


@pytest.mark.parametrize(("done", "timeout", "reading"), [
    (_done(0, ROWS), 20.0, GpuReading(gpus=(H200, H200), driver_version="580.65.06",
                                      source="nvidia-smi (/opt/bin/nvidia-smi)")),
    # two drivers (a node mid-upgrade) both said, sorted; a row that is no GPU row dropped
    (_done(0, "NVIDIA H200, 9.0, 143771, 580.65.06\nNVIDIA H200, 9.0, 143771, 570.1\nwarning, text\n"
              "a, b, c, d, e\n"), 20.0,
     GpuReading(gpus=(H200, H200), driver_version="570.1,580.65.06", source="nvidia-smi (/opt/bin/nvidia-smi)")),
    (_done(0, ""), 20.0, GpuReading(gpus=(), driver_version="", source="nvidia-smi (/opt/bin/nvidia-smi)")),
    (_done(None, "half"), 2.4, GpuReading(gpus=(), driver_version="", source="/opt/bin/nvidia-smi",
                                          error="nvidia-smi did not answer within 2 s")),
    (_done(None), 2.6, GpuReading(gpus=(), driver_version="", source="/opt/bin/nvidia-smi",
                                  error="nvidia-smi did not answer within 3 s")),
    (_done(9, "first\nsecond\n", "third\n"), 20.0,
     GpuReading(gpus=(), driver_version="", source="/opt/bin/nvidia-smi",
                error="nvidia-smi ended with exit code 9: second | third")),  # the last two lines
    (_done(-6, "NVIDIA H200, 9.0, 143771, 580.65.06\n"), 20.0,
     GpuReading(gpus=(), driver_version="", source="/opt/bin/nvidia-smi",
                error="nvidia-smi ended with killed by signal SIGABRT: NVIDIA H200, 9.0, 143771, 580.65.06")),
])
def test_rules_table_gpus_nvidia_smi_answers(monkeypatch, done, timeout, reading):
    calls = []
    monkeypatch.setattr(gpus.shutil, "which", lambda name: "/opt/bin/nvidia-smi" if name == "nvidia-smi" else None)
    monkeypatch.setattr(gpus.subproc, "run", lambda argv, **kw: calls.append((argv, kw)) or done)
    assert gpus.read_gpus(timeout) == reading
    assert calls == [(["/opt/bin/nvidia-smi", "--query-gpu=name,compute_cap,memory.total,driver_version",
                       "--format=csv,noheader,nounits"], {"timeout_s": timeout})]


class _Props:
    def __init__(self, name: str, major: int, minor: int, total: int) -> None:
        self.name, self.major, self.minor, self.total_memory = name, major, minor, total


@pytest.mark.parametrize(("available", "props", "printed"), [
    (True, [_Props("NVIDIA H200", 9, 0, 143771 * 2**20 + 2**20 - 1), _Props("NVIDIA B200", 10, 0, 2**30)],
     "NVIDIA H200, 9.0, 143771\nNVIDIA B200, 10.0, 1024\n"),
    (False, [_Props("NVIDIA H200", 9, 0, 2**30)], ""),  # CUDA not usable: no GPU counted
    (True, [], ""),
])
def test_rules_table_gpus_torch_probe_prints_smi_rows(monkeypatch, available, props, printed):
    """The child's script, run here against a stand-in torch: its lines are the rows parse_nvidia_smi reads."""
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
        is_available=lambda: available, device_count=lambda: len(props), get_device_properties=props.__getitem__))
    monkeypatch.setitem(sys.modules, "torch", fake)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(gpus.TORCH_PROBE, {})
    assert out.getvalue() == printed


@pytest.mark.parametrize(("done", "reading"), [
    (_done(0, "NVIDIA H200, 9.0, 143771\n"),
     GpuReading(gpus=(H200,), driver_version="", source="torch.cuda in a child process")),
    (_done(0, ""), GpuReading(gpus=(), driver_version="", source="torch.cuda in a child process")),
    (_done(1, "", "Traceback\nModuleNotFoundError: No module named 'torch'\n"),
     GpuReading(gpus=(), driver_version="", source="torch.cuda in a child process",
                error="torch GPU probe ended with exit code 1: ModuleNotFoundError: No module named 'torch'")),
    (_done(None), GpuReading(gpus=(), driver_version="", source="torch.cuda in a child process",
                             error="torch GPU probe ended with killed at its deadline: ")),
])
def test_rules_table_gpus_torch_without_nvidia_smi(monkeypatch, done, reading):
    calls = []
    monkeypatch.setattr(gpus.shutil, "which", lambda name: None)
    monkeypatch.setattr(gpus.os.path, "exists", lambda path: path == "/dev/nvidiactl")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("RLK_KEPT", "1")
    monkeypatch.setattr(gpus.subproc, "run", lambda argv, **kw: calls.append((argv, kw)) or done)
    assert gpus.read_gpus(7.0) == reading
    (argv, kw), = calls
    assert argv == [sys.executable, "-c", gpus.TORCH_PROBE] and kw["timeout_s"] == 7.0
    assert "CUDA_VISIBLE_DEVICES" not in kw["env"] and kw["env"]["RLK_KEPT"] == "1"  # the node's GPUs, not Ray's


def test_rules_table_gpus_no_driver_is_no_gpu_without_asking(monkeypatch):
    monkeypatch.setattr(gpus.shutil, "which", lambda name: None)
    monkeypatch.setattr(gpus.os.path, "exists", lambda path: False)
    monkeypatch.setattr(gpus.subproc, "run", lambda *a, **kw: pytest.fail("nothing to ask"))
    assert gpus.read_gpus(7.0) == GpuReading(
        gpus=(), driver_version="",
        source="no nvidia-smi on PATH and no /dev/nvidiactl: no NVIDIA driver here, so no GPU")


A10G = GpuInfo(name="NVIDIA A10G", compute_capability="8.6", memory_mib=23028)


@pytest.mark.parametrize(("reading", "profile", "evidence"), [
    (GpuReading(gpus=(H200,) * 8, driver_version="580", source="nvidia-smi (/x)"), "h200",
     "auto: 8 x NVIDIA H200 via nvidia-smi (/x) -> h200"),
    (GpuReading(gpus=(H200, A10G, H200), driver_version="580", source="nvidia-smi (/x)"), "h200",
     "auto: 3 x NVIDIA A10G, NVIDIA H200 via nvidia-smi (/x) -> h200"),  # names sorted, once each
    (GpuReading(gpus=(A10G,), driver_version="", source="torch.cuda in a child process"), None,
     "auto: 1 x NVIDIA A10G via torch.cuda in a child process -> no profile matches"),
    (GpuReading(gpus=(), driver_version="", source="nvidia-smi (/x)"), None, "auto: no GPU found (nvidia-smi (/x))"),
    (GpuReading(gpus=(), driver_version="", source="/x", error="nvidia-smi did not answer within 30 s"), None,
     "auto: detection could not run (nvidia-smi did not answer within 30 s)"),
])
def test_rules_table_gpus_detection_evidence(monkeypatch, reading, profile, evidence):
    given = []
    monkeypatch.setattr(gpus, "read_gpus", lambda timeout_s: given.append(timeout_s) or reading)
    detection = gpus._detect(12.0)
    assert (detection.gpus, detection.evidence, detection.error) == (reading.gpus, evidence, reading.error)
    assert (detection.profile.name if detection.profile else None) == profile and given == [12.0]


@pytest.mark.parametrize(("first", "timeout"), [(None, 30.0), (5.0, 5.0)])
def test_rules_table_gpus_detect_reads_once_per_process(monkeypatch, first, timeout):
    given = []
    monkeypatch.setattr(gpus, "_detected", [])
    monkeypatch.setattr(gpus, "_detect", lambda timeout_s: given.append(timeout_s) or f"reading {len(given)}")
    assert gpus.detect(first) == "reading 1"
    assert gpus.detect(99.0) == "reading 1" and gpus.detect() == "reading 1"
    assert given == [timeout]
