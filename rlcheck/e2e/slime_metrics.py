"""SLIME's metric dict lines (`rollout N: {...}`, `step N: {...}`, `perf N: {...}`), read without eval.

SLIME logs `f"{name} {id}: {dict}"`: the repr of a flat dict of floats. A repr may hold `nan`, `inf`,
`np.float64(0.5)` (numpy 2) or a tensor repr, none of which `ast.literal_eval` reads, and a hostile line
may be megabytes long. This scanner is linear in the text it reads, reads at most MAX_METRIC_CHARS,
keeps every value it cannot read as text, and reports non-finite values instead of failing on them.
"""

from __future__ import annotations

import dataclasses
import math
import re

MAX_METRIC_CHARS = 64 * 1024
MAX_KEYS = 4096
_HEAD = re.compile(r"(?:^|[\s\]-])(?P<role>[a-z]+-)?(?P<what>rollout|step|perf|eval|passrate|multi_turn) "
                   r"(?P<index>\d{1,12}): \{")
_WRAPPED = re.compile(r"^(?:np\.|numpy\.)?(?:float|int|uint)(?:16|32|64)?\((?P<inner>[^,()]*)\)$|"
                      r"^tensor\((?P<tensor>[^,()]*)(?:,.*)?\)$")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class MetricLine:
    what: str
    """rollout, step, perf, eval, passrate or multi_turn."""
    index: int
    role: str
    """'' for the actor, 'critic-' for the critic's step lines."""
    values: dict[str, float | str]
    """Numbers as float (nan and inf included); anything else as its text."""
    complete: bool
    """False when the dict was cut (line too long) before its closing brace."""

    @property
    def nonfinite(self) -> list[str]:
        return [k for k, v in self.values.items() if isinstance(v, float) and not math.isfinite(v)]

    def number(self, key: str) -> float | None:
        value = self.values.get(key)
        return value if isinstance(value, float) and math.isfinite(value) else None


def _value(text: str) -> float | str:
    text = text.strip()
    wrapped = _WRAPPED.match(text)
    if wrapped:
        text = (wrapped.group("inner") or wrapped.group("tensor") or "").strip()
    if text in ("True", "False", "None"):
        return text
    try:
        return float(text)
    except ValueError:
        return text


def _entries(body: str) -> tuple[list[tuple[str, str]], bool]:
    """(key, value text) pairs of a flat dict repr starting after '{'; True when '}' closed it."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(body)
    while i < n and len(out) < MAX_KEYS:
        while i < n and body[i] in " ,":
            i += 1
        if i >= n or body[i] == "}":
            return out, i < n
        quote = body[i]
        if quote not in "'\"":
            return out, False
        end = body.find(quote, i + 1)
        if end < 0 or body[end + 1:end + 3] != ": ":
            return out, False
        key, i = body[i + 1:end], end + 3
        start, depth = i, 0
        while i < n:  # the value ends at a top-level ',' or '}'; parentheses and quotes nest
            c = body[i]
            if c in "'\"":
                close = body.find(c, i + 1)
                i = n if close < 0 else close + 1
                continue
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth <= 0 and c in ",}":
                break
            i += 1
        out.append((key, body[start:i]))
    return out, False


def parse_metrics(line: str) -> MetricLine | None:
    """The metric dict of one SLIME line, or None when the line is not one."""
    head = _HEAD.search(line[:MAX_METRIC_CHARS])
    if not head:
        return None
    body = line[head.end():MAX_METRIC_CHARS]
    entries, closed = _entries(body)
    if not entries and not closed:
        return None
    return MetricLine(what=head.group("what"), index=int(head.group("index")), role=head.group("role") or "",
                      values={k: _value(v) for k, v in entries}, complete=closed)
