"""The check registry (every preflight check, by area) and the e2e gate that runs it."""

from __future__ import annotations

import functools

from rlcheck.preflight.registry import AREAS, Check


@functools.cache
def all_checks() -> tuple[Check, ...]:
    """Every registered check, validated against the catalogue (ids unique, guarded ids exist)."""
    from rlcheck import catalog
    from rlcheck.preflight import cluster, gpu, image, recipe
    from rlcheck.preflight.registry import validate

    checks = (*image.CHECKS, *recipe.CHECKS, *cluster.CHECKS, *gpu.CHECKS)
    validate(checks, set(catalog.load_catalog()))
    return checks


def by_area(area: str) -> tuple[Check, ...]:
    if area not in AREAS:
        raise ValueError(f"area={area!r}: one of {', '.join(AREAS)}")
    return tuple(c for c in all_checks() if c.area == area)


def get(check_id: str) -> Check:
    for check in all_checks():
        if check.id == check_id:
            return check
    raise KeyError(f"unknown check {check_id!r}: registered are {', '.join(c.id for c in all_checks())}")


def guarded_by() -> dict[str, str]:
    """Catalogue id -> the check(s) that catch it before launch, e.g. 'recipe_batch'."""
    out: dict[str, list[str]] = {}
    for check in all_checks():
        for failure_id in check.guards:
            out.setdefault(failure_id, []).append(check.id)
    return {k: ", ".join(v) for k, v in out.items()}
