"""The check registry: one entry per preflight check, the one list that everything else reads.

`checks/` runs it (one parametrized test per area, each check its own test id), the e2e gate loops over it,
the self-tests take their list of checks from it, and the README check table and the catalogue's "check"
column in docs/known-failures.md are generated from it. A check is an id, the catalogue failures it guards,
what it needs, a collector (the only code that touches the machine) and a pure judge.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rlcheck.cluster.fanout_result import FanoutResult
from rlcheck.facts import Need
from rlcheck.framework.detect import Installed, collect_installed
from rlcheck.hardware import HardwareProfile
from rlcheck.job.job import Job, judged_framework
from rlcheck.recipes.recipe import Recipe
from rlcheck.verdict import Status, Verdict

AREAS = ("image", "recipe", "cluster", "gpu")
_ID = re.compile(r"(image|recipe|cluster|gpu)_[a-z0-9_]+")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Inputs:
    """What a judge may read besides its own observation."""

    recipe: Recipe
    profile: HardwareProfile | None
    refusal: str = ""
    """Why the recipe does not fit the hardware ('' when it does)."""
    fanout: FanoutResult | None = None
    """The cluster fan-out, for checks that need the cluster."""
    guarded_by: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Catalogue id -> the checks that guard it (the registry's own index, for checks that cite it)."""
    job: Job | None = None
    """The launch under check (--job); None: the built-in recipe, judged as rlcheck would launch it."""
    missing: Mapping[Need, str] = dataclasses.field(default_factory=dict)
    """fact -> why the job does not give it; a check that needs it is UNKNOWN naming both."""
    framework: Installed | None = None
    """The SLIME/Miles version judged (--framework, else detected here); None: each check detects it itself."""
    declared: bool = False
    """The profile was named by the user (--hardware NAME): a claim about this machine to verify, not a detection."""
    local_gpus: bool = True
    """False (--no-local-gpus): this machine is a Ray client or login node; its own GPUs are not judged."""

    def judged_framework(self) -> Installed:
        """--framework when given, else what is importable here, else the job's own framework and version;
        framework None when none of them names one (the recipe's framework decides)."""
        return judged_framework(self.framework or collect_installed(), self.job)

    def launch_argv(self) -> list[str]:
        """What the trainer receives: the job's argv, or the recipe's rendered argv."""
        return list(self.job.argv) if self.job else self.recipe.argv()

    def launch_env(self) -> dict[str, str]:
        return self.job.env_dict() if self.job else self.recipe.env_dict()


Judge = Callable[[Any, Inputs], "Verdict | Sequence[Verdict]"]


def _no_observation(inputs: Inputs) -> None:
    return None


def _not_moot(inputs: Inputs) -> None:
    return None


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Check:
    id: str
    """Stable id: `<area>_<property>`, the test id in `checks/` and the verdict's check_id."""
    guards: tuple[str, ...]
    """Catalogue ids this check catches before launch (empty for a health check that guards no entry)."""
    judges: str
    """One line for the README table: what is judged against what."""
    judge: Judge
    """Pure: (observation, inputs) -> Verdict, or one Verdict per node."""
    collect: Callable[[Inputs], Any] = _no_observation
    """Reads the machine (files, packages, subprocesses, GPUs, Ray); None for checks of the recipe alone."""
    needs: frozenset[Need] = frozenset({Need.LAUNCH, Need.RECIPE})
    """The facts it judges; a missing one makes it UNKNOWN before it runs (registry-wide, no list elsewhere)."""
    moot: Callable[[Inputs], Verdict | None] = _not_moot
    """A verdict that holds however few facts are known, where the launch never runs what the check judges (no
    SGLang engine starts in a train-only job); None where it does. Asked before the needs, once the recipe is read."""
    light_collect: bool = False
    """The collector only looks up what is importable (no subprocess, GPU or network): dry runs run it too."""
    gpu_count: int = 0
    """GPUs this machine must have (checks that need a GPU)."""
    advisory: bool = False
    """Never FAILs by design: its worst verdict is WARN or UNKNOWN (the test table accepts that as its bad case)."""
    advisory_reason: str = ""
    """Why it never FAILs; required exactly when advisory."""

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"id={self.id!r}: <area>_<property> in lowercase, area one of {', '.join(AREAS)}")
        if (Need.GPU in self.needs) != (self.gpu_count > 0):
            raise ValueError(f"{self.id}: gpu_count={self.gpu_count} must be > 0 exactly when the check needs a GPU")
        if self.advisory != bool(self.advisory_reason):
            raise ValueError(f"{self.id}: advisory={self.advisory} needs a reason exactly when advisory is set")
        if not self.judges or "\n" in self.judges:
            raise ValueError(f"{self.id}: judges must be one non-empty line")

    @property
    def area(self) -> str:
        return self.id.split("_", 1)[0]

    @property
    def reads_machine(self) -> bool:
        """False for checks judged from the recipe and profile alone (pure: no collector)."""
        return self.collect is not _no_observation

    @property
    def in_gate(self) -> bool:
        """The e2e gate runs every check that needs neither the cluster nor this machine's GPUs (it may run on a
        GPU-less driver)."""
        return not self.needs & {Need.CLUSTER, Need.GPU, Need.NODE}

    def run(self, inputs: Inputs, observation: Any = None) -> list[Verdict]:
        """Judge (collecting first unless an observation is given) and stamp this check's id on every verdict."""
        if Need.RECIPE not in inputs.missing and (moot := self.moot(inputs)) is not None:
            return [moot.with_id(self.id)]
        lacking = [need for need in Need if need in self.needs and need in inputs.missing]
        if lacking:
            reasons: dict[str, list[str]] = {}  # one reason (a job that could not be read) lacks several facts
            for need in lacking:
                reasons.setdefault(inputs.missing[need], []).append(need.value)
            why = "; ".join(f"the {_and(names)} {'is' if len(names) == 1 else 'are'} not known: {reason}"
                            for reason, names in reasons.items())
            return [Verdict(check_id=self.id, status=Status.UNKNOWN, summary=f"cannot judge the job: {why}")]
        obs = self.collect(inputs) if observation is None else observation
        out = self.judge(obs, inputs)
        verdicts = [out] if isinstance(out, Verdict) else list(out)
        if not verdicts:
            return [Verdict(check_id=self.id, status=Status.UNKNOWN, summary="the judge returned no verdict")]
        return [v.with_id(self.id) for v in verdicts]


def validate(checks: Sequence[Check], catalogue_ids: set[str]) -> None:
    """Ids unique, every guarded id in the catalogue; raises ValueError naming the check."""
    seen: set[str] = set()
    for check in checks:
        if check.id in seen:
            raise ValueError(f"check {check.id!r} is registered twice")
        seen.add(check.id)
        unknown = [g for g in check.guards if g not in catalogue_ids]
        if unknown:
            raise ValueError(f"check {check.id!r} guards {unknown}: not in the catalogue")
