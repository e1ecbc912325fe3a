"""The checkpoint save with training offloaded as a rule table (rlcheck/probes/recipe/checkpoint_save.py): which flags
leave offload_train on in SLIME's order, what the installed actor's source shows, the release judged without one, and
the collector's search for the source, each with the whole verdict (summary, details, remedy)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from rlcheck import catalog
from rlcheck.framework.detect import Installed
from rlcheck.probes.recipe import checkpoint_save as save
from rlcheck.verdict import Status

REMEDY = catalog.get("checkpoint-save-failed").remedy
ACTOR = "site/slime/backends/megatron_utils/actor.py"
SAVING = ["--save", "/ckpt", "--save-interval", "20"]
PAUSES = """
class MegatronTrainRayActor(TrainRayActor):
    def train(self, rollout_id):
        self.wake_up()
        self.sleep()

    def save_model(self, rollout_id):
        reload_process_groups()
"""
WAKES = PAUSES.replace("        reload_process_groups()", "        self.wake_up()\n        self.sleep()")


@pytest.mark.parametrize(("argv", "offloaded", "why"), [
    ([], False, "no offload flag"),
    (["--offload-train"], True, "--offload-train"),
    (["--no-offload-train"], False, "no offload flag"),
    (["--offload-train", "--no-offload-train"], False, "no offload flag"),  # argparse keeps the last
    (["--no-offload-train", "--offload-train"], True, "--offload-train"),
    (["--no-offload-train", "--offload-train", "--no-offload-train"], False, "no offload flag"),
    (["--offload"], True, "--offload"),
    (["--offload", "--no-offload-train"], True, "--offload"),  # --offload sets it after the parse
    (["--colocate"], True, "--colocate (offload_train defaults on)"),
    (["--colocate", "--offload-train"], True, "--colocate (offload_train defaults on)"),
    (["--colocate", "--no-offload-train"], False, "--colocate --no-offload-train"),
    (["--colocate", "--offload-train", "--no-offload-train"], False, "--colocate --no-offload-train"),
    (["--colocate", "--no-offload-train", "--offload-train"], True, "--colocate (offload_train defaults on)"),
    (["--colocate", "--offload", "--no-offload-train"], True, "--offload"),
    (["--colocate", "--release-train"], False, "--colocate --release-train (train actors are released, not "
                                                "offloaded)"),
    (["--colocate", "--release-train", "--offload"], False, "--colocate --release-train (train actors are released, "
                                                             "not offloaded)"),
    (["--release-train", "--offload"], True, "--offload"),  # released only when colocated
    (["--release-train"], False, "no offload flag"),
    # --debug-rollout-only clears what --offload and --colocate set (validate_args, every release)
    (["--debug-rollout-only"], False, "--debug-rollout-only"),
    (["--offload", "--debug-rollout-only"], False, "--debug-rollout-only"),
    (["--colocate", "--offload-train", "--debug-rollout-only"], False, "--debug-rollout-only"),
    # the critic forces offload_train only since THUDM/slime#1882, which landed after the fix (#1888)
    (["--advantage-estimator", "ppo"], False, "no offload flag"),
    (["--advantage-estimator=ppo", "--colocate"], True, "--colocate (offload_train defaults on)"),
    # near misses: a flag's value or a longer flag is no offload flag
    (["--offloads"], False, "no offload flag"),
    (["--exp-name", "--offload-train-run"], False, "no offload flag"),
    (["--colocated"], False, "no offload flag"),
])
def test_rules_table_checkpoint_save_offload_train(argv, offloaded, why):
    assert save.offloads_training(argv) == (offloaded, why)


@pytest.mark.parametrize(("source", "paused"), [
    (PAUSES, True),
    (WAKES, False),
    (PAUSES.replace("        self.sleep()\n", ""), False),  # train() never pauses it (before #1856)
    (PAUSES.replace("self.sleep()", "sleep(self)"), False),  # only a call on self counts
    (PAUSES.replace("self.sleep()", "self.model.sleep()"), False),
    (PAUSES.replace("reload_process_groups()", "other.wake_up()"), True),  # only self's wake_up() resumes it
    (PAUSES.replace("    def train(", "    async def train("), True),
    (PAUSES.replace("    def save_model(", "    async def save_model("), True),
    # the methods of one class: a train() in one and a save_model() in another is no train actor
    (PAUSES.replace("    def save_model(", "class Other:\n    def save_model("), None),
    (PAUSES.replace("def train(", "def train_one("), None),
    (PAUSES.replace("def save_model(", "def save(", 1), None),
    ("def train(self):\n    self.sleep()\n\ndef save_model(self):\n    pass\n", None),  # functions, no class
    ("class A:\n    train = 1\n    save_model = 2\n", None),
    # the first class with both methods decides
    ("class Old:\n    def train(self):\n        pass\n    def save_model(self):\n        pass\n" + PAUSES, False),
    (PAUSES + "class New:\n    def train(self):\n        pass\n    def save_model(self):\n        pass\n", True),
    ("", None),
])
def test_rules_table_checkpoint_save_paused_model(source, paused):
    assert save.saves_paused_model(source) is paused


def _obs(paused: bool | None = True, source: str | None = ACTOR,
         framework: Installed | None = None) -> save.SaveObservation:
    return save.SaveObservation(source=source, paused_save=paused, framework=framework or Installed(framework=None))


def _release(framework: str | None, version: str | None = None, *, main: bool = False) -> save.SaveObservation:
    return _obs(None, None, Installed(framework=framework, version=version, main=main))


WHAT = "--save-interval 20 with training offloaded (--colocate (offload_train defaults on))"
WINDOW = ("SLIME main between #1856 and #1888 crashes at the first save; judged where SLIME is installed or with "
          "--framework")
VERDICTS = [
    # no periodic save: nothing to judge
    (_obs(), ["--colocate"], Status.SKIP, "run-a: no --save with --save-interval: SLIME's loop saves no checkpoint",
     ""),
    (_obs(), ["--colocate", "--save", "/ckpt"], Status.SKIP,
     "run-a: no --save with --save-interval: SLIME's loop saves no checkpoint", ""),
    (_obs(), ["--colocate", "--save-interval", "20"], Status.SKIP,
     "run-a: no --save with --save-interval: SLIME's loop saves no checkpoint", ""),
    (_obs(), ["--colocate", "--save=/ckpt", "--save-interval=5"], Status.FAIL,
     f"run-a: --save-interval 5 with training offloaded (--colocate (offload_train defaults on)): {ACTOR} pauses the "
     "model at the end of train() and save_model() never wakes it: the first save crashes (THUDM/slime#1886, fixed "
     "by #1888)", REMEDY),
    # not offloaded: the save runs on the live model, whatever the source
    (_obs(), SAVING, Status.PASS, "run-a: training is not offloaded (no offload flag): the save runs on the live "
                                  "model", ""),
    (_obs(), ["--colocate", "--no-offload-train", *SAVING], Status.PASS,
     "run-a: training is not offloaded (--colocate --no-offload-train): the save runs on the live model", ""),
    (_release("slime", "0.2.4"), ["--offload", "--debug-rollout-only", *SAVING], Status.PASS,
     "run-a: training is not offloaded (--debug-rollout-only): the save runs on the live model", ""),
    # the installed source decides
    (_obs(), ["--colocate", *SAVING], Status.FAIL,
     f"run-a: {WHAT}: {ACTOR} pauses the model at the end of train() and save_model() never wakes it: the first "
     "save crashes (THUDM/slime#1886, fixed by #1888)", REMEDY),
    (_obs(False), ["--colocate", *SAVING], Status.PASS,
     f"run-a: {WHAT}: {ACTOR} wakes the model for the save (or does not pause it)", ""),
    (_obs(None), ["--colocate", *SAVING], Status.UNKNOWN,
     f"run-a: {ACTOR} has no train actor with train() and save_model(): cannot tell whether the save resumes the "
     "offloaded model", ""),
    # the source wins over the release
    (_obs(True, framework=Installed(framework="slime", version="0.3.1")), ["--offload", *SAVING], Status.FAIL,
     f"run-a: --save-interval 20 with training offloaded (--offload): {ACTOR} pauses the model at the end of train() "
     "and save_model() never wakes it: the first save crashes (THUDM/slime#1886, fixed by #1888)", REMEDY),
    (_obs(False, framework=Installed(framework="slime", version="0.2.4")), ["--colocate", *SAVING], Status.PASS,
     f"run-a: {WHAT}: {ACTOR} wakes the model for the save (or does not pause it)", ""),
    # no source here: the release (SLIME's own; both sides of v0.2.4)
    (_release("slime", "0.2.4"), ["--colocate", *SAVING], Status.WARN,
     f"run-a: {WHAT} on SLIME 0.2.4: its save_model segfaults in cudaMemcpyAsync with --colocate + offload "
     "(THUDM/slime#1893; v0.2.3 worked)", REMEDY),
    (_release("slime", "0.2.4.0"), ["--colocate", *SAVING], Status.WARN,
     f"run-a: {WHAT} on SLIME 0.2.4.0: its save_model segfaults in cudaMemcpyAsync with --colocate + offload "
     "(THUDM/slime#1893; v0.2.3 worked)", REMEDY),
    (_release("slime", "0.2.3"), ["--colocate", *SAVING], Status.PASS,
     f"run-a: {WHAT} on SLIME 0.2.3: no release saves a paused model (#1856 and its fix #1888 both landed in "
     "v0.3.0)", ""),
    (_release("slime", "0.2.5"), ["--colocate", *SAVING], Status.PASS,
     f"run-a: {WHAT} on SLIME 0.2.5: no release saves a paused model (#1856 and its fix #1888 both landed in "
     "v0.3.0)", ""),
    (_release("slime", "0.2.4.post1"), ["--colocate", *SAVING], Status.PASS,
     f"run-a: {WHAT} on SLIME 0.2.4.post1: no release saves a paused model (#1856 and its fix #1888 both landed in "
     "v0.3.0)", ""),
    (_release("slime", "0.3.0"), ["--offload-train", *SAVING], Status.PASS,
     "run-a: --save-interval 20 with training offloaded (--offload-train) on SLIME 0.3.0: no release saves a paused "
     "model (#1856 and its fix #1888 both landed in v0.3.0)", ""),
    (_release("slime", "next"), ["--colocate", *SAVING], Status.UNKNOWN,
     "run-a: SLIME release 'next' not a version", ""),
    (_release("slime", main=True), ["--colocate", *SAVING], Status.SKIP,
     f"run-a: {WHAT}; no SLIME/Miles source installed here and no SLIME release known (slime main): {WINDOW}", ""),
    (_release("slime"), ["--colocate", *SAVING], Status.SKIP,
     f"run-a: {WHAT}; no SLIME/Miles source installed here and no SLIME release known (slime of unknown release): "
     f"{WINDOW}", ""),
    (_release("miles", "0.2.4"), ["--colocate", *SAVING], Status.SKIP,
     f"run-a: {WHAT}; no SLIME/Miles source installed here and no SLIME release known (miles 0.2.4): {WINDOW}", ""),
    (_release(None), ["--colocate", *SAVING], Status.SKIP,
     f"run-a: {WHAT}; no SLIME/Miles source installed here and no SLIME release known (no framework of unknown "
     f"release): {WINDOW}", ""),
]


@pytest.mark.parametrize(("obs", "argv", "status", "summary", "remedy"), VERDICTS)
def test_rules_table_checkpoint_save_verdicts(obs, argv, status, summary, remedy):
    verdict = save.evaluate_checkpoint_save(obs, argv, "run-a")
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (status, summary, "", remedy)
    assert verdict.failure_id == "checkpoint-save-failed"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder first on the import path, which holds no other slime or miles: only what a test writes there is
    installed."""
    folder = tmp_path / "site"
    folder.mkdir()
    others = [p for p in sys.path if not any((Path(p) / top).exists() for top in ("slime", "miles", "slime.py"))]
    monkeypatch.setattr(sys, "path", [str(folder), *others])
    for top in ("slime", "miles"):
        monkeypatch.delitem(sys.modules, top, raising=False)
    importlib.invalidate_caches()
    return folder


def _install(site: Path, top: str, actor: str | None, *, package: bool = True) -> Path:
    folder = site / top
    folder.mkdir()
    if package:
        (folder / "__init__.py").write_text("")
    path = folder / "backends" / "megatron_utils" / "actor.py"
    if actor is not None:
        path.parent.mkdir(parents=True)
        path.write_text(actor, encoding="utf-8")
    return path


FRAMEWORK = Installed(framework="slime", version="0.3.1", source="package metadata")


def test_rules_table_checkpoint_save_collect_reads_slime_first(site):
    slime = _install(site, "slime", PAUSES)
    _install(site, "miles", WAKES)
    assert save.collect_save(FRAMEWORK) == save.SaveObservation(source=str(slime), paused_save=True,
                                                                framework=FRAMEWORK)


def test_rules_table_checkpoint_save_collect_reads_miles_when_slime_has_no_actor(site):
    _install(site, "slime", None)
    miles = _install(site, "miles", "# Miles' actor, UTF-8: \u00e9\u4e2d\n" + WAKES)
    assert save.collect_save(FRAMEWORK) == save.SaveObservation(source=str(miles), paused_save=False,
                                                                framework=FRAMEWORK)


def test_rules_table_checkpoint_save_collect_reads_a_namespace_package(site):
    slime = _install(site, "slime", "class A:\n    pass\n", package=False)
    assert save.collect_save(FRAMEWORK) == save.SaveObservation(source=str(slime), paused_save=None,
                                                                framework=FRAMEWORK)


def test_rules_table_checkpoint_save_collect_without_either_source(site):
    _install(site, "slime", None)
    (site / "miles.py").write_text("")  # a module, not a package: no actor below it
    assert save.collect_save(FRAMEWORK) == save.SaveObservation(source=None, framework=FRAMEWORK)
    assert save.collect_save(Installed(framework=None)) == save.SaveObservation(source=None)
