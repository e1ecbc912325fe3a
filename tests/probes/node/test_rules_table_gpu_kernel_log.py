"""The kernel log's GPU lines (rlcheck.probes.node.gpu_kernel_log) as a rule table: which lines are Xid events (bus id,
code, the line kept whole) and which say a GPU fell off the bus, wrapped lines joined, the newest MAX_XID_EVENTS of
each kept; the child-process budget on both sides of its floor; and which tool answers (dmesg, then journalctl -k for
this boot), with the whole error when neither does, so the Xid verdict is UNKNOWN, never a pass."""

from __future__ import annotations

import types

import pytest

from rlcheck.probes.node import gpu_kernel_log as gkl
from rlcheck.probes.node.gpu_kernel_log import XidEvent, parse_kernel_log
from rlcheck.process import subproc

XID_43 = "[ 812.4] NVRM: Xid (PCI:0000:18:00): 43, pid=2301, name=python3, Ch 00000008"


@pytest.mark.parametrize(("text", "xids", "off_bus"), [
    (XID_43, [XidEvent(bus_id="0000:18:00", code=43, line=XID_43)], []),
    # the bus id ends at the first character that is not hex, ':' or '.'; what follows up to ')' is skipped
    ("  NVRM: Xid (PCI:0000:3b:00.0 GPU-1234): 79, GPU has fallen off the bus.  ",
     [XidEvent(bus_id="0000:3b:00.0", code=79,
               line="NVRM: Xid (PCI:0000:3b:00.0 GPU-1234): 79, GPU has fallen off the bus.")],
     ["NVRM: Xid (PCI:0000:3b:00.0 GPU-1234): 79, GPU has fallen off the bus."]),
    ("NVRM: Xid (PCI:0000:AB:00): 154 GPU recovery action changed", [
        XidEvent(bus_id="0000:AB:00", code=154, line="NVRM: Xid (PCI:0000:AB:00): 154 GPU recovery action changed")],
     []),  # no comma after the code
    ("NVRM: Xid (PCI:0000:18:00): 13,",
     [XidEvent(bus_id="0000:18:00", code=13, line="NVRM: Xid (PCI:0000:18:00): 13,")], []),
    # not Xid events: an NVSwitch SXid, no code, no bus id, another driver's word
    ("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal", [], []),
    ("NVRM: Xid (PCI:0000:18:00): pending", [], []),
    ("NVRM: Xid (0000:18:00): 43, x", [], []),
    ("NVRM: xid (PCI:0000:18:00): 43, x", [], []),
    # fallen off the bus in any case, with or without an Xid; the line kept stripped
    ("[ 3.1] NVRM: GPU 0000:b3:00.0: GPU has FALLEN OFF THE BUS.\t", [],
     ["[ 3.1] NVRM: GPU 0000:b3:00.0: GPU has FALLEN OFF THE BUS."]),
    ("fallen off the  bus", [], []),
    # a wrapped message: indented continuation lines join the line before, with one space
    ("[ 9.0] NVRM: The NVIDIA GPU 0000:b3:00.0\n    (PCI ID: 10de:26b5)\n\tGPU has fallen off\n  the bus.\nnext", [],
     ["[ 9.0] NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) GPU has fallen off the bus."]),
    ("  fallen off the bus first", [], ["fallen off the bus first"]),  # indented with nothing before it
    ("", [], []),
])
def test_rules_table_gpu_kernel_log_lines(text, xids, off_bus):
    assert parse_kernel_log(text) == (tuple(xids), tuple(off_bus))


@pytest.mark.parametrize("count", [gkl.MAX_XID_EVENTS - 1, gkl.MAX_XID_EVENTS, gkl.MAX_XID_EVENTS + 1,
                                   gkl.MAX_XID_EVENTS + 7])
def test_rules_table_gpu_kernel_log_keeps_the_newest(count):
    lines = [f"NVRM: Xid (PCI:0000:18:00): {i}, fallen off the bus" for i in range(count)]
    xids, off_bus = parse_kernel_log("\n".join(lines))
    kept = lines[-gkl.MAX_XID_EVENTS:]
    assert [x.line for x in xids] == kept and list(off_bus) == kept
    assert [x.code for x in xids] == list(range(count))[-gkl.MAX_XID_EVENTS:]
    assert gkl.MAX_XID_EVENTS == 64


@pytest.mark.parametrize(("total", "elapsed", "left"), [
    (10.0, 0.0, 10.0), (10.0, 7.5, 2.5), (10.0, 8.0, 2.0),  # exactly the floor
    (10.0, 8.5, 2.0), (10.0, 30.0, 2.0),  # past it: a late call still gets MIN_CALL_S
    (1.0, 0.0, 2.0),
])
def test_rules_table_gpu_kernel_log_budget(monkeypatch, total, elapsed, left):
    now = [1000.0]
    monkeypatch.setattr(gkl, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    remaining = gkl.budget(total)
    now[0] += elapsed
    assert remaining() == left
    assert gkl.MIN_CALL_S == 2.0


def _done(rc: int | None, out: str = "", err: str = "") -> subproc.Completed:
    return subproc.Completed(argv=("x",), returncode=rc, stdout=out, stderr=err, timed_out=rc is None)


DENIED = _done(1, err="dmesg: read kernel buffer failed: Operation not permitted")
JOURNAL = "kernel: NVRM: Xid (PCI:0000:18:00): 79, fallen off\n"


@pytest.mark.parametrize(("on_path", "answers", "result", "asked"), [
    ({"dmesg", "journalctl"}, {"dmesg": _done(0, "[0.1] boot\n")}, ("[0.1] boot\n", "dmesg", ""), ["dmesg"]),
    ({"dmesg", "journalctl"}, {"dmesg": DENIED, "journalctl": _done(0, JOURNAL)},
     (JOURNAL, "journalctl -k -b --no-pager -q", ""), ["dmesg", "journalctl"]),
    ({"journalctl"}, {"journalctl": _done(0, JOURNAL)}, (JOURNAL, "journalctl -k -b --no-pager -q", ""),
     ["journalctl"]),
    # an empty answer (only blank lines) is no answer
    ({"dmesg", "journalctl"}, {"dmesg": _done(0, " \n\n"), "journalctl": _done(0, "")},
     ("", "", "dmesg: exit code 0; journalctl: exit code 0"), ["dmesg", "journalctl"]),
    ({"dmesg", "journalctl"}, {"dmesg": DENIED, "journalctl": _done(None, "partial\nlast line")},
     ("", "", "dmesg: exit code 1 dmesg: read kernel buffer failed: Operation not permitted; "
              "journalctl: killed at its deadline last line"), ["dmesg", "journalctl"]),
    ({"dmesg"}, {"dmesg": _done(-9)}, ("", "", "dmesg: killed by signal SIGKILL; journalctl: not on PATH"),
     ["dmesg"]),
    (set(), {}, ("", "", "dmesg: not on PATH; journalctl: not on PATH"), []),
])
def test_rules_table_gpu_kernel_log_which_tool_answers(monkeypatch, on_path, answers, result, asked):
    now, calls = [0.0], []

    def run(argv, *, timeout_s):
        calls.append((argv, timeout_s))
        now[0] += 4.0
        return answers[argv[0]]

    monkeypatch.setattr(gkl.shutil, "which", lambda name: f"/usr/bin/{name}" if name in on_path else None)
    monkeypatch.setattr(gkl.subproc, "run", run)
    monkeypatch.setattr(gkl, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    assert gkl.read_kernel_log(10.0) == result
    argvs = {"dmesg": ["dmesg"], "journalctl": ["journalctl", "-k", "-b", "--no-pager", "-q"]}
    # one budget for both: the second tool gets what the first left of 10 s
    assert calls == [(argvs[name], 10.0 - 4.0 * i) for i, name in enumerate(asked)]
