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
