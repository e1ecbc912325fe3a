"""The quick per-node tier as a Slurm prolog / epilog: judge this node within a time budget and drain it on FAIL.

Slurm drains a node whose prolog or epilog exits non-zero (and requeues the prolog's job held), with a reason
of its own. rlcheck drains first with its own reason (`scontrol update ... state=drain reason="rlcheck: ..."`),
then exits 1 from the prolog (the job must not start on a bad node) and 0 from the epilog (the node is already
drained; the finished job is not blamed). What could not be judged (UNKNOWN, checks past the budget) never
drains a node: it is said on stderr, which slurmd logs, and the exit is 0.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence

from rlcheck.hardware import HardwareProfile
from rlcheck.preflight import all_checks, gate
from rlcheck.preflight.registry import Check, Inputs
from rlcheck.process import subproc
from rlcheck.verdict import Status, Verdict

PHASES = ("prolog", "epilog")
QUICK_GPU_CHECKS = ("gpu_node_inventory", "gpu_node_health")
"""Of the GPU checks, the ones that read counters only (no GEMM, no NCCL): seconds, not minutes."""
MACHINE_AREAS = ("image", "gpu", "hardware")
"""Checks whose node-less verdicts judge the machine the report ran on (hardware: --hardware=auto's detection);
recipe verdicts judge the job and node-less cluster verdicts the whole cluster: neither is about one node."""
LEGACY_MACHINE = "this-machine"
"""Verdict.node of the machine's own GPU checks in reports written before they carried its host name."""
REASON_MAX = 200
SCONTROL_TIMEOUT_S = 20.0
EXIT_OK, EXIT_DRAIN = 0, 1


def quick_checks() -> tuple[Check, ...]:
    """Every check that needs neither a cluster nor GPU work: the image checks and local GPU health."""
    return tuple(c for c in all_checks() if c.area == "image" or c.id in QUICK_GPU_CHECKS)


def run_tier(checks: Sequence[Check], inputs: Inputs, budget_s: float,
             clock: Callable[[], float] = time.monotonic) -> list[Verdict]:
    """Every check at once, each in a daemon thread, against one deadline: the tier takes as long as its slowest
    check, not their sum. A check still running at the deadline is UNKNOWN naming the budget (its thread is left
    behind; the process exits without it); one that hangs costs the others nothing. No budget: none starts."""
    deadline = clock() + budget_s
    boxes: list[list[list[Verdict]]] = [[] for _ in checks]
    workers = []
    if budget_s > 0:
        for check, box in zip(checks, boxes, strict=True):
            worker = threading.Thread(target=lambda c=check, b=box: b.append(gate.run_safely(c, inputs)), daemon=True)
            worker.start()
            workers.append(worker)
    for worker in workers:
        worker.join(max(deadline - clock(), 0.0))
    out: list[Verdict] = []
    for check, box in zip(checks, boxes, strict=True):
        if box:
            out.extend(box[0])
        else:
            out.append(Verdict(check_id=check.id, status=Status.UNKNOWN,
                               summary=f"not judged within the {budget_s:g} s budget of the Slurm tier"))
    return out


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    exit_code: int
    """What the prolog / epilog exits with."""
    lines: tuple[str, ...]
    """What to say on stderr (slurmd logs it)."""
    drain_argv: tuple[str, ...] = ()
    """The scontrol command that was run; () when the node stays up."""


def drain_reason(failed: Sequence[Verdict]) -> str:
    """One line for `scontrol ... reason=`: the failing checks, the first one's summary, bounded."""
    first = failed[0]
    where = f" [{first.node}]" if first.node else ""
    text = f"rlcheck: {', '.join(dict.fromkeys(v.check_id for v in failed))} FAIL: {first.summary}{where}"
    text = " ".join(text.replace('"', "'").split())  # one line, no quote that would end the argument early
    return text if len(text) <= REASON_MAX else text[:REASON_MAX - 3] + "..."


def act(verdicts: Sequence[Verdict], phase: str, nodename: str | None, scontrol: str = "scontrol",
        runner: Callable[..., subproc.Completed] = subproc.run) -> Outcome:
    """What the prolog / epilog does with the tier's verdicts: drain on FAIL, say UNKNOWN, exit as Slurm expects."""
    if phase not in PHASES:
        raise ValueError(f"phase={phase!r}: one of {', '.join(PHASES)}")
    lines = [v.render().splitlines()[0] for v in verdicts if v.status in (Status.FAIL, Status.UNKNOWN, Status.WARN)]
    failed = [v for v in verdicts if v.status is Status.FAIL]
    if not failed:
        judged = sum(v.status is not Status.UNKNOWN for v in verdicts)
        return Outcome(exit_code=EXIT_OK, lines=(*lines, f"rlcheck slurm {phase}: no FAIL ({judged} of "
                                                          f"{len(verdicts)} verdict(s) judged): node stays up"))
    reason = drain_reason(failed)
    if not nodename:
        return Outcome(exit_code=EXIT_DRAIN, lines=(*lines, f"rlcheck slurm {phase}: {reason}; cannot drain: "
                                                            "SLURMD_NODENAME is not set, exiting 1 so Slurm drains"))
    argv = (scontrol, "update", f"nodename={nodename}", "state=drain", f"reason={reason}")
    done = runner(argv, timeout_s=SCONTROL_TIMEOUT_S)
    if done.timed_out or done.returncode != 0:
        why = "timed out" if done.timed_out else f"exited {done.returncode}: {done.tail(3)}"
        return Outcome(exit_code=EXIT_DRAIN, drain_argv=argv,
                       lines=(*lines, f"rlcheck slurm {phase}: {reason}; scontrol {why}; exiting 1 so Slurm drains"))
    code = EXIT_DRAIN if phase == "prolog" else EXIT_OK
    return Outcome(exit_code=code, drain_argv=argv, lines=(*lines, f"rlcheck slurm {phase}: drained {nodename}: "
                                                                   f"{reason}"))


def verdicts_from_report(text: str, source: str) -> list[Verdict]:
    """The blocking verdicts of a recorded report.json (e.g. the last preflight of this node), to act on."""
    try:
        doc = json.loads(text)
        rows = [r for r in doc["verdicts"] if r.get("blocking")]
        keep = {f.name for f in dataclasses.fields(Verdict)}
        return [Verdict.from_dict({k: v for k, v in r.items() if k in keep}) for r in rows]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{source} is not an rlcheck report.json (a 'verdicts' list of verdicts): {exc}") from exc


def _short(name: str) -> str:
    return name.split("#", 1)[0].split(".", 1)[0].lower()


def same_host(name: str, names: Sequence[str]) -> bool:
    """A report's node name (a host name, maybe fully qualified, maybe with '#<node id>' where two nodes share it)
    names one of this node's names."""
    return bool(name) and _short(name) in {_short(n) for n in names if n}


def own_verdicts(text: str, source: str, names: Sequence[str]) -> list[Verdict]:
    """The blocking verdicts of a recorded report.json that are about this node (names: its host and scheduler
    names): per-node verdicts naming it, and the machine checks of a report that ran on it. Another node's verdicts,
    the job's (recipe) and the cluster's as a whole never act on this node."""
    verdicts = verdicts_from_report(text, source)
    machine = json.loads(text).get("machine")
    ran_here = isinstance(machine, dict) and same_host(str(machine.get("hostname") or ""), names)
    out = []
    for v in verdicts:
        if v.node and v.node != LEGACY_MACHINE:
            if same_host(v.node, names):
                out.append(v)
        elif ran_here and v.check_id.split("_", 1)[0] in MACHINE_AREAS:
            out.append(v)
    return out


def judge_here(hardware_name: str, recipe_id: str, budget_s: float) -> list[Verdict]:
    """The quick tier on this machine for --hardware NAME|auto|none (auto detects within a third of the budget,
    at most 10 s); ValueError for an unknown name. Shared by `rlcheck slurm` and `rlcheck k8s`."""
    from rlcheck import hardware
    from rlcheck.probes.node import gpus

    profiles = hardware.load_profiles()
    if hardware_name not in (*profiles, "auto", "none"):
        raise ValueError(f"--hardware={hardware_name!r}: one of {', '.join(profiles)}, auto, none")
    profile = (gpus.detect(timeout_s=min(10.0, budget_s / 3)).profile if hardware_name == "auto"
               else profiles.get(hardware_name))
    return judge_node(profile, recipe_id, budget_s, declared=hardware_name not in ("auto", "none"))


def judge_node(profile: HardwareProfile | None, recipe_id: str, budget_s: float, *,
               declared: bool = False) -> list[Verdict]:
    """The quick tier; declared: the profile was named (--hardware NAME), so this node is held to it."""
    inputs = dataclasses.replace(gate.inputs_for(recipe_id, profile), declared=declared)
    return run_tier(quick_checks(), inputs, budget_s)
