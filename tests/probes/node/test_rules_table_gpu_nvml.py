"""GPU health through NVML (rlcheck.probes.node.gpu_nvml) as a rule table, on recorded and replayed dumps
(tests/nvml_replay.py): the calls made per GPU (the older throttle call only when the newer one fails, NVLink links
until the first that fails, counters of active links only), what a failed start, count or shutdown gives, each
field read from its answer (an error, a bool, text or a short list reads as None: not known, never healthy), the
child's answer found among its lines, and the child's own printing."""

from __future__ import annotations

import io
import json
import sys
import types
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from rlcheck.probes.node import gpu_nvml
from rlcheck.probes.node.gpu_nvml import NvmlCallError, call_key, gpu_fields, record
from rlcheck.process import subproc
from tests.nvml_replay import ReplayNvml, dump

NS = {"error": "NVMLError_NotSupported: Not Supported"}


def test_rules_table_gpu_nvml_call_key_and_plain_answers():
    assert call_key("nvmlDeviceGetName", ()) == "nvmlDeviceGetName"
    assert call_key("nvmlDeviceGetNvLinkErrorCounter", (3, 12)) == "nvmlDeviceGetNvLinkErrorCounter 3 12"
    pci = types.SimpleNamespace(busId=b"00000000:18:00.0")
    assert gpu_nvml._plain(pci) == "00000000:18:00.0"
    assert gpu_nvml._plain(b"H\xffX") == "H\ufffdX"
    assert gpu_nvml._plain((1, [b"a", (2,)], pci)) == [1, ["a", [2]], "00000000:18:00.0"]
    assert gpu_nvml._plain(7) == 7 and gpu_nvml._plain("x") == "x" and gpu_nvml._plain(None) is None


class Scripted:
    """An NvmlLib answering from {call key: answer}; an answer that is an exception is raised; calls are kept."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers, self.calls = answers, []

    def call(self, function: str, *args: Any) -> Any:
        key = call_key(function, tuple(a for a in args if a != "h"))
        self.calls.append(key)
        answer = self.answers.get(key, NvmlCallError(f"{function}: not scripted"))
        if isinstance(answer, Exception):
            raise answer
        return answer


BASE = {call_key(f, a): 0 for f, a in gpu_nvml.READS} | {"nvmlDeviceGetCurrentClocksEventReasons": 1}


def _gpu(**answers: Any) -> tuple[dict[str, Any], list[str]]:
    lib = Scripted({**BASE, **answers})
    return gpu_nvml.record_gpu(lib, "h"), lib.calls


def test_rules_table_gpu_nvml_record_gpu_every_read_then_links():
    gpu, calls = _gpu()
    reads = [call_key(f, a) for f, a in gpu_nvml.READS]
    assert calls == [*reads, "nvmlDeviceGetNvLinkState 0"]
    assert gpu == {**BASE, "nvmlDeviceGetNvLinkState 0": {"error": "nvmlDeviceGetNvLinkState: not scripted"}}


def test_rules_table_gpu_nvml_older_throttle_call_only_when_the_newer_fails():
    gpu, calls = _gpu(nvmlDeviceGetCurrentClocksEventReasons=NvmlCallError("nvmlDeviceGet...: not in this pynvml"),
                      nvmlDeviceGetCurrentClocksThrottleReasons=4)
    assert gpu["nvmlDeviceGetCurrentClocksThrottleReasons"] == 4
    assert "nvmlDeviceGetCurrentClocksThrottleReasons" in calls
    assert gpu["nvmlDeviceGetCurrentClocksEventReasons"] == {"error": "nvmlDeviceGet...: not in this pynvml"}
    gpu, calls = _gpu(nvmlDeviceGetCurrentClocksEventReasons=0)  # answered 0: no reason, not a failure
    assert "nvmlDeviceGetCurrentClocksThrottleReasons" not in calls + list(gpu)


@pytest.mark.parametrize(("states", "links", "counted"), [
    ({0: 1, 1: 0, 2: 1}, 4, [0, 2]),  # inactive link 1 read no counters; link 3 failed: the last asked
    ({}, 1, []),  # no NVLink: the first link fails
    ({i: 1 for i in range(18)}, 18, list(range(18))),  # MAX_NVLINKS: link 18 is never asked
    ({i: 0 for i in range(20)}, 18, []),
])
def test_rules_table_gpu_nvml_nvlink_links_and_counters(states, links, counted):
    counters = {call_key("nvmlDeviceGetNvLinkErrorCounter", (link, c)): 10 * link + c
                for link in range(20) for c in range(4)}
    gpu, calls = _gpu(**{call_key("nvmlDeviceGetNvLinkState", (link,)): s for link, s in states.items()}, **counters)
    assert [c for c in calls if c.startswith("nvmlDeviceGetNvLinkState")] == [
        f"nvmlDeviceGetNvLinkState {link}" for link in range(links)]
    assert [c for c in calls if c.startswith("nvmlDeviceGetNvLinkErrorCounter")] == [
        f"nvmlDeviceGetNvLinkErrorCounter {link} {c}" for link in counted for c in range(4)]
    assert gpu_fields(gpu)["nvlink_errors"] == tuple(sorted(
        (link, gpu_nvml.NVLINK_COUNTERS[c], 10 * link + c) for link in counted for c in range(4) if 10 * link + c))


def test_rules_table_gpu_nvml_record_start_count_and_shutdown():
    ok = Scripted({"nvmlInit": None, "nvmlDeviceGetCount": 2, "nvmlDeviceGetHandleByIndex 0": "h",
                   "nvmlDeviceGetHandleByIndex 1": "h", "nvmlSystemGetDriverVersion": b"580.65.06", **BASE,
                   "nvmlShutdown": NvmlCallError("shutdown failed")})
    got = record(ok)
    assert got["driver"] == "580.65.06" and len(got["gpus"]) == 2 and ok.calls[-1] == "nvmlShutdown"
    no_start = Scripted({"nvmlInit": NvmlCallError("NVMLError_LibraryNotFound: NVML Shared Library Not Found")})
    assert record(no_start) == {"error": "nvmlInit: NVMLError_LibraryNotFound: NVML Shared Library Not Found"}
    assert no_start.calls == ["nvmlInit"]  # nothing to shut down
    no_count = Scripted({"nvmlInit": None, "nvmlDeviceGetCount": NvmlCallError("NVMLError_Unknown: Unknown Error"),
                         "nvmlShutdown": None})
    assert record(no_count) == {"error": "NVMLError_Unknown: Unknown Error"}
    assert no_count.calls == ["nvmlInit", "nvmlDeviceGetCount", "nvmlShutdown"]
    no_driver = Scripted({"nvmlInit": None, "nvmlDeviceGetCount": 0, "nvmlShutdown": None})
    assert record(no_driver) == {"driver": {"error": "nvmlSystemGetDriverVersion: not scripted"}, "gpus": []}


UNKNOWN = dict(persistence=None, ecc_volatile_uncorrected=None, ecc_aggregate_uncorrected=None, retired_pending=None,
               retired_pages=None, remap_pending=None, remap_failed=None, throttle=(), nvlink_errors=(),
               sm_clock_mhz=None, sm_clock_max_mhz=None, mem_clock_mhz=None, mem_clock_max_mhz=None, pcie_gen=None,
               pcie_gen_max=None, pcie_gen_gpu_max=None, pcie_width=None, pcie_width_max=None)


def test_rules_table_gpu_nvml_nothing_answered_is_nothing_known():
    every_error = {call_key(f, a): NS for f, a in gpu_nvml.READS}
    assert gpu_fields(every_error) == {"bus_id": "?", **UNKNOWN}
    assert gpu_fields({}) == {"bus_id": "?", **UNKNOWN}


def test_rules_table_gpu_nvml_every_number_read_from_its_call():
    numbers = {call_key(f, a): 100 + i for i, (f, a) in enumerate(gpu_nvml.READS)}
    fields = gpu_fields({**numbers, "nvmlDeviceGetPciInfo": "00000000:18:00.0", "nvmlDeviceGetPersistenceMode": 1,
                         "nvmlDeviceGetRemappedRows": [0, 0, 0, 0], "nvmlDeviceGetRetiredPages 0": [],
                         "nvmlDeviceGetRetiredPages 1": [], "nvmlDeviceGetCurrentClocksEventReasons": 0})
    n = {f"{f} {' '.join(map(str, a))}".strip(): 100 + i for i, (f, a) in enumerate(gpu_nvml.READS)}
    assert fields == dict(
        bus_id="00000000:18:00.0", persistence=True,
        ecc_volatile_uncorrected=n["nvmlDeviceGetTotalEccErrors 1 0"],
        ecc_aggregate_uncorrected=n["nvmlDeviceGetTotalEccErrors 1 1"],
        retired_pending=True, retired_pages=0, remap_pending=False, remap_failed=False, throttle=(), nvlink_errors=(),
        sm_clock_mhz=n["nvmlDeviceGetClockInfo 1"], sm_clock_max_mhz=n["nvmlDeviceGetMaxClockInfo 1"],
        mem_clock_mhz=n["nvmlDeviceGetClockInfo 2"], mem_clock_max_mhz=n["nvmlDeviceGetMaxClockInfo 2"],
        pcie_gen=n["nvmlDeviceGetCurrPcieLinkGeneration"], pcie_gen_max=n["nvmlDeviceGetMaxPcieLinkGeneration"],
        pcie_gen_gpu_max=n["nvmlDeviceGetGpuMaxPcieLinkGeneration"], pcie_width=n["nvmlDeviceGetCurrPcieLinkWidth"],
        pcie_width_max=n["nvmlDeviceGetMaxPcieLinkWidth"])


@pytest.mark.parametrize(("answers", "changed"), [
    ({"nvmlDeviceGetPersistenceMode": 0}, {"persistence": False}),
    ({"nvmlDeviceGetPersistenceMode": 1}, {"persistence": True}),
    ({"nvmlDeviceGetPersistenceMode": True}, {}),  # a bool is no NVML number
    ({"nvmlDeviceGetPersistenceMode": "1"}, {}),
    ({"nvmlDeviceGetClockInfo 1": 1.5}, {}),
    ({"nvmlDeviceGetClockInfo 1": 0}, {"sm_clock_mhz": 0}),
    ({"nvmlDeviceGetRetiredPagesPendingStatus": 0}, {"retired_pending": False}),
    ({"nvmlDeviceGetRetiredPagesPendingStatus": 2}, {"retired_pending": True}),
    # remapped rows: (correctable, uncorrectable, pending, failed), four exactly
    ({"nvmlDeviceGetRemappedRows": [3, 1, 0, 0]}, {"remap_pending": False, "remap_failed": False}),
    ({"nvmlDeviceGetRemappedRows": [0, 0, 1, 0]}, {"remap_pending": True, "remap_failed": False}),
    ({"nvmlDeviceGetRemappedRows": [0, 0, 0, 1]}, {"remap_pending": False, "remap_failed": True}),
    ({"nvmlDeviceGetRemappedRows": [0, 0, 1]}, {}), ({"nvmlDeviceGetRemappedRows": [0, 0, 1, 1, 0]}, {}),
    ({"nvmlDeviceGetRemappedRows": "0 0 1 1"}, {}),
    # retired pages: single- plus double-bit lists; one list alone still counts; neither is unknown
    ({"nvmlDeviceGetRetiredPages 0": [1, 2], "nvmlDeviceGetRetiredPages 1": [3]}, {"retired_pages": 3}),
    ({"nvmlDeviceGetRetiredPages 0": NS, "nvmlDeviceGetRetiredPages 1": [3, 4]}, {"retired_pages": 2}),
    ({"nvmlDeviceGetRetiredPages 0": [1], "nvmlDeviceGetRetiredPages 1": NS}, {"retired_pages": 1}),
    ({"nvmlDeviceGetRetiredPages 0": [], "nvmlDeviceGetRetiredPages 1": []}, {"retired_pages": 0}),
    ({"nvmlDeviceGetPciInfo": NS}, {}),  # a failed PCI call names no bus id
    ({"nvmlDeviceGetPciInfo": 18}, {}),
    ({"nvmlDeviceGetPciInfo": "00000000:18:00.0"}, {"bus_id": "00000000:18:00.0"}),
])
def test_rules_table_gpu_nvml_field_readings(answers, changed):
    assert gpu_fields(answers) == {"bus_id": "?", **UNKNOWN, **changed}


@pytest.mark.parametrize(("event", "throttle", "reasons"), [
    (0x1, None, ("Idle",)), (0x4 | 0x40, None, ("SW Power Cap", "HW Thermal Slowdown")),
    (0x1FF, None, tuple(gpu_nvml.EVENT_REASONS.values())),
    (0x200, None, ()),  # a bit NVML added later: no name, nothing said
    (0, 0x8, ()),  # the newer call answered no reason: the older one is not read
    (NS, 0x8, ("HW Slowdown",)), (NS, 0x8 | 0x80, ("HW Slowdown", "HW Power Brake Slowdown")),
    (NS, NS, ()), (None, None, ()),
])
def test_rules_table_gpu_nvml_clock_event_reasons(event, throttle, reasons):
    gpu = {k: v for k, v in (("nvmlDeviceGetCurrentClocksEventReasons", event),
                             ("nvmlDeviceGetCurrentClocksThrottleReasons", throttle)) if v is not None}
    assert gpu_fields(gpu)["throttle"] == reasons


def test_rules_table_gpu_nvml_reason_names_are_nvidia_smis():
    assert gpu_nvml.EVENT_REASONS == {
        0x1: "Idle", 0x2: "Applications Clocks Setting", 0x4: "SW Power Cap", 0x8: "HW Slowdown", 0x10: "Sync Boost",
        0x20: "SW Thermal Slowdown", 0x40: "HW Thermal Slowdown", 0x80: "HW Power Brake Slowdown",
        0x100: "Display Clock Setting"}
    assert gpu_nvml.NVLINK_COUNTERS == {0: "Replay Errors", 1: "Recovery Errors", 2: "CRC Errors",
                                        3: "CRC Data Errors"}


def test_rules_table_gpu_nvml_nvlink_counters_nonzero_numbers_sorted():
    gpu = {"nvmlDeviceGetNvLinkErrorCounter 10 2": 5, "nvmlDeviceGetNvLinkErrorCounter 2 3": 7,
           "nvmlDeviceGetNvLinkErrorCounter 2 0": 0, "nvmlDeviceGetNvLinkErrorCounter 3 1": NS,
           "nvmlDeviceGetNvLinkErrorCounter 2 1": 1, "nvmlDeviceGetNvLinkState 2": 1}
    assert gpu_fields(gpu)["nvlink_errors"] == ((2, "CRC Data Errors", 7), (2, "Recovery Errors", 1),
                                                (10, "CRC Errors", 5))  # by link, then counter name


@pytest.mark.parametrize("recording", ["nvml_h200_idle.json", "nvml_h200_busy.json", "nvml_remap_pending.json",
                                       "nvml_nvlink_recovery.json", "nvml_retired_pages.json"])
def test_rules_table_gpu_nvml_replayed_recordings_read_back_whole(recording):
    """A recorded dump replayed through the reader's own calls is the dump again (no call added, none lost)."""
    assert record(ReplayNvml(dump(recording))) == dump(recording)


def _completed(out: str, rc: int | None = 0, err: str = "") -> subproc.Completed:
    return subproc.Completed(argv=("python",), returncode=rc, stdout=out, stderr=err, timed_out=rc is None)


@pytest.mark.parametrize(("out", "rc", "err", "result"), [
    ("noise\n" + gpu_nvml.RESULT + '{"driver": "580", "gpus": []}\n' + gpu_nvml.RESULT + '{"error": "later"}\n', 0,
     "", ({"driver": "580", "gpus": []}, "")),  # the first answer line
    (gpu_nvml.RESULT + '{"error": "pynvml (nvidia-ml-py) is not installed: x"}', 0, "",
     ({}, "pynvml (nvidia-ml-py) is not installed: x")),
    (gpu_nvml.RESULT + '{"error": "", "gpus": []}', 0, "", ({"error": "", "gpus": []}, "")),
    (" " + gpu_nvml.RESULT + "{}\nRLCHECK_NVML{}\n", 1, "Traceback\nSegmentation fault\n",
     ({}, "the NVML reader ended with exit code 1: Traceback\nSegmentation fault")),  # no line is the answer
    ("", None, "", ({}, "the NVML reader ended with killed at its deadline: ")),
])
def test_rules_table_gpu_nvml_child_answer(out, rc, err, result):
    calls = []

    def run(argv, **kw):
        calls.append((argv, kw))
        return _completed(out, rc, err)

    assert gpu_nvml.collect_nvml(6.5, run=run) == result
    (argv, kw), = calls
    root = str(Path(gpu_nvml.__file__).resolve().parents[3])
    assert argv == [sys.executable, "-m", "rlcheck.probes.node.gpu_nvml"] and kw["timeout_s"] == 6.5
    assert kw["env"]["PYTHONPATH"].split(":")[0] == root and (Path(root) / "rlcheck" / "__init__.py").is_file()


def _main_prints(monkeypatch, lib: Any) -> tuple[int, dict[str, Any]]:
    """What the child wrote through to its pipe by the time _main returned: the answer line is flushed, so a child
    whose exit then hangs (a driver library's teardown) and is killed at the deadline has still answered."""
    monkeypatch.setattr(gpu_nvml, "Pynvml", lib)
    pipe = io.BytesIO()
    out = io.TextIOWrapper(pipe, encoding="utf-8")  # buffered like a pipe's stdout, not line by line
    with redirect_stdout(out):
        rc = gpu_nvml._main()
    (line,) = pipe.getvalue().decode().splitlines()
    assert line.startswith(gpu_nvml.RESULT) and gpu_nvml.RESULT == "RLCHECK_NVML "
    return rc, json.loads(line.removeprefix(gpu_nvml.RESULT))


def test_rules_table_gpu_nvml_child_prints_one_answer_line(monkeypatch):
    assert _main_prints(monkeypatch, lambda: ReplayNvml(dump("nvml_h200_idle.json"))) == (
        0, dump("nvml_h200_idle.json"))

    def missing():
        raise ImportError("No module named 'pynvml'")
    assert _main_prints(monkeypatch, missing) == (
        0, {"error": "pynvml (nvidia-ml-py) is not installed: No module named 'pynvml'"})


def test_rules_table_gpu_nvml_pynvml_errors_are_call_errors(monkeypatch):
    lib = gpu_nvml.Pynvml()
    import pynvml
    assert lib.module is pynvml
    with pytest.raises(NvmlCallError, match="^nvmlRlkAbsent is not in this pynvml$"):
        lib.call("nvmlRlkAbsent")

    def fails(*args):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetName", fails)
    with pytest.raises(NvmlCallError) as err:
        lib.call("nvmlDeviceGetName", "h")
    assert str(err.value) == "NVMLError_NotSupported: Not Supported"
    monkeypatch.setattr(pynvml, "nvmlDeviceGetName", lambda handle: f"name of {handle}")
    assert lib.call("nvmlDeviceGetName", "h") == "name of h"
