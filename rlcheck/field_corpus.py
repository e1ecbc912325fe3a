"""The field corpus (rlcheck/data/field_corpus.toml): real log lines, each with its source, mapped to a catalogue id
or to healthy; the self-tests replay it and `rlcheck docs` reports the scanner's recall and precision over it."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from rlcheck.catalog import KnownFailure
from rlcheck.scan import Matcher

CORPUS_FILE = Path(__file__).parent / "data" / "field_corpus.toml"


@dataclass(frozen=True, kw_only=True, slots=True)
class FieldLine:
    """One line of the corpus."""

    source: str
    """Where the line was posted (issue, pull request, upstream file)."""
    line: str
    """The line as posted."""
    expected: str
    """The catalogue id it must name, or '' for a healthy line that must name none."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CorpusScore:
    """What the scanner found on the corpus."""

    failures: int
    """Failure lines in the corpus."""
    found: int
    """Failure lines that named their id."""
    healthy: int
    """Healthy lines in the corpus."""
    claimed: int
    """Healthy lines that named some id (false positives)."""
    wrong: int
    """Failure lines that also named an id other than theirs."""
    overlaps: tuple[str, ...] = ()
    """For each of those: its source and the other ids it named."""
    missed: tuple[FieldLine, ...]
    """Failure lines not found."""


def load(path: Path = CORPUS_FILE) -> tuple[FieldLine, ...]:
    """Every line of the corpus; a row without source or line, or a failure without id, raises ValueError."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    extra = set(raw) - {"failure", "healthy"}
    if extra:
        raise ValueError(f"{path.name}: unknown tables {sorted(extra)}: only [[failure]] and [[healthy]]")
    out = []
    for kind in ("failure", "healthy"):
        for row in raw.get(kind, []):
            keys = {"source", "line", "id"} if kind == "failure" else {"source", "line"}
            if set(row) != keys or not all(isinstance(row[k], str) and row[k] for k in keys):
                raise ValueError(f"{path.name}: [[{kind}]] {row!r}: needs exactly {sorted(keys)}, non-empty strings")
            out.append(FieldLine(source=row["source"], line=row["line"], expected=row.get("id", "")))
    return tuple(out)


def score(lines: tuple[FieldLine, ...], catalog: dict[str, KnownFailure]) -> CorpusScore:
    """Replays each line through the scanner (multi-line rows line by line, as a log would be read)."""
    matcher = Matcher(catalog)

    def ids(text: str) -> set[str]:
        return {i for part in text.splitlines() for i in matcher.match_line(part)}

    fails = [x for x in lines if x.expected]
    healthy = [x for x in lines if not x.expected]
    named = {x: ids(x.line) for x in lines}
    return CorpusScore(failures=len(fails), found=sum(x.expected in named[x] for x in fails),
                       healthy=len(healthy), claimed=sum(bool(named[x]) for x in healthy),
                       wrong=sum(bool(named[x] - {x.expected}) for x in fails),
                       overlaps=tuple(f"{x.source} ({x.expected}) also named {', '.join(sorted(extra))}"
                                      for x in fails if (extra := named[x] - {x.expected})),
                       missed=tuple(x for x in fails if x.expected not in named[x]))


def markdown(result: CorpusScore, lines: tuple[FieldLine, ...]) -> list[str]:
    """The docs section: recall and precision, then the classes the corpus covers."""
    recall = result.found / result.failures if result.failures else 0.0
    claims = result.found + result.claimed
    precision = result.found / claims if claims else 0.0
    per_id: dict[str, int] = {}
    for x in lines:
        if x.expected:
            per_id[x.expected] = per_id.get(x.expected, 0) + 1
    out = ["", "## Field corpus", "", "Generated from `rlcheck/data/field_corpus.toml`: log lines users posted in "
           "SLIME's, Miles' and SGLang's trackers (source beside each), replayed through the scanner.", "",
           f"- failure lines: {result.failures}, named their entry: {result.found} (recall {recall:.2f})",
           f"- healthy and look-alike lines: {result.healthy}, named an entry: {result.claimed} "
           f"(precision {precision:.2f})",
           f"- failure lines that also named a wrong entry: {result.wrong}", "",
           "| entry | lines |", "|---|---|"]
    out += [f"| [{k}](#{k}) | {v} |" for k, v in sorted(per_id.items())]
    out += [f"- missed: `{x.line[:120]}` ({x.source}, expected {x.expected})" for x in result.missed]
    out += [f"- overlap: {o}" for o in result.overlaps]
    return out
