"""Verdict: the one result type, from a probe's evaluate to the report."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class Status(enum.StrEnum):
    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"  # not applicable here
    UNKNOWN = "UNKNOWN"  # could not run: never counts as a pass

    @property
    def blocks(self) -> bool:
        """A blocking check in this state turns the run into NO-GO."""
        return self in (Status.FAIL, Status.UNKNOWN)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Verdict:
    status: Status
    summary: str
    """One line: what was observed against what was expected, with units."""
    details: str = ""
    """Evidence: commands, versions, file paths, the lines that matter."""
    node: str | None = None
    """None for this machine, else a Ray node id or hostname."""
    failure_id: str | None = None
    """The known-failure catalogue id this verdict is about."""
    remedy: str = ""
    """What to do, when status is not PASS."""
    check_id: str = ""
    """Which check or reproducer judged. Probes leave it empty: the check registry (or, for reproducers and
    test cases, the test's name) stamps it, so an id lives in one place."""

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            raise ValueError(f"status={self.status!r}: one of {', '.join(s.value for s in Status)}")
        if "\n" in self.summary:
            raise ValueError(f"summary={self.summary!r}: must be one line (put the rest in details)")

    def with_id(self, check_id: str) -> Verdict:
        return dataclasses.replace(self, check_id=check_id)

    def render(self) -> str:
        """Readable block, used as a failing test's message and in report.md."""
        where = f" [{self.node}]" if self.node else ""
        head = f"{self.status.value} {self.check_id}{where}: {self.summary}"
        lines = [head]
        if self.failure_id:
            lines.append(f"  known failure: {self.failure_id}")
        if self.remedy:
            lines.append(f"  fix: {self.remedy}")
        if self.details:
            lines.extend(f"  | {line}" for line in self.details.splitlines())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(f"verdict keys {sorted(unknown)}: allowed are {sorted(fields)}")
        return cls(**{**data, "status": Status(data["status"])})
