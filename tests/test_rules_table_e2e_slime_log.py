"""SLIME's log statements and the watcher's plan as tables, both sides of each rule: which phases a job's argv
brings (--kl-coef as argparse reads it: '0.00', '--kl-coef=0.05', the last one given), which step-0 bounds hold
(--use-rollout-logprobs, routing replay), which table judges which framework and release, --framework's spellings,
the deadlines' validation, and the version a log's file:line locations point to (rlcheck.e2e.slime_log, pure)."""

from __future__ import annotations

import math
import re

import pytest

from rlcheck.e2e import slime_log
from rlcheck.e2e.watch import Invariants

DEADLINES = slime_log.Deadlines(placement_s=1, startup_s=2, rollout_s=3, phase_s=4)


def names(argv: tuple[str, ...], version: str = "v0.2.4") -> list[str]:
    return [m.name for m in slime_log.plan(version, DEADLINES, argv)[0]]


@pytest.mark.parametrize(("argv", "ref"), [
    ((), False),
    (("--use-kl-loss",), True),
    (("--kl-coef", "0"), False), (("--kl-coef", "0.0"), False), (("--kl-coef", "0.00"), False),
    (("--kl-coef", "0e0"), False), (("--kl-coef", "-0"), False), (("--kl-coef", "-0.0"), False),
    (("--kl-coef", "0.01"), True), (("--kl-coef", "1e-4"), True), (("--kl-coef", "-0.01"), True),
    (("--kl-coef=0.05",), True), (("--kl-coef=0",), False), (("--kl-coef=0.000",), False),
    (("--kl-coef", "0.01", "--kl-coef", "0"), False),  # argparse keeps the last one given
    (("--kl-coef", "0", "--kl-coef=0.01"), True),
    (("--kl-coef=0.01", "--kl-coef", "0.0"), False),
    (("--kl-coef",), False),  # no value: argparse refuses it, no phase is waited for
    (("--kl-coef", "$KL"), False),
    (("--kl-coef", "0", "--use-kl-loss"), True),
    (("--kl-coefficient", "0.1"), False), (("--kl-coef-x=0.1",), False), (("--ref-kl-coef", "0.1"), False),
    (("--use-kl-loss-x",), False),
])
def test_rules_table_e2e_slime_log_reference_phase(argv, ref):
    assert ("ref_log_probs" in names(argv)) is ref


@pytest.mark.parametrize(("argv", "log_probs", "step0_ppo_kl", "step0_kl_loss"), [
    ((), True, True, True),
    (("--use-rollout-logprobs",), False, False, True),
    (("--use-rollout-routing-replay",), True, True, False),
    (("--use-routing-replay",), True, True, False),
    (("--use-rollout-logprobs", "--use-routing-replay"), False, False, False),
    (("--use-rollout-logprobs-x", "--use-routing-replay-x"), True, True, True),
])
def test_rules_table_e2e_slime_log_flags_and_invariants(argv, log_probs, step0_ppo_kl, step0_kl_loss):
    milestones, invariants = slime_log.plan("main", DEADLINES, argv)
    assert ("log_probs" in [m.name for m in milestones]) is log_probs
    assert invariants == Invariants(step0_ppo_kl=step0_ppo_kl, step0_kl_loss=step0_kl_loss)


@pytest.mark.parametrize("version", slime_log.VERSIONS)
def test_rules_table_e2e_slime_log_plan_takes_each_phases_deadline(version):
    milestones, _ = slime_log.plan(version, DEADLINES, ("--use-kl-loss",))
    table = {spec.name: spec for spec in slime_log.tables()[version].milestones}
    seconds = {"placement": 1, "startup": 2, "rollout": 3, "phase": 4}
    assert [m.name for m in milestones] == [spec.name for spec in table.values()]
    for m in milestones:
        spec = table[m.name]
        assert m.timeout_s == seconds[spec.deadline] and m.hypothesis == spec.hypothesis
        assert m.first_loop_only is spec.first_loop_only
        assert m.requires == (f"'{spec.requires_key}':" if spec.requires_key else "")
    assert [m.name for m in milestones if m.first_loop_only] == ["placement-group", "train-actor-ready",
                                                                 "weights-synced"]


@pytest.mark.parametrize(("name", "line", "matches"), [
    ("train", "Timer train end (elapsed: 93.2s)", True),
    ("train", "Timer train end (elapsed: -0.0s)", True),
    ("train", "Timer train end (elapsed: nan s)", False),
    ("train", "Timer train end (elapsed: nans)", True),
    ("train", "Timer train end (elapsed: 12s)", True),
    ("train", "Timer train end (elapsed: 1234567.8s)", True),
    ("train", "Timer train end (elapsed: 9.0.0s)", False),  # the float field reads a number, not any word
    ("train", "Timer train end (elapsed: fasts)", False),
    ("train", "Timer actor_train end (elapsed: 9.0s)", False),
    ("train", "Timer train start", False),
    ("log_probs", "Timer ref_log_probs end (elapsed: 9.0s)", False),
    ("update_weights", "Timer update_weights end (elapsed: 14.2s)", True),
])
def test_rules_table_e2e_slime_log_timer_regex(name, line, matches):
    regex = slime_log.tables()["v0.2.4"].statements["timer_end"].regex(name=name)
    assert bool(re.search(regex, line)) is matches


@pytest.mark.parametrize(("line", "matches"), [
    ("  bundle    0, actual_bundle_index:    0, node: 10.1.0.5, gpu: 0", True),
    ("  bundle   15, actual_bundle_index:   15, node: 10.1.0.6, gpu: 7", True),
    ("  bundle 1024, actual_bundle_index: 1024, node: n, gpu: 0", True),
    ("  bundle x, actual_bundle_index: 0, node: n, gpu: 0", False),
])
def test_rules_table_e2e_slime_log_bundle_regex(line, matches):
    regex = slime_log.tables()["main"].statements["bundle"].regex()
    assert bool(re.fullmatch(regex, line)) is matches


def test_rules_table_e2e_slime_log_render_and_regex_agree():
    for table in slime_log.tables().values():
        s = table.statements
        line = s["rollout_perf"].render(rollout_id=3, log_dict={"perf/rollout_time": 9.5})
        assert line == "perf 3: {'perf/rollout_time': 9.5}" and re.fullmatch(s["rollout_perf"].regex(), line)
        assert re.fullmatch(s["rollout_perf"].regex(rollout_id="3"), line)
        assert not re.fullmatch(s["rollout_perf"].regex(rollout_id="4"), line)


@pytest.mark.parametrize(("field", "value"), [("placement_s", 0), ("startup_s", -1), ("rollout_s", math.nan),
                                              ("phase_s", 0.0)])
def test_rules_table_e2e_slime_log_deadlines_are_positive(field, value):
    kwargs = {"placement_s": 1, "startup_s": 1, "rollout_s": 1, "phase_s": 1, field: value}
    with pytest.raises(ValueError, match=f"^{field}={value!r}: seconds > 0$"):
        slime_log.Deadlines(**kwargs)


def test_rules_table_e2e_slime_log_deadlines_just_above_zero():
    assert slime_log.Deadlines(placement_s=1e-9, startup_s=1e-9, rollout_s=1e-9, phase_s=1e-9).phase_s == 1e-9


@pytest.mark.parametrize(("text", "version"), [
    ("slime==0.3.1", "v0.3.1"), ("slime==v0.3.1", "v0.3.1"), ("SLIME==0.2.4", "v0.2.4"), ("slime== 0.2.4 ", "v0.2.4"),
    (" slime ==main", "main"), ("slime==main", "main"),
    ("miles==main", "miles==main"), ("Miles==31f1ca96", "miles==main"), ("MILES==v0.1", "miles==main"),
])
def test_rules_table_e2e_slime_log_framework_spellings(text, version):
    assert slime_log.parse_framework(text) == version


@pytest.mark.parametrize(("text", "why"), [
    ("slime==0.1.0", "no milestone table for SLIME v0.1.0; have v0.2.4, v0.3.1, main"),
    ("slime==Main", "no milestone table for SLIME vMain"),
    ("slime==0.3.1==0.2.4", "no milestone table for SLIME v0.3.1==0.2.4"),  # the name is before the first '=='
    ("slime", "slime==VERSION (VERSION one of v0.2.4, v0.3.1, main) or miles==main"),
    ("slime=0.3.1", "slime==VERSION"), ("miles", "slime==VERSION"), ("miles==", "slime==VERSION"),
    ("miles==  ", "slime==VERSION"), ("vllm==0.9", "slime==VERSION"), ("", "slime==VERSION"),
])
def test_rules_table_e2e_slime_log_framework_refused(text, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        slime_log.parse_framework(text)


@pytest.mark.parametrize(("value", "split"), [("miles==main", ("miles", "main")), ("v0.3.1", ("slime", "v0.3.1")),
                                              ("main", ("slime", "main"))])
def test_rules_table_e2e_slime_log_split_framework(value, split):
    assert slime_log.split_framework(value) == split


@pytest.mark.parametrize(("framework", "release", "version", "why"), [
    (None, None, "v0.2.4", "no framework known: SLIME v0.2.4, the reference image's"),
    (None, "0.3.1", "v0.2.4", "no framework known"),
    ("miles", None, "main", "Miles: no table of its own"),
    ("miles", "0.2.4", "main", "Miles"),
    ("slime", None, "main", "SLIME of no release"),
    ("slime", "nightly", "main", "SLIME 'nightly' is not a release version"),
    ("slime", "0.2.4", "v0.2.4", "SLIME 0.2.4: before 0.3.0"),
    ("slime", "0.2.99", "v0.2.4", "before 0.3.0"),
    ("slime", "0.3.0", "v0.3.1", "SLIME 0.3.0: 0.3.0 to 0.3.1"),
    ("slime", "v0.3.1", "v0.3.1", "0.3.0 to 0.3.1"),
    ("slime", "0.3.1", "v0.3.1", "0.3.0 to 0.3.1"),
    ("slime", "0.3.2", "main", "SLIME 0.3.2: after 0.3.1"),
    ("slime", "1.0", "main", "after 0.3.1"),
])
def test_rules_table_e2e_slime_log_table_for_a_release(framework, release, version, why):
    found, reason = slime_log.version_for(framework, release)
    assert found == version and why in reason


@pytest.mark.parametrize(("framework", "why"), [
    ("miles", "Miles: no table of its own, SLIME main's statements (Miles forks SLIME's logging)"),
    ("slime", "SLIME of no release (main or a commit between tags): main's statements"),
])
def test_rules_table_e2e_slime_log_why_main_is_whole(framework, why):
    assert slime_log.version_for(framework, None) == ("main", why)


def _located(version: str, statement: str) -> str:
    s = slime_log.tables()[version].statements[statement]
    return f"[2026-07-01 10:00:00] {s.file.rsplit('/', 1)[-1]}:{s.line} - message"


_LOCATION_HEAD = _located("main", "train_step").removesuffix("message")  # up to the logger's ' - '


@pytest.mark.parametrize(("lines", "version"), [
    ([_located("v0.2.4", "train_step")] * 2, "v0.2.4"),
    ([_located("main", "train_step"), _located("main", "rollout_perf")], "main"),
    ([_located("v0.3.1", "rollout_perf"), _located("v0.3.1", "train_step")], "v0.3.1"),
    ([], None),
    (["no location here", "[x] other.py:1 - y"], None),
    (["x" * 4096 + _located("main", "train_step")], None),  # past the first 4096 characters
    ([_located("v0.2.4", "train_step")], "v0.2.4"),  # one located line is enough
    (["x" * (4096 - len(_LOCATION_HEAD)) + _located("main", "train_step")], "main"),  # ends at the 4096th character
    (["x" * (4097 - len(_LOCATION_HEAD)) + _located("main", "train_step")], None),  # one past it
])
def test_rules_table_e2e_slime_log_detect_version(lines, version):
    found, counts = slime_log.detect_version(lines)
    assert found == version
    if version:
        assert counts[version] == max(counts.values())


def test_rules_table_e2e_slime_log_detect_version_tie_is_none():
    v024, main = _located("v0.2.4", "train_step"), _located("main", "train_step")
    assert slime_log.detect_version([v024, main]) == (None, {"v0.2.4": 1, "v0.3.1": 0, "main": 1})
    assert slime_log.detect_version([v024, main, main])[0] == "main"


def test_rules_table_e2e_slime_log_case_deadlines_load():
    cases = slime_log.case_deadlines()
    assert cases and all(loops >= 1 and d.phase_s > 0 for loops, d in cases.values())
