"""How `rlcheck scan` prints what it found: for people (escaped, bounded) and as JSON."""

from __future__ import annotations

import json
import re
from typing import Any, TextIO

from rlcheck.catalog import FALLBACK_ID, KnownFailure
from rlcheck.scan import KEEP_PER_ID, Finding, ScanResult

# C0 controls but tab, DEL, C1 controls, and the Unicode marks that reorder or break a terminal line:
# a log line must never move the cursor, retitle the window or clear the screen of whoever reads it.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
SHOWN_CHARS = 400


def safe(text: str) -> str:
    """text with every control character written as a visible escape (ESC -> \\x1b)."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", text)


def _line(text: str) -> str:
    shown = safe(text)
    return shown if len(shown) <= SHOWN_CHARS else shown[:SHOWN_CHARS] + "…"


_RANK = {"cause": 0, "fallback": 1, "consequence": 2, "invariant": 3}
"""Which finding names the run: the earliest cause, else the earliest line no entry knows, else the earliest
consequence (an actor's death, a wrapper), else a routine line."""


def first_cause(result: ScanResult, known: dict[str, KnownFailure]) -> Finding | None:
    """The finding that names why the run stopped: first cause first (findings are in log order per input)."""
    ranked = [(_RANK.get(known[f.failure_id].role, 0), i, f) for i, f in enumerate(result.findings)]
    return min(ranked, key=lambda r: (r[0], r[1]))[2] if ranked else None


def print_human(result: ScanResult, known: dict[str, KnownFailure], out: TextIO) -> None:
    first = first_cause(result, known)
    if first is not None:
        entry = known[first.failure_id]
        out.write(f"first cause: {safe(first.path)}:{first.line_no}: {first.failure_id} "
                  f"[{entry.layer}/{entry.severity}] {entry.title}\n")
    for f in result.findings:
        entry = known[f.failure_id]
        out.write(f"{safe(f.path)}:{f.line_no}: {f.failure_id} [{entry.layer}/{entry.severity}] {entry.title}\n")
        out.write(f"    line:  {_line(f.line)}\n")
        out.write(f"    cause: {' '.join(entry.cause.split())}\n")
        out.write(f"    fix:   {' '.join(entry.remedy.split())}\n")
    for fid, count in result.counts.items():
        if count > KEEP_PER_ID:
            out.write(f"{fid}: {count} line(s) in all; the first {KEEP_PER_ID} are shown\n")
    ids = sorted(fid for fid in result.counts if fid != FALLBACK_ID)
    known_total = result.total - result.counts.get(FALLBACK_ID, 0)
    verdict = f"{known_total} known failure line(s): {', '.join(ids)}" if ids else "no known failure"
    if result.counts.get(FALLBACK_ID):
        verdict += f"; {result.counts[FALLBACK_ID]} uncatalogued failure line(s)"
    unread = f"; {result.errors_total} input(s) could not be read in full" if result.errors_total else ""
    out.write(f"rlcheck scan: {result.files} file(s), {verdict}{unread}\n")


def print_errors(result: ScanResult, err: TextIO) -> None:
    for error in result.errors:
        err.write(f"rlcheck scan: error: {safe(error)}\n")
    if result.errors_total > len(result.errors):
        err.write(f"rlcheck scan: error: {result.errors_total - len(result.errors)} more input(s) could not "
                  f"be read (the first {len(result.errors)} are named above)\n")


def document(result: ScanResult, known: dict[str, KnownFailure]) -> dict[str, Any]:
    return {"files": result.files, "errors": result.errors, "errors_total": result.errors_total,
            "counts": result.counts, "total": result.total, "kept_per_id": KEEP_PER_ID,
            "first_cause": first.to_dict(known) if (first := first_cause(result, known)) else None,
            "findings": [f.to_dict(known) for f in result.findings]}


def print_json(result: ScanResult, known: dict[str, KnownFailure], out: TextIO) -> None:
    json.dump(document(result, known), out, indent=2)  # ensure_ascii: escapes reach no terminal raw
    out.write("\n")
