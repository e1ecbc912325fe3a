"""The log scanner and `rlcheck scan`: good, bad, truncated, binary and compressed logs; exit codes."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from rlcheck import cli, scan
from rlcheck.catalog import load_catalog

DATA = Path(__file__).parent / "data" / "logs"
ENGINES = list(scan.ENGINES)


def ids_in(result: scan.ScanResult) -> list[tuple[str, int]]:
    return [(f.failure_id, f.line_no) for f in result.findings]


def test_scan_healthy_corpus_has_no_match():
    result = scan.scan_paths([str(DATA / "healthy.log")])
    assert result.findings == [] and result.errors == [] and result.files == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_failed_run_finds_each_failure_at_its_line(engine):
    result = scan.scan_paths([str(DATA / "failed_30b_run.log")], scan.Matcher(engine=engine))
    assert ids_in(result) == [("uvicorn-log-level", 6), ("driver-gpu-probe", 8), ("tms-cu12-preload", 9)]


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_engines_agree_on_every_catalogue_example(engine):
    catalog = load_catalog()
    lines = [x for e in catalog.values() for x in (*e.examples, *e.near_misses)]
    block = ("\n".join(lines) + "\n").encode()
    reference = [(o, ids) for o, _, ids in scan.Matcher(catalog, engine="re").scan_block(block)]
    assert [(o, ids) for o, _, ids in scan.Matcher(catalog, engine=engine).scan_block(block)] == reference


def test_scan_unknown_engine_refused():
    with pytest.raises(ValueError, match="engine='pcre': one of the installed engines"):
        scan.Matcher(engine="pcre")


def test_scan_truncated_log_last_line_without_newline(tmp_path):
    log = tmp_path / "cut.log"
    log.write_bytes(b"ok line\nRuntimeError: Found no NVIDIA driver on your system. Please ch")
    assert ids_in(scan.scan_paths([str(log)])) == [("driver-gpu-probe", 2)]


def test_scan_binary_and_crlf_lines(tmp_path):
    log = tmp_path / "bin.log"
    log.write_bytes(b"\x00\xff\xfe garbage \x80\r\nKeyError: 'warn'\r\n\x00\x01\x02\n")
    result = scan.scan_paths([str(log)])
    assert ids_in(result) == [("uvicorn-log-level", 2)] and result.findings[0].line == "KeyError: 'warn'"


def test_scan_gzip_and_directory(tmp_path):
    (tmp_path / "sub").mkdir()
    with gzip.open(tmp_path / "sub" / "job.log.gz", "wt") as out:
        out.write("x\n" * 1000 + "found NaN in local grad norm for bucket #0 in backward pass\n")
    (tmp_path / "a.log").write_text("/bin/sh: 1: Bad substitution\n")
    result = scan.scan_paths([str(tmp_path)])
    assert [(f.failure_id, Path(f.path).name, f.line_no) for f in result.findings] == [
        ("ray-argv-loss", "a.log", 1), ("sparse-mla-bwd-nan", "job.log.gz", 1001), ("nan-result", "job.log.gz", 1001)]


def test_scan_corrupt_gzip_keeps_findings_before_the_damage(tmp_path):
    raw = gzip.compress(b"KeyError: 'warn'\n" + b"filler line\n" * 50000)
    (tmp_path / "bad.gz").write_bytes(raw[: len(raw) // 2])
    result = scan.scan_paths([str(tmp_path / "bad.gz")])
    assert ids_in(result) == [("uvicorn-log-level", 1)]
    assert result.errors and "bad.gz: gzip stream broken" in result.errors[0]


def test_scan_line_numbers_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 64)
    log = tmp_path / "many.log"
    log.write_text("".join(f"healthy line number {i}\n" for i in range(200)) + "KeyError: 'fatal'\n")
    assert ids_in(scan.scan_paths([str(log)])) == [("uvicorn-log-level", 201)]


def test_scan_over_long_line_is_cut_not_held(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(scan, "BLOCK_BYTES", 256)
    log = tmp_path / "long.log"
    log.write_bytes(b"a" * 50_000 + b" KeyError: 'warn'\nnext\n")
    lengths = [length for _, length in scan._blocks(io.BytesIO(log.read_bytes()))]
    assert max(lengths) <= 1000 + 256 and sum(lengths) == log.stat().st_size
    assert [f.failure_id for f in scan.scan_paths([str(log)]).findings] == ["uvicorn-log-level"]


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_scan_exit_0_when_clean(capsys):
    code, out, _ = run_cli(capsys, "scan", str(DATA / "healthy.log"))
    assert code == 0 and "no known failure" in out


def test_cli_scan_exit_1_with_cause_and_fix(capsys):
    code, out, _ = run_cli(capsys, "scan", str(DATA / "failed_30b_run.log"))
    assert code == 1
    assert "failed_30b_run.log:6: uvicorn-log-level [sglang/hang]" in out
    assert "fix:   Pass a lowercase level uvicorn knows" in out


def test_cli_scan_missing_file_named_exit_2_others_still_scanned(capsys, tmp_path):
    code, out, err = run_cli(capsys, "scan", str(tmp_path / "absent.log"), str(DATA / "failed_30b_run.log"))
    assert code == 2
    assert f"{tmp_path / 'absent.log'}: No such file or directory" in err
    assert "uvicorn-log-level" in out


def test_cli_scan_json(capsys):
    code, out, _ = run_cli(capsys, "scan", "--json", str(DATA / "failed_30b_run.log"))
    doc = json.loads(out)
    assert code == 1 and doc["errors"] == [] and doc["files"] == 1
    first = doc["findings"][0]
    assert first["failure_id"] == "uvicorn-log-level" and first["line_no"] == 6 and first["layer"] == "sglang"
    assert first["remedy"] == load_catalog()["uvicorn-log-level"].remedy


def test_cli_scan_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"ok\n/bin/sh: 1: Bad substitution\n")))
    code, out, _ = run_cli(capsys, "scan", "-")
    assert code == 1 and "<stdin>:2: ray-argv-loss" in out


def test_cli_usage_error_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["scan"])
    assert exit_info.value.code == 2
    assert "the following arguments are required: PATH" in capsys.readouterr().err


def test_cli_catalog_lists_every_entry(capsys):
    code, out, _ = run_cli(capsys, "catalog")
    assert code == 0 and all(fid in out for fid in load_catalog())


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_line_matching_two_signatures_of_one_entry_names_it_once(engine):
    # nan-result's two signatures both match Megatron's rerun-state-machine line; the id is reported once
    line = ("RuntimeError: Rank 1, node n, device 1, iteration 3: Unexpected result nan (message='found NaN in local "
            "forward loss calculation')")
    matcher = scan.Matcher(engine=engine)
    entry = load_catalog()["nan-result"]
    assert sum(1 for p in entry.patterns if p.search(line)) == 2
    assert matcher.match_line(line) == ["nan-result"]
    every = [x for e in load_catalog().values() for x in e.examples]
    assert all(len(ids) == len(set(ids)) for ids in map(matcher.match_line, every))
