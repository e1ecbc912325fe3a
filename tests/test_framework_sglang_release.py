"""Miles' --sglang-* options, judged as Miles' image will: SGLang 0.5.16's own parser (the release its Dockerfile
builds on), and the options only its unreleased sglang-miles branch may add named as not judged, never passed and
never failed, while a removed, abbreviated, skipped or misspelled option still FAILs.

Rule table of rlcheck/framework/argv.py's _unreleased / _misspells and schema.py's `unreleased` entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck.framework import argv as fa
from rlcheck.framework.schema import DATA_DIR, Unreleased, load
from rlcheck.probes.recipe import sglang_flags
from rlcheck.verdict import Status

ROOT = Path(__file__).resolve().parents[1]
MILES = load("miles-main")
SLIME = load("slime-v0.2.4")
SIDE = ROOT / ".sidecar" / "sglang-0.5.16"
IB = "--sglang-remote-instance-weight-loader-ib-device"  # Miles 31f1ca96 run-kimi-k2-64node-profile.sh passes it
BRANCH = ("the miles image builds SGLang's sglang-miles branch over the v0.5.16 release (Miles 31f1ca96 "
          "docker/Dockerfile: SGLANG_BRANCH, SGLANG_IMAGE_TAG), which may add it and which rlcheck cannot read: "
          "not judged")
REJECTED = "no miles main parser has it: rejected: unrecognized arguments"


def _component(name: str) -> dict:
    return json.loads((DATA_DIR / "components" / f"{name}.json").read_text(encoding="utf-8"))


def _judge(*argv: str) -> list[tuple[str, str, str]]:
    return [(f.flag, f.problem, f.text) for f in fa.judge(list(argv), MILES)[0]]


# --- the schema: which release, which branch -----------------------------------------------------------------------

def test_miles_judges_sglang_options_by_0_5_16_and_names_its_branch_for_both_prefixes():
    raw = json.loads((DATA_DIR / "miles-main.json").read_text(encoding="utf-8"))
    sglang = [(c["prefix"], c["name"]) for c in raw["components"] if c["name"].startswith("sglang-")]
    assert sglang == [("--sglang-", "sglang-0.5.16"), ("--eval-sglang-", "sglang-0.5.16")]
    assert [(u.prefix, u.component) for u in MILES.unreleased] == [("--sglang-", "sglang-0.5.16"),
                                                                   ("--eval-sglang-", "sglang-0.5.16")]
    assert SLIME.unreleased == () and all(c["name"] == "sglang-0.5.12.post1" for c in json.loads(
        (DATA_DIR / "slime-v0.2.4.json").read_text(encoding="utf-8"))["components"] if c["name"].startswith("sglang-"))


def test_removed_flags_are_the_older_releases_minus_the_base_and_the_dropped_list_under_each_prefix():
    older = {f for o in _component("sglang-0.5.12.post1")["options"] for f in o["flags"]}
    base = {f for o in _component("sglang-0.5.16")["options"] for f in o["flags"]}
    for branch in MILES.unreleased:
        want = {branch.prefix + f[2:] for f in older - base} | {branch.prefix + "enable-ep-moe",
                                                                branch.prefix + "enable-deepep-moe"}
        assert set(branch.removed) == want
        assert branch.release == frozenset(branch.prefix + f[2:] for f in base)
    first = MILES.unreleased[0]
    assert first.removed["--sglang-enable-piecewise-cuda-graph"] == "sglang-0.5.12.post1, not sglang-0.5.16"
    assert first.removed["--sglang-enable-ep-moe"] == "SGLang before 0.5.12 (catalogue: sglang-dead-flag)"


def test_the_dropped_list_holds_every_flag_the_sglang_probe_knows_a_replacement_for():
    dropped = {f for u in json.loads((DATA_DIR / "miles-main.json").read_text(encoding="utf-8"))["unreleased"]
               for f in u["dropped"]["flags"]}
    assert {f"--{f}" for f in sglang_flags.REPLACEMENTS} <= dropped


# --- the rule: each way an option the release lacks is judged ------------------------------------------------------

@pytest.mark.parametrize(("argv", "want"), [
    # only the branch may have it: not judged
    ((IB, '{"0":"ibp0"}'), [(IB, "unreleased", f"{IB}: not an option of sglang-0.5.16; {BRANCH}")]),
    (("--eval-sglang-made-up-knob", "1"),
     [("--eval-sglang-made-up-knob", "unreleased", f"--eval-sglang-made-up-knob: not an option of sglang-0.5.16; "
                                                   f"{BRANCH}")]),
    # removed between the releases the schema names
    (("--sglang-enable-piecewise-cuda-graph",),
     [("--sglang-enable-piecewise-cuda-graph", "unknown",
       f"--sglang-enable-piecewise-cuda-graph: {REJECTED} (the package removed it: sglang-0.5.12.post1, not "
       "sglang-0.5.16)")]),
    # removed before them (the catalogue's dead flags), under the eval prefix too
    (("--eval-sglang-enable-deepep-moe",),
     [("--eval-sglang-enable-deepep-moe", "unknown",
       f"--eval-sglang-enable-deepep-moe: {REJECTED} (the package removed it: SGLang before 0.5.12 (catalogue: "
       "sglang-dead-flag))")]),
    # the release has it, Miles leaves it out (its skip list): Miles sets it itself
    (("--sglang-port", "3000"),
     [("--sglang-port", "unknown", f"--sglang-port: {REJECTED} (sglang-0.5.16 has it; miles sets it itself)")]),
    # a prefix of an option: Miles' parser takes whole names only
    (("--sglang-mem-fraction", "0.5"),
     [("--sglang-mem-fraction", "unknown", f"--sglang-mem-fraction: {REJECTED} (abbreviates "
                                           "--sglang-mem-fraction-static: this parser takes whole names only)")]),
    # two letters from an option 0.5.16 has (one dropped, one changed): a misspelling
    (("--sglang-mem-fracton-statix", "0.5"),
     [("--sglang-mem-fracton-statix", "unknown", f"--sglang-mem-fracton-statix: {REJECTED} (a misspelling of "
                                                 "--sglang-mem-fraction-static?)")]),
    # three letters from it: no misspelling, the branch may add it
    (("--sglang-mem-fracton-statixx", "0.5"),
     [("--sglang-mem-fracton-statixx", "unreleased", f"--sglang-mem-fracton-statixx: not an option of "
                                                     f"sglang-0.5.16; {BRANCH}")]),
    # not under a branch prefix: unknown as before
    (("--made-up-knob", "1"), [("--made-up-knob", "unknown", f"--made-up-knob: {REJECTED}")]),
    # an option 0.5.16 added and 0.5.12.post1 lacked is simply an option
    (("--sglang-cuda-graph-bs-decode", "1", "2"), []),
])
def test_an_option_the_release_lacks(argv, want):
    assert _judge(*argv) == want


def test_slime_has_no_branch_so_the_same_option_stays_an_unknown_one():
    found = fa.judge([IB, "x"], SLIME)[0]
    assert [(f.flag, f.problem) for f in found] == [(IB, "unknown")]


@pytest.mark.parametrize(("name", "flag", "within"), [
    ("--abcdef", "--abcdef", True),
    ("--abcdefgh", "--abcdef", True),    # two added
    ("--abcdefghi", "--abcdef", False),  # three added: the lengths alone say so
    ("--abcd", "--abcdef", True),        # two dropped
    ("--abc", "--abcdef", False),
    ("--xycdez", "--abcdef", False),     # three changed, same length
    ("--xbcdez", "--abcdef", True),      # two changed, at both ends
    ("--xbcdef", "--abcdef", True),      # one changed
    ("--xbcdeg", "--abcdef", True),      # two changed
    ("--bacdef", "--abcdef", True),      # a swap is two changes
    ("--abcxyzdef", "--abcdef", False),  # three inserted in the middle
])
def test_misspelling_is_at_most_two_edits(name, flag, within):
    assert fa._misspells(name, flag) is within
    assert fa._misspells(flag, name) is within


def test_misspells_bound_is_two():
    assert fa.MISSPELLED == 2


# --- the verdict ---------------------------------------------------------------------------------------------------

def test_only_branch_options_left_warns_naming_them_and_who_may_add_them():
    v = fa.evaluate([IB, "x", "--sglang-mem-fraction-static", "0.7"], MILES, "test")
    assert v.status is Status.WARN and v.failure_id == "framework-arg-rejected"
    assert v.summary == ("2 option(s) read by miles main (schema miles-main, test); 1 not judged (an unreleased "
                         f"branch of the package may add them): {IB}")
    assert v.details == f"{IB}: not an option of sglang-0.5.16; {BRANCH}"


def test_branch_and_custom_generate_options_name_both_reasons():
    v = fa.evaluate([IB, "x", "--custom-generate-function-path", "my.gen", "--my-gen-knob", "1"], MILES, "test")
    assert v.status is Status.WARN
    assert v.summary.endswith("2 not judged (an unreleased branch of the package or a custom generate function may "
                              f"add them): {IB}, --my-gen-knob")


def test_a_blocking_problem_beside_a_branch_option_fails_and_keeps_the_note():
    v = fa.evaluate([IB, "x", "--sglang-enable-ep-moe"], MILES, "test")
    assert v.status is Status.FAIL and v.failure_id == "sglang-dead-flag"
    assert v.summary.startswith("1 problem(s) in the argv as miles main")
    assert v.details.splitlines() == [
        f"--sglang-enable-ep-moe: {REJECTED} (the package removed it: SGLang before 0.5.12 (catalogue: "
        "sglang-dead-flag))",
        f"{IB}: not an option of sglang-0.5.16; {BRANCH}"]


def test_unreleased_entries_are_frozen_facts():
    assert all(isinstance(u, Unreleased) for u in MILES.unreleased)


# --- agreement with the real package -------------------------------------------------------------------------------

def test_sglang_0_5_16_component_is_that_releases_own_parser():
    """The committed component against SGLang 0.5.16's ServerArgs.add_cli_args, run from its side directory (made by
    ./run setup: scripts/setup-sidecars.sh)."""
    assert (SIDE / "sglang-0.5.16.dist-info").is_dir(), f"{SIDE} is missing: run ./run setup"
    env = {**os.environ, "PYTHONPATH": str(SIDE), "PYTHONHASHSEED": "0"}
    out = subprocess.run([sys.executable, "-m", "rlcheck.framework.schema", "sglang"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    live, committed = json.loads(out.stdout), _component("sglang-0.5.16")

    def facts(doc):  # choices as a set: some come from a set, whose order is the hash seed's
        return sorted((o["flags"], o["kind"], o["nargs"], o["dest"], sorted(map(str, o["choices"] or [])),
                       repr(o["default"]), o.get("explicit_dest", False)) for o in doc["options"])

    assert live["name"] == committed["name"] == "sglang-0.5.16"
    assert facts(live) == facts(committed)


MILES_MIRROR = (Path("/work/.mirror/radixark+miles/repo"), "31f1ca961a94cb860cec3b2dea34ec332bfa8f76")


def test_miles_dockerfile_builds_on_that_release_and_a_branch():
    """Miles 31f1ca96's docker/Dockerfile: SGLANG_IMAGE_TAG v0.5.16 and SGLANG_BRANCH sglang-miles, where the pinned
    tree is on this machine."""
    repo, commit = MILES_MIRROR
    if not (repo / "HEAD").is_file():
        pytest.skip("the pinned Miles tree is not on this machine")
    text = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:docker/Dockerfile"], capture_output=True,
                          text=True, check=True).stdout
    assert "ARG SGLANG_IMAGE_TAG=v0.5.16\n" in text and "ARG SGLANG_BRANCH=sglang-miles\n" in text
