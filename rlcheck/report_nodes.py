"""report.md at cluster scale: the failing nodes first, then every other per-node verdict grouped (pure).

A run over many nodes makes one verdict per check and node: 15 per-node checks on 256 nodes is 3,840 rows. From
SCALE_NODES nodes on, report.md leads with a table of the nodes that block (each with its failing checks), and in
"Every verdict" the per-node verdicts that do not need a reader (PASS and SKIP) are one row per check and status,
naming how many nodes and the first few of them; FAIL, UNKNOWN and WARN rows stay one per node. "What to fix" is
one section per check, status and fix (fix_sections): every node it names, each node's own words up to DETAILED
nodes, the fix once and the first node's details; a check failing on 1,000 nodes is one section, not 1,000.
"""

from __future__ import annotations

from typing import Any

SCALE_NODES = 8
"""From this many nodes named in the verdicts, report.md groups them; below it every verdict is its own row."""
NAMED = 5
"""Nodes named in a grouped row before '+N more'."""
DETAILED = 10
"""Nodes of a What-to-fix section whose own summary is listed; the rest are named (every one) and are in report.json."""
BLOCKING = ("FAIL", "UNKNOWN")
GROUPED = ("PASS", "SKIP")


def nodes_named(verdicts: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(v["node"] for v in verdicts if v.get("node")))


def at_scale(verdicts: list[dict[str, Any]]) -> bool:
    return len(nodes_named(verdicts)) >= SCALE_NODES


def failing_nodes(verdicts: list[dict[str, Any]], cell: Any) -> list[str]:
    """'## Failing nodes': one row per node with a FAIL or UNKNOWN verdict, most FAILs first; [] when none."""
    bad: dict[str, list[dict[str, Any]]] = {}
    for v in verdicts:
        if v.get("node") and v["status"] in BLOCKING:
            bad.setdefault(v["node"], []).append(v)
    if not bad:
        return []
    total = len(nodes_named(verdicts))
    order = sorted(bad, key=lambda n: (-sum(v["status"] == "FAIL" for v in bad[n]), -len(bad[n])))
    out = ["## Failing nodes", "", f"{len(bad)} of {total} nodes block GO:", "",
           "| node | FAIL | UNKNOWN | checks |", "|---|---|---|---|"]
    for node in order:
        mine = bad[node]
        checks = ", ".join(f"{v['check_id']} ({v['status']})" for v in mine)
        out.append(f"| {cell(node)} | {sum(v['status'] == 'FAIL' for v in mine)} | "
                   f"{sum(v['status'] == 'UNKNOWN' for v in mine)} | {cell(checks)} |")
    return [*out, ""]


def _nodes_cell(nodes: list[str]) -> str:
    shown = ", ".join(nodes[:NAMED])
    return f"{shown} (+{len(nodes) - NAMED} more)" if len(nodes) > NAMED else shown


def grouped_rows(verdicts: list[dict[str, Any]], cell: Any, where: Any) -> list[str]:
    """The 'Every verdict' rows: per-node PASS and SKIP verdicts one row per check and status (at the place of the
    first), every other verdict a row of its own, in the verdicts' order."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for v in verdicts:
        if v.get("node") and v["status"] in GROUPED:
            groups.setdefault((v["check_id"], v["status"]), []).append(v)
    out: list[str] = []
    done: set[tuple[str, str]] = set()
    for v in verdicts:
        key = (v["check_id"], v["status"])
        if v.get("node") and key in groups:  # a verdict of the whole run keeps its own row beside the group
            if key in done:
                continue
            done.add(key)
            members = groups[key]
            if len(members) > 1:
                nodes = [m["node"] for m in members]
                same = len({m["summary"] for m in members}) == 1
                said = members[0]["summary"] if same else f"{len(nodes)} nodes: {_nodes_cell(nodes)}"
                out.append(f"| {v['status']} | {cell(v['check_id'])} @ {len(nodes)} nodes: {cell(_nodes_cell(nodes))} "
                           f"| {cell(said)} | {v['failure_id'] or ''} |")
                continue
        out.append(f"| {v['status']} | {cell(where(v))} | {cell(v['summary'])} | {v['failure_id'] or ''} |")
    return out


def fix_sections(bad: list[dict[str, Any]], where: Any, group: bool = True) -> list[str]:
    """'What to fix' sections for verdicts already in fix order, each with its summary, fix and details. With
    group (at scale), per-node verdicts of one check, status and fix are one section at the place of the first
    (every node named; the summaries of the first DETAILED listed, the fix once, the first node's details); a
    verdict of the whole run, or one node alone, is a section of its own."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for v in bad:
        if group and v.get("node"):
            groups.setdefault((v["status"], v["check_id"], v["remedy"] or ""), []).append(v)
    out: list[str] = []
    done: set[tuple[str, str, str]] = set()
    for v in bad:
        key = (v["status"], v["check_id"], v["remedy"] or "")
        members = groups.get(key, [v]) if v.get("node") else [v]
        if len(members) > 1:
            if key in done:
                continue
            done.add(key)
            nodes = [m["node"] for m in members]
            out += [f"### {v['status']} {v['check_id']} on {len(nodes)} nodes", "", f"Nodes: {', '.join(nodes)}", ""]
            if len({m["summary"] for m in members}) == 1:
                out += [v["summary"], ""]
            else:
                out += [f"- {m['node']}: {m['summary']}" for m in members[:DETAILED]]
                rest = len(members) - DETAILED
                out += [f"- {rest} more node(s): each one's summary is in report.json"] if rest > 0 else []
                out.append("")
        else:
            out += [f"### {v['status']} {where(v)}", "", v["summary"], ""]
        if v["remedy"]:
            out += [f"Fix: {v['remedy']}", ""]
        if v["details"]:
            said = [f"(details of {v['node']}; every node's are in report.json)", ""] if len(members) > 1 else []
            out += [*said, "```", v["details"], "```", ""]
    return out
