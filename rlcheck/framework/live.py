"""The installed SLIME or Miles parses the job's argv itself: its own parse_args, Megatron's validate_args included,
in a child process whose GPU probes answer with the worker's compute capability from the hardware profile.

Only where the framework is importable (the training image); elsewhere recipe_framework_args judges the committed
schema. A lenient parser that accepts the argv still drops what it does not know: that is the schema's to say.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from collections.abc import Callable

from rlcheck import catalog
from rlcheck.process import subproc
from rlcheck.verdict import Status, Verdict

MARK = "RLCHECK_LIVE "
REJECTIONS = ("AssertionError", "ValueError")
"""How SLIME's and Megatron's validate_args refuse a combination; anything else (a checkpoint not on this machine)
says nothing about the argv: UNKNOWN naming it."""
# The child answers torch's and Megatron's GPU probes from the profile: the driver of a real launch is GPU-less,
# and preflight must never touch a GPU to judge an argv.
CHILD = """
import json, sys, traceback
spec = json.loads(sys.argv[1])
cap = tuple(spec["capability"])
import torch
torch.cuda.get_device_capability = lambda device=None: cap
try:
    import megatron.training.arguments as margs
    margs.get_device_arch_version = lambda: cap[0]
except ImportError:
    pass
sys.argv = ["train.py", *spec["argv"]]
out = {"exit_code": 0, "error": ""}
try:
    __import__(spec["module"], fromlist=["parse_args"]).parse_args()
except SystemExit as exc:
    out["exit_code"] = exc.code if isinstance(exc.code, int) else 1
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
print("RLCHECK_LIVE " + json.dumps(out))
"""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LiveParse:
    framework: str | None
    """The framework whose parser ran; None when neither SLIME nor Miles is importable here."""
    exit_code: int | None = None
    """parse_args' SystemExit code (0: it returned); None when it did not get that far."""
    message: str = ""
    """The parser's own words on stderr (its last line: argparse's `error: ...`)."""
    error: str = ""
    """Why the parse could not be judged: the child did not run, or stopped on something other than the argv."""


def importable(framework: str | None) -> bool:
    return framework is not None and importlib.util.find_spec(framework) is not None


def capability_of(sm: int) -> tuple[int, int]:
    """A profile's sm (90, 100, 103) as torch's (major, minor)."""
    return sm // 10, sm % 10


def collect_live(framework: str | None, argv: list[str], capability: tuple[int, int] | None,
                 timeout_s: float = 300.0, run: Callable[..., subproc.Completed] = subproc.run) -> LiveParse:
    """The framework's own parse of argv in a child (run: how the child is run; a test passes a recording)."""
    if not importable(framework):
        return LiveParse(framework=None)
    if capability is None:
        return LiveParse(framework=framework, error="no hardware profile (--hardware): the GPU probes have no answer")
    spec = json.dumps({"capability": capability, "argv": argv, "module": f"{framework}.utils.arguments"})
    done = run([sys.executable, "-c", CHILD, spec], timeout_s=timeout_s)
    line = next((x for x in done.stdout.splitlines() if x.startswith(MARK)), None)
    if line is None:
        return LiveParse(framework=framework, error=f"the parse did not finish ({done.why()}): {done.tail(1)}")
    data = json.loads(line.removeprefix(MARK))
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return LiveParse(framework=framework, exit_code=data["exit_code"], message=last, error=data["error"])


def evaluate_live(live: LiveParse) -> Verdict:
    base = {"failure_id": "framework-arg-rejected"}
    if live.framework is None:
        return Verdict(**base, status=Status.SKIP, summary="neither SLIME nor Miles is importable here: "
                                                           "recipe_framework_args judged the committed schema")
    if live.error.startswith(REJECTIONS):
        return Verdict(**base, status=Status.FAIL, remedy=catalog.get("framework-arg-rejected").remedy,
                       summary=f"{live.framework}'s own argument validation rejects the argv: {live.error}")
    if live.error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{live.framework}'s parse_args could not judge the "
                                                              f"argv here: {live.error}")
    if live.exit_code:
        return Verdict(**base, status=Status.FAIL, remedy=catalog.get("framework-arg-rejected").remedy,
                       summary=f"{live.framework}'s own parse_args exits {live.exit_code}: {live.message}")
    return Verdict(**base, status=Status.PASS, summary=f"{live.framework}'s own parse_args and validate_args accept "
                                                       "the argv (silent drops: recipe_framework_args)")
