"""report.md leads with what to fix (FAIL and UNKNOWN first, then WARN) before the table of every verdict, and the
node is named in the check's cell, not in a column of its own."""

from __future__ import annotations

from rlcheck.report import render_markdown


def _verdict(status: str, check_id: str, summary: str, node: str = "", remedy: str = "") -> dict[str, object]:
    return {"status": status, "check_id": check_id, "node": node, "summary": summary, "failure_id": "",
            "remedy": remedy, "details": "", "reproduction": None}


def _doc(verdicts: list[dict[str, object]]) -> dict[str, object]:
    return {"go": False, "decision": "NO-GO: 2 of 53 judged blocking check(s)", "hardware": {"evidence": "h200"},
            "recipe": "qwen3-4b-colocated", "framework": {"judged": "slime 0.2.4"}, "ray_address": None,
            "created": "2026-12-02T12:00:00+00:00", "versions": {"torch": "2.9.1"}, "verdicts": verdicts}


def test_report_md_leads_with_what_to_fix_blocking_first_then_warnings():
    passes = [_verdict("PASS", f"image_check_{i}", "fine") for i in range(50)]
    verdicts = [*passes[:20], _verdict("WARN", "cluster_node_clocks", "SM clock 1500 MHz", node="gpu-node-07"),
                *passes[20:], _verdict("UNKNOWN", "cluster_node_driver", "no answer in 60 s", node="gpu-node-12"),
                _verdict("FAIL", "cluster_node_xid", "Xid 79: fell off the bus", node="gpu-node-03",
                         remedy="drain the node and reseat the GPU")]
    md = render_markdown(_doc(verdicts))
    fix, table = md.index("## What to fix"), md.index("## Every verdict")
    assert fix < table
    headings = [line for line in md.splitlines() if line.startswith("### ")]
    assert headings == ["### FAIL cluster_node_xid @ gpu-node-03", "### UNKNOWN cluster_node_driver @ gpu-node-12",
                        "### WARN cluster_node_clocks @ gpu-node-07"]
    assert md.index("Fix: drain the node and reseat the GPU") < table
    assert "| status | check @ node | summary | known failure |" in md
    assert "| FAIL | cluster_node_xid @ gpu-node-03 | Xid 79: fell off the bus |  |" in md
    assert "| PASS | image_check_0 | fine |  |" in md  # a check of the whole run names no node


def test_report_md_of_a_clean_run_has_no_what_to_fix():
    md = render_markdown(_doc([_verdict("PASS", "recipe_batch", "fits"), _verdict("SKIP", "gpu_gemm", "no GPU")]))
    assert "## What to fix" not in md and "## Every verdict" in md
