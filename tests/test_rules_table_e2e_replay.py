"""`rlcheck watch --replay` as tables: whole job logs in SLIME's own format (rendered by the stand-in trainer's line
table, tests/standin/slime_lines.py) with edge values (a negative mean reward, step-0 KL below zero, values tied at
a bound, nan and inf), megabyte lines, any file name, CRLF and broken UTF-8; every exit code and how the report
says it; the log's timestamps and escapes (rlcheck.e2e.replay)."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import cli
from rlcheck.e2e import replay, slime_log
from rlcheck.e2e.watch import MAX_LINE_CHARS
from tests.standin import slime_lines

HEALTHY = slime_lines.LoopShape(samples=128)


def write(tmp_path, lines: list[str], name: str = "job.log", newline: str = "\n"):
    path = tmp_path / name
    path.write_bytes((newline.join(lines) + newline).encode("utf-8"))
    return path


def recorded(version: str = "v0.2.4", **edges: float) -> list[str]:
    return slime_lines.record(version, dataclasses.replace(HEALTHY, **edges))


# (the loop's metrics, the verdict's kind, its name's start, its catalogue id, the exit code)
EDGE_ROWS = [
    ({"reward": -0.5}, "completed", "all milestones", None, 0),  # a healthy run with a negative mean reward
    ({"reward": -1.0}, "completed", "all milestones", None, 0),
    ({"reward": -0.0}, "invariant", "reward-silent-zero", "reward-silent-zero", 1),
    ({"reward": 0.0}, "invariant", "reward-silent-zero", "reward-silent-zero", 1),
    ({"reward": 1e-9}, "completed", "all milestones", None, 0),
    ({"kl": -1e-10}, "completed", "all milestones", None, 0),  # rounding below zero at step 0
    ({"kl": 9.9e-9}, "completed", "all milestones", None, 0),
    ({"kl": 1e-8}, "invariant", "step-0 train/ppo_kl = 1e-08", None, 1),  # tied at SLIME's bound
    ({"kl": -0.03}, "invariant", "step-0 train/ppo_kl = -0.03", None, 1),
    ({"kl": 0.0, "kl_loss": -0.002}, "invariant", "step-0 train/kl_loss = -0.002", None, 1),
    ({"truncated_ratio": 0.2}, "completed", "all milestones", None, 0),  # tied at the bound
    ({"truncated_ratio": 0.2001}, "invariant", "kv-pool-truncation", "kv-pool-truncation", 1),
    ({"reward": float("nan")}, "invariant", "rollout 0 rollout/raw_reward = nan", None, 1),
    ({"reward": float("-inf")}, "invariant", "rollout 0 rollout/raw_reward = -inf", None, 1),
    ({"loss": float("inf")}, "invariant", "step 0 train/loss = inf", None, 1),
    ({"loss": -0.5}, "completed", "all milestones", None, 0),  # a negative loss is a number
]


@pytest.mark.parametrize(("edges", "kind", "name", "failure_id", "code"), EDGE_ROWS)
def test_rules_table_e2e_replay_edge_values(tmp_path, edges, kind, name, failure_id, code):
    report = replay.replay(write(tmp_path, recorded(**edges)))
    verdict = report["verdict"]
    assert (verdict["kind"], verdict["failure_id"], report["exit_code"]) == (kind, failure_id, code), verdict
    assert verdict["name"].startswith(name), verdict["name"]


@pytest.mark.parametrize("version", slime_log.VERSIONS)
def test_rules_table_e2e_replay_negative_reward_at_each_version(tmp_path, version):
    report = replay.replay(write(tmp_path, recorded(version, reward=-0.25)))
    assert report["exit_code"] == replay.EXIT_COMPLETED and report["raw_reward"] == [-0.25] * 3
    assert report["framework"] == f"slime=={version}"
    assert "raw reward per rollout: [-0.25, -0.25, -0.25]" in replay.render_text(report)


@pytest.mark.parametrize("chars", [MAX_LINE_CHARS - 1, MAX_LINE_CHARS, MAX_LINE_CHARS + 1, 1 << 20, 3 << 20])
def test_rules_table_e2e_replay_long_line_is_one_line(tmp_path, chars):
    lines = recorded()
    prompt = "[2026-07-01 10:04:00 TP0] Receive: obj=GenerateReqInput(text='"
    lines.insert(30, (prompt + "Solve for x. " * (chars // 13 + 1))[:chars])
    report = replay.replay(write(tmp_path, lines))
    assert report["exit_code"] == replay.EXIT_COMPLETED and report["lines"] == len(lines), report["verdict"]


def test_rules_table_e2e_replay_read_lines_cuts_and_skips_the_rest(tmp_path):
    path = tmp_path / "job.log"
    path.write_bytes(b"a" * (MAX_LINE_CHARS + 10) + b"\nnext\r\n" + b"\xff\xfe broken utf-8\n" + b"last")
    lines = list(replay.read_lines(path))
    assert [len(x) for x in lines[:1]] == [MAX_LINE_CHARS] and lines[1:] == ["next", "\ufffd\ufffd broken utf-8",
                                                                           "last"]


@pytest.mark.parametrize("name", ["job.log", "job.out", "job.txt", "job", "JOB.LOG", "raysubmit_Ab3d-driver.log",
                                  "job.log.1", "a b.log"])
def test_rules_table_e2e_replay_any_file_name(tmp_path, name):
    report = replay.replay(write(tmp_path, recorded(), name=name))
    assert report["exit_code"] == replay.EXIT_COMPLETED and report["log"].endswith(name)


def test_rules_table_e2e_replay_crlf_log(tmp_path):
    report = replay.replay(write(tmp_path, recorded(), newline="\r\n"))
    assert report["exit_code"] == replay.EXIT_COMPLETED


def test_rules_table_e2e_replay_gzip_log_is_not_judged(tmp_path):
    import gzip

    path = tmp_path / "job.log.gz"
    path.write_bytes(gzip.compress(("\n".join(recorded()) + "\n").encode()))
    report = replay.replay(path)
    assert report["exit_code"] == replay.EXIT_UNJUDGED and report["verdict"] == {"kind": "unjudged"}


STAMP = "[2026-07-01 10:00:0{s}] model.py:660 - x"  # v0.2.4's step line's place


@pytest.mark.parametrize(("lines", "kind", "code", "why"), [
    ([], "unjudged", 2, "no timestamps in the log"),
    (["just text", "Timer train end (elapsed: 1.0s)"], "unjudged", 2, "no timestamps in the log"),
    (["2026-07-01 10:00:00 hello", "2026-07-01 10:00:05 world"], "unjudged", 2, "unknown format"),
    # a metric line is SLIME's: the log is judged, and it ends too early
    (["2026-07-01 10:00:00 x", "[2026-07-01 10:00:01] model.py:1 - step 3: {'train/loss': 0.1}"], "ended", 1, ""),
    # a SLIME statement's file:line of one version is enough
    ([STAMP.format(s=0), STAMP.format(s=1)], "ended", 1, ""),
    ([x.replace("model.py:660", "timer.py:32") for x in (STAMP.format(s=0), STAMP.format(s=1))], "unjudged", 2,
     "unknown format"),  # a place every version shares names none
    (["[2026-07-01 10:00:00] placement_group.py:71 -   bundle    0, actual_bundle_index:    0, node: n, gpu: 0"],
     "ended", 1, ""),
    (["KeyError: 'warn'"], "failure", 1, ""),  # a known failure needs no clock
    (["[2026-07-01 10:00:00] x", "[2026-07-01 11:00:01] y"], "timeout", 1, ""),  # placement's 1800 s passed
])
def test_rules_table_e2e_replay_exit_codes(tmp_path, lines, kind, code, why):
    report = replay.replay(write(tmp_path, lines) if lines else _empty(tmp_path))
    assert (report["verdict"]["kind"], report["exit_code"]) == (kind, code), report["verdict"]
    assert why in report.get("why", "")


def _empty(tmp_path):
    path = tmp_path / "job.log"
    path.write_bytes(b"")
    return path


def test_rules_table_e2e_replay_ended_says_what_it_waited_for(tmp_path):
    report = replay.replay(write(tmp_path, recorded()[:6]))
    v = report["verdict"]
    assert (v["kind"], v["name"], v["loop"], v["failure_id"]) == ("ended", "train-actor-ready", 0, None)
    assert v["line"] == ("the log ends in loop 0 while waiting for train-actor-ready, before its deadline and without "
                         "a known failure")


@pytest.mark.parametrize(("loops", "case", "expected"), [(None, None, 3), (1, None, 1), (5, None, 5)])
def test_rules_table_e2e_replay_loops(tmp_path, loops, case, expected):
    report = replay.replay(write(tmp_path, recorded()), loops=loops, case=case)
    assert report["loops"] == expected
    assert report["exit_code"] == (replay.EXIT_FOUND if expected > 3 else replay.EXIT_COMPLETED)


def test_rules_table_e2e_replay_case_gives_loops_and_deadlines(tmp_path):
    case, (loops, deadlines) = next(iter(slime_log.case_deadlines().items()))
    report = replay.replay(write(tmp_path, recorded()), case=case)
    assert report["loops"] == loops and report["case"] == case and report["deadlines"] == dataclasses.asdict(deadlines)
    assert replay.replay(write(tmp_path, recorded()), case=case, loops=2)["loops"] == 2


@pytest.mark.parametrize(("drop", "hint"), [
    ((), ("--use-kl-loss",)),
    (("ref_log_probs",), ()),
    (("log_probs",), ("--use-kl-loss", "--use-rollout-logprobs")),
    (("ref_log_probs", "log_probs"), ("--use-rollout-logprobs",)),
])
def test_rules_table_e2e_replay_survey_reads_the_optional_phases(tmp_path, drop, hint):
    lines = [x for x in recorded() if not any(f"Timer {name} " in x for name in drop)]
    found = replay.survey(write(tmp_path, lines))
    assert found.argv_hint == hint and found.version == "v0.2.4" and found.lines == len(lines)
    assert found.timestamps == sum(replay.timestamp(x) is not None for x in lines)


@pytest.mark.parametrize(("line", "stamp"), [
    ("[2026-07-01 10:00:00] x", 1782900000.0),
    ("2026-07-01 10:00:00,123\tINFO worker.py:1843 -- x", 1782900000.123),  # Ray's
    ("2026-07-01T10:00:00.5 x", 1782900000.5),
    ("[2026-07-01 10:00:00.123456 TP0] x", 1782900000.123456),
    (" " * 170 + "2026-07-01 10:00:00", 1782900000.0),  # near the start: within the first 200 characters
    (" " * 190 + "2026-07-01 10:00:00", None),
    ("2026-07-01 10:00 x", None),
    ("(RolloutManager pid=2201) [2026-07-01 10:00:01] rollout.py:1190 - perf 0: {}", 1782900001.0),
])
def test_rules_table_e2e_replay_timestamps(line, stamp):
    found = replay.timestamp(line)
    assert found == pytest.approx(stamp, abs=1e-6) if stamp is not None else found is None  # to the microsecond


def test_rules_table_e2e_replay_yearless_stamps_take_the_last_full_stamps_year(tmp_path):
    lines = ["[2025-12-31 23:59:00] placement_group.py:71 - x",
             "[rank0]:[I1231 23:59:30.000000000 ProcessGroupNCCL.cpp:1] y",
             "[rank0]:[I1231 23:59:59.000000000 ProcessGroupNCCL.cpp:1] z"]
    report = replay.replay(write(tmp_path, lines), loops=1)
    assert report["verdict"]["kind"] == "ended"  # 59 s: no deadline passed (1970 would be decades)


@pytest.mark.parametrize(("raw", "clean"), [
    ("\x1b[2m\x1b[36m(RolloutManager pid=1)\x1b[0m x", "(RolloutManager pid=1) x"),
    ("\x1b]0;title\x07text", "text"), ("a\x00b\x7fc", "abc"), ("tab\tkept", "tab\tkept"), ("\x1b[?25lx", "x"),
])
def test_rules_table_e2e_replay_clean(raw, clean):
    assert replay.clean(raw) == clean


def test_rules_table_e2e_replay_render_text_of_each_kind(tmp_path):
    done = replay.render_text(replay.replay(write(tmp_path, recorded())))
    assert "verdict: completed: 3 loop(s), every milestone reached" in done and "loop 0: placement-group" in done
    zero = replay.render_text(replay.replay(write(tmp_path, recorded(reward=0.0))))
    assert "verdict: invariant at loop 2: reward-silent-zero" in zero and "(reward-silent-zero)" in zero
    assert "  known: " in zero and "  fix:   " in zero
    kl = replay.render_text(replay.replay(write(tmp_path, recorded(kl=-0.03))))
    assert "(no catalogue id)" in kl and "known:" not in kl
    unjudged = replay.render_text(replay.replay(write(tmp_path, ["no stamps"])))
    assert unjudged.endswith("verdict: could not judge: no timestamps in the log: phase deadlines cannot be judged")


def test_rules_table_e2e_replay_cli_exit_codes_follow_the_report(tmp_path, capsys):
    assert cli.main(["watch", "--replay", str(write(tmp_path, recorded(reward=-0.5)))]) == 0
    assert cli.main(["watch", "--replay", str(write(tmp_path, recorded(kl=-0.03)))]) == 1
    assert cli.main(["watch", "--replay", str(tmp_path / "missing.log")]) == 2
    assert cli.main(["watch", "--replay", str(write(tmp_path, recorded())), "--loops", "0"]) == 2
    assert "--loops 0: a whole number >= 1" in capsys.readouterr().err


# the report and its text whole, the clock's edges and the survey's bounds (the rows mutation testing asked for)
REPORT_KEYS = {"log", "lines", "framework", "framework_source", "version_counts", "loops", "case", "traits",
               "deadlines", "milestones", "phase_times", "raw_reward", "truncated_ratio", "notes", "uncatalogued",
               "exit_code", "verdict"}


def test_rules_table_e2e_replay_whole_report_of_a_healthy_run(tmp_path):
    odd = "AttributeError: 'NoneType' object has no attribute 'x' " + "y" * 2100  # uncatalogued, longer than kept
    lines = ["[2026-07-01 10:00:00.123456] first stamp", *recorded()]
    lines.insert(40, odd)
    report = replay.replay(write(tmp_path, lines))
    assert set(report) == REPORT_KEYS
    assert report["framework"] == "slime==v0.2.4"
    assert report["framework_source"] == "detected from SLIME's file:line locations"
    assert report["version_counts"] == {"main": 45, "v0.2.4": 77, "v0.3.1": 45}
    assert report["traits"] is None and report["case"] is None and report["lines"] == len(lines)
    milestones = report["milestones"]
    assert len(milestones) == 21 and {tuple(m) for m in milestones} == {("loop", "name", "at_s")}
    assert milestones[0] == {"loop": 0, "name": "placement-group", "at_s": 0.877}  # 0.876544 s, to the millisecond
    assert milestones[-1] == {"loop": 2, "name": "update_weights", "at_s": 974.877}
    assert report["uncatalogued"] == [{"line_no": 41, "line": odd[:2000]}]
    assert report["verdict"] == {
        "kind": "completed", "name": "all milestones", "loop": 2, "at_s": 974.877, "failure_id": None,
        "line": "(MegatronTrainRayActor pid=3301) [2026-07-01 10:16:15] timer.py:32 - Timer update_weights end "
                "(elapsed: 10.0s)", "supporting": [len(lines) - 1]}


def test_rules_table_e2e_replay_known_failure_verdict_whole(tmp_path):
    from rlcheck import catalog

    line = "KeyError: 'warn'" + " " * 10 + "z" * 2100
    report = replay.replay(write(tmp_path, ["[2026-07-01 10:00:00.000400] x", "[2026-07-01 10:00:01.0009] y", line]))
    entry = catalog.get(report["verdict"]["failure_id"])
    assert report["verdict"] == {"kind": "failure", "name": entry.id, "loop": 0, "at_s": 1.0, "failure_id": entry.id,
                                 "line": line[:2000], "supporting": [3], "title": entry.title,
                                 "remedy": " ".join(entry.remedy.split())}
    assert report["exit_code"] == replay.EXIT_FOUND


def test_rules_table_e2e_replay_invariant_needs_no_clock(tmp_path):
    report = replay.replay(write(tmp_path, ["step 0: {'train/loss': inf}"]))
    assert (report["exit_code"], report["verdict"]["kind"]) == (replay.EXIT_FOUND, "invariant")


def test_rules_table_e2e_replay_a_milestone_alone_is_a_slime_log(tmp_path):
    bundle = "  bundle    0, actual_bundle_index:    0, node: n, gpu: 0"  # placement, at no version's place
    report = replay.replay(write(tmp_path, ["[2026-07-01 10:00:00] x", f"[2026-07-01 10:00:01] other.py:1 - {bundle}"]))
    assert report["version_counts"] == {"main": 0, "v0.2.4": 0, "v0.3.1": 0}
    assert report["milestones"] == [{"loop": 0, "name": "placement-group", "at_s": 1.0}]
    assert (report["exit_code"], report["verdict"]["kind"]) == (replay.EXIT_FOUND, "ended")
    # before any timestamp a line happens at 0 s
    report = replay.replay(write(tmp_path, [bundle, "[2026-07-01 10:00:05] x"]))
    assert report["milestones"] == [{"loop": 0, "name": "placement-group", "at_s": 0.0}]


def test_rules_table_e2e_replay_unknown_format_says_so_whole(tmp_path):
    report = replay.replay(write(tmp_path, ["2026-07-01 10:00:00 hello", "2026-07-01 10:00:05 world"]))
    assert report["why"] == "unknown format: no SLIME log statement (Timer, perf/rollout/step dicts, placement) found"
    assert report["framework"] == "slime==v0.3.1"
    assert report["framework_source"] == ("not detected; judged as v0.3.1 (milestone lines are the same at every "
                                          "version)")


def test_rules_table_e2e_replay_unreadable_log_names_path_and_reason(tmp_path):
    path = tmp_path / "missing.log"
    assert replay.replay(path) == {"log": str(path), "exit_code": replay.EXIT_UNJUDGED, "verdict": {"kind": "unjudged"},
                                   "why": f"cannot read {path}: No such file or directory"}


def test_rules_table_e2e_replay_clock_never_goes_back(tmp_path):
    bundle = "[2026-07-01 10:00:05] other.py:1 -   bundle    0, actual_bundle_index:    0, node: n, gpu: 0"
    report = replay.replay(write(tmp_path, ["[2026-07-01 10:00:00] x", "[2026-07-01 10:00:10] y", bundle]))
    assert report["milestones"] == [{"loop": 0, "name": "placement-group", "at_s": 10.0}]


def test_rules_table_e2e_replay_deadline_passes_before_a_later_failure_line(tmp_path):
    report = replay.replay(write(tmp_path, ["[2026-07-01 10:00:00] x", "[2026-07-01 11:00:01] y", "KeyError: 'warn'"]))
    assert report["verdict"]["kind"] == "timeout" and report["verdict"]["at_s"] == 3601.0


@pytest.mark.parametrize("full", ["[2026-07-01 10:00:00] x", "2026-07-01 10:00:00 x"])
def test_rules_table_e2e_replay_yearless_stamp_moves_the_clock_in_the_full_stamps_year(tmp_path, full):
    report = replay.replay(write(tmp_path, [full, "[rank0]:[I0701 10:40:01.000000000 ProcessGroupNCCL.cpp:1] y"]))
    assert report["verdict"]["kind"] == "timeout" and report["verdict"]["at_s"] == 2401.0  # placement's 1800 s passed


def test_rules_table_e2e_replay_yearless_stamps_before_any_full_stamp_are_in_1970(tmp_path):
    import calendar

    report = replay.replay(write(tmp_path, ["[rank0]:[I0701 10:00:00.000000000 X.cpp:1] a", "[2026-07-01 10:00:05] x"]))
    expected = calendar.timegm((2026, 7, 1, 10, 0, 5)) - calendar.timegm((1970, 7, 1, 10, 0, 0))
    assert report["verdict"]["kind"] == "timeout" and report["verdict"]["at_s"] == expected


def test_rules_table_e2e_replay_an_impossible_date_is_no_stamp(tmp_path):
    report = replay.replay(write(tmp_path, ["2026-13-45 10:00:00 x", "no stamp"]))
    assert report["exit_code"] == replay.EXIT_UNJUDGED and replay.timestamp("2026-13-45 10:00:00 x") is None
    # nor does it give the year-less stamps after it a year: they stay in 1970, decades before the full stamp
    lines = ["2026-13-45 10:00:00 x", "[rank0]:[I0701 10:00:00.000000000 X.cpp:1] a", "[2026-07-01 10:00:05] b"]
    assert replay.replay(write(tmp_path, lines))["verdict"]["kind"] == "timeout"


def test_rules_table_e2e_replay_argv_given_decides_phases_invariants_and_traits(tmp_path):
    path = write(tmp_path, recorded(kl=-0.03))
    report = replay.replay(path, argv=("--use-rollout-logprobs",))  # no reference model, the PPO KL not judged
    assert "ref_log_probs" not in {m["name"] for m in report["milestones"]}
    assert report["traits"] == [] and report["verdict"]["name"] == "step-0 train/kl_loss = -0.03 >= 1e-08"
    argv = ("--use-rollout-logprobs", "--use-kl-loss", "--use-routing-replay", "--sglang-attention-backend", "nsa")
    report = replay.replay(path, argv=argv)  # neither step-0 KL is judged
    assert report["traits"] == ["dsa"] and report["verdict"]["kind"] == "completed"
    assert replay.replay(path, argv=argv[:2])["verdict"]["name"] == "step-0 train/kl_loss = -0.03 >= 1e-08"
    assert replay.replay(path)["verdict"]["name"] == "step-0 train/ppo_kl = -0.03 >= 1e-08"  # the log's own hint


@pytest.mark.parametrize(("line", "stamp"), [
    (" " * 181 + "2026-07-01 10:00:00", 1782900000.0),  # ends at the 200th character
    (" " * 182 + "2026-07-01 10:00:00", None),
    ("2026-07-01 10:00:00,123 x", 1782900000.123),
    ("2026-07-01 10:00:00 x", 1782900000.0),
    ("I0131 10:00:00 x", 2628000.0),  # glog's, in 1970 when no year is known
    ("I0101 00:00:01.5 x", 1.5),
    ("[12-31 23:59:59 TP0] x", 31535999.0),
    ("I1231 10:00:00 x", 31485600.0),
    ("I0132 10:00:00 x", None),  # no 32nd day
    ("I0100 10:00:00 x", None),
    ("I1301 10:00:00 x", None),
    ("I0001 10:00:00 x", None),
    (" " * 186 + "I0131 10:00:00", 2628000.0),  # the year-less stamp ends at the 200th character
    (" " * 187 + "I0131 10:00:00", None),
])
def test_rules_table_e2e_replay_timestamp_edges(line, stamp):
    found = replay.timestamp(line)
    assert found == pytest.approx(stamp, abs=1e-6) if stamp is not None else found is None


def test_rules_table_e2e_replay_read_lines_keeps_trailing_text(tmp_path):
    path = tmp_path / "job.log"
    path.write_bytes(b"ends in spaces  \t\nends in X\r\nX\n")
    assert list(replay.read_lines(path)) == ["ends in spaces  \t", "ends in X", "X"]


def test_rules_table_e2e_replay_survey_traits_from_hint_lines(tmp_path):
    def traits(lines):
        return replay.survey(write(tmp_path, lines)).traits

    assert traits(["engine args: attention_backend='nsa'"]) == frozenset({"dsa"})  # 'attention' alone
    assert traits(["argv: --sglang-nsa-prefill-backend x"]) == frozenset({"dsa"})  # '--sglang-' alone
    assert traits(["Load weight end. type=Qwen3ForCausalLM"]) == frozenset()
    assert traits(["plain line"]) is None
    # the first 200 hint lines are read, no more
    model = ["Load weight end. type=Qwen3ForCausalLM"]
    assert traits(model * 199 + ["DeepseekV32ForCausalLM"]) == frozenset({"dsa"})
    assert traits(model * 200 + ["DeepseekV32ForCausalLM"]) == frozenset()


def test_rules_table_e2e_replay_survey_reads_5000_located_lines(tmp_path):
    v024 = "[2026-07-01 10:00:00] model.py:660 - x"
    junk = "[2026-07-01 10:00:00] other.py:1 - x"
    assert replay.survey(write(tmp_path, [junk] * 4999 + [v024])).version == "v0.2.4"
    assert replay.survey(write(tmp_path, [junk] * 5000 + [v024])).version is None
    assert replay.survey(write(tmp_path, ["plain"] * 5000 + [v024])).version == "v0.2.4"  # only located lines count


@pytest.mark.parametrize(("pad", "version"), [(512, "v0.2.4"), (513, None)])
def test_rules_table_e2e_replay_survey_reads_a_location_in_the_first_512_characters(tmp_path, pad, version):
    place = "] model.py:660 - "
    line = "x" * (pad - len(place)) + place + "message"
    assert replay.survey(write(tmp_path, [line])).version == version


RENDER = {"log": "/logs/job.log", "lines": 80, "framework": "slime==v0.2.4", "framework_source": "--framework",
          "loops": 2, "case": "qwen3-4b", "phase_times": [{"rollout": 120.04, "train": 0.05}, {"rollout": 1.25}],
          "raw_reward": [], "truncated_ratio": [], "notes": [f"n{i}" for i in range(11)],
          "uncatalogued": [{"line_no": i, "line": "e" * 301} for i in range(6)],
          "verdict": {"kind": "failure", "name": "sglang-oom", "loop": 1, "at_s": 5.0, "failure_id": "sglang-oom",
                      "line": "L" * 401, "supporting": [3, 7], "title": "Out of memory", "remedy": "Lower it."}}


def test_rules_table_e2e_replay_render_text_whole():
    assert replay.render_text(RENDER) == "\n".join([
        "rlcheck watch: /logs/job.log",
        "  80 lines; slime==v0.2.4 (--framework); 2 loop(s); case qwen3-4b",
        "  loop 0: rollout 120.0 s, train 0.1 s",
        "  loop 1: rollout 1.2 s",
        "  raw reward per rollout: none seen; truncated ratio per rollout: none seen",
        *[f"  note: n{i}" for i in range(10)],
        *[f"  uncatalogued failure line {i}: {'e' * 300}" for i in range(5)],
        "verdict: failure at loop 1: sglang-oom (sglang-oom)",
        f"  line: {'L' * 400}",
        "  supporting line(s) of the log: 3, 7",
        "  known: Out of memory",
        "  fix:   Lower it."])


def test_rules_table_e2e_replay_render_text_without_case_support_or_catalogue():
    report = {**RENDER, "case": None, "raw_reward": [0.5], "truncated_ratio": [0.0], "notes": []}
    del report["uncatalogued"]
    report["verdict"] = {"kind": "ended", "name": "rollout", "loop": 0, "failure_id": None, "line": "the log ends"}
    assert replay.render_text(report) == "\n".join([
        "rlcheck watch: /logs/job.log",
        "  80 lines; slime==v0.2.4 (--framework); 2 loop(s)",
        "  loop 0: rollout 120.0 s, train 0.1 s",
        "  loop 1: rollout 1.2 s",
        "  raw reward per rollout: [0.5]; truncated ratio per rollout: [0.0]",
        "verdict: ended at loop 0: rollout (no catalogue id)",
        "  line: the log ends"])
    report["verdict"] |= {"supporting": []}
    assert "supporting" not in replay.render_text(report)


def test_rules_table_e2e_replay_render_text_unjudged_and_completed():
    assert replay.render_text({"log": "x.log", "verdict": {"kind": "unjudged"}, "why": "cannot read x.log: gone"}) == (
        "rlcheck watch: x.log\nverdict: could not judge: cannot read x.log: gone")
    done = {**RENDER, "phase_times": [], "notes": [], "uncatalogued": [], "verdict": {"kind": "completed"}}
    assert replay.render_text(done).splitlines()[-1] == "verdict: completed: 2 loop(s), every milestone reached"
