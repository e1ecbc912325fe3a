"""`rlcheck scan` on hostile logs: bounded findings, linear matching of long lines, terminal escapes,
a closed pipe and a full disk, broken data files. Inputs are generated here, small; big sizes are in
benchmarks/scan_throughput."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck import catalog, cli, hardware, scan, scan_output

ROOT = Path(__file__).resolve().parents[1]
LINE = b"KeyError: 'warn'"  # uvicorn-log-level
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def rlcheck(*argv: str, stdout: object = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rlcheck.cli", *argv], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, env=ENV, check=False)  # type: ignore[call-overload]


def test_scan_findings_bounded_counts_exact(tmp_path, capsys):
    # Hostile input: 3,000 failure lines (the benchmark runs 2 million): kept findings stay at KEEP_PER_ID.
    log = tmp_path / "storm.log"
    log.write_bytes((LINE + b"\n") * 3000 + b"/bin/sh: 1: Bad substitution\n")
    result = scan.scan_paths([str(log)])
    assert result.counts == {"uvicorn-log-level": 3000, "ray-argv-loss": 1} and result.total == 3001
    assert len(result.findings) == scan.KEEP_PER_ID + 1
    assert result.findings[-1].failure_id == "ray-argv-loss" and result.findings[-1].line_no == 3001
    assert cli.main(["scan", "--json", str(log)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["uvicorn-log-level"] == 3000 and len(doc["findings"]) == scan.KEEP_PER_ID + 1
    cli.main(["scan", str(log)])
    out = capsys.readouterr().out
    assert f"uvicorn-log-level: 3000 line(s) in all; the first {scan.KEEP_PER_ID} are shown" in out
    assert "3001 known failure line(s): ray-argv-loss, uvicorn-log-level" in out


class CountingFinder:
    """Wraps the engine and counts the bytes it is asked to confirm."""

    def __init__(self, inner: object) -> None:
        self.inner, self.confirmed = inner, 0

    def anchors(self, block: bytes, length: int) -> list[int]:
        return self.inner.anchors(block, length)  # type: ignore[attr-defined, no-any-return]

    def ids_in(self, piece: bytes) -> set[int]:
        self.confirmed += len(piece)
        return self.inner.ids_in(piece)  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize("engine", scan.ENGINES)
def test_scan_long_line_of_matches_confirmed_in_linear_work(engine):
    # Hostile input: one 600 KB line that is the failure signature over and over (the report's 1 MB line
    # took 6 s, 4 MB 88 s: one look back to the line start per match). Work must be ~ the line, not per match.
    line = b" ".join([LINE] * 36_000)
    matcher = scan.Matcher(engine=engine)
    counter = CountingFinder(matcher._finder)
    matcher._finder = counter  # type: ignore[assignment]
    hits = list(matcher.scan_block(line + b"\nnext line\n"))
    assert [(offset, ids) for offset, _, ids in hits] == [(0, ["uvicorn-log-level"])]
    assert counter.confirmed <= len(line) * 1.2  # pieces overlap a little
    assert len(hits[0][1]) <= scan.SHOWN_BYTES + 2  # the finding keeps an excerpt, not the line


def test_scan_match_across_a_piece_edge_and_far_into_a_line_found():
    for at in (scan.PIECE_BYTES - 6, 5 * scan.PIECE_BYTES + 123, 700_000):
        line = b"x" * at + LINE + b" y" * 1000
        assert scan.Matcher().match_line(line.decode()) == ["uvicorn-log-level"], at
        hits = list(scan.Matcher().scan_block(b"a\n" + line + b"\n"))
        assert len(hits) == 1 and "KeyError: 'warn'" in hits[0][1], at


def test_scan_human_output_escapes_terminal_sequences(tmp_path, capsys):
    # Hostile input: a log line that retitles the terminal, clears the screen and reverses the text,
    # in a file whose name carries an escape too.
    log = tmp_path / "job\x1b[31m.log"
    log.write_bytes(b"\x1b]0;owned\x07\x1b[2J\x1b[H\xe2\x80\xae " + LINE + b"\r\xc2\x9b\n")  # U+009B: the one-byte CSI
    assert cli.main(["scan", str(log)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\x9b" not in out
    assert "line:  \\x1b]0;owned\\x07\\x1b[2J\\x1b[H\\u202e KeyError: 'warn'\\x0d\\x9b" in out
    assert "job\\x1b[31m.log:1: uvicorn-log-level" in out


def test_scan_safe_leaves_plain_text_and_tabs():
    assert scan_output.safe("rank 0\tKeyError: 'warn' — ü") == "rank 0\tKeyError: 'warn' — ü"


def test_scan_broken_pipe_exit_2_with_message(tmp_path):
    # Hostile input: `rlcheck scan big.log | head -1` where head is gone before the output is written. The
    # findings are bounded (about 17 KB of JSON here, less than a pipe holds), so the reader closes its end
    # before rlcheck starts: every write then fails with EPIPE, whatever the timing.
    log = tmp_path / "storm.log"
    log.write_bytes(b"".join(b"%s %d\n" % (LINE, i) for i in range(5000)).replace(b"'warn' 1", b"'fatal' 1"))
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "rlcheck.cli", "scan", "--json", str(log)], env=ENV,
                                stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 2
    assert "rlcheck scan: the output was closed before all of it was written (broken pipe)" in err
    assert "Traceback" not in err


def test_scan_full_disk_exit_2_with_message(tmp_path):
    # Hostile input: stdout on a full disk (/dev/full answers every write with ENOSPC).
    log = tmp_path / "job.log"
    log.write_bytes(LINE + b"\n")
    with open("/dev/full", "w") as full:
        done = rlcheck("scan", str(log), stdout=full)
    assert done.returncode == 2
    assert "rlcheck scan: could not write the output: No space left on device" in done.stderr
    assert "Traceback" not in done.stderr


def test_scan_exit_codes_clean_found_unreadable(tmp_path):
    (tmp_path / "clean.log").write_bytes(b"all good\n")
    (tmp_path / "bad.log").write_bytes(LINE + b"\n")
    assert rlcheck("scan", str(tmp_path / "clean.log")).returncode == 0
    assert rlcheck("scan", str(tmp_path / "bad.log")).returncode == 1
    assert rlcheck("scan", str(tmp_path / "bad.log"), str(tmp_path / "absent.log")).returncode == 2


def test_scan_errors_bounded_with_total(tmp_path, capsys):
    for i in range(scan.KEEP_ERRORS + 30):
        (tmp_path / f"gone{i:04}.log").symlink_to(tmp_path / "nowhere")
    assert cli.main(["scan", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("No such file or directory (a dangling symlink)") == scan.KEEP_ERRORS
    assert f"30 more input(s) could not be read (the first {scan.KEEP_ERRORS} are named above)" in err


BROKEN_CATALOGUE = [
    ("[failure]\nid = 'boom'\n", "broken.toml: 'failure' is a single table ([failure]); entries are an array of "
                                 "tables: write [[failure]]"),
    ("[[failure]]\nid = 'boom'\ntitle = 5\n", "broken.toml: entry 'boom': title=5: must be a string"),
    ("[[failure]]\nid = 'boom'\nsignatures = 'boom'\n", "broken.toml: entry 'boom': signatures='boom': must be a list"),
    (b"[[failure]]\nid = '\xff\xfe'\n", "broken.toml: cannot read catalogue file: 'utf-8' codec can't decode"),
]


@pytest.mark.parametrize(("text", "message"), BROKEN_CATALOGUE, ids=["table", "title_int", "sig_str", "latin1"])
def test_scan_broken_catalogue_exit_2_naming_file_and_entry(tmp_path, monkeypatch, capsys, text, message):
    (tmp_path / "broken.toml").write_bytes(text if isinstance(text, bytes) else text.encode())
    monkeypatch.setattr(catalog, "DATA_DIR", tmp_path)
    code = cli.main(["scan", str(ROOT / "README.md")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("rlcheck scan: broken data file: ") and message in err


def test_scan_empty_catalogue_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(catalog, "DATA_DIR", tmp_path)
    assert cli.main(["scan", str(ROOT / "README.md")]) == 2
    assert f"{tmp_path}: no [[failure]] entry in any *.toml file" in capsys.readouterr().err


def test_render_broken_profile_exit_2_naming_file_and_field(tmp_path, monkeypatch, capsys):
    text = (hardware.DATA_DIR / "h200.toml").read_text().replace("gpus_per_node = 8\n", "gpus_per_node = 8.5\n", 1)
    (tmp_path / "h200.toml").write_text(text)
    monkeypatch.setattr(hardware, "DATA_DIR", tmp_path)
    code = cli.main(["render", "qwen3-4b-colocated", "--hardware", "h200"])
    err = capsys.readouterr().err
    assert code == 2 and "h200.toml: gpus_per_node=8.5: must be a whole number" in err
