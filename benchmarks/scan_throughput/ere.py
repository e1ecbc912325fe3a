"""Translate the catalogue's signatures (Python regex syntax) into POSIX ERE for `grep -E`."""

from __future__ import annotations

import re

_CLASSES = {r"\d": "0-9", r"\w": "A-Za-z0-9_", r"\s": "[:space:]"}


def _case_insensitive(text: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in text)


def to_ere(pattern: str) -> str:
    """Good for the constructs the catalogue uses: (?:...), (?i:...), \\d \\w \\s inside and outside [...]."""
    pattern = re.sub(r"\(\?i:([^()]*)\)", lambda m: "(" + _case_insensitive(m.group(1)) + ")", pattern)
    pattern = pattern.replace("(?:", "(")
    # POSIX brackets have no escapes: [^\n] would exclude '\' and 'n'. grep reads lines, so "not a newline" is '.'.
    pattern = pattern.replace("[^\\n]", ".")
    out, i, in_class = [], 0, False
    while i < len(pattern):
        two = pattern[i:i + 2]
        if two in _CLASSES:
            out.append(_CLASSES[two] if in_class else f"[{_CLASSES[two]}]")
            i += 2
            continue
        if two.startswith("\\"):
            out.append(two)
            i += 2
            continue
        if pattern[i] == "[" and not in_class:
            in_class = True
        elif pattern[i] == "]" and in_class:
            in_class = False
        out.append(pattern[i])
        i += 1
    if "(?" in "".join(out):
        raise ValueError(f"{pattern!r}: a construct grep -E does not have")
    return "".join(out)
