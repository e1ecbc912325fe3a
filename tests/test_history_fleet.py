"""`rlcheck history` at fleet scale (16 nodes x 30 runs): one heat map per check, a row per node worst first, the
nodes to look at highlighted, dates thinned so they never overlap. The layout is judged as data, the PNG drawn."""

from __future__ import annotations

import json

import pytest

from rlcheck import history, history_band


def _fleet(tmp_path, *, nodes=16, runs=30, last_change=None, last_status=None):
    """Reports where every node measures 700 TFLOP/s; `last_change` / `last_status` map a
    node to its latest run's figure change / status."""
    last_change, last_status = last_change or {}, last_status or {}
    for r in range(runs):
        verdicts = []
        for n in range(nodes):
            node = f"gpu-{n:02d}"
            figure, status = 700.0, "PASS"
            if r == runs - 1:
                figure *= 1 + last_change.get(node, 0.0)
                status = last_status.get(node, "PASS")
            verdicts.append({"check_id": "gpu_bf16_gemm", "status": status, "node": node,
                             "summary": f"bf16 GEMM {figure:.3f} TFLOP/s"})
        doc = {"rlcheck_report": 1, "created": f"2026-11-{1 + r // 24:02d}T{r % 24:02d}:00:00+00:00",
               "verdicts": verdicts}
        (tmp_path / f"r{r:03d}.json").write_text(json.dumps(doc), encoding="utf-8")
    return history.load(tmp_path)


def test_highlight_is_the_band_warn_line():
    assert history.HIGHLIGHT_DROP == history_band.WARN_DROP


def test_a_fleet_leads_with_the_failing_then_the_degrading_node_and_highlights_only_them(tmp_path):
    found = _fleet(tmp_path, last_change={"gpu-07": -0.12, "gpu-03": -0.01}, last_status={"gpu-11": "FAIL"})
    [panel] = history.fleet_panels(found)
    assert (panel.check_id, panel.unit, len(panel.runs)) == ("gpu_bf16_gemm", "TFLOP/s", 30)
    assert panel.nodes[:3] == ("gpu-11", "gpu-07", "gpu-03")
    assert panel.highlighted == ("gpu-11", "gpu-07")
    row = panel.changes[panel.nodes.index("gpu-07")]
    assert row[0] is None and row[-1] == pytest.approx(-0.12, abs=1e-3)  # no band before the first run
    assert panel.flagged[0][-1] and not any(panel.flagged[0][:-1]) and not any(panel.flagged[1])
    assert history.plot(found, tmp_path / "fleet.png") == tmp_path / "fleet.png"
    assert (tmp_path / "fleet.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("drop", "highlighted"), [(-0.05, True), (-0.0495, False), (0.08, False)])
def test_a_node_is_highlighted_from_the_band_warn_drop_on(tmp_path, drop, highlighted):
    found = _fleet(tmp_path, nodes=6, runs=8, last_change={"gpu-02": drop})
    [panel] = history.fleet_panels(found)
    assert ("gpu-02" in panel.highlighted) is highlighted
    assert (panel.nodes[0] == "gpu-02") is (drop < 0)


@pytest.mark.parametrize("status", ["WARN", "UNKNOWN", "FAIL"])
def test_a_node_whose_latest_run_did_not_pass_is_highlighted_whatever_its_figure(tmp_path, status):
    found = _fleet(tmp_path, nodes=6, runs=4, last_status={"gpu-05": status}, last_change={"gpu-05": 0.02})
    [panel] = history.fleet_panels(found)
    assert panel.highlighted == ("gpu-05",) and panel.nodes[0] == "gpu-05"


@pytest.mark.parametrize(("nodes", "fleet"), [(history.LINES_UP_TO, False), (history.LINES_UP_TO + 1, True)])
def test_up_to_four_series_stay_lines_and_more_become_a_heat_map(tmp_path, nodes, fleet):
    found = _fleet(tmp_path, nodes=nodes, runs=3)
    assert bool(history.fleet_panels(found)) is fleet
    assert len(history.fleet_panels(found, every=True)) == 1
    assert history.plot(found, tmp_path / "p.png") == tmp_path / "p.png"


@pytest.mark.parametrize(("runs", "ticks"), [
    (0, []), (1, [0]), (12, list(range(12))), (13, [0, 2, 4, 6, 8, 10, 12]),
    (30, [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 29]), (36, [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 35]),
])
def test_dates_are_thinned_to_at_most_twelve_and_always_show_the_last_run(runs, ticks):
    got = history.run_ticks(tuple(str(i) for i in range(runs)))
    assert got == ticks
    assert len(got) <= history.MAX_RUN_TICKS
