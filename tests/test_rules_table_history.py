"""The history and the band of good runs as tables, both sides of each rule: which number with a throughput unit is
a figure (sign, exponent, zero, FIGURE_MAX, a digit of another script, a word), which runs join a band (passing,
same check, node, profile and unit, the last N), its bounds tied at the median's -5% and -10%, the verdicts it
leaves alone, and how kept reports are read, ordered and refused (rlcheck.history, rlcheck.history_band)."""

from __future__ import annotations

import json
import re

import pytest

from rlcheck import history, history_band
from rlcheck.verdict import Status, Verdict


def _v(summary: str, status: Status = Status.PASS, *, node: str | None = "node-a", details: str = "",
       check_id: str = "gpu_bf16_gemm") -> Verdict:
    return Verdict(check_id=check_id, status=status, node=node, summary=summary, details=details)


def _doc(created: str, *verdicts: Verdict, profile: str | None = "h200") -> dict:
    doc: dict = {"rlcheck_report": 1, "created": created, "verdicts": [v.to_dict() for v in verdicts]}
    if profile != "absent":
        doc["hardware"] = {"profile": profile}
    return doc


@pytest.mark.parametrize(("text", "figure", "refused"), [
    ("at 0 TFLOP/s", (0.0, "TFLOP/s"), ""),  # zero is a measurement (a dead GPU), never refused
    ("at 0.0 GB/s", (0.0, "GB/s"), ""),
    ("at +5 GB/s", (5.0, "GB/s"), ""),
    ("at .5 GB/s", (0.5, "GB/s"), ""),
    ("at 5. GB/s", (5.0, "GB/s"), ""),
    ("at 779.7TFLOP/s", (779.7, "TFLOP/s"), ""),  # no space before the unit
    ("x=779.7 TFLOP/s", (779.7, "TFLOP/s"), ""),
    ("at 1e6 TFLOP/s", (1e6, "TFLOP/s"), ""),  # at FIGURE_MAX: kept
    ("at 1000000.1 TFLOP/s", None, "is above 1e+06 (no GPU measures that)"),
    ("at -5 GB/s", None, "is negative"),
    ("at -0 GB/s", (0.0, "GB/s"), ""),
    ("at nan GB/s", None, "is not finite"),
    ("at -inf TFLOP/s", None, "is not finite"),
    ("at Infinity GB/s", None, "is not finite"),
    ("at 1e999 GB/s", None, "is not finite"),
    ("at 1.2.3 GB/s", None, "is not a number (decimal digits, an optional fraction and exponent: 779.7, 7.797e2)"),
    ("at 1,234.5 GB/s", None, "is not a number"),
    ("at \u0667\u0660\u0660 TFLOP/s", None, "is not a number"),  # Arabic-Indic digits
    ("at bf16 TFLOP/s", None, ""),  # a word: no figure, nothing refused
    ("at v1.2 GB/s", None, ""),
    ("no unit 779.7", None, ""),
    ("at 12 GB/s and 900 TFLOP/s", (12.0, "GB/s"), ""),  # the first one
])
def test_rules_table_history_read_figure(text, figure, refused):
    fig, why = history.read_figure({"summary": text, "details": ""})
    assert fig == figure and refused in why and (why == "") is (refused == "")


@pytest.mark.parametrize(("summary", "details", "figure"), [
    ("done", "cuda:0: 700 TFLOP/s", (700.0, "TFLOP/s")),
    ("at 600 TFLOP/s", "cuda:0: 700 TFLOP/s", (600.0, "TFLOP/s")),  # the summary first
    ("at bf16 TFLOP/s", "cuda:0: 700 TFLOP/s", (700.0, "TFLOP/s")),
    (None, None, None),
])
def test_rules_table_history_summary_before_details(summary, details, figure):
    assert history.figure_of({"summary": summary, "details": details}) == figure


def test_rules_table_history_long_token_is_refused_shortened():
    fig, why = history.read_figure({"summary": "at " + "9" * 30 + "." + "9" * 30 + " GB/s"})
    assert fig is None and "..." in why and why.startswith("'" + "9" * 30 + ".999999999")


@pytest.mark.parametrize(("figure", "median", "change"), [(92.0, 100.0, -0.08), (100.0, 100.0, 0.0),
                                                          (50.0, 0.0, None), (None, 100.0, None), (5.0, None, None)])
def test_rules_table_history_point_change(figure, median, change):
    point = history.Point(created="t", path="p", status="PASS", figure=figure, median=median)
    assert point.change == (pytest.approx(change) if change is not None else None)


@pytest.mark.parametrize(("node", "label"), [("node-a", "gpu_bf16_gemm [node-a]"), (None, "gpu_bf16_gemm"),
                                             ("", "gpu_bf16_gemm")])
def test_rules_table_history_series_label(node, label):
    assert history.Series(check_id="gpu_bf16_gemm", node=node, points=()).label == label


def _keep(folder, name: str, doc: object) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps(doc) if not isinstance(doc, str) else doc, encoding="utf-8")


def test_rules_table_history_band_of_earlier_good_runs_only(tmp_path):
    runs = [(100.0, Status.PASS), (110.0, Status.FAIL), (90.0, Status.PASS), (80.0, Status.WARN),
            (95.0, Status.PASS), (70.0, Status.PASS)]
    for i, (fig, status) in enumerate(runs):
        _keep(tmp_path, f"r{i}.json", _doc(f"2026-03-0{i + 1}T00:00:00Z", _v(f"at {fig} TFLOP/s", status)))
    [series] = history.load(tmp_path, last=2).series
    assert [p.median for p in series.points] == [None, 100.0, 100.0, 95.0, 95.0, 92.5]
    assert [p.baseline_runs for p in series.points] == [0, 1, 1, 2, 2, 2]


@pytest.mark.parametrize(("check", "node", "kept"), [
    (None, None, ["gpu_bf16_gemm [node-a]", "gpu_bf16_gemm [node-b]", "nccl_allreduce"]),
    ("gpu_bf16_gemm", None, ["gpu_bf16_gemm [node-a]", "gpu_bf16_gemm [node-b]"]),
    (None, "node-b", ["gpu_bf16_gemm [node-b]"]),
    ("nccl_allreduce", "node-b", []),
])
def test_rules_table_history_filters(tmp_path, check, node, kept):
    doc = _doc("2026-03-01T00:00:00Z", _v("at 1 TFLOP/s", node="node-b"), _v("at 1 TFLOP/s"),
               _v("at 3 GB/s", node=None, check_id="nccl_allreduce"))
    _keep(tmp_path, "r.json", doc)
    assert [s.label for s in history.load(tmp_path, check=check, node=node).series] == kept


def test_rules_table_history_runs_are_ordered_by_created_then_name(tmp_path):
    _keep(tmp_path, "a.json", _doc("2026-03-02T00:00:00Z", _v("at 2 TFLOP/s")))
    _keep(tmp_path, "c.json", _doc("2026-03-01T00:00:00Z", _v("at 1 TFLOP/s")))
    _keep(tmp_path, "b.json", _doc("2026-03-02T00:00:00Z", _v("at 3 TFLOP/s")))
    _keep(tmp_path, "notes.txt", "not a report, not a .json")
    found = history.load(tmp_path)
    assert [p.figure for p in found.series[0].points] == [1.0, 2.0, 3.0] and found.runs == 3 and not found.errors


@pytest.mark.parametrize(("content", "why"), [
    ("[]", "not an rlcheck report.json"),
    ('{"rlcheck_report": 2, "created": "t", "verdicts": []}', "not an rlcheck report.json"),
    ('{"rlcheck_report": 1, "verdicts": []}', 'no "created" time or no "verdicts" list'),
    ('{"rlcheck_report": 1, "created": 5, "verdicts": []}', 'no "created" time'),
    ('{"rlcheck_report": 1, "created": "t", "verdicts": {}}', 'no "verdicts" list'),
    ('{"rlcheck_report": 1, "created": "t", "verdicts": [{"check_id": "x"}]}', "a verdict without check_id and status"),
    ('{"rlcheck_report": 1, "created": "t", "verdicts": [{"check_id": 1, "status": "PASS"}]}', "without check_id"),
    ('{"rlcheck_report": 1, "created": "t", "verdicts": ["PASS"]}', "without check_id"),
    ('{"rlcheck_report": 1, "created": "t", "verdicts": [', "Expecting value"),
])
def test_rules_table_history_unreadable_reports_are_named(tmp_path, content, why):
    _keep(tmp_path, "bad.json", content)
    _keep(tmp_path, "good.json", _doc("2026-03-01T00:00:00Z", _v("at 1 TFLOP/s")))
    found = history.load(tmp_path)
    assert found.runs == 1 and len(found.errors) == 1 and why in found.errors[0] and "bad.json" in found.errors[0]
    docs, errors = history_band.read_reports(tmp_path)
    assert len(docs) == 1 and len(errors) == 1 and errors[0].startswith("bad.json: ") and why in errors[0]


@pytest.mark.parametrize(("make", "why"), [(False, "no such folder"), (True, "no report (*.json) in it")])
def test_rules_table_history_nothing_to_load(tmp_path, make, why):
    folder = tmp_path / "history"
    if make:
        folder.mkdir()
    with pytest.raises(history.HistoryError, match=re.escape(why)):
        history.load(folder)


def test_rules_table_history_point_lines(tmp_path):
    for i, fig in enumerate([100.0, 100.0, 92.0]):
        _keep(tmp_path, f"r{i}.json", _doc(f"2026-03-0{i + 1}T00:00:00Z", _v(f"at {fig} TFLOP/s")))
    _keep(tmp_path, "r9.json", _doc("2026-03-09T00:00:00Z", _v("at -1 TFLOP/s")))
    text = history.render_text(history.load(tmp_path))
    assert "     92.0 TFLOP/s  -8.0% vs median 100.0 of 2 good run(s)" in text
    assert "figure refused: '-1 TFLOP/s' is negative" in text
    assert text.startswith("rlcheck history: 4 run(s), 1 series\n")


# the band: median 100 of three good runs; WARN below 95, FAIL below 90 (tied values pass to the milder status)
@pytest.mark.parametrize(("value", "own", "expected"), [
    (95.0, Status.PASS, Status.PASS), (94.99, Status.PASS, Status.WARN), (90.0, Status.PASS, Status.WARN),
    (89.99, Status.PASS, Status.FAIL), (0.0, Status.PASS, Status.FAIL), (150.0, Status.PASS, Status.PASS),
    (80.0, Status.WARN, Status.FAIL), (92.0, Status.WARN, Status.WARN), (99.0, Status.WARN, Status.WARN),
    (99.0, Status.FAIL, Status.FAIL), (80.0, Status.FAIL, Status.FAIL),
])
def test_rules_table_history_band_bounds(value, own, expected):
    verdict = _v(f"at {value} TFLOP/s", own)
    judged = history_band.judge(verdict, [100.0, 100.0, 100.0], last=5)
    assert judged.status is expected
    changed = expected is not own
    assert (judged.remedy == history_band.REMEDY) is changed
    assert judged.summary.endswith(f"; the fixed floor passed it ({verdict.summary})") is changed
    assert "(WARN below -5%, FAIL below -10%)" in judged.details


@pytest.mark.parametrize(("status"), [Status.SKIP, Status.UNKNOWN])
def test_rules_table_history_band_leaves_unjudged_verdicts(status):
    verdict = _v("at 1 TFLOP/s", status)
    assert history_band.judge(verdict, [100.0] * 3, last=5) is verdict


@pytest.mark.parametrize(("figures", "last", "note"), [
    ([], 5, "band: 0 good run(s)"), ([100.0, 100.0], 5, "band: 2 good run(s)"),
    ([100.0] * 5, 2, "band: 2 good run(s)"), ([100.0] * 5, 0, "band: 0 good run(s)"),
    ([100.0] * 5, -1, "band: 0 good run(s)"),
])
def test_rules_table_history_band_not_yet_established(figures, last, note):
    judged = history_band.judge(_v("at 1 TFLOP/s", details="own details"), figures, last=last)
    assert judged.status is Status.PASS and judged.details.startswith("own details\n" + note)
    assert "(needs 3); judged by the fixed floor alone" in judged.details


def test_rules_table_history_band_of_zero_median_never_divides():
    judged = history_band.judge(_v("at 5 TFLOP/s"), [0.0, 0.0, 0.0], last=5)
    assert judged.status is Status.PASS and "+0.0% against the median 0.0 TFLOP/s" in judged.details


@pytest.mark.parametrize(("figures", "last", "band"), [
    ([1.0, 2.0], 5, None), ([1.0, 2.0, 3.0], 5, (1.0, 2.0, 3.0)), ([1.0, 2.0, 3.0, 4.0], 3, (2.0, 3.0, 4.0)),
    ([1.0, 2.0, 3.0, 4.0], 2, None), ([1.0, 2.0, 3.0], 0, None), ([1.0, 2.0, 3.0], -3, None),
])
def test_rules_table_history_band_of(figures, last, band):
    found = history_band.band_of(figures, "GB/s", last)
    assert (found.figures if found else None) == band
    if found:
        assert found.unit == "GB/s" and found.median == sorted(band)[len(band) // 2]


@pytest.mark.parametrize(("doc", "kept"), [
    (_doc("t", _v("at 7 TFLOP/s")), [7.0]),
    (_doc("t", _v("at 7 TFLOP/s"), profile="h100"), []),  # another profile's run never joins
    (_doc("t", _v("at 7 TFLOP/s"), profile=None), []),
    (_doc("t", _v("at 7 TFLOP/s"), profile="absent"), []),
    (_doc("t", _v("at 7 TFLOP/s", Status.WARN)), []),
    (_doc("t", _v("at 7 TFLOP/s", node="node-b")), []),
    (_doc("t", _v("at 7 TFLOP/s", check_id="other")), []),
    (_doc("t", _v("at 7 GB/s")), []),  # another unit
    (_doc("t", _v("at -7 TFLOP/s")), []),
    (_doc("t", _v("at 7 TFLOP/s"), _v("at 8 TFLOP/s")), [7.0, 8.0]),
])
def test_rules_table_history_good_figures(doc, kept):
    assert history_band.good_figures([doc], check_id="gpu_bf16_gemm", node="node-a", profile="h200",
                                     unit="TFLOP/s") == kept


@pytest.mark.parametrize("profile", [None, "absent"])
def test_rules_table_history_good_figures_without_a_profile_match_each_other(profile):
    doc = _doc("t", _v("at 7 TFLOP/s"), profile=profile)
    assert history_band.good_figures([doc], check_id="gpu_bf16_gemm", node="node-a", profile=None,
                                     unit="TFLOP/s") == [7.0]


BAND_REPORTS = [_doc(f"2026-03-0{i}T00:00:00Z", _v("at 100 TFLOP/s")) for i in range(1, 4)]


@pytest.mark.parametrize(("verdict", "last", "errors", "status", "notes"), [
    (_v("at 80 TFLOP/s"), 5, [], Status.FAIL, ["band: 80.0 TFLOP/s is -20.0%"]),
    (_v("at 80 TFLOP/s"), 0, [], Status.PASS, []),  # --band-runs 0: off, nothing added
    (_v("at -1 TFLOP/s"), 5, [], Status.PASS, ["band: not judged: '-1 TFLOP/s' is negative"]),
    (_v("at -1 TFLOP/s"), 0, [], Status.PASS, []),
    (_v("no figure"), 5, ["x.json: bad"], Status.PASS, []),
    (_v("at 99 TFLOP/s"), 5, ["a.json: bad", "b.json: bad", "c.json: bad", "d.json: bad"], Status.PASS,
     ["band: 99.0 TFLOP/s is -1.0%", "band: 4 kept report(s) unreadable and left out: a.json: bad; b.json: bad; "
      "c.json: bad"]),
])
def test_rules_table_history_judge_all(verdict, last, errors, status, notes):
    [judged] = history_band.judge_all([verdict], BAND_REPORTS, errors, profile="h200", last=last)
    assert judged.status is status
    band = [line for line in (judged.details or "").split("\n") if line.startswith("band: ")]
    assert len(band) == len(notes) and all(line.startswith(n) for line, n in zip(band, notes, strict=True)), band
    assert all(line == n for line, n in zip(band, notes, strict=True) if "unreadable" in n)
    if not notes:
        assert judged == verdict


def test_rules_table_history_read_reports_orders_by_created_then_name(tmp_path):
    _keep(tmp_path, "b.json", _doc("2026-03-01T00:00:00Z", _v("at 2 TFLOP/s")))
    _keep(tmp_path, "a.json", _doc("2026-03-01T00:00:00Z", _v("at 1 TFLOP/s")))
    _keep(tmp_path, "0.json", _doc("2026-03-02T00:00:00Z", _v("at 3 TFLOP/s")))
    docs, errors = history_band.read_reports(tmp_path)
    assert [d["verdicts"][0]["summary"] for d in docs] == ["at 1 TFLOP/s", "at 2 TFLOP/s", "at 3 TFLOP/s"]
    assert errors == [] and history_band.read_reports(tmp_path / "missing") == ([], [])


@pytest.mark.parametrize(("verdict", "last", "note"), [
    (_v("at 80 TFLOP/s", details="own"), 1, "own\nband: 1 good run(s) of this check kept in --history (needs 3); "
                                            "judged by the fixed floor alone"),  # one run kept: not yet a band
    (_v("at -1 TFLOP/s", details="own"), 1, "own\nband: not judged: '-1 TFLOP/s' is negative"),
    (_v("at -1 TFLOP/s", details="own"), 5, "own\nband: not judged: '-1 TFLOP/s' is negative"),
    (_v("at -1 TFLOP/s"), 5, "band: not judged: '-1 TFLOP/s' is negative"),
    (_v("no figure", details="own"), 1, "own"),
])
def test_rules_table_history_judge_all_notes(verdict, last, note):
    [judged] = history_band.judge_all([verdict], BAND_REPORTS, [], profile="h200", last=last)
    assert judged.details == note and judged.status is verdict.status


def test_rules_table_history_judge_all_judges_every_verdict_in_order():
    verdicts = [_v("no figure"), _v("at -1 TFLOP/s"), _v("at 80 TFLOP/s"), _v("at 99 TFLOP/s", node="node-b")]
    judged = history_band.judge_all(verdicts, BAND_REPORTS, [], profile="h200", last=5)
    assert [j.summary.split(";")[-1].strip() for j in judged][:2] == ["no figure", "at -1 TFLOP/s"]
    assert [j.status for j in judged] == [Status.PASS, Status.PASS, Status.FAIL, Status.PASS]
    assert "band: 0 good run(s)" in judged[3].details  # node-b has no history of its own


@pytest.mark.parametrize(("value", "median", "seen", "status"), [
    (0.25, 0.5, "0.2 GB/s is -50.0% against the median 0.5 GB/s", Status.FAIL),  # a median below 1 is still divided
    (0.5, 0.5, "0.5 GB/s is +0.0% against the median 0.5 GB/s", Status.PASS),
    (1.5, 1.0, "1.5 GB/s is +50.0% against the median 1.0 GB/s", Status.PASS),
])
def test_rules_table_history_band_change_of_small_figures(value, median, seen, status):
    judged = history_band.judge(_v(f"at {value} GB/s"), [median] * 3, last=5)
    assert judged.status is status and seen in judged.details


def test_rules_table_history_band_note_follows_the_verdicts_own_details():
    judged = history_band.judge(_v("at 80 TFLOP/s", details="cuda:3 slowest"), [100.0] * 3, last=5)
    assert judged.details == ("cuda:3 slowest\nband: 80.0 TFLOP/s is -20.0% against the median 100.0 TFLOP/s of the "
                              "last 3 good run(s) of this cluster (WARN below -5%, FAIL below -10%)")


# the rows mutation testing asked for: whole texts and documents, shortened tokens at 40 characters, default band size
@pytest.mark.parametrize(("token", "why"), [
    ("a" * 40, f"'{'a' * 40} TFLOP/s' is not a number"),
    ("a" * 41, f"'{'a' * 40}... TFLOP/s' is not a number"),
    ("Xinf", "'Xinf TFLOP/s' is not a number"),  # only a sign may stand before nan / inf
    ("+inf", "'+inf TFLOP/s' is not finite"),
])
def test_rules_table_history_judge_token_shows_at_most_40_characters(token, why):
    figure, said = history._judge_token(token, "TFLOP/s")
    assert figure is None and said.startswith(why)


def test_rules_table_history_whole_text_and_json(tmp_path):
    _keep(tmp_path, "r1.json", _doc("2026-03-01T00:00:00Z", _v("at 100 TFLOP/s", node=None), _v("at 7 GB/s", node="A",
                                                                                                 check_id="nccl")))
    _keep(tmp_path, "r2.json", _doc("2026-03-02T00:00:00Z", _v("at -1 TFLOP/s", node=None), _v("no figure", node=None,
                                                                                                check_id="nccl")))
    found = history.load(tmp_path)
    assert [s.label for s in found.series] == ["gpu_bf16_gemm", "nccl", "nccl [A]"]  # a node-less series first
    assert history.render_text(found) == "\n".join([
        "rlcheck history: 2 run(s), 3 series", "",
        "gpu_bf16_gemm",
        "  2026-03-01T00:00:00Z      PASS         100.0 TFLOP/s",
        "  2026-03-02T00:00:00Z      PASS     figure refused: '-1 TFLOP/s' is negative", "",
        "nccl",
        "  2026-03-02T00:00:00Z      PASS", "",
        "nccl [A]",
        "  2026-03-01T00:00:00Z      PASS           7.0 GB/s"]) + "\n"
    doc = history.to_json(found)
    assert doc["runs"] == 2 and doc["errors"] == []
    assert [(s["check_id"], s["node"]) for s in doc["series"]] == [("gpu_bf16_gemm", None), ("nccl", None),
                                                                    ("nccl", "A")]
    assert doc["series"][1]["points"] == [{"created": "2026-03-02T00:00:00Z", "path": str(tmp_path / "r2.json"),
                                           "status": "PASS", "figure": None, "unit": "", "median": None,
                                           "baseline_runs": 0, "refused": "", "change": None}]


def test_rules_table_history_band_is_the_last_five_good_runs_by_default(tmp_path):
    for i, fig in enumerate([10.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]):
        _keep(tmp_path, f"r{i}.json", _doc(f"2026-03-0{i + 1}T00:00:00Z", _v(f"at {fig} TFLOP/s")))
    last = history.load(tmp_path).series[0].points[-1]
    assert (last.baseline_runs, last.median) == (5, 100.0)  # the first run's 10 is left out
    assert history.load(tmp_path, last=6).series[0].points[-1].baseline_runs == 6


def test_rules_table_history_verdict_without_check_id_is_quoted_to_80_characters(tmp_path):
    verdict = {"status": "PASS", "summary": "s" * 200}
    _keep(tmp_path, "bad.json", {"rlcheck_report": 1, "created": "t", "verdicts": [verdict]})
    _keep(tmp_path, "good.json", _doc("2026-03-01T00:00:00Z", _v("at 1 TFLOP/s")))
    [error] = history.load(tmp_path).errors
    assert error == f"{tmp_path / 'bad.json'}: a verdict without check_id and status: {str(verdict)[:80]}"
    _keep(tmp_path, "bad.json", {"rlcheck_report": 1, "verdicts": []})
    [error] = history.load(tmp_path).errors
    assert error == f"{tmp_path / 'bad.json'}: no \"created\" time or no \"verdicts\" list"
