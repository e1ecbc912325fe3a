"""The run report: GO / NO-GO from the verdicts, report.json and report.md (pure, no pytest)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform
from pathlib import Path
from typing import Any

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

    @property
    def blocking(self) -> bool:
        return self.kind == "check"

    def to_dict(self) -> dict[str, Any]:
        return {**self.verdict.to_dict(), "kind": self.kind, "test_id": self.test_id,
                "blocking": self.blocking, "reproduction": self.reproduction}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    go: bool
    line: str
    """The final GO / NO-GO line, with the reasons."""


def decide(recorded: list[Recorded], recipe: str, hardware: str) -> Decision:
    blocking = [r for r in recorded if r.blocking]
    scope = f"{recipe if recipe.startswith('job ') else 'recipe ' + recipe} on hardware {hardware}"
    if not blocking:
        return Decision(go=False, line=f"NO-GO: no blocking check ran for {scope}")
    bad = [r for r in blocking if r.verdict.status.blocks]
    if not bad:
        return Decision(go=True, line=f"GO: {len(blocking)} blocking check(s) passed for {scope}")
    why = "; ".join(f"{r.verdict.check_id}{_node(r.verdict)} {r.verdict.status.value}" for r in bad)
    return Decision(go=False, line=f"NO-GO: {len(bad)} of {len(blocking)} blocking check(s) for {scope}: {why}")


def _node(v: Verdict) -> str:
    return f" [{v.node}]" if v.node else ""


def summary_lines(recorded: list[Recorded]) -> list[str]:
    return [f"{r.verdict.status.value:7} {r.verdict.check_id}{_node(r.verdict)}: {r.verdict.summary}"
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


def render_markdown(doc: dict[str, Any]) -> str:
    out = [f"# rlcheck report: {'GO' if doc['go'] else 'NO-GO'}", "", f"**{_cell(doc['decision'])}**", ""]
    out += [f"- hardware: {_cell(doc['hardware']['evidence'])}", f"- recipe: {doc['recipe']}" if not doc.get("job") else
            f"- job: {doc['job']['path']} ({doc['job']['format']})",
            f"- ray: {doc['ray_address'] or 'embedded loopback Ray'}", f"- created: {doc['created']}", ""]
    out += ["| status | check | node | summary | known failure |", "|---|---|---|---|---|"]
    for v in doc["verdicts"]:
        out.append(f"| {v['status']} | {v['check_id']} | {v['node'] or ''} | {_cell(v['summary'])} "
                   f"| {v['failure_id'] or ''} |")
    repros = [v for v in doc["verdicts"] if v["reproduction"]]
    if repros:
        out += ["", "## Known failures reproduced", "", "| failure | state | evidence |", "|---|---|---|"]
        out += [f"| {v['failure_id']} | {v['reproduction']['state']} | {_cell(v['summary'])} |" for v in repros]
    bad = [v for v in doc["verdicts"] if v["status"] in ("FAIL", "UNKNOWN", "WARN")]
    if bad:
        out += ["", "## What to fix", ""]
        for v in bad:
            out += [f"### {v['status']} {v['check_id']}", "", v["summary"], ""]
            if v["remedy"]:
                out += [f"Fix: {v['remedy']}", ""]
            if v["details"]:
                out += ["```", v["details"], "```", ""]
    out += ["", "## Stack versions", "", "| package | version |", "|---|---|"]
    out += [f"| {k} | {v or 'not installed'} |" for k, v in doc["versions"].items()]
    return "\n".join(out) + "\n"


def write(doc: dict[str, Any], report_dir: Path) -> tuple[Path, Path]:
    report_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = report_dir / "report.json", report_dir / "report.md"
    json_path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(doc), encoding="utf-8")
    return json_path, md_path
