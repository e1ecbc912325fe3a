"""The preflight gate of an e2e case: the registry's checks that need no cluster and no GPU of this machine.

A case runs only when none of them is FAIL or UNKNOWN; otherwise it is skipped with their ids and
reasons, and no GPU is requested. Results are kept per (recipe, hardware) for the pytest session.
"""

from __future__ import annotations

from rlcheck import recipes
from rlcheck.hardware import HardwareProfile
from rlcheck.preflight import all_checks, guarded_by
from rlcheck.preflight.registry import Check, Inputs
from rlcheck.recipes.recipe import Recipe
from rlcheck.verdict import Status, Verdict


def inputs_for(recipe_id: str, profile: HardwareProfile | None) -> Inputs:
    """--recipe on --hardware as the checks see it: the hardware's deltas applied, or why they cannot be."""
    base = recipes.get(recipe_id)
    if profile is None:
        return Inputs(recipe=base, profile=None, guarded_by=guarded_by())
    try:
        return Inputs(recipe=recipes.get(recipe_id, profile), profile=profile, guarded_by=guarded_by())
    except ValueError as exc:  # NotForHardware, or a hardware rule such as Megatron DeepEP on GB300
        return Inputs(recipe=base, profile=profile, refusal=str(exc), guarded_by=guarded_by())


def run_safely(check: Check, inputs: Inputs) -> list[Verdict]:
    """check.run, with a crash of the check turned into UNKNOWN naming it (the gate never raises)."""
    try:
        return check.run(inputs)
    except Exception as exc:  # a collector that could not read the machine: could not judge
        first = (str(exc).splitlines() or [""])[0]
        return [Verdict(check_id=check.id, status=Status.UNKNOWN,
                        summary=f"could not run: {type(exc).__name__}: {first}")]


def gate_verdicts(inputs: Inputs) -> list[Verdict]:
    checks = [c for c in all_checks() if c.in_gate]
    if inputs.refusal:  # nothing else is worth judging on a shape the hardware cannot hold
        checks = [c for c in checks if c.id == "recipe_fits_hardware"]
    return [v for c in checks for v in run_safely(c, inputs)]


def recipe_verdicts(recipe: Recipe, profile: HardwareProfile | None) -> list[Verdict]:
    """The checks judged from the recipe and profile alone (no collector, or one that only looks up what is
    importable): what a dry run can afford."""
    inputs = Inputs(recipe=recipe, profile=profile)
    return [v for c in all_checks() if c.in_gate and (not c.reads_machine or c.light_collect) for v in c.run(inputs)]


_DONE: dict[tuple[str, str], tuple[Verdict, ...]] = {}


def preflight(recipe_id: str, profile: HardwareProfile) -> tuple[Verdict, ...]:
    """Every gate verdict for the recipe on this hardware (kept for the rest of the session)."""
    key = (recipe_id, profile.name)
    if key not in _DONE:
        _DONE[key] = tuple(gate_verdicts(inputs_for(recipe_id, profile)))
    return _DONE[key]


def blockers(verdicts: tuple[Verdict, ...]) -> list[Verdict]:
    return [v for v in verdicts if v.status.blocks]


def skip_reason(verdicts: tuple[Verdict, ...]) -> str | None:
    bad = blockers(verdicts)
    if not bad:
        return None
    return "preflight NO-GO, no GPU requested: " + "; ".join(f"{v.check_id} {v.status.value}: {v.summary}"
                                                             for v in bad)
