"""Surviving mutants that are equivalent: the mutated code behaves the same on every input, so no test can
turn it red. Each entry is the mutant's name (as `mutmut results` lists it) and why it is equivalent.

A name is the function plus mutmut's running number within it: an edit to that function renumbers its
mutants, so re-check the entries of a function whenever it changes (`mutmut show NAME` prints the diff).
"""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    # rlcheck/plugin/report.py
    "rlcheck.plugin.report.x_kind_of__mutmut_8": 'split("/", 1)[0] -> split("/")[0]: the first part is the same',
    "rlcheck.plugin.report.x_kind_of__mutmut_11": 'split("/", 1)[0] -> split("/", 2)[0]: the first part is the same',
    "rlcheck.plugin.report.x_verdict_id__mutmut_5":
        'rsplit("::", 1)[-1] -> rsplit("::")[-1]: the last part is the same',
    "rlcheck.plugin.report.x_verdict_id__mutmut_8":
        'rsplit("::", 1)[-1] -> rsplit("::", 2)[-1]: the last part is the same',
    "rlcheck.plugin.report.xǁVerdictCollectorǁ__init____mutmut_5":
        "paths = () -> None: paths is only read by the summary, which runs only after sessionfinish set it "
        "together with the decision",
    # rlcheck/scan.py
    "rlcheck.scan.x__excerpt__mutmut_2":
        "> SHOWN_BYTES -> >=: a line of exactly SHOWN_BYTES gives lo = start, hi = end either way: the whole line",
    "rlcheck.scan.x__excerpt__mutmut_21": 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec',
    "rlcheck.scan.x__excerpt__mutmut_25": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.scan.x__excerpt__mutmut_42": 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec',
    "rlcheck.scan.x__excerpt__mutmut_46": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.scan.xǁMatcherǁmatch_line__mutmut_4": 'encode("utf-8", ...) -> encode(...): UTF-8 is the default',
    "rlcheck.scan.xǁMatcherǁmatch_line__mutmut_7": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.scan.x__blocks__mutmut_20":
        'getattr(exc, "filled", 0) -> default None: _fill sets exc.filled on every read error it re-raises',
    "rlcheck.scan.x__blocks__mutmut_23":
        'getattr(exc, "filled", 0) -> no default: _fill sets exc.filled on every read error it re-raises',
    "rlcheck.scan.x__blocks__mutmut_26":
        'getattr(exc, "filled", 0) -> default 1: _fill sets exc.filled on every read error it re-raises',
    "rlcheck.scan.x__blocks__mutmut_32": "rfind(..., 0, end) -> rfind(..., None, end): None means from 0",
    "rlcheck.scan.x__fill__mutmut_12":
        "filled < len(view) -> <=: once full, readinto of an empty view returns 0 and the loop ends the same",
    "rlcheck.scan.x__scan_into__mutmut_4":
        "counted_to = 0 -> None: bytes.count(sub, None, start) counts from 0 just the same",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_1":
        "end - start <= PIECE_BYTES -> end + start: a short line taken the piecewise way is one piece: same ids",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_2":
        "<= PIECE_BYTES -> <: a line of exactly PIECE_BYTES taken piecewise is one piece: same ids",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_17":
        "cache lookup -> None: every set is named afresh (the same sorted ids); only the cache is lost",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_18":
        "cache lookup by None: always a miss, every set is named afresh (the same sorted ids)",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_13":
        "rfind from pos -> from 0: pos is one past the previous line's newline, so the last newline before the "
        "anchor is the same one (or none: then start = pos both ways)",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_33":
        "end < 0 -> end <= 0: find from the anchor gives 0 only for an anchor on a newline at offset 0, and an "
        "anchor is a matched character of a one-line signature",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_34": "end < 0 -> end < 1: as hits__mutmut_33",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_8":
        "continue -> break on anchor < pos: every engine gives at most one anchor per line, in order, so no "
        "anchor falls before the end of the line just handled",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_54":
        "pos = end + 1 -> end - 1: the next rfind still finds the newline at end (start is the same), and the "
        "next anchor lies past it",
    # rlcheck/catalog.py
    **{f"rlcheck.catalog.x__entry__mutmut_{n}":
       "the default of a required field's get (signatures, examples, near_misses) is never used: check_fields "
       "has refused an entry without it" for n in (35, 37, 44, 46, 53, 55)},
    **{f"rlcheck.catalog.xǁAffectedǁcontains__mutmut_{n}":
       "contains(..., prereleases=True) -> None / left out: packaging 26 (installed) accepts a pre-release of a "
       "single version by default; equivalent here, not under older packaging, which is why the code says True"
       for n in (2, 4)},
    "rlcheck.catalog.x_load_file__mutmut_3":
        'read_text(encoding="utf-8") -> encoding=None: the locale\'s encoding, which is UTF-8 here (Python\'s '
        "UTF-8 mode under the C locale the mutation run has); differs only under a non-UTF-8 locale",
    "rlcheck.catalog.x_load_file__mutmut_5": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.catalog.x_job_traits__mutmut_11":
        'value past the last token "" -> "XXXX": neither is "nsa" nor names a DSA spec',
    # rlcheck/reward/payload.py
    "rlcheck.reward.payload.x__prompt_messages__mutmut_8":
        'default prompt "" -> "XXXX": only the default\'s type is read (any string prompt counts 0 messages)',
    "rlcheck.reward.payload.x_parse_payload__mutmut_4":
        'codec "utf-8" -> "UTF-8": Python\'s codec names are case-insensitive',
    "rlcheck.reward.payload.x_read_body__mutmut_8":
        'header "content-length" -> "CONTENT-LENGTH": Starlette\'s Headers.get lowercases the key',
    "rlcheck.reward.payload.x_read_body__mutmut_9":
        'default Content-Length "" -> "XXXX": both fail isdigit(), so both mean "not declared"',
}
