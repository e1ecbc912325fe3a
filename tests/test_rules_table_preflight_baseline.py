"""Rule table for a cluster's own floors (rlcheck.preflight.baseline): what a figure must be (a decimal, finite,
positive), both sides of each bound against the profile's floor (at most 10 x, at least 1/100), which report is a
healthy GPU run and which figures it gives, the baseline made of them (fraction x figure, rounded, with its source),
the file written and read back, and the profile a baseline turns into (its floors, provenance 'baseline')."""

from __future__ import annotations

import dataclasses
import math

import pytest

from rlcheck.hardware import get_profile
from rlcheck.preflight import baseline
from rlcheck.preflight.baseline import Baseline, BaselineError
from rlcheck.probes.gpu import gpu_smoke

H200 = get_profile("h200")  # floors: GEMM 615 TFLOP/s, all-reduce 240 GB/s
GEMM, BUSBW = "bf16_gemm_min_tflops", "nccl_allreduce_min_busbw_gbps"


def _error(call) -> str:
    with pytest.raises(BaselineError) as err:
        call()
    return str(err.value)


@pytest.mark.parametrize(("text", "value"), [("779.7", 779.7), ("7.797e2", 779.7), ("+12", 12.0), (".5", 0.5),
                                             ("5.", 5.0), ("1E-3", 0.001)])
def test_a_figure_is_a_decimal_number(text, value):
    assert baseline.figure(text, GEMM, "r.json") == value


@pytest.mark.parametrize(("text", "message"), [
    ("nan", "r.json: f: 'nan' is not a number (a decimal such as 779.7 or 7.797e2)"),
    ("inf", "r.json: f: 'inf' is not a number (a decimal such as 779.7 or 7.797e2)"),
    ("0x10", "r.json: f: '0x10' is not a number (a decimal such as 779.7 or 7.797e2)"),
    ("1_000", "r.json: f: '1_000' is not a number (a decimal such as 779.7 or 7.797e2)"),
    ("٣", "r.json: f: '٣' is not a number (a decimal such as 779.7 or 7.797e2)"),
    ("", "r.json: f: '' is not a number (a decimal such as 779.7 or 7.797e2)"),
    ("9" * 400, f"r.json: f: '{'9' * 40}...' is not finite (it overflows a float)"),
    ("1e999", "r.json: f: '1e999' is not finite (it overflows a float)"),
    ("0", "r.json: f: '0' is not positive"),
    ("-0.0", "r.json: f: '-0.0' is not positive"),
    ("-5", "r.json: f: '-5' is not positive"),
    ("x" * 41, f"r.json: f: '{'x' * 40}...' is not a number (a decimal such as 779.7 or 7.797e2)"),
])
def test_a_figure_that_is_no_positive_finite_decimal_is_refused_naming_field_and_file(text, message):
    assert _error(lambda: baseline.figure(text, "f", "r.json")) == message


def test_a_figure_of_40_characters_is_shown_whole():
    assert _error(lambda: baseline.figure("x" * 40, "f", "w")) == (
        f"w: f: '{'x' * 40}' is not a number (a decimal such as 779.7 or 7.797e2)")


@pytest.mark.parametrize("value", [6150.0, 6.15, 615.0])
def test_a_figure_within_the_bounds_of_the_profiles_floor_is_kept(value):
    baseline.check_bound(GEMM, value, H200, "w")


@pytest.mark.parametrize(("value", "what", "message"), [
    (6150.01, "figure", "w: bf16_gemm_min_tflops: the figure 6150.01 is above 10 x the h200 floor 615 (at most "
                        "6150): a misread figure, not a measure"),
    (6.149, "floor", "w: bf16_gemm_min_tflops: the floor 6.149 is below 1/100 of the h200 floor 615 (at least "
                     "6.15)"),
])
def test_a_figure_outside_the_bounds_is_refused_whole(value, what, message):
    assert _error(lambda: baseline.check_bound(GEMM, value, H200, "w", what)) == message


def test_a_floor_the_profile_does_not_set_has_no_bound():
    baseline.check_bound("nccl_pair_min_busbw_gbps", 1e9, H200, "w")
    baseline.check_bound("nccl_pair_min_busbw_gbps", 1e-9, H200, "w")


def _gemm(*rates: str, status: str = "PASS") -> dict:
    lines = [f"cuda:{i} NVIDIA H200: {r} TFLOP/s" for i, r in enumerate(rates)]
    return {"check_id": "gpu_bf16_gemm", "status": status, "summary": "ok", "details": "\n".join(["header", *lines])}


def _busbw(gbps: str, gpus: int = 8, status: str = "PASS") -> dict:
    return {"check_id": "gpu_nccl_allreduce", "status": status,
            "summary": f"all-reduce bus bandwidth {gbps} GB/s over {gpus} GPU(s) (>= 240, measured floor)"}


def _report(*verdicts) -> dict:
    return {"rlcheck_report": 1, "verdicts": list(verdicts)}


def test_the_figures_of_a_healthy_run_the_slowest_gpu_and_the_all_reduce():
    doc = _report(_gemm("779.7", "701.5", "790"), _busbw("298.4"), {"check_id": "cluster_node_xid", "status": "WARN"},
                  "not a verdict", {"check_id": "gpu_node_health", "status": "SKIP", "summary": ""})
    assert baseline.figures_from_report(doc, "r.json", H200) == {
        GEMM: (701.5, "bf16 GEMM of the slowest of 3 GPU(s) (cuda:1)"),
        BUSBW: (298.4, "NCCL all-reduce bus bandwidth over 8 GPU(s)")}


def test_a_run_with_only_one_measure_gives_that_one():
    assert baseline.figures_from_report(_report(_busbw("300", gpus=2))) == {
        BUSBW: (300.0, "NCCL all-reduce bus bandwidth over 2 GPU(s)")}
    assert baseline.figures_from_report(_report(_gemm("800"))) == {
        GEMM: (800.0, "bf16 GEMM of the slowest of 1 GPU(s) (cuda:0)")}


@pytest.mark.parametrize(("doc", "message"), [
    ({"verdicts": []}, "not an rlcheck report.json (no rlcheck_report = 1 and verdicts list)"),
    ({"rlcheck_report": 2, "verdicts": []}, "not an rlcheck report.json (no rlcheck_report = 1 and verdicts list)"),
    ({"rlcheck_report": 1, "verdicts": {}}, "not an rlcheck report.json (no rlcheck_report = 1 and verdicts list)"),
    (_report(_gemm("800", status="FAIL")), "not a healthy run: gpu_bf16_gemm FAIL: ok"),
    (_report({"check_id": "cluster_node_ecc", "status": "UNKNOWN"}, {"check_id": "gpu_a", "status": "FAIL",
                                                                       "summary": "s1"},
             {"check_id": "gpu_b", "status": "FAIL", "summary": "s2"}, {"check_id": "gpu_c", "status": "FAIL"}),
     "not a healthy run: cluster_node_ecc UNKNOWN: ; gpu_a FAIL: s1; gpu_b FAIL: s2"),
    (_report({"check_id": "recipe_batch", "status": "FAIL"}, {"check_id": "image_x", "status": "UNKNOWN"}),
     "no measured gpu_bf16_gemm or gpu_nccl_allreduce verdict in the report (run `pytest checks/ -k 'bf16_gemm or "
     "nccl_allreduce'` on a GPU node first)"),
    (_report({"check_id": "gpu_bf16_gemm", "status": "PASS", "details": "no rate here"},
             {"check_id": "gpu_nccl_allreduce", "status": "SKIP", "summary": "one GPU"}),
     "no measured gpu_bf16_gemm or gpu_nccl_allreduce verdict in the report (run `pytest checks/ -k 'bf16_gemm or "
     "nccl_allreduce'` on a GPU node first)"),
    (_report(_gemm("800", "nan")), "the report: bf16_gemm_min_tflops: 'nan' is not a number (a decimal such as 779.7 "
                                   "or 7.797e2)"),
])
def test_a_report_that_is_no_healthy_gpu_run_is_refused_saying_why(doc, message):
    assert _error(lambda: baseline.figures_from_report(doc)) == message


def test_every_gpus_figure_is_bounded_by_the_profile_not_only_the_slowest():
    doc = _report(_gemm("700", "9000"))
    assert _error(lambda: baseline.figures_from_report(doc, "r.json", H200)).startswith(
        "r.json: bf16_gemm_min_tflops: the figure 9000 is above 10 x the h200 floor 615")
    assert baseline.figures_from_report(doc, "r.json")[GEMM][0] == 700.0  # no profile: no bound
    assert _error(lambda: baseline.figures_from_report(_report(_busbw("2")), "r.json", H200)).startswith(
        "r.json: nccl_allreduce_min_busbw_gbps: the figure 2 is below 1/100 of the h200 floor 240")


@pytest.mark.parametrize(("text", "result"), [
    ('{"hardware": {"profile": "h200"}, "verdicts": []}', "h200"),
    ('{"hardware": {"profile": null}}', ""),
    ('{"hardware": "h200"}', ""),
    ("{}", ""),
])
def test_a_report_names_its_hardware_profile(tmp_path, text, result):
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    doc, hardware = baseline.read_report(path)
    assert hardware == result and isinstance(doc, dict)


@pytest.mark.parametrize(("content", "message"), [
    (b"[1, 2]", "not an rlcheck report.json (a JSON object)"),
    (b"{", "cannot read the report: Expecting property name enclosed in double quotes"),
    (b"\xff{}", "cannot read the report: 'utf-8' codec can't decode byte 0xff"),
])
def test_a_report_that_cannot_be_read_is_refused_naming_the_file(tmp_path, content, message):
    path = tmp_path / "report.json"
    path.write_bytes(content)
    assert _error(lambda: baseline.read_report(path)).startswith(f"{path}: {message}")


def test_a_missing_report_is_refused_naming_the_file(tmp_path):
    assert _error(lambda: baseline.read_report(tmp_path / "none.json")).startswith(
        f"{tmp_path / 'none.json'}: cannot read the report: [Errno 2]")


def test_a_baseline_is_the_fraction_of_each_figure_rounded_with_its_source():
    made = baseline.make("h200", {GEMM: (779.77, "bf16 GEMM"), BUSBW: (298.4, "all-reduce")}, "r.json", 0.75)
    assert (made.hardware, made.recorded_from, made.fraction) == ("h200", "r.json", 0.75)
    assert made.thresholds == {GEMM: 584.8, BUSBW: 223.8}
    assert made.source == {GEMM: f"0.75 x 779.77 (bf16 GEMM), recorded {made.recorded} from r.json",
                           BUSBW: f"0.75 x 298.4 (all-reduce), recorded {made.recorded} from r.json"}
    assert made.recorded.endswith("+00:00") and len(made.recorded) == 25
    assert baseline.make("h200", {GEMM: (700.0, "g")}, "r").thresholds == {GEMM: 560.0}  # FRACTION 0.8


@pytest.mark.parametrize(("figures", "fraction", "message"), [
    ({GEMM: (6200.0, "g")}, 0.8, "r: bf16_gemm_min_tflops: the figure 6200 is above 10 x the h200 floor 615"),
    ({GEMM: (7.0, "g")}, 0.8, "r: bf16_gemm_min_tflops: the floor (--fraction 0.8 x 7) 5.6 is below 1/100 of the h200 "
                              "floor 615"),
    ({GEMM: (700.0, "g")}, 0.001, "r: bf16_gemm_min_tflops: the floor (--fraction 0.001 x 700) 0.7 is below 1/100"),
])
def test_a_baseline_outside_the_bounds_is_refused(figures, fraction, message):
    assert _error(lambda: baseline.make("h200", figures, "r", fraction)).startswith(message)


@pytest.mark.parametrize("fraction", [0.0, 1.5, math.nan, math.inf])
def test_a_fraction_outside_0_to_1_is_refused_by_the_baseline_itself(fraction):
    with pytest.raises(ValueError) as err:
        baseline.make("h200", {GEMM: (700.0, "g")}, "r", fraction)
    assert str(err.value) == f"fraction={fraction}: between 0 (exclusive) and 1"


def test_a_fraction_of_1_is_the_figure_itself():
    assert baseline.make("h200", {GEMM: (700.04, "g")}, "r", 1.0).thresholds == {GEMM: 700.0}


def _baseline(**changes) -> Baseline:
    fields = {"hardware": "h200", "recorded": "2026-12-01T00:00:00+00:00", "recorded_from": "r.json",
              "fraction": 0.8, "thresholds": {GEMM: 600.0}, "source": {GEMM: "0.8 x 750"}, **changes}
    return Baseline(**fields)


@pytest.mark.parametrize(("changes", "message"), [
    ({"fraction": 0.0}, "fraction=0.0: between 0 (exclusive) and 1"),
    ({"fraction": 1.01}, "fraction=1.01: between 0 (exclusive) and 1"),
    ({"thresholds": {}}, "thresholds: none: a baseline holds bf16_gemm_min_tflops, nccl_allreduce_min_busbw_gbps, "
                         "nccl_pair_min_busbw_gbps"),
    ({"thresholds": {GEMM: 1.0, "shm_min_gib": 1.0}},
     "thresholds: ['shm_min_gib']: a baseline holds bf16_gemm_min_tflops, nccl_allreduce_min_busbw_gbps, "
     "nccl_pair_min_busbw_gbps"),
    ({"thresholds": {GEMM: 1.0, BUSBW: 2.0}}, f"source: no source for {BUSBW}"),
    ({"source": {GEMM: ""}}, f"source: no source for {GEMM}"),
    ({"thresholds": {GEMM: math.inf}}, f"thresholds: {GEMM}=inf: must be a finite number"),
    ({"thresholds": {GEMM: 0.0}}, f"thresholds: {GEMM}=0.0: must be > 0"),
    ({"thresholds": {GEMM: -1.0}}, f"thresholds: {GEMM}=-1.0: must be > 0"),
])
def test_a_baseline_that_breaks_a_rule_is_refused_naming_the_field(changes, message):
    with pytest.raises(ValueError) as err:
        _baseline(**changes)
    assert str(err.value) == message


def test_a_baseline_on_the_edge_of_each_rule_is_built():
    assert _baseline(fraction=1.0, thresholds={GEMM: 1e-9}).fraction == 1.0


@pytest.mark.parametrize(("text", "escaped"), [
    ("plain/path", '"plain/path"'),
    ('say "hi"\\', '"say \\"hi\\"\\\\"'),
    ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
    ("\x00\x1f\x7f", '"\\u0000\\u001F\\u007F"'),
    ("😀 跑步", '"😀 跑步"'),
    ("a\udcffb", '"a\ufffdb"'),  # a lone surrogate no TOML string can hold
])
def test_strings_are_written_as_toml_basic_strings(text, escaped):
    assert baseline.toml_string(text) == escaped


@pytest.mark.parametrize("value", [1, math.inf, None, True])
def test_a_baseline_holds_strings_and_finite_floats_only(value):
    with pytest.raises(ValueError) as err:
        baseline._toml(value)
    assert str(err.value) == f"{value!r}: a baseline holds strings and finite numbers only"


def test_a_baseline_is_written_and_read_back(tmp_path):
    made = _baseline(thresholds={GEMM: 600.0, BUSBW: 230.5}, source={GEMM: "a", BUSBW: 'b "q"'})
    text = baseline.render(made)
    assert text == (
        "# rlcheck baseline: this cluster's own floors, from a healthy run (rlcheck baseline record).\n"
        "# Use it with: pytest checks/ --baseline=THIS_FILE (or rlcheck preflight --baseline=THIS_FILE).\n"
        'hardware = "h200"\nrecorded = "2026-12-01T00:00:00+00:00"\nrecorded_from = "r.json"\nfraction = 0.8\n\n'
        f"[thresholds]\n{GEMM} = 600.0\n{BUSBW} = 230.5\n\n[source]\n{GEMM} = \"a\"\n{BUSBW} = \"b \\\"q\\\"\"\n")
    path = tmp_path / "b.toml"
    path.write_text(text, encoding="utf-8")
    assert baseline.load(path) == made


@pytest.mark.parametrize(("text", "message"), [
    ("hardware = ", "not a usable baseline: "),
    ('hardware = "h200"\n', "not a usable baseline: missing"),
    ('hardware = "h200"\nrecorded = "x"\nrecorded_from = "r"\nfraction = "0.8"\n[thresholds]\n[source]\n',
     "not a usable baseline: fraction='0.8'"),
    ('hardware = "h200"\nrecorded = "x"\nrecorded_from = "r"\nfraction = 2.0\n[thresholds]\n'
     'bf16_gemm_min_tflops = 1.0\n[source]\nbf16_gemm_min_tflops = "s"\n',
     "not a usable baseline: fraction=2.0: between 0 (exclusive) and 1"),
])
def test_a_baseline_file_that_breaks_a_rule_is_refused_naming_it(tmp_path, text, message):
    path = tmp_path / "b.toml"
    path.write_text(text, encoding="utf-8")
    assert _error(lambda: baseline.load(path)).startswith(f"{path}: {message}")


def test_a_baseline_file_that_cannot_be_read_is_refused_naming_it(tmp_path):
    assert _error(lambda: baseline.load(tmp_path / "none.toml")).startswith(
        f"{tmp_path / 'none.toml'}: not a usable baseline: [Errno 2]")
    (tmp_path / "bad.toml").write_bytes(b"\xff")
    assert "not a usable baseline: 'utf-8' codec" in _error(lambda: baseline.load(tmp_path / "bad.toml"))


def test_a_baseline_becomes_the_profiles_floors_with_provenance_baseline(tmp_path):
    made = _baseline(thresholds={BUSBW: 250.0}, source={BUSBW: "0.8 x 312.5"})
    applied = baseline.apply(H200, made, tmp_path / "b.toml")
    assert applied.thresholds.items() == [(GEMM, 615.0), (BUSBW, 250.0), ("shm_min_gib", 10.0)]
    assert applied.provenance == {GEMM: "measured", BUSBW: "baseline"}
    assert applied.source == {**H200.source, BUSBW: f"baseline {tmp_path / 'b.toml'}: 0.8 x 312.5"}
    assert applied.floor_measured(BUSBW) and dataclasses.replace(applied, thresholds=H200.thresholds) == \
        dataclasses.replace(H200, provenance=applied.provenance, source=applied.source)


def test_a_public_floor_replaced_by_a_baseline_fails_below_it():
    gb300 = get_profile("gb300")
    applied = baseline.apply(gb300, _baseline(hardware="gb300", thresholds={GEMM: 1500.0}), "b.toml")
    assert (applied.floor_measured(GEMM), applied.floor_measured(BUSBW)) == (True, False)


def test_a_baseline_of_other_hardware_or_outside_the_bounds_is_refused_when_applied():
    assert _error(lambda: baseline.apply(H200, _baseline(hardware="b200"), "b.toml")) == (
        "b.toml: recorded on hardware 'b200', this run judges 'h200'")
    assert _error(lambda: baseline.apply(H200, _baseline(thresholds={GEMM: 6151.0}), "b.toml")).startswith(
        "b.toml: bf16_gemm_min_tflops: the floor 6151 is above 10 x the h200 floor 615")


def test_measuring_here_without_a_gpu_is_refused():
    assert _error(lambda: baseline.figures_measured_here(0)) == "no GPU here to measure (nvidia-smi found none)"


@pytest.fixture
def measures(monkeypatch):
    calls: list[object] = []
    gemm = gpu_smoke.GemmObservation(tflops_by_device=(("cuda:0", "H200", 780.0), ("cuda:1", "H200", 770.5),
                                                       ("cuda:2", "H200", 790.0)))
    monkeypatch.setattr(gpu_smoke, "collect_bf16_gemm", lambda: calls.append("gemm") or gemm)
    monkeypatch.setattr(gpu_smoke, "collect_allreduce", lambda world_size: calls.append(world_size) or
                        gpu_smoke.AllReduceObservation(world_size=world_size, busbw_gbps=299.0))
    return calls


@pytest.mark.parametrize(("gpus", "figures", "calls"), [
    (1, {GEMM: (770.5, "bf16 GEMM of the slowest of 3 GPU(s) (cuda:1)")}, ["gemm"]),
    (2, {GEMM: (770.5, "bf16 GEMM of the slowest of 3 GPU(s) (cuda:1)"),
         BUSBW: (299.0, "NCCL all-reduce bus bandwidth over 2 GPU(s)")}, ["gemm", 2]),
])
def test_measuring_here_takes_the_slowest_gpu_and_with_two_the_all_reduce(measures, gpus, figures, calls):
    assert baseline.figures_measured_here(gpus) == figures and measures == calls


def test_a_measure_that_did_not_run_is_refused_saying_why(monkeypatch):
    monkeypatch.setattr(gpu_smoke, "collect_bf16_gemm", lambda: gpu_smoke.GemmObservation(error="no torch"))
    assert _error(lambda: baseline.figures_measured_here(1)) == "the bf16 GEMM did not run: no torch"
    monkeypatch.setattr(gpu_smoke, "collect_bf16_gemm", lambda: gpu_smoke.GemmObservation(
        tflops_by_device=(("cuda:0", "H200", 780.0),)))
    monkeypatch.setattr(gpu_smoke, "collect_allreduce", lambda world_size: gpu_smoke.AllReduceObservation(
        error="nccl timeout"))
    assert _error(lambda: baseline.figures_measured_here(2)) == "the all-reduce did not run: nccl timeout"


@pytest.mark.parametrize("text", ["\ud800", "\udfff", "a\ud800\udfffb"])
def test_every_lone_surrogate_from_the_first_to_the_last_is_replaced(text):
    assert baseline.toml_string(text) == '"' + text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd") + '"'


def test_a_document_without_verdicts_has_none_to_read():
    assert baseline._unhealthy({}) == [] and baseline._verdicts({}, baseline.GEMM_CHECK) == []


def test_a_floor_of_1_or_less_still_bounds_the_figures():
    small = dataclasses.replace(H200, thresholds={"shm_min_gib": 0.5}, provenance={})
    assert _error(lambda: baseline.check_bound("shm_min_gib", 6.0, small, "w")).startswith(
        "w: shm_min_gib: the figure 6 is above 10 x the h200 floor 0.5")


def test_a_fraction_above_1_is_refused_as_a_fraction_not_as_a_bound():
    with pytest.raises(ValueError) as err:
        baseline.make("h200", {GEMM: (5000.0, "g")}, "r", 1.5)
    assert str(err.value) == "fraction=1.5: between 0 (exclusive) and 1"


def test_the_bound_judges_the_floor_as_written_to_one_decimal():
    # 0.8 x 7.68625 = 6.149: written as 6.1, below 1/100 of 615 (6.15), though 6.149 rounds to 6.15 at two decimals
    assert _error(lambda: baseline.make("h200", {GEMM: (7.68625, "g")}, "r")).startswith(
        "r: bf16_gemm_min_tflops: the floor (--fraction 0.8 x 7.68625) 6.1 is below 1/100")


@pytest.mark.parametrize(("changes", "message"), [
    ({"thresholds": {GEMM: 1.0, BUSBW: 2.0}, "source": {}}, f"source: no source for {GEMM}, {BUSBW}"),
    ({"thresholds": {GEMM: math.inf, BUSBW: math.nan}, "source": {GEMM: "a", BUSBW: "b"}},
     f"thresholds: {GEMM}=inf, {BUSBW}=nan: must be a finite number"),
    ({"thresholds": {GEMM: 0.0, BUSBW: -2.0}, "source": {GEMM: "a", BUSBW: "b"}},
     f"thresholds: {GEMM}=0.0, {BUSBW}=-2.0: must be > 0"),
])
def test_every_bad_floor_is_named(changes, message):
    with pytest.raises(ValueError) as err:
        _baseline(**changes)
    assert str(err.value) == message


def test_reports_and_baselines_read_as_utf8_whatever_the_locales_codec(tmp_path, monkeypatch):
    import io
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "latin-1")
    report = tmp_path / "report.json"
    report.write_text('{"hardware": {"profile": "h200"}, "note": "café"}', encoding="utf-8")
    assert baseline.read_report(report)[0]["note"] == "café"
    made = _baseline(recorded_from="/runs/café/report.json")
    path = tmp_path / "b.toml"
    path.write_text(baseline.render(made), encoding="utf-8")
    assert baseline.load(path).recorded_from == "/runs/café/report.json"


def test_a_fraction_of_1_still_bounds_the_floor_as_written(monkeypatch):
    # a floor of 115: 1/100 of it is 1.15, and the figure 1.15 is written as the floor 1.1 (1.15 is a hair below it
    # in binary), below the bound: refused though the figure itself was not
    floors = dataclasses.replace(H200, thresholds={**H200.thresholds, GEMM: 115.0})
    monkeypatch.setattr(baseline, "get_profile", lambda name: floors)
    assert _error(lambda: baseline.make("h200", {GEMM: (1.15, "g")}, "r", 1.0)).startswith(
        "r: bf16_gemm_min_tflops: the floor (--fraction 1 x 1.15) 1.1 is below 1/100 of the h200 floor 115")
