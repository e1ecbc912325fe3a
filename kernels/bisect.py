"""Which pass-config flips cure a failing kernel? The GLM-5.2 hand bisect (miles PR #1571), automated.

Given a kernel factory and an input on which the kernel fails, run the failing base config,
then every single flip (merge, warp specialization, num_stages 0<->1, TMA), then every pair,
and print which flips cure it. A pair counts as a *minimal* cure only when neither of its
flips cures alone. Exit status: 0 some flip cures, 1 none does, 3 the base config does not fail.

    python -m kernels.bisect --base merge=on,ws=off,stages=0,tma=on --seq-len 1024 --topk 256

`--factory MODULE:FUNC` names another target: FUNC(problem: Problem) returns a callable
`run(config: PassConfig) -> Outcome`, optionally with `prepare(configs)` to compile ahead.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kernels.config import SHIPPED_BWD_CONFIG, PassConfig
from kernels.outcome import Outcome

FLIP_FIELDS: tuple[str, ...] = ("aggressive_merge", "warp_specialized", "num_stages", "tma_lower")
DEFAULT_FACTORY = "kernels.bisect_target:sparse_mla_bwd_target"


@dataclass(frozen=True, kw_only=True, slots=True)
class Trial:
    flips: tuple[str, ...]
    config: PassConfig
    outcome: Outcome

    @property
    def cured(self) -> bool:
        return not self.outcome.bad and not self.outcome.error


@dataclass(frozen=True, kw_only=True, slots=True)
class BisectReport:
    base: Trial
    trials: tuple[Trial, ...]

    def cures(self) -> list[Trial]:
        return [trial for trial in self.trials if trial.cured]

    def minimal_cures(self) -> list[Trial]:
        single = {trial.flips[0] for trial in self.trials if len(trial.flips) == 1 and trial.cured}
        return [trial for trial in self.cures() if len(trial.flips) == 1 or not single & set(trial.flips)]


def flip(config: PassConfig, name: str) -> PassConfig:
    """The config with one field flipped: booleans negate, num_stages goes 0 <-> 1."""
    if name == "num_stages":
        return dataclasses.replace(config, num_stages=0 if config.num_stages else 1)
    return dataclasses.replace(config, **{name: not getattr(config, name)})


def flip_label(config: PassConfig, name: str) -> str:
    """How a flip reads in the report, e.g. `merge=off`, taken from the flipped config's label."""
    short = {"aggressive_merge": "merge", "warp_specialized": "ws", "num_stages": "stages", "tma_lower": "tma"}
    parts = dict(item.split("=") for item in flip(config, name).label().split(","))
    return f"{short[name]}={parts[short[name]]}"


def candidate_flips(fields: Sequence[str] = FLIP_FIELDS, pairs: bool = True) -> list[tuple[str, ...]]:
    singles = [(name,) for name in fields]
    return singles + (list(itertools.combinations(fields, 2)) if pairs else [])


def apply_flips(base: PassConfig, flips: Sequence[str]) -> PassConfig:
    config = base
    for name in flips:
        config = flip(config, name)
    return config


def bisect(
    run: Callable[[PassConfig], Outcome], base: PassConfig, fields: Sequence[str] = FLIP_FIELDS, pairs: bool = True
) -> BisectReport:
    """Run the base config, then each flip set; stops after the base if the base does not fail."""
    base_trial = Trial(flips=(), config=base, outcome=run(base))
    if not base_trial.outcome.bad:
        return BisectReport(base=base_trial, trials=())
    plans = candidate_flips(fields, pairs)
    prepare = getattr(run, "prepare", None)
    if callable(prepare):
        prepare([apply_flips(base, flips) for flips in plans])
    trials = tuple(
        Trial(flips=flips, config=apply_flips(base, flips), outcome=run(apply_flips(base, flips))) for flips in plans
    )
    return BisectReport(base=base_trial, trials=trials)


def render(report: BisectReport) -> str:
    base = report.base
    lines = [f"base {base.config.label()}: {'FAILS' if base.outcome.bad else 'passes'} -- {base.outcome.detail}"]
    if not base.outcome.bad:
        return "\n".join([*lines, "nothing to bisect: the base config does not fail on this input"])
    lines.append(f"{'flip':<24} {'result':<8} detail")
    for trial in report.trials:
        name = " + ".join(flip_label(base.config, flip_name) for flip_name in trial.flips)
        result = "error" if trial.outcome.error else ("CURES" if trial.cured else "fails")
        lines.append(f"{name:<24} {result:<8} {trial.outcome.error or trial.outcome.detail}")
    cures = [" + ".join(flip_label(base.config, n) for n in trial.flips) for trial in report.minimal_cures()]
    lines.append("curing flips (minimal): " + ("; ".join(cures) if cures else "none"))
    return "\n".join(lines)


def report_as_dict(report: BisectReport) -> dict[str, Any]:
    def trial_dict(trial: Trial) -> dict[str, Any]:
        return {
            "flips": list(trial.flips),
            "config": trial.config.label(),
            "cured": trial.cured,
            **dataclasses.asdict(trial.outcome),
        }

    return {
        "base": trial_dict(report.base),
        "trials": [trial_dict(trial) for trial in report.trials],
        "minimal_cures": [
            " + ".join(flip_label(report.base.config, n) for n in t.flips) for t in report.minimal_cures()
        ],
    }


def load_factory(path: str) -> Callable[..., Any]:
    module_name, _, func_name = path.partition(":")
    if not func_name:
        raise ValueError(f"--factory {path!r}: want MODULE:FUNC")
    factory = getattr(importlib.import_module(module_name), func_name)
    if not callable(factory):
        raise ValueError(f"--factory {path!r}: {func_name} is not callable")
    return factory


def main(argv: Sequence[str] | None = None) -> int:
    from kernels.bisect_target import add_problem_arguments, problem_from_args

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--factory", default=DEFAULT_FACTORY, help="MODULE:FUNC building the run(config) target")
    parser.add_argument(
        "--base", default=SHIPPED_BWD_CONFIG.label(), help="failing config, e.g. merge=on,ws=off,stages=0,tma=on"
    )
    parser.add_argument("--no-pairs", action="store_true", help="single flips only")
    parser.add_argument("--json", help="also write the report here")
    add_problem_arguments(parser)
    args = parser.parse_args(argv)
    run = load_factory(args.factory)(problem_from_args(args))
    report = bisect(run, PassConfig.parse(args.base), pairs=not args.no_pairs)
    print(render(report), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report_as_dict(report), handle, indent=2)
    if not report.base.outcome.bad:
        return 3  # nothing to bisect: distinct from "no flip cures it" (1)
    return 0 if report.minimal_cures() else 1


if __name__ == "__main__":
    raise SystemExit(main())
