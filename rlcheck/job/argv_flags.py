"""An argv read as argparse reads options: which tokens are options, and the last value of each (ground floor of the
job readers: rlcheck.job.to_recipe and rlcheck.job.argv_model both read through it)."""

from __future__ import annotations

from collections.abc import Sequence


def is_option(token: str) -> bool:
    """argparse reads the token as an option: it starts with `--` and holds no space before any `=` (argparse takes
    `--sglang-load-format dummy`, one token, for a positional argument, and so a value another option can take)."""
    return token.startswith("--") and " " not in token.partition("=")[0]


class Flags:
    """The last value of each `--flag` (also `--flag=value`); a flag with no value maps to ''."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.values: dict[str, str] = {}
        for i, token in enumerate(argv):
            if not is_option(token):
                continue
            name, eq, value = token.partition("=")
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            self.values[name] = value if eq else (nxt if nxt is not None and not is_option(nxt) else "")

    def has(self, flag: str) -> bool:
        return flag in self.values

    def int(self, flag: str, default: int | None = None) -> int | None:
        raw = self.values.get(flag)
        if raw in (None, ""):
            return default
        try:
            return int(raw)
        except ValueError as exc:
            raise ValueError(f"{flag} {raw!r}: expected an integer") from exc

    def float(self, flag: str, default: float) -> float:
        raw = self.values.get(flag)
        if raw in (None, ""):
            return default
        try:
            return float(raw)
        except ValueError as exc:
            raise ValueError(f"{flag} {raw!r}: expected a number") from exc

    def str(self, flag: str, default: str | None = None) -> str | None:
        return self.values.get(flag) or default
