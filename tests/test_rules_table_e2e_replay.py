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
    assert found == pytest.approx(stamp) if stamp is not None else found is None


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
