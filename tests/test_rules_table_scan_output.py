"""Rule table for what `rlcheck scan` prints (rlcheck.scan_output): which finding is named as the first cause (each role
against each, the earliest line on a tie), the whole text a person reads (escaped, bounded, the verdict line for every
mix of known, uncatalogued and unreadable), the error lines, and the JSON document."""

from __future__ import annotations

import io
import json

import pytest

from rlcheck import scan_output
from rlcheck.catalog import FALLBACK_ID, KnownFailure
from rlcheck.scan import KEEP_PER_ID, Finding, ScanResult


def _entry(fid: str, role: str, layer: str = "sglang", severity: str = "crash") -> KnownFailure:
    return KnownFailure(id=fid, layer=layer, severity=severity, title=f"{fid} title", signatures=("x",),
                        examples=("x",), near_misses=("y",), cause=f"{fid}   cause\n  spread",
                        remedy=f"fix {fid}\n now", role=role)


KNOWN = {"cause-a": _entry("cause-a", "cause"), "cause-b": _entry("cause-b", "cause", "megatron", "hang"),
         "conseq": _entry("conseq", "consequence", "ray"), "routine": _entry("routine", "invariant", "any", "silent"),
         FALLBACK_ID: _entry(FALLBACK_ID, "fallback", "any", "crash")}


def _f(fid: str, line_no: int, path: str = "run.log", line: str = "") -> Finding:
    return Finding(failure_id=fid, path=path, line_no=line_no, line=line or f"line {line_no}")


def _result(*findings: Finding, counts: dict[str, int] | None = None, errors: list[str] | None = None,
            errors_total: int = 0, files: int = 1) -> ScanResult:
    if counts is None:
        counts = {}
        for f in findings:
            counts[f.failure_id] = counts.get(f.failure_id, 0) + 1
    return ScanResult(findings=list(findings), counts=counts, errors=errors or [], errors_total=errors_total,
                      files=files)


@pytest.mark.parametrize(("ids", "first"), [
    # each role before each lower one, whichever comes first in the log
    (["conseq", "cause-a"], 1), (["cause-a", "conseq"], 0),
    ([FALLBACK_ID, "cause-a"], 1), (["cause-a", FALLBACK_ID], 0),
    (["conseq", FALLBACK_ID], 1), ([FALLBACK_ID, "conseq"], 0),
    (["routine", "conseq"], 1), (["conseq", "routine"], 0),
    (["routine", FALLBACK_ID], 1), (["routine", "cause-a"], 1),
    # a tie: the earliest one
    (["cause-b", "cause-a"], 0), (["cause-a", "cause-b"], 0), (["conseq", "conseq"], 0),
    (["routine", "routine", "routine"], 0), (["routine", "conseq", "routine", FALLBACK_ID, "cause-b", "cause-a"], 4),
    (["cause-a"], 0),
])
def test_first_cause_by_role_then_log_order(ids, first):
    findings = [_f(fid, i + 1) for i, fid in enumerate(ids)]
    assert scan_output.first_cause(_result(*findings), KNOWN) is findings[first]


def test_first_cause_of_no_findings_is_none():
    assert scan_output.first_cause(_result(), KNOWN) is None


@pytest.mark.parametrize(("text", "shown"), [
    ("plain\ttab — ü", "plain\ttab — ü"),
    ("\x1b[2Jclear", "\\x1b[2Jclear"), ("nul\x00", "nul\\x00"), ("bell\x07", "bell\\x07"), ("bs\x08", "bs\\x08"),
    ("nl\ncr\r", "nl\\x0acr\\x0d"), ("us\x1f", "us\\x1f"), ("space \x20", "space  "), ("del\x7f", "del\\x7f"),
    ("c1\x80\x9f", "c1\\x80\\x9f"), ("nbsp\xa0", "nbsp\xa0"), ("~\x7e", "~~"),
    ("ls\u2028ps\u2029", "ls\\u2028ps\\u2029"), ("bidi\u202a\u202e", "bidi\\u202a\\u202e"),
    ("iso\u2066\u2069", "iso\\u2066\\u2069"), ("ok\u2027\u202f\u2065\u206a", "ok\u2027\u202f\u2065\u206a"),
])
def test_safe_escapes_every_control_and_reordering_mark_and_nothing_else(text, shown):
    assert scan_output.safe(text) == shown


@pytest.mark.parametrize(("line", "shown"), [
    ("a" * 400, "a" * 400), ("a" * 401, "a" * 400 + "…"), ("\x1b" * 100, "\\x1b" * 100),
    ("\x1b" * 101, "\\x1b" * 100 + "…"),  # bounded after escaping: what reaches the terminal
])
def test_human_line_bounded_to_shown_chars_after_escaping(line, shown):
    out = io.StringIO()
    scan_output.print_human(_result(_f("cause-a", 1, line=line)), KNOWN, out)
    assert out.getvalue().splitlines()[2] == f"    line:  {shown}"


def test_print_human_whole_text_with_a_first_cause_and_every_finding():
    result = _result(_f("conseq", 3, "a\x1b.log"), _f("cause-b", 9, line="boom\x07"), _f(FALLBACK_ID, 12),
                     files=2)
    out = io.StringIO()
    scan_output.print_human(result, KNOWN, out)
    assert out.getvalue() == (
        "first cause: run.log:9: cause-b [megatron/hang] cause-b title\n"
        "a\\x1b.log:3: conseq [ray/crash] conseq title\n"
        "    line:  line 3\n"
        "    cause: conseq cause spread\n"
        "    fix:   fix conseq now\n"
        "run.log:9: cause-b [megatron/hang] cause-b title\n"
        "    line:  boom\\x07\n"
        "    cause: cause-b cause spread\n"
        "    fix:   fix cause-b now\n"
        f"run.log:12: {FALLBACK_ID} [any/crash] {FALLBACK_ID} title\n"
        "    line:  line 12\n"
        f"    cause: {FALLBACK_ID} cause spread\n"
        f"    fix:   fix {FALLBACK_ID} now\n"
        "rlcheck scan: 2 file(s), 2 known failure line(s): cause-b, conseq; 1 uncatalogued failure line(s)\n")


def test_print_human_first_cause_path_escaped():
    out = io.StringIO()
    scan_output.print_human(_result(_f("cause-a", 2, "x\x1b]0;t\x07.log")), KNOWN, out)
    assert out.getvalue().splitlines()[0] == "first cause: x\\x1b]0;t\\x07.log:2: cause-a [sglang/crash] cause-a title"


@pytest.mark.parametrize(("counts", "errors_total", "verdict"), [
    ({}, 0, "no known failure"),
    ({}, 1, "no known failure; 1 input(s) could not be read in full"),
    ({FALLBACK_ID: 3}, 0, "no known failure; 3 uncatalogued failure line(s)"),
    ({FALLBACK_ID: 0}, 0, "no known failure"),  # a zero count says nothing
    ({"routine": 1}, 0, "1 known failure line(s): routine"),
    ({"routine": 2, "cause-a": 5, FALLBACK_ID: 1}, 2,
     "7 known failure line(s): cause-a, routine; 1 uncatalogued failure line(s); 2 input(s) could not be read in full"),
])
def test_print_human_verdict_line(counts, errors_total, verdict):
    out = io.StringIO()
    scan_output.print_human(_result(counts=counts, errors_total=errors_total, files=3), KNOWN, out)
    assert out.getvalue() == f"rlcheck scan: 3 file(s), {verdict}\n"


@pytest.mark.parametrize(("count", "said"), [(KEEP_PER_ID - 1, False), (KEEP_PER_ID, False), (KEEP_PER_ID + 1, True)])
def test_print_human_says_when_findings_of_an_id_were_only_counted(count, said):
    out = io.StringIO()
    scan_output.print_human(_result(counts={"cause-a": count, "routine": 1}), KNOWN, out)
    lines = out.getvalue().splitlines()
    note = f"cause-a: {count} line(s) in all; the first {KEEP_PER_ID} are shown"
    assert lines == ([note] if said else []) + [
        f"rlcheck scan: 1 file(s), {count + 1} known failure line(s): cause-a, routine"]


@pytest.mark.parametrize(("errors", "total", "text"), [
    ([], 0, ""),
    (["a.log: gone"], 1, "rlcheck scan: error: a.log: gone\n"),
    (["a\x1b.log: gone", "b: no"], 2, "rlcheck scan: error: a\\x1b.log: gone\nrlcheck scan: error: b: no\n"),
    (["a: gone"], 3, "rlcheck scan: error: a: gone\n"
                     "rlcheck scan: error: 2 more input(s) could not be read (the first 1 are named above)\n"),
])
def test_print_errors(errors, total, text):
    err = io.StringIO()
    scan_output.print_errors(_result(errors=errors, errors_total=total), err)
    assert err.getvalue() == text


def test_document_and_print_json_whole():
    result = _result(_f("routine", 1), _f("cause-a", 4, line="\x1b"), counts={"routine": 1, "cause-a": 1},
                     errors=["b: gone"], errors_total=1, files=2)
    doc = scan_output.document(result, KNOWN)
    assert doc == {"files": 2, "errors": ["b: gone"], "errors_total": 1, "counts": {"routine": 1, "cause-a": 1},
                   "total": 2, "kept_per_id": KEEP_PER_ID, "first_cause": result.findings[1].to_dict(KNOWN),
                   "findings": [f.to_dict(KNOWN) for f in result.findings]}
    out = io.StringIO()
    scan_output.print_json(result, KNOWN, out)
    text = out.getvalue()
    assert text == json.dumps(doc, indent=2) + "\n" and "\x1b" not in text and "\\u001b" in text


def test_document_without_findings_has_no_first_cause():
    assert scan_output.document(_result(), KNOWN)["first_cause"] is None
