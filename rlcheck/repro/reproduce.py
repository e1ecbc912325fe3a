"""Judging a reproducer against the catalogue's affected range.

Inside the range the failure must reproduce; outside it, it must not (the upstream
fix landed and the workaround can retire). Either surprise is a FAIL that says which.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rlcheck import catalog
from rlcheck.framework.detect import Installed, collect_installed, overlay_versions
from rlcheck.verdict import Status, Verdict


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Reproduction:
    failure_id: str
    versions: dict[str, str | None]
    """Installed versions of the packages the catalogue entry names."""
    reproduced: bool
    """The failure happened, with the real component, as users hit it."""
    fix_verified: bool
    """The remedy rlcheck recommends made the same step succeed."""
    evidence: str
    """The real error text and what ran, one line."""
    details: str = ""


def versions_for(failure_id: str, framework: Installed | None = None) -> dict[str, str | None]:
    """framework: the SLIME/Miles judged (--framework); None: detected here."""
    entry = catalog.get(failure_id)
    # SLIME/Miles from a source checkout carry no package metadata: their version is the detected one.
    return overlay_versions(catalog.installed_versions(tuple(a.package for a in entry.affected)),
                            framework or collect_installed())


def _range_text(entry: catalog.KnownFailure, versions: dict[str, str | None]) -> str:
    if not entry.affected:
        return "not tied to a package version"
    return ", ".join(f"{a.package} {versions.get(a.package) or 'absent'} vs {a.specifier}" for a in entry.affected)


def judge(r: Reproduction) -> tuple[Verdict, dict[str, Any]]:
    """The verdict and the report's state for one reproduction."""
    entry = catalog.get(r.failure_id)
    live = entry.live_in(r.versions)
    where = _range_text(entry, r.versions)
    base = {"check_id": f"repro_{r.failure_id}", "failure_id": r.failure_id, "details": r.details}
    if live is not False and not r.reproduced:
        summary = f"catalogue says affected but it did not reproduce ({where})"
        return Verdict(**base, status=Status.FAIL, summary=summary,
                       remedy="re-check the affected range in the catalogue"), {"state": "unexpectedly absent"}
    if live is False and r.reproduced:
        return Verdict(**base, status=Status.FAIL, summary=f"reproduces outside the affected range ({where})",
                       remedy="widen the affected range in the catalogue"), {"state": "present outside range"}
    if r.reproduced and not r.fix_verified:
        summary = f"reproduced, but the recommended fix did not work: {r.evidence}"
        failed = {"state": "present; fix failed"}
        return Verdict(**base, status=Status.FAIL, summary=summary, remedy=entry.remedy), failed
    if r.reproduced:
        text = "present in this environment; fix verified"
    else:
        text = "fixed upstream" + ("; fix verified" if r.fix_verified else "")
    return Verdict(**base, status=Status.PASS, summary=f"{text} ({where}): {r.evidence}"), {"state": text}
