"""The run report: GO / NO-GO from the verdicts, report.json and report.md (pure, no pytest)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
from pathlib import Path
from typing import Any

from rlcheck import report_nodes, secret_guard
from rlcheck.catalog import installed_versions
from rlcheck.verdict import Status, Verdict

STACK_PACKAGES = (
    "ray", "sglang", "torch", "megatron-core", "numpy", "uvicorn", "fastapi", "torch-memory-saver",
    "mbridge", "transformers", "math-verify", "tilelang", "slime", "miles",
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Recorded:
    verdict: Verdict
    kind: str
    """check (decides GO / NO-GO), reproducer, case (an e2e test case), or test."""
    test_id: str
    """The pytest node id that produced it."""
    reproduction: dict[str, Any] | None = None
    cached: dict[str, Any] | None = None
    """A reproducer's verdict reused from the cache of this image: when it was made ("made"), by what ("by") and
    the entry it came from ("entry"); None: made in this run."""

    @property
    def blocking(self) -> bool:
        return self.kind == "check"

    def to_dict(self) -> dict[str, Any]:
        return {**self.verdict.to_dict(), "kind": self.kind, "test_id": self.test_id,
                "blocking": self.blocking, "reproduction": self.reproduction, "cached": self.cached}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    go: bool
    line: str
    """The final GO / NO-GO line, with the reasons."""
    judged: bool = True
    """False when no blocking check ran: the run decides nothing (neither GO nor NO-GO)."""


def decide(recorded: list[Recorded], recipe: str, hardware: str) -> Decision:
    """GO only when every blocking check that was judged passed and at least one was judged: a SKIP (not applicable
    here) is counted apart, never as passed."""
    blocking = [r for r in recorded if r.blocking]
    scope = f"{recipe if recipe.startswith('job ') else 'recipe ' + recipe} on hardware {hardware}"
    if not blocking:  # reproducers, test cases or self-tests alone: nothing here decides GO / NO-GO
        return Decision(go=False, judged=False,
                        line=f"no GO / NO-GO: no blocking check ran for {scope} (only checks/ decide)")
    judged = [r for r in blocking if r.verdict.status is not Status.SKIP]
    skipped = len(blocking) - len(judged)
    apart = f"; {skipped} not applicable (SKIP)" if skipped else ""
    bad = [r for r in judged if r.verdict.status.blocks]
    if not judged:
        return Decision(go=False, line=f"NO-GO: nothing judged: all {len(blocking)} blocking check(s) for {scope} "
                                       "were not applicable (SKIP); a run that judged nothing promises nothing")
    if not bad:
        return Decision(go=True, line=f"GO: {len(judged)} blocking check(s) judged and passed{apart} for {scope}")
    why = "; ".join(f"{r.verdict.check_id}{_node(r.verdict)} {r.verdict.status.value}" for r in bad)
    return Decision(go=False, line=f"NO-GO: {len(bad)} of {len(judged)} judged blocking check(s){apart} for "
                                   f"{scope}: {why}")


EXIT_GO, EXIT_NO_GO, EXIT_UNJUDGED = 0, 1, 2
"""The main job's exit status: 0 GO; 1 NO-GO judged (every blocking check ran, one or more FAIL);
2 could not judge (a blocking check UNKNOWN, hardware detection UNKNOWN, every blocking check SKIP, report not
written). A run in which no blocking check ran leaves pytest's exit status as it is."""


def exit_status(recorded: list[Recorded]) -> int:
    """The decision's exit status; a run with no blocking check keeps pytest's own (EXIT_GO: no change), so a
    self-test or reproducer run passes or fails by its tests alone."""
    blocking = [r for r in recorded if r.blocking]
    if not blocking:
        return EXIT_GO
    if all(r.verdict.status is Status.SKIP for r in blocking):
        return EXIT_UNJUDGED
    if any(r.verdict.status is Status.UNKNOWN for r in blocking):
        return EXIT_UNJUDGED
    return EXIT_NO_GO if any(r.verdict.status.blocks for r in blocking) else EXIT_GO


def detection_unknown(why: str) -> Recorded:
    """The blocking verdict of a --hardware=auto that could not tell which hardware this is."""
    verdict = Verdict(check_id="hardware_detection", status=Status.UNKNOWN,
                      summary=f"--hardware=auto could not tell the hardware: {why}",
                      remedy="Fix nvidia-smi on this machine, or name the hardware: --hardware=h200 (or none)")
    return Recorded(verdict=verdict, kind="check", test_id="--hardware=auto")


def unwritable(report_dir: Path) -> str:
    """Why report files could not go to report_dir ('' when they can), without creating anything."""
    probe = report_dir
    while not probe.exists():
        if probe.parent == probe:
            return "no existing folder above it"
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable by this user"
    return ""


def _node(v: Verdict) -> str:
    return f" [{v.node}]" if v.node else ""


def _kept(cached: dict[str, Any] | None) -> str:
    return f" [cached: made {cached.get('made', '?')}]" if cached else ""


def summary_lines(recorded: list[Recorded]) -> list[str]:
    return [f"{r.verdict.status.value:7} {r.verdict.check_id}{_node(r.verdict)}: {r.verdict.summary}{_kept(r.cached)}"
            for r in recorded]


def build_document(recorded: list[Recorded], decision: Decision, context: dict[str, Any]) -> dict[str, Any]:
    counts = {s.value: sum(r.verdict.status is s for r in recorded) for s in Status}
    return {
        "rlcheck_report": 1,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "go": decision.go,
        "decision": decision.line,
        **context,
        "machine": {"hostname": platform.node(), "arch": platform.machine(), "python": platform.python_version()},
        "versions": installed_versions(STACK_PACKAGES),
        "counts": counts,
        "verdicts": [r.to_dict() for r in recorded],
    }


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


FIX_ORDER = {"FAIL": 0, "UNKNOWN": 1, "WARN": 2}


def _where(v: dict[str, Any]) -> str:
    """A check and, for a per-node verdict, its node in the same cell: no node column to take the table's width."""
    return f"{v['check_id']} @ {v['node']}" if v.get("node") else str(v["check_id"])


def _what_to_fix(verdicts: list[dict[str, Any]], scale: bool) -> list[str]:
    """FAIL and UNKNOWN first (they block), then WARN, each with its fix and details; stable within a status. At
    scale, the per-node verdicts of one check, status and fix are one section (report_nodes.fix_sections)."""
    bad = sorted((v for v in verdicts if v["status"] in FIX_ORDER), key=lambda v: FIX_ORDER[v["status"]])
    return ["## What to fix", "", *report_nodes.fix_sections(bad, _where, group=scale)] if bad else []


def _cache_lines(kept: dict[str, Any] | None) -> list[str]:
    if not kept:
        return []
    if not kept.get("enabled"):
        return [f"- reproducer cache: off ({_cell(kept.get('off') or '--no-cache')})"]
    return [f"- reproducer cache: {kept['reused']} verdict(s) reused, {kept['kept']} kept ({_cell(kept['dir'])})",
            *(f"- reproducer cache: {_cell(note)}" for note in kept.get("notes", ()))]


def _made(v: dict[str, Any]) -> str:
    """When a reproduction's verdict was made: this run, or the cache entry's time."""
    cached = v.get("cached")
    return f"cached, made {cached.get('made', '?')}" if cached else "this run"


def render_markdown(doc: dict[str, Any]) -> str:
    """report.md: the decision, what to fix (blocking first, then warnings), then every verdict, reproductions and
    the stack's versions."""
    out = [f"# rlcheck report: {'GO' if doc['go'] else 'NO-GO'}", "", f"**{_cell(doc['decision'])}**", ""]
    out += [f"- hardware: {_cell(doc['hardware']['evidence'])}", f"- recipe: {doc['recipe']}" if not doc.get("job") else
            f"- job: {doc['job']['path']} ({doc['job']['format']})",
            f"- framework: {_cell((doc.get('framework') or {}).get('judged') or 'not stated')}",
            f"- ray: {doc['ray_address'] or 'embedded loopback Ray'}", f"- created: {doc['created']}",
            *_cache_lines(doc.get("cache")), ""]
    scale = report_nodes.at_scale(doc["verdicts"])  # many nodes: failing nodes first, the rest grouped
    out += report_nodes.failing_nodes(doc["verdicts"], _cell) if scale else []
    out += _what_to_fix(doc["verdicts"], scale)
    out += ["## Every verdict", "", "| status | check @ node | summary | known failure |", "|---|---|---|---|"]
    out += report_nodes.grouped_rows(doc["verdicts"], _cell, _where) if scale else [
        f"| {v['status']} | {_cell(_where(v))} | {_cell(v['summary'])} | {v['failure_id'] or ''} |"
        for v in doc["verdicts"]]
    repros = [v for v in doc["verdicts"] if v["reproduction"]]
    if repros:
        out += ["", "## Known failures reproduced", "", "| failure | state | evidence | made |", "|---|---|---|---|"]
        out += [f"| {v['failure_id']} | {v['reproduction']['state']} | {_cell(v['summary'])} | {_made(v)} |"
                for v in repros]
    out += ["", "## Stack versions", "", "| package | version |", "|---|---|"]
    out += [f"| {k} | {v or 'not installed'} |" for k, v in doc["versions"].items()]
    return "\n".join(out) + "\n"


def keep(doc: dict[str, Any], history_dir: Path) -> Path:
    """A copy of report.json in the history folder, named by when and on what hardware it ran; never overwrites."""
    history_dir.mkdir(parents=True, exist_ok=True)
    stamp = str(doc["created"]).replace(":", "").replace("+0000", "Z")
    hw = str((doc.get("hardware") or {}).get("profile") or "none")
    text = json.dumps(secret_guard.scrub(doc), indent=2) + "\n"  # no secret by name, shape or known value
    for n in range(1000):
        path = history_dir / f"report-{stamp}-{hw}{f'-{n}' if n else ''}.json"
        try:
            with path.open("x", encoding="utf-8") as out:  # "x": two runs in one second keep both
                out.write(text)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{history_dir}: 1000 reports from the same second and hardware already there")


def write(doc: dict[str, Any], report_dir: Path) -> tuple[Path, Path]:
    report_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = report_dir / "report.json", report_dir / "report.md"
    doc = secret_guard.scrub(doc)  # no secret by name, shape or known value in either file
    json_path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(doc), encoding="utf-8")
    return json_path, md_path
