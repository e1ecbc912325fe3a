"""Replay a recorded job log through the watcher, on a clock taken from the log's own timestamps.

For post-mortems (the job that died last night) and for CI on recorded logs. The clock is the latest
timestamp seen so far (Ray interleaves actors whose timestamps run out of order; the clock never goes
back); a line without a timestamp happens at the clock. Exit codes: 0 the run completed its loops
healthy; 1 it did not (a known failure, an invariant broken, a phase past its deadline, or the log ends
before the last loop); 2 rlcheck could not judge (unreadable file, no timestamps, no SLIME statement).
"""

from __future__ import annotations

import calendar
import dataclasses
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlcheck import catalog
from rlcheck.e2e import slime_log
from rlcheck.e2e.watch import MAX_LINE_CHARS, Event, Watcher

EXIT_COMPLETED, EXIT_FOUND, EXIT_UNJUDGED = 0, 1, 2
DEFAULT_DEADLINES = slime_log.Deadlines(placement_s=1800, startup_s=5400, rollout_s=3600, phase_s=3600)
_TS = re.compile(r"(?P<date>\d{4})-(?P<mon>\d\d)-(?P<day>\d\d)[ T](?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)"
                 r"(?:[.,](?P<f>\d{1,6}))?")
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.|[\x00-\x08\x0b-\x1f\x7f]")


# Stamps without a year: glog's (torch, NCCL plugins, raylet: "[E1201 09:25:16.123456 ...", torch also "E321 ...")
# and newer SGLang's ("[12-01 09:25:16 TP0]"). The year is the last full stamp's, else 1970: the clock is relative.
_NO_YEAR = re.compile(r"(?:^|[\[ :])[IWEF](?P<md>\d{3,4}) (?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)"
                      r"(?:\.(?P<f>\d{1,9}))?\b"
                      r"|\[(?P<mon>\d\d)-(?P<day>\d\d) (?P<h2>\d\d):(?P<m2>\d\d):(?P<s2>\d\d)"
                      r"(?:[.,](?P<f2>\d{1,6}))?[ \]]")


def timestamp(line: str, year: int = 1970) -> float | None:
    """Seconds since the epoch of the first timestamp near the line's start (SLIME, Ray, SGLang formats; a stamp
    without a year, glog's or newer SGLang's, is read in `year`)."""
    found = _TS.search(line, 0, 200)
    if not found:
        return _yearless(line, year)
    g = found.groupdict()
    try:
        whole = calendar.timegm((int(g["date"]), int(g["mon"]), int(g["day"]), int(g["h"]), int(g["m"]), int(g["s"])))
    except (ValueError, OverflowError):
        return None
    return whole + (float("0." + g["f"]) if g["f"] else 0.0)


def _yearless(line: str, year: int) -> float | None:
    found = _NO_YEAR.search(line, 0, 200)
    if not found:
        return None
    g = found.groupdict()
    if g["md"]:
        mon, day, h, m, sec, frac = int(g["md"][:-2]), int(g["md"][-2:]), g["h"], g["m"], g["s"], g["f"]
    else:
        mon, day, h, m, sec, frac = int(g["mon"]), int(g["day"]), g["h2"], g["m2"], g["s2"], g["f2"]
    if not (1 <= mon <= 12 and 1 <= day <= 31):
        return None
    try:
        whole = calendar.timegm((year, mon, day, int(h), int(m), int(sec)))
    except (ValueError, OverflowError):
        return None
    return whole + (float("0." + frac[:6]) if frac else 0.0)


def year_of(stamp: float) -> int:
    """The calendar year of an epoch stamp (for the stamps after it that carry none)."""
    return time.gmtime(stamp).tm_year


def clean(line: str) -> str:
    """The line without terminal escapes and control characters (Ray colours its prefixes)."""
    return _ESCAPES.sub("", line)


def read_lines(path: Path) -> Iterator[str]:
    """The file's lines, each cut at MAX_LINE_CHARS: memory stays flat however long a line is."""
    with path.open("rb") as f:
        while chunk := f.readline(MAX_LINE_CHARS):
            if not chunk.endswith(b"\n"):
                while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
            yield clean(chunk.decode("utf-8", errors="replace").rstrip("\r\n"))


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Survey:
    """What a first pass over the log tells: its SLIME version and which optional phases it has."""

    version: str | None
    version_counts: dict[str, int]
    timestamps: int
    lines: int
    argv_hint: tuple[str, ...]
    traits: frozenset[str] | None = None
    """The job's catalogue traits as its log shows them (catalog.log_traits); None: the log does not say."""
    miles_lines: int = 0
    """Lines with Miles' logger prefix: its process names (main, rollout_manager, actor_cell0_rank0) in the
    bracket before `file.py:LINE -` (miles/utils/logging_utils.py and audit_utils/process_identity.py)."""


MILES_LOGGER = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{3})? "
                          r"(?:main|rollout_manager|(?:actor|critic)_cell\d+_rank\d+)\] [\w.-]+\.py:\d+ - ")


def survey(path: Path) -> Survey:
    statements = slime_log.tables()[slime_log.DEFAULT_VERSION].statements["timer_end"]
    ref, log_probs = re.compile(statements.regex(name="ref_log_probs")), re.compile(statements.regex(name="log_probs"))
    stamps = lines = 0
    seen_ref = seen_log_probs = False
    located: list[str] = []
    hints: list[str] = []  # the lines that say what model and backend the job runs (bounded)
    miles = 0
    for line in read_lines(path):
        miles += bool(MILES_LOGGER.match(line))
        if len(hints) < 200 and ("ForCausalLM" in line or "attention" in line or "--sglang-" in line):
            hints.append(line[:4096])
        lines += 1
        stamps += timestamp(line) is not None
        seen_ref = seen_ref or bool(ref.search(line))
        seen_log_probs = seen_log_probs or bool(log_probs.search(line))
        if "] " in line and ".py:" in line and len(located) < 5000:
            located.append(line[:512])
    version, counts = slime_log.detect_version(located)
    hint: tuple[str, ...] = ("--use-kl-loss",) if seen_ref else ()
    hint += () if seen_log_probs else ("--use-rollout-logprobs",)
    return Survey(version=version, version_counts=counts, timestamps=stamps, lines=lines, argv_hint=hint,
                  traits=catalog.log_traits(hints), miles_lines=miles)


def _verdict(watcher: Watcher, end: Event | None) -> dict[str, Any]:
    if end is None:
        return {"kind": "unjudged"}
    out: dict[str, Any] = {"kind": end.kind, "name": end.name, "loop": end.loop, "at_s": round(end.at_s, 3),
                           "failure_id": end.failure_id, "line": end.line[:2000], "supporting": list(end.supporting)}
    if end.failure_id:
        from rlcheck import catalog

        entry = catalog.load_catalog().get(end.failure_id)
        if entry:
            out |= {"title": entry.title, "remedy": " ".join(entry.remedy.split())}
    return out


def replay(path: Path, *, loops: int | None = None, case: str | None = None, version: str | None = None,
           argv: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The replay's report (see module doc); report['exit_code'] says how it ended."""
    try:
        found = survey(path)
    except OSError as exc:
        return {"log": str(path), "exit_code": EXIT_UNJUDGED, "verdict": {"kind": "unjudged"},
                "why": f"cannot read {path}: {exc.strerror or exc}"}
    case_loops, deadlines = slime_log.case_deadlines()[case] if case else (3, DEFAULT_DEADLINES)
    loops = loops or case_loops
    how = "--framework" if version else "detected from SLIME's file:line locations" if found.version else \
        f"not detected; judged as {slime_log.VERSIONS[1]} (milestone lines are the same at every version)"
    if not version and found.miles_lines:  # Miles names its processes in every line's prefix
        version = slime_log.parse_framework("miles==main")
        how = f"detected from Miles' logger names ({found.miles_lines} line(s))"
    framework, version = slime_log.split_framework(version) if version else ("slime", None)
    version = version or found.version or slime_log.VERSIONS[1]
    milestones, invariants = slime_log.plan(version, deadlines, argv if argv is not None else found.argv_hint)
    traits = catalog.job_traits(argv) if argv is not None else found.traits  # else what the log itself shows
    watcher = Watcher(milestones, loops, invariants=invariants, traits=traits)
    first = clock = None
    year = 1970
    for line in read_lines(path):
        stamp = timestamp(line, year)
        if stamp is not None and _TS.search(line, 0, 200):
            year = year_of(stamp)
        if stamp is not None:
            first = stamp if first is None else first
            clock = stamp if clock is None else max(clock, stamp)
        now = 0.0 if clock is None or first is None else clock - first
        if first is not None and watcher.check(now):
            break
        if watcher.feed(line, now) and watcher.ended:
            break
    watcher.finish()  # the log ended: a consequence still waiting for its cause names its incident now
    if watcher.ended is None and first is not None and clock is not None:
        watcher.check(clock - first)
    report = {"log": str(path), "lines": found.lines, "framework": f"{framework}=={version}", "framework_source": how,
              "version_counts": found.version_counts, "loops": loops, "case": case,
              "traits": sorted(traits) if traits is not None else None,
              "deadlines": dataclasses.asdict(deadlines),
              "milestones": [{"loop": e.loop, "name": e.name, "at_s": round(e.at_s, 3)}
                             for e in watcher.events if e.kind == "milestone"],
              "phase_times": watcher.phase_times(), "raw_reward": watcher.rewards,
              "truncated_ratio": watcher.truncated, "notes": watcher.notes,
              "uncatalogued": [{"line_no": n, "line": text[:2000]} for n, text in watcher.uncatalogued]}
    return report | _judge(watcher, found, first is not None)


def _judge(watcher: Watcher, found: Survey, timed: bool) -> dict[str, Any]:
    end = watcher.ended
    if end is not None and end.kind == "done":
        return {"exit_code": EXIT_COMPLETED, "verdict": _verdict(watcher, end) | {"kind": "completed"}}
    if end is not None and (end.kind in ("failure", "invariant") or timed):
        return {"exit_code": EXIT_FOUND, "verdict": _verdict(watcher, end)}
    if not timed:
        return {"exit_code": EXIT_UNJUDGED, "verdict": {"kind": "unjudged"},
                "why": "no timestamps in the log: phase deadlines cannot be judged"}
    recognised = any(e.kind == "milestone" for e in watcher.events) or watcher.metric_lines or found.version
    if not recognised:
        return {"exit_code": EXIT_UNJUDGED, "verdict": {"kind": "unjudged"},
                "why": "unknown format: no SLIME log statement (Timer, perf/rollout/step dicts, placement) found"}
    due = watcher.deadline()
    waiting = due[1].name if due else "?"
    line = (f"the log ends in loop {watcher.loop} while waiting for {waiting}, before its deadline and without "
            "a known failure")
    return {"exit_code": EXIT_FOUND, "verdict": {"kind": "ended", "name": waiting, "loop": watcher.loop,
                                                 "failure_id": None, "line": line}}


def render_text(report: dict[str, Any]) -> str:
    """The human report: milestones and phase times per loop, invariants, the verdict."""
    out = [f"rlcheck watch: {report['log']}"]
    if "framework" in report:
        out.append(f"  {report['lines']} lines; {report['framework']} ({report['framework_source']}); "
                   f"{report['loops']} loop(s)" + (f"; case {report['case']}" if report.get("case") else ""))
        for loop, phases in enumerate(report["phase_times"]):
            out.append(f"  loop {loop}: " + ", ".join(f"{name} {s:.1f} s" for name, s in phases.items()))
        out.append(f"  raw reward per rollout: {report['raw_reward'] or 'none seen'}; "
                   f"truncated ratio per rollout: {report['truncated_ratio'] or 'none seen'}")
        out += [f"  note: {n}" for n in report["notes"][:10]]
        out += [f"  uncatalogued failure line {u['line_no']}: {u['line'][:300]}"
                for u in report.get("uncatalogued", [])[:5]]
    v = report["verdict"]
    if v["kind"] == "completed":
        out.append(f"verdict: completed: {report['loops']} loop(s), every milestone reached")
    elif v["kind"] == "unjudged":
        out.append(f"verdict: could not judge: {report['why']}")
    else:
        what = v["failure_id"] or "no catalogue id"
        out.append(f"verdict: {v['kind']} at loop {v['loop']}: {v['name']} ({what})")
        out.append(f"  line: {v['line'][:400]}")
        if v.get("supporting"):
            out.append("  supporting line(s) of the log: " + ", ".join(map(str, v["supporting"])))
        if v.get("title"):
            out += [f"  known: {v['title']}", f"  fix:   {v['remedy']}"]
    return "\n".join(out)
