"""A periodic checkpoint save with training offloaded (catalogue: checkpoint-save-failed).

SLIME saves in train.py when --save-interval is set (should_run_periodic_action, also at the final step), through
MegatronTrainRayActor.save_model. Training is offloaded with --offload / --offload-train, and by default with
--colocate (slime/utils/arguments.py: colocate sets offload_train unless --no-offload-train or --release-train;
--debug-rollout-only clears it). THUDM/slime#1856 (75af5297c, 2026-04-24) made train() end in self.sleep(), which pauses
the model's memory; until #1888 (16924b697, 2026-05-06) save_model only reloaded the process groups, so Megatron's
dist-checkpoint metadata gather ran on paused memory and the first save died (CUDA "invalid argument",
THUDM/slime#1886). The release between (v0.3.0 has both) is none, so a source checkout of main in that window is
what breaks; v0.2.4 has its own segfault in the same save with colocate + offload (THUDM/slime#1893, open).
The installed actor source is read with `ast`, never imported.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from rlcheck import catalog
from rlcheck.framework.argv import option
from rlcheck.framework.detect import Installed
from rlcheck.probes.node.packages import package_root
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "checkpoint-save-failed"
SOURCES = ("slime/backends/megatron_utils/actor.py", "miles/backends/megatron_utils/actor.py")
SEGFAULT_RELEASE = "0.2.4"
"""The SLIME release of THUDM/slime#1893 (a segfault in save_model with --colocate + offload; v0.2.3 worked)."""


def offloads_training(argv: Sequence[str]) -> tuple[bool, str]:
    """(whether SLIME's validate_args leaves offload_train on, which flag decides), in its order: --offload sets it,
    --debug-rollout-only then clears it, --colocate defaults it on. PPO's critic forces it only since
    THUDM/slime#1882, which landed after the fix #1888 (and after v0.2.4): where the save can crash it does not."""
    flags = [t for t in argv if t in ("--offload-train", "--no-offload-train")]
    explicit = {"--offload-train": True, "--no-offload-train": False}[flags[-1]] if flags else None
    if "--debug-rollout-only" in argv:
        return False, "--debug-rollout-only"
    if "--colocate" in argv and "--release-train" in argv:
        return False, "--colocate --release-train (train actors are released, not offloaded)"
    if "--offload" in argv:
        return True, "--offload"
    if "--colocate" in argv:
        if explicit is False:
            return False, "--colocate --no-offload-train"
        return True, "--colocate (offload_train defaults on)"
    return bool(explicit), "--offload-train" if explicit else "no offload flag"


def _self_calls(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {n.func.attr for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"}


def saves_paused_model(source: str) -> bool | None:
    """The train actor's train() ends in self.sleep() and its save_model() never calls self.wake_up() (the state
    between #1856 and #1888); None when no class has both methods."""
    for cls in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)):
        methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if "train" in methods and "save_model" in methods:
            return "sleep" in _self_calls(methods["train"]) and "wake_up" not in _self_calls(methods["save_model"])
    return None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class SaveObservation:
    source: str | None
    """The installed train actor's file, None when neither SLIME nor Miles is installed here."""
    paused_save: bool | None = None
    """saves_paused_model() of that file (None: the methods were not found)."""
    framework: Installed = dataclasses.field(default_factory=lambda: Installed(framework=None))
    """The judged framework and release (--framework, installed, or the job's own)."""


def collect_save(framework: Installed) -> SaveObservation:
    for rel in SOURCES:
        root = package_root(rel.split("/", 1)[0])
        if root and (root / rel).exists():
            text = (root / rel).read_text(encoding="utf-8")
            return SaveObservation(source=str(root / rel), paused_save=saves_paused_model(text), framework=framework)
    return SaveObservation(source=None, framework=framework)


def _by_release(obs: SaveObservation, name: str, what: str) -> Verdict:
    """Judged from the release when no source is installed here."""
    base = {"failure_id": FAILURE_ID}
    fw = obs.framework
    if fw.framework != "slime" or fw.version is None:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"{name}: {what}; no SLIME/Miles source installed here and no SLIME release known "
                               f"({fw.framework or 'no framework'} {fw.release}): SLIME main between #1856 and "
                               "#1888 crashes at the first save; judged where SLIME is installed or with --framework")
    try:
        release = Version(fw.version)
    except InvalidVersion:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{name}: SLIME release {fw.version!r} not a version")
    if release == Version(SEGFAULT_RELEASE):
        return Verdict(**base, status=Status.WARN, remedy=catalog.get(FAILURE_ID).remedy,
                       summary=f"{name}: {what} on SLIME {fw.version}: its save_model segfaults in cudaMemcpyAsync "
                               "with --colocate + offload (THUDM/slime#1893; v0.2.3 worked)")
    return Verdict(**base, status=Status.PASS,
                   summary=f"{name}: {what} on SLIME {fw.version}: no release saves a paused model (#1856 and its "
                           "fix #1888 both landed in v0.3.0)")


def evaluate_checkpoint_save(obs: SaveObservation, argv: Sequence[str], name: str) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    if option(argv, "--save") is None or option(argv, "--save-interval") is None:
        return Verdict(**base, status=Status.SKIP, summary=f"{name}: no --save with --save-interval: SLIME's loop "
                                                           "saves no checkpoint")
    offloaded, why = offloads_training(argv)
    what = f"--save-interval {option(argv, '--save-interval')} with training offloaded ({why})"
    if not offloaded:
        return Verdict(**base, status=Status.PASS,
                       summary=f"{name}: training is not offloaded ({why}): the save runs on the live model")
    if obs.source is None:
        return _by_release(obs, name, what)
    if obs.paused_save is None:
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"{name}: {obs.source} has no train actor with train() and save_model(): cannot tell "
                               "whether the save resumes the offloaded model")
    if obs.paused_save:
        return Verdict(**base, status=Status.FAIL, remedy=catalog.get(FAILURE_ID).remedy,
                       summary=f"{name}: {what}: {obs.source} pauses the model at the end of train() and save_model() "
                               "never wakes it: the first save crashes (THUDM/slime#1886, fixed by #1888)")
    return Verdict(**base, status=Status.PASS,
                   summary=f"{name}: {what}: {obs.source} wakes the model for the save (or does not pause it)")
