"""`rlcheck watch --replay`: recorded SLIME logs of each supported version, judged on their own timestamps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rlcheck import cli
from rlcheck.e2e import replay, slime_log

LOGS = Path(__file__).parent / "data" / "logs" / "slime"
CASES = [(v, log, kind, fid, code) for v in slime_log.VERSIONS for log, kind, fid, code in (
    ("healthy", "completed", None, 0), ("truncation-46pct", "invariant", "kv-pool-truncation", 1),
    ("reward-zero", "invariant", "reward-silent-zero", 1))]


@pytest.mark.parametrize(("version", "log", "kind", "failure_id", "code"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_replay_recorded_slime_logs(version, log, kind, failure_id, code):
    report = replay.replay(LOGS / version / f"{log}.log")
    assert report["framework"] == f"slime=={version}" and report["framework_source"].startswith("detected")
    verdict = report["verdict"]
    assert (verdict["kind"], verdict.get("failure_id"), report["exit_code"]) == (kind, failure_id, code)
    if kind == "completed":
        assert [len(p) for p in report["phase_times"]] == [9, 6, 6]


_LOCATED = re.compile(r"\] (?P<file>\w+\.py):(?P<line>\d+) - (?P<message>.*)$")


@pytest.mark.parametrize("version", slime_log.VERSIONS)
def test_replay_recorded_logs_speak_their_versions_statements(version):
    """Every SLIME logger line of a recorded log is a statement of that version's table, at its line."""
    statements = slime_log.tables()[version].statements.values()
    for path in sorted((LOGS / version).glob("*.log")):
        for line in replay.read_lines(path):
            found = _LOCATED.search(line)
            if not found:
                continue
            place = (found.group("file"), int(found.group("line")))
            where = [s for s in statements if (Path(s.file).name, s.line) == place]
            assert any(re.fullmatch(s.regex(), found.group("message")) for s in where), (path.name, line)


def test_replay_clock_comes_from_the_log_and_never_goes_back(tmp_path):
    log = (LOGS / "v0.3.1" / "healthy.log").read_text().splitlines()
    cut = [x for x in log if "update_weights end" not in x or "14.2s" in x]  # the sync after loop 0 never ends
    path = tmp_path / "hung.log"
    path.write_text("\n".join([*cut[:40], cut[5].replace("10:00:01", "11:30:00")]) + "\n")
    report = replay.replay(path, case="qwen3-4b-colocated")
    assert report["verdict"]["kind"] == "timeout" and report["verdict"]["name"] == "update_weights"
    assert report["exit_code"] == 1


@pytest.mark.parametrize(("text", "why"), [
    (None, "cannot read"),
    ("Timer train end (elapsed: 9.0s)\n", "no timestamps"),
    ("2026-07-01 10:00:00 something else\n2026-07-01 10:00:05 more\n", "unknown format"),
])
def test_replay_could_not_judge(tmp_path, text, why):
    path = tmp_path / "job.log"
    if text is not None:
        path.write_text(text)
    report = replay.replay(path)
    assert report["exit_code"] == 2 and why in report["why"]


def test_replay_log_that_ends_early_is_not_completed(tmp_path):
    path = tmp_path / "job.log"
    path.write_text("\n".join((LOGS / "main" / "healthy.log").read_text().splitlines()[:30]) + "\n")
    report = replay.replay(path)
    assert report["verdict"]["kind"] == "ended" and report["exit_code"] == 1


def test_replay_known_failure_without_timestamps_is_still_named(tmp_path):
    path = tmp_path / "job.log"
    path.write_text("KeyError: 'warn'\n")
    assert replay.replay(path)["verdict"]["failure_id"] == "uvicorn-log-level"


def test_replay_cli(capsys):
    assert cli.main(["watch", "--replay", str(LOGS / "v0.2.4" / "reward-zero.log"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"]["failure_id"] == "reward-silent-zero"
    assert cli.main(["watch", "--replay", str(LOGS / "main" / "healthy.log"), "--framework", "slime==0.3.1"]) == 0
    out = capsys.readouterr().out
    assert "slime==v0.3.1 (--framework)" in out and "verdict: completed: 3 loop(s)" in out
    assert cli.main(["watch", "--replay", "x.log", "--framework", "slime==0.1.0"]) == 2
    assert "no milestone table for SLIME v0.1.0; have v0.2.4, v0.3.1, main" in capsys.readouterr().err
    assert cli.main(["watch", "--replay", "x.log", "--case", "nope"]) == 2


@pytest.mark.parametrize(("prefix", "miles"), [
    # Miles names the process in each line's prefix (main, rollout_manager, actor/critic cell and rank)
    ("[2026-12-01 09:25:16.123 actor_cell0_rank3] train.py:88 - ", True),
    ("[2026-12-01 09:25:16.123 rollout_manager] rollout.py:12 - ", True),
    ("[2026-12-01 09:25:16 main] train.py:12 - ", True),
    # near misses: SLIME's own prefix, a process name in the message, another bracket
    ("[2026-12-01 09:25:16] train.py:12 - ", False),
    ("[2026-12-01 09:25:16.123] train.py:12 - actor_cell0_rank3 ", False),
    ("[2026-12-01 09:25:16.123 actor_rank3] train.py:88 - ", False),
])
def test_replay_detects_miles_from_its_logger_names(tmp_path, prefix, miles):
    log = tmp_path / "job.log"
    log.write_text("".join(f"{prefix}step {i}\n" for i in range(3)), encoding="utf-8")
    report = replay.replay(log)
    assert report["framework"].startswith("miles==") is miles, report["framework"]
    assert ("Miles' logger names (3 line(s))" in report["framework_source"]) is miles
    # a framework given on the command line wins over what the log shows
    assert replay.replay(log, version=slime_log.parse_framework("slime==0.3.1"))["framework"].startswith("slime==")
