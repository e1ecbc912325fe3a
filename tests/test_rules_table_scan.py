"""The log scanner's rules as tables (issue 21), on every installed engine: one id per line however many of its
signatures match, ids in catalogue order, line numbers across block edges, the window and piece edges, the
keep-per-id and error bounds, excerpts of long lines, and what an unreadable input says.

A small catalogue is built here (validated as the shipped one is), so each row knows exactly what must match.
"""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pytest

from rlcheck import scan, scan_engines, scan_input
from rlcheck.catalog import FALLBACK_ID, KnownFailure, load_catalog


def _entry(fid: str, signatures: list[str], example: str, near_miss: str, layer: str = "ray",
           role: str = "cause") -> KnownFailure:
    return KnownFailure(id=fid, layer=layer, severity="crash", title=f"{fid} title", signatures=tuple(signatures),
                        examples=(example,), near_misses=(near_miss,), cause=f"{fid} cause",
                        remedy=f"{fid} remedy", role=role)


CATALOG = {
    # alpha has two signatures that both match "ALPHA-TWO": the line must name alpha once
    "alpha": _entry("alpha", ["ALPHA", "ALPHA-TWO"], "x ALPHA y", "alpha"),
    "beta": _entry("beta", ["BETA"], "BETA", "BET A", layer="sglang"),
    "gamma": _entry("gamma", ["^GAMMA$"], "GAMMA", "xGAMMA"),
}
ENGINES = list(scan.ENGINES)


@pytest.fixture(params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> scan.Matcher:
    return scan.Matcher(CATALOG, engine=request.param)


MATCH_LINE = [
    # line, ids (catalogue order, each once)
    ("", []),
    ("nothing here", []),
    ("ALPHA", ["alpha"]),
    ("ALPHA-TWO", ["alpha"]),  # two signatures of one entry: one id
    ("ALPHA ALPHA ALPHA-TWO ALPHA", ["alpha"]),
    ("BETA then ALPHA", ["alpha", "beta"]),  # catalogue order, not order on the line
    ("ALPHA-TWO BETA BETA", ["alpha", "beta"]),
    ("GAMMA", ["gamma"]),
    ("GAMMA ", []),
    ("BETA GAMMA", ["beta"]),
    # text with line breaks: line by line, as a scan reads it, on every engine (^ and $ at each line)
    ("x\nGAMMA", ["gamma"]),
    ("GAMMA\nx", ["gamma"]),
    ("BETA\nGAMMA\nALPHA", ["alpha", "beta", "gamma"]),
    ("GAM\nMA", []),  # a signature never spans two lines
    ("GAMMA x\nBETA", ["beta"]),  # split at line breaks only: "GAMMA x" is one line, and ^GAMMA$ does not match it
    ("x\n\n", []),
    ("\n", []),
]


@pytest.mark.parametrize(("line", "ids"), MATCH_LINE)
def test_scan_rule_match_line_names_each_id_once_in_catalogue_order(matcher: scan.Matcher, line: str,
                                                                    ids: list[str]) -> None:
    assert matcher.match_line(line) == ids
    assert matcher.match_line(line) == ids  # the second time from the cache of named sets


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_rule_match_line_names_the_ids_of_several_lines_in_catalogue_order(engine: str) -> None:
    """The catalogue's order, not the alphabet's nor the text's: zeta comes first in this catalogue."""
    catalog = {"zeta": _entry("zeta", ["ZETA"], "ZETA", "ZET A"), "alpha": CATALOG["alpha"]}
    matcher = scan.Matcher(catalog, engine=engine)
    assert matcher.match_line("ALPHA\nZETA") == ["zeta", "alpha"] == matcher.match_line("ZETA\nALPHA")


FALLBACK_CATALOG = {
    "alpha": CATALOG["alpha"],
    FALLBACK_ID: _entry(FALLBACK_ID, ["Error"], "RuntimeError: x", "error", layer="any", role="fallback"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("line", "ids"), [
    ("RuntimeError: CUDA error", [FALLBACK_ID]),  # the uncatalogued entry alone names it
    ("ALPHA RuntimeError", ["alpha"]),  # another entry names it: not also uncatalogued
    ("ALPHA", ["alpha"]),
    ("all good", []),
])
def test_scan_rule_uncatalogued_only_where_nothing_else_names_the_line(engine: str, line: str,
                                                                       ids: list[str]) -> None:
    assert scan.Matcher(FALLBACK_CATALOG, engine=engine).match_line(line) == ids


@pytest.mark.skipif("hyperscan" not in scan_engines.ENGINES, reason="the compiled database is Hyperscan's")
def test_scan_rule_the_loaded_catalogue_keeps_its_database_a_hand_made_one_does_not(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(scan_engines.CACHE_ENV, str(tmp_path / "cache"))
    scan.Matcher(CATALOG, engine="hyperscan")
    assert not list(tmp_path.glob("cache/hsdb-*.bin"))  # a hand-made catalogue: compiled in memory only
    scan.Matcher(load_catalog(), engine="hyperscan")
    assert len(list(tmp_path.glob("cache/hsdb-*.bin"))) == 2  # one database per flag set, for the next run


def test_scan_rule_cached_sets_are_not_shared_with_the_caller(matcher: scan.Matcher) -> None:
    first = matcher.match_line("ALPHA")
    first.append("changed")
    assert matcher.match_line("ALPHA") == ["alpha"]


BLOCKS = [
    # block, [(line start offset, line text, ids)]
    (b"", []),
    (b"ALPHA\n", [(0, "ALPHA", ["alpha"])]),
    (b"ALPHA", [(0, "ALPHA", ["alpha"])]),  # no final newline
    (b"ok\nALPHA-TWO x\nok\n", [(3, "ALPHA-TWO x", ["alpha"])]),
    (b"BETA\r\nALPHA\r\n", [(0, "BETA", ["beta"]), (6, "ALPHA", ["alpha"])]),  # CRLF: the \r is not the line
    (b"\r\n\r\nBETA\r\n", [(4, "BETA", ["beta"])]),
    (b"BETA\rx\n", [(0, "BETA\rx", ["beta"])]),  # a \r inside a line stays
    (b"\nBETA ALPHA\n\nGAMMA\nBETA", [(1, "BETA ALPHA", ["alpha", "beta"]), (13, "GAMMA", ["gamma"]),
                                      (19, "BETA", ["beta"])]),
    (b"ALPHA\nALPHA\nALPHA\n", [(0, "ALPHA", ["alpha"]), (6, "ALPHA", ["alpha"]), (12, "ALPHA", ["alpha"])]),
    (b"xx\xff\xfeBETA\n", [(0, "xx\ufffd\ufffdBETA", ["beta"])]),  # bytes that are not UTF-8: replaced
]


@pytest.mark.parametrize(("block", "expected"), BLOCKS)
def test_scan_rule_scan_block_lines_offsets_and_ids(matcher: scan.Matcher, block: bytes, expected: list) -> None:
    assert list(matcher.scan_block(block)) == expected
    assert list(matcher.scan_block(bytearray(block), len(block))) == expected


@pytest.mark.parametrize(("length", "expected"), [
    (0, []), (4, [(0, "BETA", ["beta"])]), (3, []), (10, [(0, "BETA", ["beta"])]),
    (15, [(0, "BETA", ["beta"]), (10, "ALPHA", ["alpha"])]), (14, [(0, "BETA", ["beta"])]),
])
def test_scan_rule_scan_block_reads_only_its_length(matcher: scan.Matcher, length: int, expected: list) -> None:
    assert list(matcher.scan_block(b"BETA\nnone\nALPHA\n", length)) == expected


def test_scan_rule_hits_give_start_stop_and_anchor(matcher: scan.Matcher) -> None:
    block = b"ok\nxx BETA yy\r\nGAMMA\n"
    hits = list(matcher.hits(block, len(block)))
    assert [(start, stop, ids) for start, stop, _, ids in hits] == [(3, 13, ["beta"]), (15, 20, ["gamma"])]
    assert all(start <= anchor <= stop for start, stop, anchor, _ in hits)


PIECES = [
    # start, end, the windows (PIECE_BYTES = 8192, overlapping by OVERLAP_BYTES = 512: a step of 7680)
    (0, 0, [(0, 0)]),
    (0, 1, [(0, 1)]),
    (0, 8191, [(0, 8191)]),
    (0, 8192, [(0, 8192)]),
    (0, 8193, [(0, 8192), (7680, 8193)]),
    (100, 8292, [(100, 8292)]),
    (100, 8293, [(100, 8292), (7780, 8293)]),
    (0, 15872, [(0, 8192), (7680, 15872)]),
    (0, 15873, [(0, 8192), (7680, 15872), (15360, 15873)]),
]


@pytest.mark.parametrize(("start", "end", "windows"), PIECES)
def test_scan_rule_pieces_cover_the_line_with_overlap(start: int, end: int, windows: list) -> None:
    assert (scan.PIECE_BYTES, scan_engines.OVERLAP_BYTES) == (8192, 512)
    assert list(scan._pieces(start, end)) == windows


@pytest.mark.parametrize("at", [0, 1, 8192 - 5, 8192 - 4, 7680, 7680 + 8192 - 5, 20_000, 40_000 - 5])
def test_scan_rule_long_line_matched_wherever_the_signature_sits(matcher: scan.Matcher, at: int) -> None:
    line = "y" * at + "BETA" + "y" * (40_000 - at - 4)
    assert len(line) == 40_000
    assert matcher.match_line(line) == ["beta"]
    assert [ids for _, _, ids in matcher.scan_block(line.encode() + b"\n")] == [["beta"]]


def test_scan_rule_long_line_with_two_entries_in_different_pieces(matcher: scan.Matcher) -> None:
    line = "ALPHA" + "y" * 30_000 + "BETA"
    assert matcher.match_line(line) == ["alpha", "beta"]


EXCERPTS = [
    # line length, where the match is, the excerpt (SHOWN_BYTES = 2048 kept around the match, … where cut)
    (10, 0, "a" * 10),
    (2048, 0, "a" * 2048),  # exactly SHOWN_BYTES: whole, no mark
    (2049, 0, "a" * 2048 + "…"),
    (2049, 2048, "…" + "a" * 2048),
    (5000, 0, "a" * 2048 + "…"),
    (5000, 1024, "a" * 2048 + "…"),  # the window starts at the line start
    (5000, 1025, "…" + "a" * 2048 + "…"),  # one byte on: cut on both sides
    (5000, 2500, "…" + "a" * 2048 + "…"),
    (5000, 5000 - 1024, "…" + "a" * 2048),  # the window ends at the line end
    (5000, 4999, "…" + "a" * 2048),
]


@pytest.mark.parametrize(("length", "anchor", "expected"), EXCERPTS)
def test_scan_rule_excerpt_around_the_match(length: int, anchor: int, expected: str) -> None:
    assert scan.SHOWN_BYTES == 2048
    block = b"\n" * 3 + b"a" * length + b"\n"
    assert scan._excerpt(block, 3, 3 + length, 3 + anchor) == expected


def test_scan_rule_excerpt_is_the_part_around_the_match() -> None:
    line = b"".join(b"%05d " % i for i in range(2000))  # 12000 bytes, each offset readable
    text = scan._excerpt(line, 0, len(line), 6000)
    assert text == "…" + line[6000 - 1024:6000 + 1024].decode() + "…"


class ShortReads(io.RawIOBase):
    """A raw stream that hands out at most `step` bytes per read (as a pipe does), then fails if told to."""

    def __init__(self, data: bytes, step: int, fail: BaseException | None = None) -> None:
        self.data, self.step, self.fail, self.pos = data, step, fail, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.pos >= len(self.data) and self.fail is not None:
            raise self.fail
        chunk = self.data[self.pos:self.pos + min(self.step, len(buffer))]
        buffer[:len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


def _blocks(data: bytes, block: int, max_line: int, monkeypatch: pytest.MonkeyPatch, step: int = 1000) -> list[bytes]:
    monkeypatch.setattr(scan, "BLOCK_BYTES", block)
    monkeypatch.setattr(scan, "MAX_LINE_BYTES", max_line)
    return [bytes(buf[:length]) for buf, length in scan._blocks(ShortReads(data, step))]  # type: ignore[arg-type]


BLOCK_SPLITS = [
    # data, BLOCK_BYTES, MAX_LINE_BYTES, blocks yielded (whole lines; an over-long line cut at its limit)
    (b"", 8, 16, []),
    (b"a\n", 8, 16, [b"a\n"]),
    (b"a\nb", 8, 16, [b"a\n", b"b"]),
    (b"abc\ndef\n", 8, 16, [b"abc\ndef\n"]),
    (b"abc\ndefg\n", 8, 16, [b"abc\n", b"defg\n"]),
    (b"abcdefgh\nij\n", 8, 16, [b"abcdefgh\nij\n"]),  # the first read has no newline: carried on
    (b"abcdefghijklmnop\n", 8, 8, [b"abcdefgh", b"ijklmnop", b"\n"]),  # a line of 2 x MAX: cut, nothing lost
    (b"abcdefghijklmnop\n", 8, 9, [b"abcdefghijklmnop", b"\n"]),
    (b"abcdefg\n", 8, 7, [b"abcdefg\n"]),
    (b"abcdefgh", 8, 8, [b"abcdefgh"]),  # exactly MAX and no newline: cut at MAX
    (b"abcdefg", 8, 8, [b"abcdefg"]),
    (b"\nabc", 8, 16, [b"\n", b"abc"]),  # the only newline is the buffer's first byte
    (b"abcdefghij\nklm", 16, 8, [b"abcdefghij\n", b"klm"]),  # the unfinished rest is short: carried, not cut
]


@pytest.mark.parametrize(("data", "block", "max_line", "expected"), BLOCK_SPLITS)
def test_scan_rule_blocks_hold_whole_lines(data: bytes, block: int, max_line: int, expected: list[bytes],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert _blocks(data, block, max_line, monkeypatch) == expected
    assert _blocks(data, block, max_line, monkeypatch, step=1) == expected  # one byte per read: the same blocks


def test_scan_rule_blocks_keep_what_was_read_before_a_read_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "BLOCK_BYTES", 64)
    got: list[bytes] = []
    stream = ShortReads(b"one\ntwo\nthr", 3, fail=OSError(5, "Input/output error"))
    with pytest.raises(OSError, match="Input/output error"):
        for buf, length in scan._blocks(stream):  # type: ignore[arg-type]
            got.append(bytes(buf[:length]))
    assert got == [b"one\ntwo\nthr"]


def test_scan_rule_read_error_at_once_yields_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(OSError):
        list(scan._blocks(ShortReads(b"", 3, fail=OSError(5, "Input/output error"))))  # type: ignore[arg-type]


LINE_NUMBERS = [
    # log, BLOCK_BYTES, (id, line number) of each finding
    (b"BETA\n", 64, [("beta", 1)]),
    (b"ok\nok\nBETA\n", 64, [("beta", 3)]),
    (b"ok\n" * 50 + b"BETA\nok\nGAMMA\n", 16, [("beta", 51), ("gamma", 53)]),
    (b"\n\n\nALPHA BETA\n", 4, [("alpha", 4), ("beta", 4)]),  # one line, two ids: two findings, one line
    (b"BETA\n" * 5, 8, [("beta", i) for i in range(1, 6)]),
    (b"x" * 100 + b"\nBETA", 16, [("beta", 2)]),
]


@pytest.mark.parametrize(("log", "block", "expected"), LINE_NUMBERS)
def test_scan_rule_line_numbers_across_blocks(matcher: scan.Matcher, log: bytes, block: int, expected: list,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "BLOCK_BYTES", block)
    monkeypatch.setattr(scan, "MAX_LINE_BYTES", 64)
    found = list(scan.scan_stream(io.BytesIO(log), "job.log", matcher))
    assert [(f.failure_id, f.line_no) for f in found] == expected
    assert {f.path for f in found} <= {"job.log"}


def test_scan_rule_findings_of_one_line_share_its_text(matcher: scan.Matcher) -> None:
    found = list(scan.scan_stream(io.BytesIO(b"ok\nALPHA-TWO and BETA\r\n"), "j", matcher))
    assert found == [scan.Finding(failure_id="alpha", path="j", line_no=2, line="ALPHA-TWO and BETA"),
                     scan.Finding(failure_id="beta", path="j", line_no=2, line="ALPHA-TWO and BETA")]


KEEP = [
    # lines of BETA, keep_per_id: findings kept, count
    (0, 2, 0), (1, 2, 1), (2, 2, 2), (3, 2, 2), (5, 0, 0), (5, 1, 1),
]


@pytest.mark.parametrize(("lines", "keep", "kept"), KEEP)
def test_scan_rule_keep_per_id_bounds_findings_not_counts(matcher: scan.Matcher, lines: int, keep: int,
                                                          kept: int) -> None:
    result = scan.ScanResult(keep_per_id=keep)
    for _ in scan._scan_into(io.BytesIO(b"BETA\n" * lines + b"GAMMA\n"), "j", matcher, result):
        pass
    assert [f.line_no for f in result.findings if f.failure_id == "beta"] == list(range(1, kept + 1))
    assert result.counts.get("beta", 0) == lines and result.counts["gamma"] == 1
    assert result.total == lines + 1
    assert [f.line_no for f in result.findings if f.failure_id == "gamma"] == ([lines + 1] if keep else [])


WANTS = [
    # counts so far, keep_per_id, ids of a line, wanted (some id still below its keep limit)
    ({}, 2, ["a"], True), ({"a": 1}, 2, ["a"], True), ({"a": 2}, 2, ["a"], False), ({"a": 3}, 2, ["a"], False),
    ({"a": 2}, 2, ["a", "b"], True), ({"a": 2, "b": 2}, 2, ["a", "b"], False), ({}, 0, ["a"], False),
    ({"a": 2, "b": 1}, 2, ["b", "a"], True), ({}, 2, [], False),
]


@pytest.mark.parametrize(("counts", "keep", "ids", "wanted"), WANTS)
def test_scan_rule_result_wants_a_line_while_an_id_is_below_its_limit(counts: dict, keep: int, ids: list[str],
                                                                      wanted: bool) -> None:
    assert scan.ScanResult(counts=dict(counts), keep_per_id=keep).wants(ids) is wanted


def test_scan_rule_result_count_and_add() -> None:
    result = scan.ScanResult(keep_per_id=1)
    result.count(["a", "b"])
    result.count(["a"])
    assert result.counts == {"a": 2, "b": 1}
    finding = scan.Finding(failure_id="c", path="p", line_no=1, line="l")
    result.add(finding)
    result.add(finding)
    assert result.counts == {"a": 2, "b": 1, "c": 2} and result.findings == [finding] and result.total == 5
    assert scan.ScanResult().keep_per_id == scan.KEEP_PER_ID == 20


@pytest.mark.parametrize(("errors", "kept"), [(0, 0), (1, 1), (99, 99), (100, 100), (101, 100), (250, 100)])
def test_scan_rule_errors_bounded_total_exact(errors: int, kept: int) -> None:
    result = scan.ScanResult()
    for i in range(errors):
        result.error(f"e{i}")
    assert (len(result.errors), result.errors_total) == (kept, errors)
    assert result.errors == [f"e{i}" for i in range(kept)]


def test_scan_rule_finding_to_dict_carries_the_catalogue_entry() -> None:
    finding = scan.Finding(failure_id="beta", path="p.log", line_no=7, line="BETA")
    assert finding.to_dict(CATALOG) == {"failure_id": "beta", "path": "p.log", "line_no": 7, "line": "BETA",
                                        "layer": "sglang", "title": "beta title", "cause": "beta cause",
                                        "remedy": "beta remedy"}


def test_scan_rule_paths_missing_unreadable_and_broken_named(tmp_path: Path, matcher: scan.Matcher) -> None:
    good = tmp_path / "good.log"
    good.write_bytes(b"ok\nBETA\n")
    raw = gzip.compress(b"GAMMA\n" + b"filler line\n" * 50_000)
    broken = tmp_path / "broken.gz"
    broken.write_bytes(raw[: len(raw) // 2])
    result = scan.scan_paths([str(tmp_path / "absent.log"), str(good), str(broken)], matcher)
    assert [(Path(f.path).name, f.failure_id, f.line_no) for f in result.findings] == [
        ("good.log", "beta", 2), ("broken.gz", "gamma", 1)]
    assert result.files == 1  # only the input read in full
    assert result.errors[0] == f"{tmp_path / 'absent.log'}: No such file or directory"
    assert result.errors[1].startswith(f"{broken}: gzip stream broken (")
    assert result.errors[1].endswith("); findings before that point are kept")
    assert result.errors_total == 2


def test_scan_rule_plain_read_error_named(tmp_path: Path, matcher: scan.Matcher) -> None:
    result = scan.ScanResult()
    scan._scan_one(str(tmp_path), matcher, result)  # a directory opened as a file: the read fails
    assert result.files == 0 and result.errors_total == 1
    assert result.errors[0].startswith(f"{tmp_path}: ")


def test_scan_rule_zstd_without_its_module_named_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             matcher: scan.Matcher) -> None:
    monkeypatch.setattr(scan_input, "zstandard", None)  # installed or not: the answer without it
    log = tmp_path / "rollout.log.zst"
    log.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 16)  # a zstd frame header
    result = scan.scan_paths([str(log)], matcher)
    assert result.errors == [f"{log}: zstd-compressed, and the zstandard module is not installed (pip install "
                             f"zstandard, or decompress it first: zstd -dc {log} | rlcheck scan -)"]
    assert (result.files, result.errors_total, result.findings) == (0, 1, [])


def test_scan_rule_stdin_named_and_left_open(monkeypatch: pytest.MonkeyPatch, matcher: scan.Matcher) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"ok\nGAMMA\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    result = scan.scan_paths(["-"], matcher)
    assert [(f.path, f.failure_id, f.line_no) for f in result.findings] == [("<stdin>", "gamma", 2)]
    assert result.files == 1 and not stdin.buffer.closed


def test_scan_rule_file_closed_after_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              matcher: scan.Matcher) -> None:
    opened: list[io.BufferedReader] = []
    real_open = scan.open_input

    def keep(path: str) -> io.BufferedReader:
        opened.append(real_open(path))  # type: ignore[arg-type]
        return opened[-1]

    monkeypatch.setattr(scan, "open_input", keep)
    (tmp_path / "a.log").write_bytes(b"BETA\n")
    assert scan.scan_paths([str(tmp_path / "a.log")], matcher).counts == {"beta": 1}
    assert opened and opened[0].closed


def test_scan_rule_default_matcher_is_the_shipped_catalogue(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(b"KeyError: 'warn'\n")
    assert scan.scan_paths([str(tmp_path / "a.log")]).counts == {"uvicorn-log-level": 1}
    assert scan.Matcher().engine == scan.ENGINE == scan.ENGINES[0]


WINDOWS = [
    # where the signature starts in a 20,000-byte line (re: windows of 4096 overlapping by 512)
    0, 1, 4096 - 4, 4096 - 3, 4096, 3584, 3584 + 4096 - 4, 3584 + 4096 - 2, 15_000, 20_000 - 4,
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("at", WINDOWS)
def test_scan_rule_engine_anchor_found_across_window_edges(engine: str, at: int) -> None:
    finder = scan_engines.make_finder(engine, ["BETA"])
    line = b"y" * at + b"BETA" + b"y" * (20_000 - at - 4)
    block = b"ok\n" + line + b"\nBETA\n"
    anchors = finder.anchors(block, len(block))
    assert len(anchors) == 2  # one per matching line
    assert 3 <= anchors[0] <= 3 + len(line) and anchors[1] >= 3 + len(line) + 1
    assert finder.ids_in(line) == {0} and finder.ids_in(b"y" * 100) == set()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("count", [1, 63, 64, 65, 200])
def test_scan_rule_engine_many_matches_in_one_line_then_the_next_line(engine: str, count: int) -> None:
    finder = scan_engines.make_finder(engine, ["BETA", "GAMMA"])
    block = b"BETA " * count + b"\nok\nGAMMA\n"
    anchors = finder.anchors(block, len(block))
    assert len(anchors) == 2 and anchors[0] < 5 * count + 1 < anchors[1]
    assert finder.ids_in(b"BETA GAMMA") == {0, 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_rule_engine_anchors_only_within_length(engine: str) -> None:
    finder = scan_engines.make_finder(engine, ["BETA"])
    block = b"ok\nBETA\nBETA\n"
    assert len(finder.anchors(block, len(block))) == 2
    assert len(finder.anchors(block, 8)) == 1
    assert finder.anchors(block, 3) == [] and finder.anchors(b"", 0) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_rule_engine_line_anchors_per_line(engine: str) -> None:
    finder = scan_engines.make_finder(engine, ["^GAMMA$"])
    block = b"GAMMA\nxGAMMA\nGAMMA"
    assert len(finder.anchors(block, len(block))) == 2
    assert finder.ids_in(b"GAMMA") == {0} and finder.ids_in(b"xGAMMA") == set()


class FindCounted(bytearray):
    """A block that fails its find past a bound (the finder calls it once per anchor): a search that ran on forever
    fails instead."""

    finds = 0

    def find(self, *args: object) -> int:  # type: ignore[override]
        self.finds += 1
        assert self.finds <= 10, "the block was searched on past its end"
        return super().find(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "hyperscan"])
@pytest.mark.parametrize(("data", "anchors"), [
    # the empty rest after the last newline is found once, and the search ends there (asked again at the end, it
    # would find the same empty rest forever)
    (b"a\n\nb\n", [2, 5]),
    # an empty first line: the search goes on from the next line, not from the first line again nor from the end
    (b"\nx\n\n", [0, 3]),
])
def test_scan_rule_engine_empty_lines_each_found_once(engine: str, data: bytes, anchors: list[int]) -> None:
    finder = scan_engines.make_finder(engine, ["^$"])  # a signature that matches an empty line
    block = FindCounted(data)
    assert finder.anchors(block, len(block)) == anchors
    assert block.finds == len(anchors)  # one line end looked for per anchor


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_rule_engine_compile_error_named(engine: str) -> None:
    assert scan_engines.compile_error("BETA", engine) == ""
    error = scan_engines.compile_error("(unclosed", engine)
    assert error and ": " in error


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan is not installed")
@pytest.mark.parametrize(("signature", "block", "anchors"), [
    # Hyperscan's anchor: the last byte of each line's first match; the line's other matches are skipped
    ("BETA", b"BETA x BETA\nok\nBETA\n", [3, 18]),
    ("BETA", b"ok\nBETA x BETA\n", [6]),  # a later line's end is looked for from its match, not the block's start
    ("BETA", b"ok\nBETA BETA", [6]),  # the last line without a newline: it ends at the length
    ("^E$", b"E\nBETA\nE\n", [0, 7]),  # a match in the block's first byte
    (r"BETA\s", b"BETA BETA\nok\n", [4]),  # a match that ends with the line's newline is still that line's
    (r"\s", b"\nBETA x\n", [0, 5]),  # a first line that is its newline alone: the next line is searched on
    ("BETA", b"BETA " * 100 + b"\nBETA\n", [3, 504]),  # past 64 skipped the scan halts, and resumes on the next line
])
def test_scan_rule_engine_hyperscan_anchor_offsets(signature: str, block: bytes, anchors: list[int]) -> None:
    assert scan_engines.make_finder("hyperscan", [signature]).anchors(block, len(block)) == anchors


class ScanCounted:
    """A Hyperscan database that fails its scan past a bound: a block scan that restarted on forever fails instead."""

    def __init__(self, db: object, bound: int) -> None:
        self.db, self.bound, self.scans = db, bound, 0

    def scan(self, *args: object, **kwargs: object) -> object:
        self.scans += 1
        assert self.scans <= self.bound, "the block scan restarted on and on"
        return self.db.scan(*args, **kwargs)  # type: ignore[attr-defined]


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan is not installed")
def test_scan_rule_engine_hyperscan_halt_resumes_past_the_line_end() -> None:
    # 66 signatures (an error code each, or a bare '!') all match the last byte of the first line: one anchor, 65
    # skipped, the scan halts; it resumes after that line's newline (resumed on the line's last bytes, it would find
    # the same 66 matches and halt there again, forever)
    finder = scan_engines.make_finder("hyperscan", [f"ERR{i}|!" for i in range(66)])
    counted = ScanCounted(finder._all, bound=4)  # type: ignore[attr-defined]
    finder._all = counted  # type: ignore[attr-defined]
    block = b"job failed!\nok\nERR7 again\n"
    assert finder.anchors(block, len(block)) == [10, 18]
    assert counted.scans == 2  # the halted scan, and the one resumed on the next line


@pytest.mark.parametrize(("run", "at", "anchors"), [
    (512, 7000, [3 + 7000]),  # up to the overlap: found wherever it sits (here across the edge at 7,168)
    (1000, 3000, [3 + 3000]),  # longer, inside one window: found
    (1000, 7000, []),  # longer and in no one window (7,000 to 8,000): the price of linear time, not found
])
def test_scan_rule_engine_stdlib_searches_in_windows(run: int, at: int, anchors: list[int]) -> None:
    line = b"y" * at + b"A" * run + b"y" * (20_000 - at - run)
    block = b"ok\n" + line + b"\n"
    assert scan_engines.make_finder("re", [f"A{{{run}}}"]).anchors(block, len(block)) == anchors


@pytest.mark.skipif("re2" not in ENGINES, reason="re2 is not installed")
def test_scan_rule_engine_re2_searches_a_long_line_whole() -> None:
    # re2 is linear on any text: no windows, so a match longer than the windows' overlap, in no one window of the
    # stdlib's (7,000 to 8,000 in a 20,000-byte line), is found all the same
    line = b"y" * 7000 + b"A" * 1000 + b"y" * 12_000
    block = b"ok\n" + line + b"\n"
    assert scan_engines.make_finder("re2", ["A{1000}"]).anchors(block, len(block)) == [3 + 7000]


@pytest.mark.parametrize("engine", ENGINES)
def test_scan_rule_engine_compiles_in_its_own_dialect(engine: str) -> None:
    # a backreference: Python's re has it; Hyperscan and re2 (automata, linear in the text) refuse it, which is why
    # the catalogue compiles every signature with every installed engine
    error = scan_engines.compile_error(r"(BETA) \1", engine)
    assert (error == "") is (engine == "re")


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan is not installed")
def test_scan_rule_engine_hyperscan_database_kept_only_when_asked(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(scan_engines.CACHE_ENV, str(cache))
    for finder in (scan_engines.make_finder("hyperscan", ["BETA"]), scan_engines.HyperscanFinder(["BETA"])):
        assert finder.ids_in(b"x BETA y") == {0}
    assert list(cache.glob("hsdb-*")) == []  # compiled in memory by default
    assert scan_engines.make_finder("hyperscan", ["BETA"], cache=True).ids_in(b"x BETA y") == {0}
    assert len(list(cache.glob("hsdb-*.bin"))) == 2  # kept: the block scan's database and the pieces' one


def test_scan_rule_unknown_engine_lists_the_installed_ones() -> None:
    with pytest.raises(ValueError) as caught:
        scan_engines.make_finder("pcre", ["x"])
    assert str(caught.value) == f"engine='pcre': one of the installed engines {', '.join(scan_engines.ENGINES)}"
    assert scan_engines.compile_error("x", "pcre").startswith("ValueError: engine='pcre'")


def test_scan_rule_optional_engine_module() -> None:
    import re

    assert scan_engines._optional("re") is re
    assert scan_engines._optional("rlcheck_no_such_module") is None
    assert scan_engines.ENGINES[-1] == "re"


FINGERPRINTS = [
    # (Hyperscan's version or None, re2 installed, where re2's spec says it lives: None no spec, "" no origin)
    (None, False, "unused", []),
    ("0.7.8", False, "unused", ["hyperscan 0.7.8"]),
    ("0.7.8", True, "FILE", ["hyperscan 0.7.8", "re2 FILE 5 1700000000123456789"]),  # a file: its size and mtime
    (None, True, "/gone/_re2.so", ["re2 /gone/_re2.so"]),  # its file gone since: the path alone
    (None, True, "", ["re2 "]),  # a spec without an origin
    (None, True, None, ["re2 "]),  # no spec any more
]


@pytest.mark.parametrize(("hyperscan", "re2", "origin", "engines"), FINGERPRINTS)
def test_scan_rule_engines_fingerprint_names_each_engine_and_its_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hyperscan: str | None, re2: bool, origin: str | None,
        engines: list[str]) -> None:
    import importlib.util
    import os
    import types

    module = tmp_path / "_re2.so"
    module.write_bytes(b"\x7fELF\x02")
    os.utime(module, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    origin = str(module) if origin == "FILE" else origin
    real = importlib.util.find_spec
    spec = None if origin is None else types.SimpleNamespace(origin=origin or None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: spec if name == "re2" else real(name, *a))
    monkeypatch.setattr(scan_engines, "_hyperscan", hyperscan and types.SimpleNamespace(__version__=hyperscan))
    monkeypatch.setattr(scan_engines, "_RE2_INSTALLED", re2)
    assert scan_engines.engines_fingerprint() == [f"python {sys.version}",
                                                  *(e.replace("FILE", str(module)) for e in engines)]


def test_scan_rule_installed_engine_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    assert scan_engines._installed("re") is True
    assert scan_engines._installed("rlcheck_no_such_module") is False
    assert scan_engines._installed("rlcheck_no_such_pkg.sub") is False  # its package missing: ImportError, caught
    monkeypatch.setitem(sys.modules, "rlcheck_specless", types.ModuleType("rlcheck_specless"))
    assert scan_engines._installed("rlcheck_specless") is False  # a module without a spec: ValueError, caught


@pytest.mark.parametrize("prefix", [0, 1, 3000, 10_000])
@pytest.mark.parametrize(("length", "shown"), [(10, 10), (2047, 2047), (2048, 2048)])
def test_scan_rule_short_line_far_into_a_block_kept_whole(prefix: int, length: int, shown: int) -> None:
    # the excerpt rule looks at the line's length, never at where the line sits in the block
    block = b"\n" * prefix + b"a" * length + b"\n" + b"b" * 5000
    assert scan._excerpt(block, prefix, prefix + length, prefix) == "a" * shown


def test_scan_rule_long_line_not_utf8_excerpt_replaced() -> None:
    line = b"\xff" * 3000
    assert scan._excerpt(line, 0, len(line), 0) == "\ufffd" * 2048 + "…"
    assert scan._excerpt(b"\xc3(BETA", 0, 7, 2) == "\ufffd(BETA"


def test_scan_rule_match_line_with_a_lone_surrogate(matcher: scan.Matcher) -> None:
    # a str from a log read with errors="surrogateescape": the odd character is replaced, the line still matched
    assert matcher.match_line("BETA \udcff") == ["beta"]
    assert matcher.match_line("\udcff" * 3000 + "GAMMA") == []


def test_scan_rule_empty_line_matches_nothing() -> None:
    # match_line("") is [] even for a signature that matches an empty line ("^$")
    blank = _entry("blank", ["^$"], "", "x")
    for engine in ENGINES:
        assert scan.Matcher({"blank": blank}, engine=engine).match_line("") == []


@pytest.mark.parametrize("length", [4, 5, 6])
def test_scan_rule_line_ends_at_the_length_not_at_a_later_newline(matcher: scan.Matcher, length: int) -> None:
    # the buffer is reused: bytes past length are a stale earlier block, never part of this line
    assert list(matcher.scan_block(b"BETAxx\nGAMMA\n", length)) == [(0, "BETAxx"[:length], ["beta"])]


def test_scan_rule_long_line_finding_keeps_the_part_around_the_match(matcher: scan.Matcher) -> None:
    line = b"y" * 3000 + b"BETA" + b"z" * 3000
    (found,) = scan.scan_stream(io.BytesIO(line + b"\n"), "j", matcher)
    assert found.line.startswith("…") and found.line.endswith("…") and "BETA" in found.line
    assert len(found.line) == scan.SHOWN_BYTES + 2


def test_scan_rule_files_counted_and_plain_read_failure_named(tmp_path: Path, matcher: scan.Matcher) -> None:
    for name in ("a.log", "b.log", "c.log"):
        (tmp_path / name).write_bytes(b"BETA\n")
    result = scan.scan_paths([str(tmp_path / n) for n in ("a.log", "b.log", "c.log")], matcher)
    assert (result.files, result.counts, result.errors) == (3, {"beta": 3}, [])
    result = scan.scan_paths(["/proc/self/mem"], matcher)  # opens, then every read fails (EIO)
    assert result.files == 0
    assert result.errors == ["/proc/self/mem: read failed ([Errno 5] Input/output error); findings before that "
                             "point are kept"]


def test_scan_rule_entry_that_cannot_be_read_named(tmp_path: Path, matcher: scan.Matcher) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "absent")
    (tmp_path / "ok.log").write_bytes(b"GAMMA\n")
    result = scan.scan_paths([str(tmp_path)], matcher)
    assert result.errors == [f"{tmp_path / 'gone'}: No such file or directory (a dangling symlink)"]
    assert (result.files, result.counts) == (1, {"gamma": 1})
