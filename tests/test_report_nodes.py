"""report.md at cluster scale: from SCALE_NODES nodes on it leads with the failing nodes and groups the per-node
PASS and SKIP verdicts by check and status; below it every verdict keeps its own row."""

from __future__ import annotations

from rlcheck import report_nodes
from rlcheck.report import render_markdown
from rlcheck.report_nodes import NAMED, SCALE_NODES


def _verdict(status: str, check_id: str, summary: str, node: str = "") -> dict[str, object]:
    return {"status": status, "check_id": check_id, "node": node, "summary": summary, "failure_id": "",
            "remedy": "", "details": "", "reproduction": None}


def _doc(verdicts: list[dict[str, object]]) -> dict[str, object]:
    return {"go": False, "decision": "NO-GO", "hardware": {"evidence": "h200"}, "recipe": "qwen3-4b-colocated",
            "framework": {"judged": "slime 0.2.4"}, "ray_address": "10.0.0.1:6379",
            "created": "2026-12-02T12:00:00+00:00", "versions": {"torch": "2.9.1"}, "verdicts": verdicts}


def _cluster(nodes: int, bad: dict[str, list[tuple[str, str]]]) -> list[dict[str, object]]:
    """Two per-node checks on every node (PASS unless bad names the node), plus one check of the whole run."""
    out = [_verdict("PASS", "recipe_batch", "fits")]
    for check in ("cluster_node_xid", "cluster_node_ecc"):
        for i in range(nodes):
            node = f"gpu-{i:03d}"
            status = next((s for c, s in bad.get(node, []) if c == check), "PASS")
            out.append(_verdict(status, check, "no Xid" if status == "PASS" else f"{status} on {node}", node))
    return out


def test_report_nodes_at_scale_leads_with_failing_nodes_and_groups_the_rest():
    bad = {"gpu-007": [("cluster_node_xid", "UNKNOWN")],
           "gpu-031": [("cluster_node_xid", "FAIL"), ("cluster_node_ecc", "FAIL")]}
    md = render_markdown(_doc(_cluster(64, bad)))
    lead, fix, table = md.index("## Failing nodes"), md.index("## What to fix"), md.index("## Every verdict")
    assert lead < fix < table
    rows = [line for line in md[lead:fix].splitlines() if line.startswith("| gpu-")]
    assert rows == ["| gpu-031 | 2 | 0 | cluster_node_xid (FAIL), cluster_node_ecc (FAIL) |",
                    "| gpu-007 | 0 | 1 | cluster_node_xid (UNKNOWN) |"]  # most FAILs first
    assert "2 of 64 nodes block GO:" in md
    every = md[table:md.index("## Stack versions")].splitlines()
    grouped = [line for line in every if line.startswith("| PASS | cluster_node_xid @ ")]
    assert grouped == ["| PASS | cluster_node_xid @ 62 nodes: gpu-000, gpu-001, gpu-002, gpu-003, gpu-004 "
                       "(+57 more) | no Xid |  |"]
    assert "| FAIL | cluster_node_xid @ gpu-031 | FAIL on gpu-031 |  |" in every
    assert "| UNKNOWN | cluster_node_xid @ gpu-007 | UNKNOWN on gpu-007 |  |" in every
    assert "| PASS | recipe_batch | fits |  |" in every
    # the header, the run's check, per check one grouped PASS row, and one row per FAIL or UNKNOWN verdict
    assert len([line for line in every if line.startswith("| ")]) == 1 + 1 + 2 + 3


def test_report_nodes_below_scale_every_verdict_keeps_its_row_and_no_lead():
    md = render_markdown(_doc(_cluster(SCALE_NODES - 1, {"gpu-001": [("cluster_node_xid", "FAIL")]})))
    assert "## Failing nodes" not in md
    assert sum(line.startswith("| PASS | cluster_node_ecc @ gpu-") for line in md.splitlines()) == SCALE_NODES - 1
    assert report_nodes.at_scale(_cluster(SCALE_NODES, {})) and not report_nodes.at_scale(_cluster(SCALE_NODES - 1,
                                                                                                     {}))


def test_report_nodes_a_clean_cluster_at_scale_has_no_failing_nodes_section_and_groups_differing_summaries():
    verdicts = [_verdict("PASS", "cluster_node_shm", f"{i} GiB", f"n{i}") for i in range(SCALE_NODES)]
    md = render_markdown(_doc(verdicts))
    assert "## Failing nodes" not in md
    shown = ", ".join(f"n{i}" for i in range(NAMED))
    more = f" (+{SCALE_NODES - NAMED} more)"
    assert (f"| PASS | cluster_node_shm @ {SCALE_NODES} nodes: {shown}{more} | {SCALE_NODES} nodes: {shown}{more} "
            "|  |") in md.splitlines()


def test_report_nodes_one_node_of_a_check_and_status_keeps_its_own_row():
    verdicts = [*_cluster(SCALE_NODES, {}), _verdict("SKIP", "cluster_node_efa", "no EFA here", "gpu-000")]
    md = render_markdown(_doc(verdicts))
    assert "| SKIP | cluster_node_efa @ gpu-000 | no EFA here |  |" in md.splitlines()


def _fixable(status: str, check_id: str, summary: str, node: str, remedy: str = "drain and reseat",
             details: str = "") -> dict[str, object]:
    return {**_verdict(status, check_id, summary, node), "remedy": remedy, "details": details}


def _fix_part(md: str) -> list[str]:
    return md[md.index("## What to fix"):md.index("## Every verdict")].splitlines()


def test_report_nodes_what_to_fix_is_one_section_per_check_status_and_fix_at_scale():
    n = report_nodes.DETAILED + 3
    verdicts = [_fixable("FAIL", "cluster_node_xid", f"Xid 79 on GPU {i}", f"gpu-{i:03d}", details=f"dmesg {i}")
                for i in range(n)]
    verdicts += [_fixable("FAIL", "cluster_node_ecc", "uncorrectable ECC", f"gpu-{i:03d}") for i in (1, 2)]
    verdicts += [_fixable("FAIL", "cluster_node_xid", "Xid 48", "gpu-900", remedy="replace the GPU")]  # other fix
    verdicts += [_fixable("WARN", "cluster_node_clocks", "clocks low", "gpu-005")]  # one node alone
    verdicts += [_fixable("FAIL", "recipe_batch", "192 != 96", "", remedy="set --global-batch-size")]  # the run's
    fix = _fix_part(render_markdown(_doc(verdicts)))
    heads = [line for line in fix if line.startswith("### ")]
    assert heads == [f"### FAIL cluster_node_xid on {n} nodes", "### FAIL cluster_node_ecc on 2 nodes",
                     "### FAIL cluster_node_xid @ gpu-900", "### FAIL recipe_batch",
                     "### WARN cluster_node_clocks @ gpu-005"]
    every_node = ", ".join(f"gpu-{i:03d}" for i in range(n))
    assert f"Nodes: {every_node}" in fix  # every node named, none left out
    listed = [line for line in fix if line.startswith("- gpu-")]
    assert listed == [f"- gpu-{i:03d}: Xid 79 on GPU {i}" for i in range(report_nodes.DETAILED)]
    assert "- 3 more node(s): each one's summary is in report.json" in fix
    assert fix.count("Fix: drain and reseat") == 3  # xid group, ecc group, the lone WARN
    assert "(details of gpu-000; every node's are in report.json)" in fix
    assert "dmesg 0" in fix and "dmesg 1" not in fix
    ecc = fix[fix.index("### FAIL cluster_node_ecc on 2 nodes"):fix.index("### FAIL cluster_node_xid @ gpu-900")]
    assert ecc == ["### FAIL cluster_node_ecc on 2 nodes", "", "Nodes: gpu-001, gpu-002", "", "uncorrectable ECC", "",
                   "Fix: drain and reseat", ""]  # one summary shared by all: said once, no list


def test_report_nodes_what_to_fix_lists_exactly_detailed_nodes_without_a_more_line():
    verdicts = [_fixable("UNKNOWN", "cluster_node_shm", f"no answer {i}", f"n{i:02d}")
                for i in range(max(report_nodes.DETAILED, SCALE_NODES))]
    fix = _fix_part(render_markdown(_doc(verdicts)))
    assert len([line for line in fix if line.startswith("- n")]) == report_nodes.DETAILED
    assert not any("more node(s)" in line for line in fix)


def test_report_nodes_what_to_fix_below_scale_keeps_a_section_per_verdict():
    verdicts = [_fixable("FAIL", "cluster_node_xid", "Xid 79", f"gpu-{i}", details="dmesg") for i in range(2)]
    fix = _fix_part(render_markdown(_doc(verdicts)))
    assert [line for line in fix if line.startswith("### ")] == ["### FAIL cluster_node_xid @ gpu-0",
                                                                 "### FAIL cluster_node_xid @ gpu-1"]
    assert fix.count("```") == 4 and not any(line.startswith("Nodes: ") for line in fix)
